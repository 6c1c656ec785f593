"""The JSON-lines event log: every event round-trips, damaged lines are skipped."""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path

import chess
import pytest

from dgt.events import (
    BoardMemory,
    BoardSnapshot,
    ButtonPressed,
    ClockConnection,
    ClockUpdate,
    LeverMoved,
    LinkLost,
    LinkRestored,
    Side,
    SquareChanged,
)
from dgt.protocol import Piece
from dgt.recording import (
    Chunk,
    RecordWriter,
    parse_placement,
    parse_square,
    placement,
    read_record,
    square_name,
)


def start_squares() -> tuple[Piece, ...]:
    board = chess.Board()
    out = [Piece.EMPTY] * 64
    for square, piece in board.piece_map().items():
        out[square] = Piece.from_symbol(piece.symbol())
    return tuple(out)


EVENTS = [
    SquareChanged(1.5, chess.E2, Piece.EMPTY, Piece.WPAWN),
    SquareChanged(1.75, chess.E4, Piece.OCCUPIED, Piece.EMPTY),
    BoardSnapshot(0.25, start_squares(), "connect"),
    ClockUpdate(2.0, 299.0, 300.0, True, Side.RIGHT, False, True, False, Side.LEFT),
    ClockUpdate(2.5, 1.0, 2.0, False, Side.LEFT),
    LeverMoved(3.0, Side.LEFT),
    ButtonPressed(3.5, "ok", 0x41),
    ClockConnection(4.0, True, (2, 0), "version"),
    ClockConnection(4.5, False, None, "no answer"),
    LinkLost(5.0, "device vanished"),
    LinkRestored(6.0, frozenset({chess.E2, chess.E4}), 1.0),
]


def test_placement_of_start_position_is_fen() -> None:
    assert placement(start_squares()) == chess.STARTING_BOARD_FEN


@pytest.mark.parametrize("symbol", [p.symbol for p in Piece])
def test_placement_round_trips_every_symbol(symbol: str) -> None:
    squares = list(start_squares())
    squares[chess.D4] = Piece.from_symbol(symbol)
    assert parse_placement(placement(squares)) == tuple(squares)


@pytest.mark.parametrize("bad", ["8/8/8", "9/8/8/8/8/8/8/8", "7/8/8/8/8/8/8/8", "8/8/8/8/8/8/8/7Z"])
def test_bad_placement_is_a_value_error(bad: str) -> None:
    with pytest.raises(ValueError, match=r"rank|placement|symbol"):
        parse_placement(bad)


def test_square_names() -> None:
    assert [square_name(s) for s in (0, 7, 12, 63)] == ["a1", "h1", "e2", "h8"]
    assert parse_square("e2") == 12
    with pytest.raises(ValueError, match="not a square"):
        parse_square("i9")


def test_every_event_and_chunk_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "game.jsonl"
    with path.open("w") as stream:
        writer = RecordWriter(stream, source="/dev/pts/7")
        writer.chunk(0.125, b"\x8e\x00\x05\x0c\x00")
        writer.chunk(0.126, b"\x42", direction="tx")
        for event in EVENTS:
            writer.event(event)
    items = list(read_record(path))
    assert items[0] == Chunk(0.125, "rx", b"\x8e\x00\x05\x0c\x00")
    assert items[1] == Chunk(0.126, "tx", b"\x42")
    assert items[2:] == EVENTS
    header = json.loads(path.read_text().splitlines()[0])
    assert header["format"] == "dgt-record"
    assert header["source"] == "/dev/pts/7"


def test_memory_event_keeps_its_place(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    with path.open("w") as stream:
        RecordWriter(stream).event(BoardMemory(1.0, ("a", "b")))
    (event,) = read_record(path)
    assert isinstance(event, BoardMemory)
    assert event.time == 1.0


def test_damaged_lines_are_skipped_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    buffer = io.StringIO()
    writer = RecordWriter(buffer)
    writer.event(EVENTS[0])
    lines = [
        buffer.getvalue().rstrip("\n"),
        "{not json",
        '{"t": 1, "type": "event", "event": "square", "square": "z9", "piece": "."}',
        '{"t": 1, "type": "event", "event": "teleport"}',
        '{"t": 1, "type": "rx", "data": "zz"}',
        '{"t": 1, "type": "future-thing"}',
        "",
    ]
    lines.append(lines[0].splitlines()[-1])  # a good event again after the damage
    path = tmp_path / "damaged.jsonl"
    path.write_text("\n".join(lines) + '\n{"t": 2, "type": "ev')  # cut off at the end
    with caplog.at_level(logging.WARNING, logger="dgt.recording"):
        items = list(read_record(path))
    assert items == [EVENTS[0], EVENTS[0]]
    warned = [r.getMessage() for r in caplog.records]
    assert len(warned) == 6
    assert all("damaged.jsonl:" in m for m in warned)
