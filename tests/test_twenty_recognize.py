"""20-chess through the move recogniser: every kind of action a part is made of (two moves,
a swap, drops and several drops, the extra piece and its stand-in, a tandem, a gift) is read
off the board on piece-identity and presence-only boards; decisions the board cannot show
are never matched against it."""

from __future__ import annotations

from collections.abc import Sequence

import chess
import pytest

from dgt.events import BoardSnapshot, LeverMoved, Side, SquareChanged
from dgt.protocol.constants import Piece
from service.recognize import Mismatch, MoveEvent, Recognizer, RecognizerEvent, Result, Takeback
from service.recognize.recognizer import ReplacementError
from service.variants import BLACK, WHITE, Choice, Drop, Move
from service.variants.twenty_chess import SPECIAL_STAND_INS, TwentyChess

FAMILIES = pytest.mark.parametrize("presence", [False, True], ids=["identity", "presence"])

PREFIX = ("e2e4", "d7d5", "e4d5", "d8d5", "b1c3", "d5a2", "a1a2", "e7e5")
"""Four turns of orthodox chess leaving White a pawn and a queen in hand, Black two pawns."""


class Hand:
    """A board with a clock and a hand on it, feeding a recogniser of a 20-chess game whose
    turns follow ``schedule``."""

    def __init__(
        self, schedule: Sequence[int], *, presence: bool = False, special: bool = False
    ) -> None:
        variant = TwentyChess(schedule, stand_ins=SPECIAL_STAND_INS if special else None)
        self.presence = presence
        self.recognizer = Recognizer(variant=variant, presence_only=presence, clock=True)
        self.time = 0.0
        self.side = Side.LEFT  # White's lever side goes down first
        board = chess.Board()
        self.squares = [Piece.EMPTY] * 64
        for square, piece in board.piece_map().items():
            self.squares[square] = self.code(piece.symbol())
        self.out = self.feed(BoardSnapshot(0.0, tuple(self.squares), "connect"))
        assert self.recognizer.game is not None
        assert self.recognizer.game.variant.id == "twenty-chess"

    def code(self, symbol: str) -> Piece:
        return Piece.OCCUPIED if self.presence else Piece.from_symbol(symbol)

    def feed(self, event: SquareChanged | BoardSnapshot | LeverMoved) -> list[RecognizerEvent]:
        got = self.recognizer.tick(event.time) + self.recognizer.feed(event)
        if hasattr(self, "out"):
            self.out += got
        return got

    def set(self, name: str, piece: Piece) -> list[RecognizerEvent]:
        self.time += 0.3
        square = chess.parse_square(name)
        previous, self.squares[square] = self.squares[square], piece
        return self.feed(SquareChanged(self.time, square, piece, previous))

    def lift(self, name: str) -> list[RecognizerEvent]:
        return self.set(name, Piece.EMPTY)

    def put(self, name: str, symbol: str) -> list[RecognizerEvent]:
        return self.set(name, self.code(symbol))

    def move(self, uci: str) -> None:
        """Lift the piece (and a piece on the target), set it down on the target."""
        origin, target = chess.parse_square(uci[:2]), chess.parse_square(uci[2:4])
        game = self.recognizer.game
        assert game is not None
        symbol = game.board_symbol(game.squares[origin])
        self.lift(uci[:2])
        if self.squares[target] is not Piece.EMPTY:
            self.lift(uci[2:4])
        self.put(uci[2:4], symbol)

    def press(self) -> list[RecognizerEvent]:
        self.time += 0.2
        got = self.feed(LeverMoved(self.time, self.side))
        self.side = Side.RIGHT if self.side is Side.LEFT else Side.LEFT
        return got

    def ucis(self) -> list[str]:
        record = self.recognizer.record()
        assert record is not None
        return [m.uci for m in record.moves]

    def sans(self) -> list[str]:
        record = self.recognizer.record()
        assert record is not None
        return [m.san for m in record.moves]

    def play(self, *ucis: str) -> None:
        """Orthodox moves, one a part, each completed by a press."""
        for uci in ucis:
            self.move(uci)
            self.press()


