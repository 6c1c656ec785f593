"""service.store_index: a table's rows read the same whether they are indexed yet or not,
after a reopen, after a stop that left rows waiting, and from a database of the older
layout (SQLite's index written with every row)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from service.store import Store
from service.store_index import INDEX_DELAY, MARK_KEY, OLD_INDEX


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _fill(store: Store, clock: Clock, inputs: int, tables: int = 3) -> None:
    """``inputs`` inputs spread over ``tables`` tables, a commit every two, time passing
    half the index's delay each commit."""
    for i in range(inputs):
        table = str(i % tables)
        store.append(table, "tick", float(i), {}, [{"type": "clock", "time": float(i), "n": i}])
        if i % 2:
            store.commit()
            clock.now += INDEX_DELAY / 2
    store.commit()


def _view(store: Store, tables: int = 3) -> list[object]:
    seen: list[object] = []
    for table in map(str, range(tables)):
        seen.append([(item.seq, item.t, item.outputs) for item in store.inputs(table)])
        seen.append(store.outputs(table))
        seen.append(store.outputs(table, after=10, limit=4))
        seen.append(store.outputs(table, kind="clock", limit=3))
        seen.append(store.count(table))
    return seen


def _indexed(path: Path, *, once: bool = True) -> int:
    """Rows indexed (``once``: none of them twice, as after a stop; a crash may leave a
    row in two chunks, which the readers take once)."""
    db = sqlite3.connect(path)
    try:
        chunks = db.execute("SELECT seqs FROM table_rows").fetchall()
    finally:
        db.close()
    seqs = [int(seq) for (text,) in chunks for seq in text.split(",")]
    if once:
        assert len(seqs) == len(set(seqs))
    return len(set(seqs))


def _chunks(path: Path) -> int:
    db = sqlite3.connect(path)
    try:
        return int(db.execute("SELECT count(*) FROM table_rows").fetchone()[0])
    finally:
        db.close()


def test_rows_read_the_same_indexed_or_waiting(tmp_path: Path) -> None:
    clock = Clock()
    store = Store(tmp_path / "s.db", clock=clock)
    for table in "012":
        store.register_table(table, {}, 1.0)
    _fill(store, clock, 40)
    live = _view(store)
    assert 0 < _indexed(tmp_path / "s.db") < store.count()  # some indexed, some waiting
    assert _chunks(tmp_path / "s.db") < _indexed(tmp_path / "s.db")  # a table's rows together
    assert live[0] == [(seq, float(seq // 2), ({"type": "clock", "time": float(seq // 2),
                                                 "n": seq // 2},))
                       for seq in range(1, 80, 2) if (seq // 2) % 3 == 0]  # fmt: skip
    store.close()
    # a stop leaves rows waiting: the next open indexes them
    again = Store(tmp_path / "s.db", clock=clock)
    assert _indexed(tmp_path / "s.db") == again.count() == 80
    assert _view(again) == live
    again.close()


def test_rows_left_waiting_by_a_crash_are_indexed_at_the_next_open(tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "s.db"
    store = Store(path, clock=clock)
    _fill(store, clock, 30)
    live = _view(store)
    # another program's rows (after the mark) are found too
    db = sqlite3.connect(path)
    db.execute(
        "INSERT INTO log (table_id, role, kind, t, data) VALUES ('1', 'in', 'tick', 99, '{}')"
    )
    db.commit()
    db.close()
    store._db.close()  # no close(): as if killed
    again = Store(path, clock=clock)
    assert _indexed(path, once=False) == 61
    assert [item.seq for item in again.inputs("1")][-1] == 61
    assert _view(again)[:4] == live[:4]
    again.close()


@pytest.mark.slow
def test_a_database_of_the_older_layout_is_brought_to_this_one(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    store = Store(path)
    _fill(store, Clock(), 20)
    live = _view(store)
    store.close()
    db = sqlite3.connect(path)
    db.execute("DROP TABLE table_rows")
    db.execute("DELETE FROM meta WHERE key=?", (MARK_KEY,))
    db.execute(f"CREATE INDEX {OLD_INDEX} ON log (table_id, seq)")
    db.commit()
    db.close()
    again = Store(path)
    assert _view(again) == live
    again.close()
    db = sqlite3.connect(path)
    names = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
    db.close()
    assert OLD_INDEX not in names
    assert _indexed(path) == 40


def test_a_refused_row_leaves_the_others_numbered_and_read(tmp_path: Path) -> None:
    clock = Clock()
    store = Store(tmp_path / "s.db", clock=clock)
    store.append("1", "tick", 1.0, {}, [{"type": "a"}])
    store._pending.append(("1", "bogus", "tick", 2.0, "{}"))  # refused by the file's check
    store.append("2", "tick", 3.0, {}, [{"type": "b"}])
    store.append("1", "tick", 4.0, {}, [{"type": "c"}])
    store.commit()
    clock.now += INDEX_DELAY + 1
    store.append("3", "tick", 5.0, {}, [])
    store.commit()  # indexes the first commit's tables
    assert [(item.t, item.outputs) for item in store.inputs("1")] == [
        (1.0, ({"type": "a"},)),
        (4.0, ({"type": "c"},)),
    ]
    assert store.outputs("2") == [(4, {"type": "b"})]
    store.close()


@pytest.mark.parametrize("rows", [[1, 7, 8, 9], [16, 31, 32, 33], [45, 3, 40, 64, 71]])
def test_a_commit_of_any_size_keeps_each_tables_rows_by_their_numbers(
    tmp_path: Path, rows: list[int]
) -> None:
    """The commit learns its rows' numbers from the last statement that inserted some (a
    statement of 8 or 32 rows after the rest, one by one) or, below 8 rows, by asking:
    each table's rows read through the index (waiting, then indexed) are its rows."""
    clock = Clock()
    store = Store(tmp_path / "s.db", clock=clock)
    n = 0
    for size in rows:
        for _ in range(size):  # inputs of one row each, on tables of their own pace
            table = "abc"[n % 7 % 3]
            store.append(table, "tick", float(n), {"n": n})
            n += 1
        assert store.commit() == size
    by_table = {
        table: [int(seq) for (seq,) in store._db.execute(
            "SELECT seq FROM log WHERE table_id = ? ORDER BY seq", (table,))]
        for table in "abc"
    }  # fmt: skip
    waiting = {table: [item.seq for item in store.inputs(table)] for table in "abc"}
    assert waiting == by_table
    assert [item.data["n"] for item in store.inputs("a")] == [
        i for i in range(n) if "abc"[i % 7 % 3] == "a"
    ]
    clock.now += INDEX_DELAY + 1
    store.append("a", "tick", float(n), {"n": n})
    store.commit()  # indexes every table waiting
    assert _indexed(tmp_path / "s.db") == n
    by_table["a"].append(store.last_seq() or 0)
    assert {table: [item.seq for item in store.inputs(table)] for table in "abc"} == by_table
    store.close()
