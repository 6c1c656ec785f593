"""The realtime recogniser: timestamped lifts and places in, moves in virtual time out.

Pure: events are built here with their times (seconds); no board, no clock.  The tick is
1 s unless a test says otherwise, so a pawn's single step takes 1 s and a delay 10 s.
"""

from __future__ import annotations

from typing import Any

import chess
import pytest

from dgt.events import BoardSnapshot, SquareChanged
from dgt.protocol.constants import Piece
from service.recognize.events import Amend, NewGame, Result
from service.recognize.realtime import (
    Collision,
    Corrections,
    RealtimeRecognizer,
    Refused,
    StartedMove,
    rule_of,
)
from service.variants import StartPosition
from service.variants.standard import squares_of

sq = chess.parse_square


def start_pieces(fen: str = chess.STARTING_BOARD_FEN, presence: bool = False) -> list[Piece]:
    cells = [Piece.EMPTY] * 64
    for square, piece in chess.BaseBoard(fen).piece_map().items():
        cells[square] = Piece.OCCUPIED if presence else Piece.from_symbol(piece.symbol())
    return cells


class Hands:
    """Players' hands at a board that reports to a recogniser; every event is kept."""

    def __init__(
        self,
        tick: float = 1.0,
        presence: bool = False,
        board: str = chess.STARTING_BOARD_FEN,
        **kwargs: Any,
    ) -> None:
        self.rec = RealtimeRecognizer(tick, **kwargs)
        self.presence = presence
        self.cells = start_pieces(board, presence=presence)
        self.got: list[Any] = self.rec.feed(BoardSnapshot(0.0, tuple(self.cells), "connect"))

    def lift(self, name: str, t: float) -> list[Any]:
        square = sq(name)
        before, self.cells[square] = self.cells[square], Piece.EMPTY
        out = self.rec.feed(SquareChanged(t, square, Piece.EMPTY, before))
        self.got += out
        return out

    def put(self, name: str, symbol: str, t: float) -> list[Any]:
        square = sq(name)
        piece = Piece.OCCUPIED if self.presence else Piece.from_symbol(symbol)
        self.cells[square] = piece
        out = self.rec.feed(SquareChanged(t, square, piece, Piece.EMPTY))
        self.got += out
        return out

    def tick(self, t: float) -> list[Any]:
        out = self.rec.tick(t)
        self.got += out
        return out

    def of(self, kind: type) -> list[Any]:
        return [e for e in self.got if isinstance(e, kind)]

    def moves(self) -> list[tuple[str, float]]:
        return [(m.uci, m.start) for m in self.of(StartedMove)]

    def corrections(self) -> list[str]:
        return [str(c) for c in self.rec.corrections]


def test_the_start_position_starts_a_game_and_a_lift_starts_the_move() -> None:
    h = Hands()
    assert [type(e) for e in h.got if isinstance(e, NewGame)] == [NewGame]
    h.lift("e2", 1.0)
    h.put("e4", "P", 1.6)
    [move] = h.of(StartedMove)
    assert (move.uci, move.start, move.arrives, move.side) == ("e2e4", 1.0, 3.0, True)
    assert h.corrections() == []
    h.tick(4.0)
    game = h.rec.game
    assert game is not None
    assert game.delays()[sq("e4")] == pytest.approx(9.0)  # arrived at 3.0, ten ticks


def test_two_pieces_in_the_air_from_both_sides() -> None:
    h = Hands()
    h.lift("e2", 1.0)
    h.lift("e7", 1.1)
    h.lift("g1", 1.2)
    h.put("e5", "p", 1.3)
    h.put("f3", "N", 1.4)
    h.put("e4", "P", 1.5)
    assert h.moves() == [("e7e5", 1.1), ("g1f3", 1.2), ("e2e4", 1.0)]
    assert h.corrections() == []


@pytest.mark.parametrize("victim_first", [True, False])
def test_a_capture_with_the_captured_piece_lifted_before_or_after(victim_first: bool) -> None:
    h = Hands()
    h.lift("e2", 0.0)
    h.put("e4", "P", 0.3)
    h.lift("d7", 0.1)
    h.put("d5", "p", 0.4)
    h.tick(14.0)  # both arrived at 2.0 and rested ten ticks
    if victim_first:
        h.lift("d5", 15.0)
        h.lift("e4", 15.2)
    else:
        h.lift("e4", 15.0)
        h.lift("d5", 15.2)
    h.put("d5", "P", 15.4)
    assert h.moves()[-1] == ("e4d5", 15.0 if not victim_first else 15.2)
    h.tick(17.0)
    assert h.corrections() == []
    assert h.rec.game is not None
    assert h.rec.game.squares[sq("d5")] == "P"