@FAMILIES
def test_rule_2_two_moves_in_one_part(presence: bool) -> None:
    hand = Hand([2], presence=presence)
    hand.move("e2e4")
    hand.move("g1f3")
    hand.press()
    hand.move("e7e5")
    hand.move("b8c6")
    hand.press()
    assert hand.ucis() == ["e2e4", "g1f3", "e7e5", "b8c6"]
    record = hand.recognizer.record()
    assert record is not None
    assert all(m.final for m in record.moves)
    assert [m.side for m in record.moves] == [WHITE, WHITE, BLACK, BLACK]


@FAMILIES
def test_rule_3_swap_then_move(presence: bool) -> None:
    hand = Hand([3], presence=presence)
    hand.lift("b1")
    hand.lift("c1")
    hand.put("b1", "B")
    hand.put("c1", "N")
    hand.move("e2e4")
    hand.press()
    assert hand.ucis() == ["b1<>c1", "e2e4"]
    assert hand.sans()[0] == "Nb1<>Bc1"


@FAMILIES
def test_rule_4_drop_then_move_and_no_pawn_on_the_last_row(presence: bool) -> None:
    hand = Hand([1, 1, 4], presence=presence)
    hand.play("e2e4", "d7d5", "e4d5", "d8d5")
    if not presence:  # a pawn on White's last row is no legal drop: reported, not recorded
        hand.put("d8", "P")
        hand.time += 3
        got = hand.feed(LeverMoved(hand.time, Side.LEFT))
        mismatch = [e for e in got if isinstance(e, Mismatch)]
        assert mismatch
        assert chess.D8 in mismatch[-1].squares
        assert hand.ucis() == ["e2e4", "d7d5", "e4d5", "d8d5"]
        hand.lift("d8")
    hand.put("h3", "P")
    hand.move("g1f3")
    hand.press()
    hand.put("a6", "p")
    hand.move("b8c6")
    hand.press()
    assert hand.ucis()[4:] == ["P@h3", "g1f3", "p@a6", "b8c6"]
    game = hand.recognizer.game
    assert game is not None
    assert game.turn == 4


@FAMILIES
def test_rule_6_several_drops_then_a_move(presence: bool) -> None:
    hand = Hand([1, 1, 1, 1, 6], presence=presence)
    hand.play(*PREFIX)
    hand.put("a3", "P")
    hand.put("d3", "Q")
    hand.move("g1f3")
    hand.press()
    hand.put("a6", "p")
    hand.put("h6", "p")
    hand.move("b8c6")
    hand.press()
    assert hand.ucis()[8:] == ["P@a3", "Q@d3", "g1f3", "p@a6", "p@h6", "b8c6"]


def test_rule_5_the_pick_is_the_piece_dropped() -> None:
    """The opponent's pick is read off the piece the player drops (handed over to him)."""
    hand = Hand([1, 1, 1, 1, 5])
    hand.play(*PREFIX)
    game = hand.recognizer.game
    assert game is not None
    assert game.step == "choose"
    hand.put("d3", "Q")
    hand.move("g1f3")
    hand.press()
    assert hand.ucis()[8:] == ["Q@d3", "g1f3"]


def test_rule_5_a_pick_entered_first_rules_out_the_other_kinds() -> None:
    hand = Hand([1, 1, 1, 1, 5])
    hand.play(*PREFIX)
    hand.lift("h2")  # handling before the decision: candidates worked out already
    hand.put("h2", "P")
    game = hand.recognizer.game
    assert game is not None
    game.decide(Choice("piece", "p"))  # type: ignore[attr-defined]
    assert hand.recognizer.reconsider(hand.time) == []
    assert all(not isinstance(a.action, Choice) for a in game.legal_actions())
    hand.put("d3", "Q")  # not the piece Black picked
    assert hand.ucis() == list(PREFIX)
    hand.lift("d3")
    hand.put("a3", "P")
    hand.move("g1f3")
    hand.press()
    assert hand.ucis()[8:] == ["P@a3", "g1f3"]


