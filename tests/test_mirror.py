"""The 64-square mirror for both board families."""

from __future__ import annotations

import chess
import pytest

from dgt.events import BoardFamily, BoardSnapshot, SquareChanged
from dgt.mirror import Mirror
from dgt.protocol import BoardDump, FieldUpdate, Piece, square_to_index

START = [Piece.EMPTY] * 64
for _sq, _p in chess.Board().piece_map().items():
    START[_sq] = Piece.from_symbol(_p.symbol())


def update(square: int, piece: Piece | int) -> FieldUpdate:
    return FieldUpdate(square_to_index(square), int(piece))


def test_field_updates_patch_the_mirror() -> None:
    m = Mirror(squares=START)
    lift = m.apply_update(update(chess.E2, Piece.EMPTY), 1.0)
    assert lift == SquareChanged(1.0, chess.E2, Piece.EMPTY, Piece.WPAWN)
    place = m.apply_update(update(chess.E4, Piece.WPAWN), 2.0)
    assert place == SquareChanged(2.0, chess.E4, Piece.WPAWN, Piece.EMPTY)
    assert m.apply_update(update(chess.E4, Piece.WPAWN), 3.0) is None  # no change, no event
    assert m[chess.E4] is Piece.WPAWN
    assert m[chess.E2] is Piece.EMPTY


def test_dump_reports_differences_and_snapshot() -> None:
    m = Mirror(squares=START)
    truth = list(START)
    truth[chess.E2], truth[chess.E4] = Piece.EMPTY, Piece.WPAWN
    changes = m.apply_dump(BoardDump.from_pieces(truth), 5.0)
    assert [(c.square, c.piece) for c in changes] == [
        (chess.E2, Piece.EMPTY),
        (chess.E4, Piece.WPAWN),
    ]
    assert m == truth
    assert m.diff(truth) == frozenset()
    snap = m.snapshot(6.0, "resync")
    assert snap == BoardSnapshot(6.0, tuple(truth), "resync")


def test_presence_only_family() -> None:
    m = Mirror(BoardFamily.PRESENCE_ONLY)
    event = m.apply_update(FieldUpdate(square_to_index(chess.A1), 1), 0.0)
    assert event is not None
    assert event.piece is Piece.OCCUPIED
    dump = BoardDump(bytes([1] * 16 + [0] * 32 + [1] * 16))
    m.apply_dump(dump, 1.0)
    assert m[chess.A1] is Piece.OCCUPIED
    assert m[chess.E4] is Piece.EMPTY
    assert m.presence_only
    unkeyed = Mirror(BoardFamily.PRESENCE_ONLY)
    unkeyed.apply_dump(BoardDump(bytes([0x7F] * 64)), 0.0)
    assert set(unkeyed.squares) == {Piece.UNKNOWN}


def test_diff_copy_and_ascii() -> None:
    a = Mirror(squares=START)
    b = a.copy()
    b.apply_update(update(chess.G1, Piece.EMPTY), 0.0)
    b.apply_update(update(chess.F3, Piece.WKNIGHT), 0.0)
    assert a.diff(b) == frozenset({chess.G1, chess.F3}) == b.diff(a)
    assert a.diff(a.squares) == frozenset()
    assert a.ascii().split("/")[0] == "rnbkqbnr".replace("kq", "qk")
    assert a.to_dump() == BoardDump.from_pieces(START)
    with pytest.raises(ValueError, match="64"):
        a.diff([Piece.EMPTY])
    with pytest.raises(ValueError, match="64"):
        Mirror(squares=[Piece.EMPTY])