def test_a_piece_put_back_is_no_move_and_a_knocked_piece_set_back_neither() -> None:
    h = Hands()
    h.lift("g1", 1.0)
    h.put("g1", "N", 1.5)
    h.lift("d1", 2.0)  # knocked over
    h.put("d1", "Q", 2.1)
    assert h.moves() == []
    assert h.corrections() == []


def _ready_to_castle() -> Hands:
    """White's e4, Nf3 and Bc4 played and come to rest by 20.0: the king may castle short."""
    h = Hands()
    for name, target, symbol, t in (("e2", "e4", "P", 0.0), ("g1", "f3", "N", 0.5),
                                    ("f1", "c4", "B", 1.0)):  # fmt: skip
        h.lift(name, t)
        h.put(target, symbol, t + 0.2)
    h.tick(20.0)
    return h


def test_castling_king_first_then_rook() -> None:
    h = _ready_to_castle()
    h.lift("e1", 20.0)
    h.put("g1", "K", 20.3)
    assert h.corrections() == ["move R from h1 to f1"]  # the rook is still to come
    h.lift("h1", 20.5)
    h.put("f1", "R", 20.8)
    assert h.moves()[-1] == ("e1g1", 20.0)
    assert len(h.moves()) == 4
    assert h.corrections() == []


def test_castling_rook_first_is_amended_to_castling() -> None:
    h = _ready_to_castle()
    h.lift("h1", 20.0)
    h.put("f1", "R", 20.3)
    assert h.moves()[-1] == ("h1f1", 20.0)
    h.lift("e1", 20.5)
    h.put("g1", "K", 20.8)
    [amend] = h.of(Amend)
    assert (amend.old_uci, amend.uci) == ("h1f1", "e1g1")
    assert [m.uci for m in h.rec.moves][-1] == "e1g1"
    assert h.rec.moves[-1].lifted == 20.0  # the castling started with the rook's lift
    assert h.corrections() == []
    game = h.rec.game
    assert game is not None
    h.tick(23.0)
    assert game.squares[sq("g1")] == "K"
    assert game.squares[sq("f1")] == "R"


@pytest.mark.parametrize("symbol", ["Q", "P"])
def test_promotion_to_a_queen_whatever_piece_is_set_down(symbol: str) -> None:
    h2 = _from_position("4k3/P7/8/8/8/8/8/4K3")
    h2.lift("a7", 1.0)
    h2.put("a8", symbol, 1.2)
    assert [m.uci for m in h2.of(StartedMove)] == ["a7a8q"]
    expected = [] if symbol == "Q" else ["take P off a8", "put Q on a8"]
    assert h2.corrections() == expected


def _from_position(board: str) -> Hands:
    """Hands at a board whose game starts from ``board`` (not the classical start)."""
    fen = f"{board} w - - 0 1"
    start = StartPosition("realtime", fen, squares_of(chess.Board(fen)))
    h = Hands(start=start, board=board)
    assert any(isinstance(e, NewGame) for e in h.got)
    return h


def test_a_move_during_the_delay_is_refused_and_set_right() -> None:
    h = Hands()
    h.lift("g1", 0.0)
    h.put("f3", "N", 0.3)  # arrives at 2.0, delay until 12.0
    h.lift("f3", 5.0)
    out = h.put("e5", "N", 5.3)
    [refused] = [e for e in out if isinstance(e, Refused)]
    assert refused.rule == "3.1"
    assert refused.uci == "f3e5"
    assert refused.ply is None
    assert h.corrections() == ["move N from e5 to f3"]
    h.lift("e5", 6.0)
    h.put("f3", "N", 6.2)
    assert h.corrections() == []
    assert h.moves() == [("g1f3", 0.0)]


def test_same_destination_refused_for_the_later_lift() -> None:
    h = _from_position("r3k3/8/8/8/8/8/8/R3K3")
    h.lift("a1", 0.0)
    h.put("a4", "R", 0.2)  # a1-a4, three ticks
    h.lift("a4", 0.5)  # Black takes the white rook off ...
    h.lift("a8", 0.6)
    out = h.put("a4", "r", 0.8)  # ... and goes to a4 too: rule 3.3
    [refused] = [e for e in out if isinstance(e, Refused)]
    assert (refused.uci, refused.rule) == ("a8a4", "3.3")
    assert h.corrections() == ["move r from a4 to a8", "put R on a4"]
    h.lift("a4", 1.0)
    h.put("a8", "r", 1.1)
    h.put("a4", "R", 1.2)
    assert h.corrections() == []
    assert h.moves() == [("a1a4", 0.0)]


