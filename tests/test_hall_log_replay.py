"""A hall's log recorded before the hall's inputs were made cheaper (``bench/hall.py --keep-db``
at 300 boards, eight of its tables: ``tests/data/hall-log.db.gz``) loads with no difference,
and the hall writes the same rows again, byte for byte, when its inputs are made again."""

from __future__ import annotations

import gzip
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from dgt.recording import event_from_json
from service.config import TableConfig
from service.hall import Hall
from service.store import Store, grouped_inputs
from service.table.admin import replayed_admin_args
from service.table_runner import InputKind, TableInput

RECORDED = Path(__file__).parent / "data" / "hall-log.db.gz"

_ROWS = "SELECT role, kind, t, data FROM log WHERE table_id = ? AND role != 'table' ORDER BY seq"


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    path = tmp_path / "recorded.db"
    with gzip.open(RECORDED) as packed, path.open("wb") as out:
        shutil.copyfileobj(packed, out)
    return path


def _tables(path: Path) -> dict[str, dict[str, Any]]:
    store = Store(path)
    try:
        return {table_id: store.settings(table_id) or {} for table_id in store.table_ids()}
    finally:
        store.close()


def test_the_recorded_log_loads_and_replays_with_no_difference(recorded: Path) -> None:
    tables = _tables(recorded)
    assert len(tables) == 8
    store = Store(recorded)
    try:
        hall = Hall(store)
        for table_id, settings in tables.items():
            runner = hall.add_table(TableConfig(table_id, f"/dev/null-{table_id}", None, settings))
            assert runner.inputs > 100
            assert runner.replay_divergences == 0, table_id
    finally:
        store.close()


def _parse(text: str, seq: int) -> dict[str, Any]:
    import json

    value: dict[str, Any] = json.loads(text)
    return value


def test_the_hall_writes_the_recorded_rows_again_byte_for_byte(
    recorded: Path, tmp_path: Path
) -> None:
    """Every recorded input made again as the hall makes it (a board event through its
    runner, a tick, an admin command), in the order the hall took them: the rows written
    are the recorded ones, as text."""
    tables = _tables(recorded)
    source = sqlite3.connect(recorded)
    store = Store(tmp_path / "again.db")
    try:
        hall = Hall(store)
        for table_id, settings in tables.items():
            runner = hall.add_table(TableConfig(table_id, f"/dev/null-{table_id}", None, settings))
            rows = source.execute(
                "SELECT seq, role, kind, t, data FROM log WHERE table_id = ? ORDER BY seq",
                (table_id,),
            ).fetchall()
            for item in grouped_inputs(iter(rows), _parse):
                if item.kind == "board":
                    fed = runner.feed(event_from_json(item.t, item.data), item.t)
                    assert fed is not None
                    hall.table_input(runner, fed)
                elif item.kind == "tick":
                    produced = runner.tick(item.t)
                    hall.table_input(runner, TableInput(InputKind.TICK, item.t, produced))
                else:
                    command = str(item.data["command"])
                    given = item.data.get("args", {})
                    args = replayed_admin_args(command, given, item.outputs)
                    outs = [o.to_json() for o in runner.admin(command, args, item.t)]
                    hall._log(runner, "admin", item.t, {"command": command, "args": given}, outs)
        hall.settle()
        mine = sqlite3.connect(tmp_path / "again.db")
        try:
            for table_id in tables:
                again = mine.execute(_ROWS, (table_id,)).fetchall()
                assert again == source.execute(_ROWS, (table_id,)).fetchall(), table_id
        finally:
            mine.close()
    finally:
        store.close()
        source.close()


def test_a_clock_report_at_once_reads_as_tick_then_feed(recorded: Path) -> None:
    """``Recognizer.clock_report`` answers what ``tick`` then ``feed`` answer, and leaves
    the recogniser as they do, over every board event of the recorded tables."""
    from dgt.events import ClockUpdate
    from service.recognize import Recognizer

    source = sqlite3.connect(recorded)
    try:
        for table_id in _tables(recorded):
            rows = source.execute(
                "SELECT seq, role, kind, t, data FROM log WHERE table_id = ? ORDER BY seq",
                (table_id,),
            ).fetchall()
            apart, at_once = Recognizer(), Recognizer()
            reports = 0
            for item in grouped_inputs(iter(rows), _parse):
                if item.kind != "board":
                    continue
                event = event_from_json(item.t, item.data)
                expected = apart.tick(item.t) + apart.feed(event)
                if type(event) is ClockUpdate:
                    reports += 1
                    got = at_once.clock_report(event)
                else:
                    got = at_once.tick(item.t) + at_once.feed(event)
                assert got == expected, (table_id, item.seq)
                assert at_once.clock_in_use == apart.clock_in_use
            assert reports > 50
            record, again = apart.record(), at_once.record()
            assert record is not None
            assert again is not None
            assert again.moves == record.moves
    finally:
        source.close()
