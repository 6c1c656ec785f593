"""The recogniser on presence-only boards under fast hands: a capture whose captured piece is
swept off (its square never reads empty) followed by the reply before the capture was read,
the reading ahead that follows the game through it, the other captures named, and a stretch
no legal play explains."""

from __future__ import annotations

import itertools
import random
from dataclasses import replace

import chess
import games
import pytest
from test_recognize_helpers import Desk, moves_in, of_type

from dgt.emulator.human import Handling, move_steps, timeline
from dgt.events import LeverMoved, Side, SquareChanged
from dgt.protocol.constants import Piece
from service.recognize.events import MoveEvent

ROOK_SWEEP = "4k2r/8/8/8/8/8/7P/4K3 b k - 0 1"
"""Black's rook h8 can take the pawn on h2 (the only capture it has)."""
RECAPTURE = "r3k3/8/8/3p4/4P3/2N5/8/4K3 b - - 0 1"
"""...dxe4 answered by Nxe4."""
KNIGHT_FORK = "4k3/8/8/8/8/2P1P3/8/3n2K1 b - - 0 1"
"""The knight on d1 can take the pawn on c3 or the one on e3; fxe3 is no reply here, but
Kf2 attacks e3 after ...Nxe3 (and not c3)."""


def test_swept_capture_then_the_reply_before_it_was_read() -> None:
    """...Rxh2 swept (only h8 reads empty), then White's king e1-d1 within a second: no
    single action explains the board, the two together do."""
    desk = Desk(presence_only=True, fen=ROOK_SWEEP)
    desk.lift("h8")
    desk.lift("e1", 1.0)
    got = desk.put("d1", "*", 0.5)
    assert moves_in(got, final=False) == ["h8h2", "e1d1"]
    assert of_type(desk.out, "mismatch") == []
    desk.wait(3)
    assert desk.final_ucis() == ["h8h2", "e1d1"]


def test_swept_capture_then_a_recapture_is_followed() -> None:
    """...dxe4 swept, Nxe4 (the knight set down where the pawn landed, the pawn taken off
    first): the game goes on, no mismatch."""
    desk = Desk(presence_only=True, fen=RECAPTURE, clock=True)
    desk.lift("d5")
    desk.lift("c3", 1.5)
    desk.lift("e4", 0.3)
    got = desk.put("e4", "*", 0.3)
    assert moves_in(got, final=False) == ["d5e4", "c3e4"]
    desk.press(Side.LEFT)
    desk.lift("e8", 2.0)
    desk.put("d7", "*")
    desk.press(Side.RIGHT)
    assert desk.final_ucis() == ["d5e4", "c3e4", "e8d7"]
    assert of_type(desk.out, "mismatch") == []


def test_swept_capture_names_the_other_captures_of_the_piece() -> None:
    """...Nxe3 or ...Nxc3, swept, then White's king moves: the board reads both the same; the
    move event names the other one."""
    desk = Desk(presence_only=True, fen=KNIGHT_FORK)
    desk.lift("d1")
    desk.lift("g1", 1.0)
    got = desk.put("h1", "*", 0.5)
    moves = [e for e in got if isinstance(e, MoveEvent) and not e.final]
    assert [e.uci[:2] for e in moves] == ["d1", "g1"]
    read, other = moves[0].uci, {"d1c3", "d1e3"} - {moves[0].uci}
    assert [uci for uci, _ in moves[0].alternatives] == list(other)
    assert read in ("d1c3", "d1e3")


def test_reply_only_one_reading_allows_settles_the_swept_capture() -> None:
    """...Nxe3 swept, then Kf2 and Kxe3 (the king lifts e3 and lands there): the king takes
    on e3 only if the knight went there; both readings of the capture lead here only that
    way."""
    desk = Desk(presence_only=True, fen=KNIGHT_FORK)
    desk.lift("d1")
    desk.lift("g1", 1.0)
    desk.put("f2", "*", 0.5)
    desk.lift("e8", 2.0)
    desk.put("e7", "*", 0.5)
    desk.lift("e3", 2.0)
    desk.lift("f2", 0.3)
    desk.put("e3", "*", 0.4)
    desk.wait(3)
    assert desk.final_ucis() == ["d1e3", "g1f2", "e8e7", "f2e3"]