def test_in_move_the_later_mover_is_removed() -> None:
    # White's rook a1-a8 from 0.0 is on a5 from 3.5 to 4.5; Black's bishop c7-a5 from 2.0
    # reaches a5 at 3.5 too, still moving: it started later, it is removed (rule 4.2).
    h = _from_position("4k3/2b5/8/8/8/8/8/R3K3")
    h.lift("a1", 0.0)
    h.put("a8", "R", 0.2)
    h.lift("c7", 2.0)
    h.put("a5", "b", 2.2)
    assert h.corrections() == []
    out = h.tick(3.6)
    [collision] = [e for e in out if isinstance(e, Collision)]
    assert (collision.kind, collision.rule, collision.piece, collision.by) == (
        "in-move", "4.2", "b", "R")  # fmt: skip
    assert h.corrections() == ["take b off a5"]


def test_double_dodge_when_both_started_together() -> None:
    # Rook a1-a8 and bishop c5-a3, both lifted at 0.0: both pivots on a3 from 1.5 (4.4).
    h = _from_position("4k3/8/8/2b5/8/8/8/R3K3")
    h.lift("a1", 0.0)
    h.lift("c5", 0.0)
    h.put("a8", "R", 0.2)
    h.put("a3", "b", 0.3)
    h.tick(4.0)
    assert [c.kind for c in h.of(Collision)] == ["dodge"]
    assert h.corrections() == []
    game = h.rec.game
    assert game is not None
    h.tick(9.0)
    assert game.squares[sq("a8")] == "R"
    assert game.squares[sq("a3")] == "b"


def test_collision_with_a_standing_piece_on_the_way() -> None:
    # White rook a1-a8 (7 ticks from 0.0); a black knight jumps to a4 arriving at 2.0
    # (b6-a4, lifted at 0.0); the rook's pivot reaches a4 at 2.5: the knight stands there
    # and is removed (rule 4.3), though Black's player has it on a4.
    h = _from_position("4k3/8/1n6/8/8/8/8/R3K3")
    h.lift("a1", 0.0)
    h.put("a8", "R", 0.1)
    h.lift("b6", 0.05)
    h.put("a4", "n", 0.2)
    h.tick(2.2)
    assert h.corrections() == []
    out = h.tick(3.0)
    [collision] = [e for e in out if isinstance(e, Collision)]
    assert (collision.kind, collision.rule, collision.piece) == ("capture", "4.3", "n")
    assert collision.square == sq("a4")
    assert h.corrections() == ["take n off a4"]
    h.lift("a4", 4.0)
    assert h.corrections() == []


def test_king_capture_ends_the_game() -> None:
    h = _from_position("4k3/8/8/8/8/8/8/4R1K1")
    h.lift("e8", 0.0)  # the black king takes flight too late ... no: it stands
    h.put("e8", "k", 0.1)
    h.lift("e8", 0.2)
    h.lift("e1", 0.3)
    h.put("e8", "R", 0.5)
    out = h.tick(8.0)
    [result] = [e for e in out if isinstance(e, Result)]
    assert (result.result, result.reason) == ("1-0", "king taken")


def test_presence_only_two_in_the_air_and_a_capture() -> None:
    h = Hands(presence=True)
    assert h.rec.presence_only
    h.lift("e7", 0.0)
    h.lift("e2", 0.1)
    h.put("e4", "*", 0.3)  # only e2-e4 is a move to e4
    h.put("e5", "*", 0.4)
    assert sorted(h.moves()) == [("e2e4", 0.1), ("e7e5", 0.0)]
    h.lift("d7", 0.5)
    h.put("d5", "*", 0.6)
    h.tick(14.0)
    h.lift("e4", 15.0)
    h.lift("d5", 15.1)  # the victim after the capturing piece
    h.put("d5", "*", 15.3)
    assert h.moves()[-1] == ("e4d5", 15.0)
    h.tick(17.0)
    assert h.corrections() == []


def test_a_board_turned_round_is_read_turned_back() -> None:
    rec = RealtimeRecognizer(1.0)
    cells = tuple(reversed(start_pieces()))
    got = rec.feed(BoardSnapshot(0.0, cells, "connect"))
    assert any(isinstance(e, NewGame) and e.rotated for e in got)
    out = rec.feed(SquareChanged(1.0, 63 - sq("e2"), Piece.EMPTY, Piece.WPAWN))
    out += rec.feed(SquareChanged(1.2, 63 - sq("e4"), Piece.WPAWN, Piece.EMPTY))
    assert [e.uci for e in out if isinstance(e, StartedMove)] == ["e2e4"]


def test_corrections_change_events_and_tick_range() -> None:
    h = Hands()
    h.lift("b1", 0.0)
    h.put("b3", "N", 0.2)  # no knight move
    assert [type(e) for e in h.got[-2:]] == [Refused, Corrections]
    assert h.corrections() == ["move N from b3 to b1"]
    with pytest.raises(ValueError, match=r"0\.1 to 1\.0"):
        RealtimeRecognizer(0.05)
    assert rule_of("rule 3.4/3.5: the path") == "3.4/3.5"