def test_choices_are_never_matched_against_the_board() -> None:
    hand = Hand([1, 1, 1, 1, 5])
    hand.play(*PREFIX)
    game = hand.recognizer.game
    assert game is not None
    choices = [a for a in game.legal_actions() if isinstance(a.action, Choice)]
    assert choices
    assert all(a.side == BLACK for a in choices)
    hand.time += 5
    assert not [e for e in hand.recognizer.tick(hand.time) if not isinstance(e, Mismatch)]
    assert hand.ucis() == list(PREFIX)


@FAMILIES
def test_rule_12_the_extra_piece_is_a_stand_in_queen(presence: bool) -> None:
    hand = Hand([12, 13], presence=presence)
    hand.put("e4", "q")  # White's extra piece: the spare black queen
    hand.move("g1f3")
    hand.press()
    hand.put("e5", "Q")  # Black's: the spare white queen
    hand.move("b8c6")
    hand.press()
    assert hand.ucis() == ["F@e4", "g1f3", "f@e5", "b8c6"]
    game = hand.recognizer.game
    assert game is not None
    assert game.squares[chess.E4] == "E"  # rule 13 began: it is an elephant now
    hand.move("e4g6")  # re-dropped, as the footnote allows
    assert hand.ucis()[-1] == "e4g6"


def test_special_pieces_as_stand_ins_are_no_result_gesture() -> None:
    hand = Hand([12], special=True)
    got = hand.put("e4", "W")
    assert not [e for e in got if isinstance(e, Result)]
    hand.move("g1f3")
    hand.press()
    assert hand.ucis() == ["F@e4", "g1f3"]


def test_special_pieces_still_declare_results_in_other_games() -> None:
    recognizer = Recognizer(variant="standard", clock=True)
    board = chess.Board()
    squares = [Piece.EMPTY] * 64
    for square, piece in board.piece_map().items():
        squares[square] = Piece.from_symbol(piece.symbol())
    recognizer.feed(BoardSnapshot(0.0, tuple(squares), "connect"))
    got = recognizer.feed(SquareChanged(1.0, chess.E4, Piece.WHITE_WINS, Piece.EMPTY))
    assert [e.result for e in got if isinstance(e, Result)] == ["1-0"]


@FAMILIES
def test_rule_17_tandem_of_identical_steps(presence: bool) -> None:
    hand = Hand([17], presence=presence)
    hand.move("g1f3")
    assert hand.ucis() == []  # half a tandem is nothing yet
    hand.move("b1a3")
    hand.press()
    # the board cannot tell which piece led: one of the two readings is recorded
    assert hand.ucis() in (["g1f3&b1a3"], ["b1a3&g1f3"])
    assert hand.sans()[0] in ("Ng1-f3&Nb1-a3", "Nb1-a3&Ng1-f3")


@FAMILIES
def test_rule_19_gift_is_a_piece_taken_off(presence: bool) -> None:
    hand = Hand([19], presence=presence)
    hand.lift("a2")
    assert hand.ucis() == ["-a2"]
    hand.move("e2e4")
    hand.press()
    hand.lift("h7")
    hand.move("e7e5")
    hand.press()
    assert hand.ucis() == ["-a2", "e2e4", "-h7", "e7e5"]
    game = hand.recognizer.game
    assert game is not None
    assert game.hand(BLACK) == ("p",)
    assert game.hand(WHITE) == ("p",)


@FAMILIES
def test_rule_20_both_knights_move(presence: bool) -> None:
    hand = Hand([20], presence=presence)
    hand.move("g1f3")
    hand.move("b1c3")
    hand.press()
    assert hand.ucis() in (["g1f3&b1c3"], ["b1c3&g1f3"])