def test_neighbour_lifted_with_the_mover_is_no_swept_reply() -> None:
    """Two pieces lifted within a scan of each other are one hand's move and a knocked or
    taken piece, never a move and its reply: a reply starts after the move it answers."""
    desk = Desk(presence_only=True, fen=RECAPTURE)
    desk.lift("d5")
    desk.lift("c3", 0.04)
    got = desk.put("e4", "*", 0.4)
    assert moves_in(got) == []


def test_a_stretch_no_legal_play_explains_is_a_mismatch_then_the_game_goes_on() -> None:
    """The pawn on e4 lifted and the king e1 set on e3 (two squares: no king move): a
    mismatch once the board stands still.  Then the king goes back and the pawn with it:
    the game goes on from there."""
    desk = Desk(presence_only=True, fen="4k3/8/8/8/4P3/8/8/4K3 w - - 0 1")
    desk.lift("e4")
    desk.lift("e1", 0.5)
    desk.put("e3", "*", 0.5)
    got = desk.wait(2.5)
    assert [m.squares for m in of_type(got, "mismatch")] != []
    desk.lift("e3", 1.0)
    desk.put("e1", "*", 0.3)
    desk.put("e4", "*", 0.3)
    desk.move("e4e5", "*", 1.0)
    desk.wait(3)
    assert desk.final_ucis() == ["e4e5"]


# -- a slide resting on a square of its path ---------------------------------------------------

BISHOP_TAKES = "4k3/p7/8/6n1/8/8/P7/2B1K3 w - - 0 1"
"""The bishop on c1 can take the knight on g5 (passing d2, e3, f4)."""


@pytest.mark.parametrize("presence_only", [False, True], ids=["identity", "presence"])
def test_slide_resting_on_its_path_then_taking_in_one_motion(presence_only: bool) -> None:
    """Bc1 slides towards g5, rests on e3 for 0.8 s, moves on and takes the knight in one
    motion (the knight swept off: on an identity board g5 changes from knight to bishop, on a
    presence-only board it never changes).  Be3 is no move: the clock press reads Bxg5."""
    desk = Desk(presence_only=presence_only, fen=BISHOP_TAKES, clock=True)
    desk.lift("c1")
    desk.put("e3", "B", 0.3)
    desk.lift("e3", 0.8)
    if not presence_only:
        desk.put("g5", "B", 0.3)
    desk.press(Side.LEFT, 0.4)
    assert desk.final_ucis() == ["c1g5"]
    assert [e.uci for e in desk.out if isinstance(e, MoveEvent) and e.final] == ["c1g5"]


@pytest.mark.parametrize("presence_only", [False, True], ids=["identity", "presence"])
def test_slide_resting_on_its_path_then_the_reply_at_once(presence_only: bool) -> None:
    """The same without a clock, and Black's king answers within a second: the rest on e3
    was no move, the reply tells the bishop went on."""
    desk = Desk(presence_only=presence_only, fen=BISHOP_TAKES)
    desk.lift("c1")
    desk.put("e3", "B", 0.3)
    desk.lift("e3", 0.8)
    if not presence_only:
        desk.put("g5", "B", 0.3)
    desk.lift("e8", 0.8)
    desk.put("d7", "k", 0.5)
    desk.wait(3)
    assert desk.final_ucis() == ["c1g5", "e8d7"]


def test_slide_resting_on_its_path_stays_there() -> None:
    """A piece set down on a square of its path that stays there is the move to it."""
    desk = Desk(presence_only=True, fen=BISHOP_TAKES)
    desk.lift("c1")
    desk.put("e3", "*", 0.3)
    desk.wait(3)
    assert desk.final_ucis() == ["c1e3"]


# -- the harness ---------------------------------------------------------------------------


