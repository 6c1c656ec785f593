"""A clock report that changes nothing but time takes the hall's short way from the board
to its row (``Hall.clock_echo``: no event as logged, no answer, its row's text written in
one step): the rows stored and the updates shown are those of the general way (the table
fed the report as logged, ``Hall.table_input``), byte for byte."""

from __future__ import annotations

import asyncio
import itertools
import random
import time
from functools import partial
from pathlib import Path
from typing import Any

import orjson
import pytest
from replica_rows import input_rows

import service.hall
from dgt.emulator.board import start_squares
from dgt.events import BoardEvent, BoardSnapshot, ClockUpdate, LeverMoved, Side
from service.config import TableConfig
from service.hall import Hall, Update
from service.store import Store, board_input, clock_text


def _reports(seed: int) -> list[BoardEvent]:
    """A board's events: its snapshot, then a clock reporting every half second, with
    lever presses, stops, flags, a low battery, whole and other times now and then."""
    rng = random.Random(seed)
    t = 100.0
    out: list[BoardEvent] = [BoardSnapshot(t, start_squares(), "connect")]
    left, right = 300.0, 300.0
    lever = Side.RIGHT
    running = False
    for _ in range(240):
        t += 0.5
        roll = rng.random()
        if roll < 0.03:
            lever = Side.LEFT if lever is Side.RIGHT else Side.RIGHT
            out.append(LeverMoved(t, lever))
        elif roll < 0.06:
            running = not running
        if running and rng.random() < 0.5:
            if lever is Side.RIGHT:
                left = max(0.0, left - 1.0)
            else:
                right = max(0.0, right - 1.0)
        shown_left: Any = left
        if rng.random() < 0.03:
            shown_left = left + 0.5  # not a whole second: the general way writes it
        elif rng.random() < 0.03:
            shown_left = int(left)  # an int: the general way too
        turn = (Side.LEFT if lever is Side.RIGHT else Side.RIGHT) if running else None
        flags = (rng.random() < 0.02, rng.random() < 0.02, rng.random() < 0.05)
        out.append(ClockUpdate(t, shown_left, right, running, lever, *flags, turn))
    return out


class _CountingStore(Store):
    clock_rows = 0

    def append_clock(self, table_id: str, t: float, report: ClockUpdate) -> None:
        self.clock_rows += 1
        super().append_clock(table_id, t, report)


def _extend(seen: list[dict[str, Any]], update: Update) -> None:
    seen.extend(update.events)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_short_way_stores_and_shows_what_the_general_way_does(
    tmp_path: Path, seed: int
) -> None:
    settings = {"white": "A", "black": "B"}
    halls: list[Hall] = []
    shown: list[list[dict[str, Any]]] = []
    for name in ("general", "short"):
        store = _CountingStore(tmp_path / f"{name}.db")
        hall = Hall(store, wall_clock=lambda: 1_000_000.0)
        if halls:
            hall._offset = halls[0]._offset  # the same time line
        seen: list[dict[str, Any]] = []
        hall.subscribe(partial(_extend, seen))
        runner = hall.add_table(TableConfig("1", "port-1", None, settings))
        for event in _reports(seed):
            if name == "general":
                item = runner.feed(event, hall.wall_time(event.time))
                assert item is not None
                hall.table_input(runner, item)
            else:
                runner.board_event(event)
            hall.settle()
        store.close()
        short = store.clock_rows
        halls.append(hall)
        shown.append(seen)
    assert short > 100  # most reports took the short way
    assert input_rows(tmp_path / "short.db") == input_rows(tmp_path / "general.db")
    assert shown[1] == shown[0]
    assert any(event.get("event") == "clock" for event in shown[0])


def test_a_clock_reports_text_is_orjsons_of_its_data() -> None:
    times = [0.0, -0.0, 1.0, 59.0, 300.0, 35999.0, 1e15, 1e16, 1e22]
    flags = (False, True)
    for left, right in itertools.product(times, times[:3]):
        for running, lf, rf, battery in itertools.product(flags, repeat=4):
            for lever in Side:
                for turn in (None, Side.LEFT, Side.RIGHT):
                    report = ClockUpdate(1.0, left, right, running, lever, lf, rf, battery, turn)
                    text = clock_text(report)
                    assert text == orjson.dumps(board_input(report)).decode()


@pytest.mark.parametrize("left", [0.5, 1e-05, float("nan"), float("inf"), 300])
def test_a_clock_report_with_other_times_is_left_to_the_general_writer(left: Any) -> None:
    report = ClockUpdate(1.0, left, 300.0, True, Side.LEFT, False, False, False, Side.LEFT)
    assert clock_text(report) is None


async def test_a_quiet_report_on_the_short_way_waits_for_a_commit_unless_one_is_overdue(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As any row shown to nobody: committed by the next commit, at the latest after
    QUIET_COMMIT_DELAY, and by the next input when the loop leaves that commit overdue."""
    monkeypatch.setattr(service.hall, "QUIET_COMMIT_DELAY", 0.01)
    monkeypatch.setattr(service.hall, "FLUSH_OVERDUE", 0.05)
    store = _CountingStore(tmp_path / "hall.db")
    hall = Hall(store)
    hall._loop = asyncio.get_running_loop()  # as Hall.start() sets it (no board opened here)
    runner = hall.add_table(TableConfig("1", "port-1", None, {"white": "A", "black": "B"}))
    runner.board_event(BoardSnapshot(time.monotonic(), start_squares(), "connect"))
    left = 300.0

    def report() -> None:
        nonlocal left
        left -= 1.0
        event = ClockUpdate(time.monotonic(), left, 300.0, True, Side.RIGHT, turn=Side.LEFT)
        runner.board_event(event)

    for _ in range(5):  # the table arms its quick clock; the first report is shown
        report()
        hall.settle()
    assert store.clock_rows == 4
    commits = store.commits
    report()  # logged, not shown, no commit of its own yet
    assert store.clock_rows == 5
    assert store.pending == 1
    assert store.commits == commits
    time.sleep(0.1)  # noqa: ASYNC251 (the loop is held past the commit's due time)
    report()
    assert store.commits == commits + 1  # made by the input, without a turn of the loop
    assert store.pending == 0
    report()
    assert store.pending == 1
    await asyncio.sleep(0.05)  # a turn of the loop after QUIET_COMMIT_DELAY
    assert store.pending == 0
    assert store.commits == commits + 2
    store.close()