def test_drop_actions_carry_the_model_symbol() -> None:
    hand = Hand([12])
    hand.put("e4", "q")
    game = hand.recognizer.game
    assert game is not None
    assert game.squares[chess.E4] == "F"
    assert game.board_symbol("F") == "q"
    assert [a.action for a in game.legal_actions() if a.action == Move(chess.G1, chess.F3)]
    assert not [a for a in game.legal_actions() if isinstance(a.action, Drop)]


def test_replace_action_corrects_a_guessed_drop_and_replays_the_later_actions() -> None:
    """A presence-only board reads White's drop on a3 as the pawn (it cannot see the kind);
    the arbiter says it was the queen: the drop is replaced, the later actions made again,
    each as complete as it was, and the hand follows."""
    hand = Hand([1, 1, 1, 1, 4], presence=True)
    hand.play(*PREFIX)
    hand.put("a3", "P")
    hand.move("g1f3")
    hand.press()
    hand.put("a6", "p")
    assert hand.ucis()[8:] == ["P@a3", "g1f3", "p@a6"]
    recognizer = hand.recognizer
    got = recognizer.replace_action(9, Drop("Q", chess.A3), hand.time)
    takebacks = [e for e in got if isinstance(e, Takeback)]
    assert [(t.ply, t.moves, t.final) for t in takebacks] == [
        (8, ("p@a6", "g1f3", "P@a3"), (False, True, True))
    ]
    moves = [e for e in got if isinstance(e, MoveEvent)]
    assert [(m.ply, m.uci, m.final) for m in moves] == [
        (9, "Q@a3", True),
        (10, "g1f3", True),
        (11, "p@a6", False),
    ]
    assert hand.ucis()[8:] == ["Q@a3", "g1f3", "p@a6"]
    game = recognizer.game
    assert game is not None
    assert game.squares[chess.A3] == "Q"
    assert game.hand(True) == ("p",)  # type: ignore[attr-defined]
    hand.move("b8c6")  # the board still reads the game: play goes on
    hand.press()
    record = recognizer.record()
    assert record is not None
    assert [m.uci for m in record.moves][8:] == ["Q@a3", "g1f3", "p@a6", "b8c6"]
    assert all(m.final for m in record.moves)


def test_replace_action_refuses_when_a_later_action_would_be_illegal() -> None:
    """Both White drops read, P@a3 then Q@d3: the first cannot have been the queen, which
    the second drop sets down (one queen in hand).  Refused with a one-line message and
    nothing changed; a ply the game does not have is refused too."""
    hand = Hand([1, 1, 1, 1, 6], presence=True)
    hand.play(*PREFIX)
    hand.put("a3", "P")
    hand.put("d3", "Q")
    hand.move("g1f3")
    hand.press()
    recognizer = hand.recognizer
    before = hand.ucis()
    with pytest.raises(ReplacementError, match=r"Q@d3 \(ply 10\) would no longer be legal"):
        recognizer.replace_action(9, Drop("Q", chess.A3), hand.time)
    with pytest.raises(ReplacementError, match="no action at ply 12"):
        recognizer.replace_action(12, Drop("Q", chess.A3), hand.time)
    with pytest.raises(ReplacementError, match="not legal at ply 9"):
        recognizer.replace_action(9, Drop("R", chess.A3), hand.time)
    assert hand.ucis() == before
    game = recognizer.game
    assert game is not None
    assert game.squares[chess.A3] == "P"
    assert game.squares[chess.D3] == "Q"
    hand.put("a6", "p")
    hand.put("h6", "p")
    hand.move("b8c6")
    hand.press()
    assert hand.ucis()[8:] == ["P@a3", "Q@d3", "g1f3", "p@a6", "p@h6", "b8c6"]