def test_presence_only_streams_model_fast_hands_by_default() -> None:
    """``games.stream`` sweeps captured pieces off and rests capturing slides on presence-only
    boards unless told otherwise; piece-identity streams are as they were."""
    game = games.lichess_games()[1]
    board = game.board()
    captures = 0
    for move in game.moves:
        captures += board.is_capture(move)
        board.push(move)

    def swept(item: games.Stream) -> int:
        """Captures whose captured square did not change during the move (the events of
        each move end with its clock press)."""
        moves: list[set[int]] = [set()]
        for event in item.events:
            if isinstance(event, SquareChanged):
                moves[-1].add(event.square)
            elif isinstance(event, LeverMoved):
                moves.append(set())
        position, count = game.board(), 0
        for move, changed in zip(game.moves, moves, strict=False):
            if position.is_capture(move) and not position.is_en_passant(move):
                count += move.to_square not in changed
            position.push(move)
        return count

    options = {"seed": 1, "handling": Handling.noisy(), "clock": True}
    fast = games.stream(game, presence_only=True, **options)  # type: ignore[arg-type]
    slow = games.stream(game, presence_only=True, sweep=0.0, rest=0.0, **options)  # type: ignore[arg-type]
    identity = games.stream(game, presence_only=False, **options)  # type: ignore[arg-type]
    same = games.stream(game, presence_only=False, sweep=0.0, rest=0.0, **options)  # type: ignore[arg-type]
    assert captures >= 6
    assert swept(slow) == 0
    assert swept(fast) >= 1
    assert identity.events == same.events


def test_a_slide_rests_on_a_square_of_its_path() -> None:
    """``Handling.slide_rest``: the piece stands on one square between for ``rest_time``."""
    handling = replace(Handling.tidy(), slide=1.0, slide_rest=1.0, rest_time=(0.5, 0.6))
    board = chess.Board(BISHOP_TAKES)
    steps = move_steps(board, chess.Move.from_uci("c1g5"), random.Random(3), handling)
    timed = timeline(steps)
    between = {chess.D2, chess.E3, chess.F4}
    rests = [
        later[0] - earlier[0]
        for earlier, later in itertools.pairwise(timed)
        if earlier[1].square in between
        and earlier[1].square == later[1].square
        and later[1].piece is Piece.EMPTY
    ]
    assert any(0.5 <= rest <= 0.6 for rest in rests)


def test_a_neighbour_knocked_and_set_back_does_not_hold_up_the_reading_ahead() -> None:
    """Qxh2 swept (only b2 reads empty), then at once ...Na6-b8 with the bishop on c7
    knocked over and set back after the knight landed, then b6, ...Nc6 and bxc7 without a
    pause long enough to complete a move.  The set-back place completes no action: the
    game is read ahead there (swept capture and reply), and followed to the end."""
    desk = Desk(presence_only=True, fen="4brkr/p1bq1p2/n4P2/1P6/2P5/1N6/1Q5p/3q1BKR w - - 0 1")
    desk.lift("b2", 1.7)
    desk.lift("a6", 1.3)
    desk.lift("c7", 0.17)
    desk.put("b8", "*", 0.26)
    desk.put("c7", "*", 1.07)
    assert desk.all_ucis() == ["b2h2", "a6b8"]
    desk.put("b6", "*", 1.9)  # set down before b5 is lifted
    desk.lift("b5", 0.01)
    desk.move("b8c6", "*", 0.03)
    desk.lift("b6", 1.3)
    desk.lift("c7", 1.35)
    desk.put("c7", "*", 0.25)
    desk.wait(3)
    desk.wait(3)
    assert desk.final_ucis() == ["b2h2", "a6b8", "b5b6", "b8c6", "b6c7"]
    assert of_type(desk.out, "mismatch") == []


def test_a_square_left_by_a_swept_capture_and_taken_by_the_reply_is_read_ahead() -> None:
    """...exf1=R+ swept with no clock (a promotion is not read at the settle delay: the pawn
    may be held while the new piece is fetched), then Ke1-e2, the king set down where the
    pawn stood: e2 reads empty, then occupied again, and only e1 differs from the position
    before.  Reading ahead lets e2 flip twice (it was lifted and set down) and follows."""
    desk = Desk(presence_only=True, fen="4k3/8/8/8/8/8/4p3/4KB2 b - - 0 1")
    desk.recognizer.set_promotion("r")
    desk.lift("e2", 1.0)
    desk.wait(3)
    desk.wait(3)
    desk.lift("e1", 5.0)
    desk.put("e2", "*", 0.7)
    assert desk.all_ucis() == ["e2f1r", "e1e2"]
    desk.wait(3)
    desk.wait(3)
    assert desk.final_ucis() == ["e2f1r", "e1e2"]
    assert of_type(desk.out, "mismatch") == []
