"""The hall writes a board input the table answered first with its echo straight from the
table's events (``Store.append_echoed``): the rows are those ``Store.append`` writes from the
same input and outputs, byte for byte."""

from __future__ import annotations

import time
from pathlib import Path

from replica_rows import input_rows

from dgt.events import BoardEvent, BoardSnapshot, ClockUpdate, LeverMoved, Side, SquareChanged
from dgt.protocol import Piece
from dgt.recording import parse_placement, parse_square
from service.config import TableConfig
from service.hall import CLOCK_REFRESH, Hall
from service.store import Store, board_input, output_json

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"


def _events() -> list[BoardEvent]:
    e2, e4, e7, e5 = (parse_square(name) for name in ("e2", "e4", "e7", "e5"))
    return [
        BoardSnapshot(1.0, parse_placement(START), "connect"),
        ClockUpdate(1.5, 300.0, 300.0, False, Side.LEFT, False, False, False, None),
        LeverMoved(2.0, Side.RIGHT),
        ClockUpdate(2.5, 299.0, 300.0, True, Side.RIGHT, False, False, False, Side.LEFT),
        ClockUpdate(3.0, 298, 300, True, Side.RIGHT, False, False, False, Side.LEFT),  # ints
        SquareChanged(3.5, e2, Piece.EMPTY, Piece.WPAWN),
        SquareChanged(4.0, e4, Piece.WPAWN, Piece.EMPTY),
        ClockUpdate(4.5, 297.0, 300.0, True, Side.RIGHT, False, False, False, Side.LEFT),
        LeverMoved(5.0, Side.LEFT),
        SquareChanged(5.5, e7, Piece.EMPTY, Piece.BPAWN),
        SquareChanged(6.0, e5, Piece.BPAWN, Piece.EMPTY),
        ClockUpdate(6.5, 297.0, 299.0, True, Side.LEFT, False, False, False, Side.RIGHT),
    ]


def test_the_echoed_rows_are_the_rows_append_writes(tmp_path: Path) -> None:
    store = Store(tmp_path / "hall.db")
    hall = Hall(store)
    runner = hall.add_table(TableConfig("1", "port-1", None, {"white": "A", "black": "B"}))
    reference = Store(tmp_path / "reference.db")
    answered = 0
    for event in _events():
        item = runner.feed(event, hall.wall_time(event.time))
        assert item is not None
        answered += len(item.produced)
        hall.table_input(runner, item)
        outs = [output_json(o) for o in item.produced]
        reference.append("1", "board", item.time, board_input(event), outs)
    hall.settle()
    reference.commit()
    store.close()
    reference.close()
    rows = input_rows(tmp_path / "hall.db")
    assert answered > len(_events())  # moves and clock events besides the echoes
    assert {row[1] for row in rows} == {"echo", "out"}
    assert rows == input_rows(tmp_path / "reference.db")


def test_a_clock_report_is_shown_when_its_clock_starts_or_stops_and_else_kept_quiet(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "hall.db")
    hall = Hall(store)
    shown: list[dict[str, object]] = []
    hall.subscribe(lambda update: shown.extend(update.events))
    runner = hall.add_table(TableConfig("1", "port-1", None, {"white": "A", "black": "B"}))
    start = time.monotonic()
    reports = [  # (seconds from start, running)
        (0.0, False), (0.5, False), (1.0, True), (1.5, True), (2.0, False), (2.5, False),
    ]  # fmt: skip
    for offset, running in reports:
        event = ClockUpdate(
            start + offset, 300.0 - offset, 300.0, running, Side.RIGHT, False, False, False,
            Side.LEFT if running else None,
        )  # fmt: skip
        item = runner.feed(event, hall.wall_time(event.time))
        assert item is not None
        assert len(item.produced) == 1  # the echo alone
        hall.table_input(runner, item)
    hall.settle()
    store.close()
    clocks = [(event["left"], event["running"]) for event in shown if event.get("event") == "clock"]
    assert clocks == [(300.0, False), (299.0, True), (298.0, False)]
    assert len(input_rows(tmp_path / "hall.db")) == len(reports)  # every one stored


def test_a_running_clock_is_shown_once_per_refresh_on_any_time_line(tmp_path: Path) -> None:
    """The refresh rule reads the board events' own times: a replay, whose events carry
    the log's wall-clock times, keeps quiet what the service kept quiet."""
    store = Store(tmp_path / "hall.db")
    hall = Hall(store)
    shown: list[dict[str, object]] = []
    hall.subscribe(lambda update: shown.extend(update.events))
    runner = hall.add_table(TableConfig("1", "port-1", None, {"white": "A", "black": "B"}))
    start = 1_800_000_000.0  # a log's time line, far from time.monotonic()'s
    offsets = [i * 0.5 for i in range(25)]  # 12 s of a running clock, a report each 0.5 s
    for offset in offsets:
        event = ClockUpdate(
            start + offset, 300.0 - offset, 300.0, True, Side.RIGHT, False, False, False,
            Side.LEFT,
        )  # fmt: skip
        item = runner.feed(event, event.time)
        assert item is not None
        hall.table_input(runner, item)
        hall.settle()
    store.close()
    clocks = [event["left"] for event in shown if event.get("event") == "clock"]
    assert clocks == [300.0, 300.0 - CLOCK_REFRESH, 300.0 - 2 * CLOCK_REFRESH]
    assert len(input_rows(tmp_path / "hall.db")) == len(offsets)  # every one stored
