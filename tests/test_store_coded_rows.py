"""The store queues a row's role and kind by their codes (service.store.QueuedRow: SQLite
takes a small integer without copying it, where it copies each text): the log holds the
same rows, of the same types, as when they are given as text, through every way a row
reaches the file (statements of 32 and 8 rows, one by one, one input at a time after a bad
row, a recovery file)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from dgt.events import Side, clock_update
from service.store import (
    _INSERT,
    BOARD,
    ECHO,
    OUT,
    QueuedRow,
    Store,
    StoreError,
    row_text,
)
from service.store_recovery import read_recovery, recovery_path

COLUMNS = (
    "SELECT seq, table_id, role, typeof(role), kind, typeof(kind), t, typeof(t), data, "
    "typeof(data) FROM log WHERE role != 'table' ORDER BY seq"
)


def fill(store: Store, n: int) -> None:
    """``n`` inputs of every way the hall queues rows, on three tables."""
    for i in range(n):
        table = "abc"[i % 3]
        t = 1000.0 + i
        match i % 6:
            case 0:
                report = clock_update(t, 60.0 + i, 30.0, True, Side.LEFT, False, False, False, None)
                store.append_clock(table, t, report)
            case 1:
                store.append_echo(table, t, {"event": "lever", "high": "right", "i": i})
            case 2:
                data: dict[str, Any] = {"event": "square", "square": "e4", "i": i}
                store.append_echoed(table, t, data, [{"type": "move", "time": t, "ply": i}])
            case 3:
                data = {"event": "lever", "high": "left", "i": i}
                outs = [{"time": t, "type": "board", **data}, {"type": "clock", "time": t}]
                store.append(table, "board", t, data, outs)  # an echo found by append
            case 4:
                store.append(table, "board", t, {"event": "button", "i": i}, [{"type": "x"}])
            case _:
                store.append(table, "tick", t, {}, [{"type": "flag", "time": t, "i": i}])


def plain_rows(path: Path, queued: list[QueuedRow]) -> list[tuple[Any, ...]]:
    """What the queued rows are as a log's rows, written one by one, as text, by a plain
    insert into a log of the same layout (the general path)."""
    db = sqlite3.connect(path)
    try:
        db.execute(
            "CREATE TABLE log (seq INTEGER PRIMARY KEY, table_id TEXT NOT NULL, role TEXT NOT "
            "NULL, kind TEXT NOT NULL, t REAL NOT NULL, data TEXT NOT NULL)"
        )
        plain = "INSERT INTO log (table_id, role, kind, t, data) VALUES (?, ?, ?, ?, ?)"
        for row in queued:
            db.execute(plain, row_text(row))
        db.commit()
        return list(db.execute(COLUMNS))
    finally:
        db.close()


def stored(store: Store) -> list[tuple[Any, ...]]:
    return list(store._db.execute(COLUMNS))


def renumbered(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    first = rows[0][0]
    return [(row[0] - first, *row[1:]) for row in rows]


def test_the_rows_queued_by_the_hall_are_coded() -> None:
    store = Store(":memory:")
    fill(store, 6)
    roles = [row[1] for row in store._pending]
    kinds = [row[2] for row in store._pending]
    assert ECHO in roles
    assert OUT in roles
    assert BOARD in kinds
    assert "in" in roles  # the rare ones as text
    assert "tick" in kinds
    assert {row_text(row)[1] for row in store._pending} == {"echo", "in", "out"}
    store.close()


@pytest.mark.parametrize("n", [1, 5, 8, 9, 32, 47, 90])
def test_coded_rows_are_stored_as_the_same_rows_as_text(tmp_path: Path, n: int) -> None:
    # n inputs: from one row to statements of 32 and 8 rows and the rest one by one
    store = Store(tmp_path / "s.db")
    fill(store, n)
    queued = list(store._pending)
    assert store.commit() == len(queued)
    got = stored(store)
    store.close()
    assert renumbered(got) == renumbered(plain_rows(tmp_path / "plain.db", queued))
    assert {row[3] for row in got} == {row[5] for row in got} == {"text"}


def test_text_rows_queued_as_before_are_stored_as_they_are(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    fill(store, 20)
    coded = list(store._pending)
    store._pending[:] = [row_text(row) for row in coded]  # the same rows, as text
    store.commit()
    got = stored(store)
    store.close()
    assert renumbered(got) == renumbered(plain_rows(tmp_path / "plain.db", coded))


def test_a_bad_row_among_coded_rows_leaves_out_its_input_alone(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    fill(store, 12)
    before = len(store._pending)
    store._pending.append(("a", "bogus", "admin", 17.0, "{}"))  # refused by the log's check
    store._pending.append(("a", OUT, "players", 17.0, "{}"))  # its output: left out with it
    fill(store, 12)
    queued = store._pending[:before] + store._pending[before + 2 :]
    store.commit()
    assert store.refused == 2
    got = stored(store)
    store.close()
    assert renumbered(got) == renumbered(plain_rows(tmp_path / "plain.db", queued))


def test_a_stop_that_cannot_commit_writes_coded_rows_as_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "s.db"
    store = Store(db)
    fill(store, 14)
    queued = list(store._pending)

    def refuse() -> int:
        raise StoreError("no")

    monkeypatch.setattr(store, "_commit_now", refuse)
    with pytest.raises(StoreError, match="could not be stored"):
        store.close()
    assert read_recovery(recovery_path(db)) == [row_text(row) for row in queued]
    monkeypatch.undo()
    store = Store(db)  # folds the file in
    got = stored(store)
    store.close()
    assert renumbered(got) == renumbered(plain_rows(tmp_path / "plain.db", queued))


def test_the_insert_writes_the_codes_text_and_any_other_value_as_given(tmp_path: Path) -> None:
    db = sqlite3.connect(":memory:")
    db.execute(
        "CREATE TABLE log (seq INTEGER PRIMARY KEY, table_id TEXT, role, kind, t REAL, data)"
    )
    rows = [
        ("a", ECHO, BOARD, 1.0, "{}"),
        ("a", OUT, "move", 2.0, "{}"),
        ("a", "in", "x", 3.0, "{}"),
    ]
    for row in rows:
        db.execute(_INSERT, row)
    assert list(db.execute("SELECT role, kind FROM log ORDER BY seq")) == [
        ("echo", "board"),
        ("out", "move"),
        ("in", "x"),
    ]
