"""The 64-square mirror for both board families."""

from __future__ import annotations

import random

import chess
import pytest

from dgt.events import BoardFamily, BoardSnapshot, SquareChanged
from dgt.mirror import Mirror
from dgt.protocol import BoardDump, FieldUpdate, Piece, index_to_square, square_to_index

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


@pytest.mark.parametrize("family", list(BoardFamily))
def test_random_updates_and_dumps_agree_with_a_plain_model(family: BoardFamily) -> None:
    """Field updates, dumps (most equal to the mirror, as settle re-dumps are; some not;
    with every byte value), loads and a family switch: the mirror's events and squares are
    those of a plain list of pieces decoded one square at a time."""
    rng = random.Random(11)
    mirror = Mirror(family)
    model = [Piece.EMPTY] * 64
    codes = (0, 1, 2, 6, 7, 12, 13, 15, 16, 0x40, 0x7F, 0x80, 0xFF)

    def presence() -> bool:
        return mirror.family is BoardFamily.PRESENCE_ONLY

    for step in range(4000):
        roll = rng.random()
        if roll < 0.6:
            index, code = rng.randrange(64), rng.choice(codes)
            square = index_to_square(index)
            piece = Piece.from_wire(code, presence())
            expected = None if piece is model[square] else (square, piece, model[square])
            change = mirror.apply_update(FieldUpdate(index, code), float(step))
            assert (change and (change.square, change.piece, change.previous)) == expected
            model[square] = piece
        elif roll < 0.9:
            fields = bytearray(BoardDump.from_pieces(model).fields)
            if rng.random() < 0.4:  # a square or two not as the mirror has them
                for _ in range(rng.randrange(1, 3)):
                    fields[rng.randrange(64)] = rng.choice(codes)
            pieces = BoardDump(bytes(fields)).pieces(presence())
            expected_changes = [
                (s, pieces[s], model[s]) for s in range(64) if pieces[s] is not model[s]
            ]
            changes = mirror.apply_dump(BoardDump(bytes(fields)), float(step))
            assert [(c.square, c.piece, c.previous) for c in changes] == expected_changes
            model = list(pieces)
        elif roll < 0.97:
            model = [Piece.from_wire(rng.choice(codes), presence()) for _ in range(64)]
            mirror.load(model, float(step))
        else:
            mirror.family = rng.choice(list(BoardFamily))
        assert list(mirror.squares) == model
