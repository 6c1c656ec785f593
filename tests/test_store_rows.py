"""The log's rows are compact JSON (service.json_text, shared with the web) that read back
as the values written; text stays UTF-8."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from service.store import Store
from service.web.stream import dumps


def test_rows_are_compact_json_that_reads_back_the_same(tmp_path: Path) -> None:
    store = Store(tmp_path / "log.db")
    data = {"event": "clock", "left": 299.5, "name": 'Żaneta "Z" Ünal', "nested": [1, None]}
    outs: list[dict[str, Any]] = [
        {"time": 12.25, "type": "board", **data},
        {"type": "clock", "data": {"é": True}},
    ]
    store.register_table("1", {}, 0.0)
    store.append("1", "board", 12.25, data, outs)
    store.commit()
    store.close()
    connection = sqlite3.connect(tmp_path / "log.db")
    try:
        rows = [r[0] for r in connection.execute("SELECT data FROM log ORDER BY seq")]
    finally:
        connection.close()
    # the board event's echo is its input row (see service.store): two rows
    assert [json.loads(row) for row in rows] == [data, outs[1]]
    assert rows[0] == (
        '{"event":"clock","left":299.5,"name":"Żaneta \\"Z\\" Ünal","nested":[1,null]}'
    )


def test_web_json_is_compact_and_keeps_non_ascii_text() -> None:
    obj = {"white": "Żaneta", "n": [1.5, None, True]}
    assert dumps(obj) == '{"white":"Żaneta","n":[1.5,null,true]}'
    assert json.loads(dumps(obj)) == obj


def test_the_page_cache_grows_with_the_tables(tmp_path: Path) -> None:
    from service.store import CACHE_KIB_PER_TABLE, DEFAULT_CACHE_KIB

    store = Store(tmp_path / "log.db")
    store.plan_cache(2000)
    assert store._db.execute("PRAGMA cache_size").fetchone()[0] == -(
        DEFAULT_CACHE_KIB + 2000 * CACHE_KIB_PER_TABLE
    )
    store.close()


def test_the_tables_with_rows_queued_are_read_off_the_queue(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    assert store.queued_tables() == set()
    store.append_echo("a", 1.0, {"event": "lever", "high": "left"})
    store.append("b", "tick", 2.0, {}, [{"type": "flag", "time": 2.0}])
    assert store.queued_tables() == {"a", "b"}
    store.append_echo("c", 3.0, {"event": "lever", "high": "right"})
    assert store.queued_tables() == {"a", "b", "c"}  # the rows after the last look
    store.commit()
    assert store.queued_tables() == set()
    store.append_echo("b", 4.0, {"event": "lever", "high": "left"})
    assert store.queued_tables() == {"b"}
    store.close()
    assert store.queued_tables() == set()


def test_a_commit_of_many_rows_keeps_their_order_and_each_tables_inputs(tmp_path: Path) -> None:
    # 47 rows: statements of 32 and 8 rows and the rest one by one, in the queue's order
    store = Store(tmp_path / "s.db")
    queued: list[tuple[str, str, str, float, dict[str, Any]]] = []
    for i in range(30):
        table = "abc"[i % 3]
        data: dict[str, Any] = {"event": "lever", "high": "left" if i % 2 else "right", "i": i}
        if i % 2:
            store.append_echo(table, float(i), data)
            queued.append((table, "echo", "board", float(i), data))
        else:
            out: dict[str, Any] = {"type": "move", "time": float(i), "ply": i}
            store.append(table, "board", float(i), data, [out])
            queued.append((table, "in", "board", float(i), data))
            queued.append((table, "out", "move", float(i), out))
    assert store.pending == len(queued) == 45
    store.append("c", "tick", 31.0, {}, [{"type": "flag", "time": 31.0}])
    assert store.commit() == 47
    rows = store._db.execute("SELECT seq, table_id, role, kind, t, data FROM log ORDER BY seq")
    got = [(table, role, kind, t, json.loads(data)) for _, table, role, kind, t, data in rows]
    assert got[:45] == queued
    seqs = [row[0] for row in store._db.execute("SELECT seq FROM log ORDER BY seq")]
    assert seqs == list(range(seqs[0], seqs[0] + 47))
    for table in "abc":
        inputs = list(store.inputs(table))
        assert [item.data.get("i") for item in inputs if item.kind == "board"] == [
            i for i in range(30) if "abc"[i % 3] == table
        ]
    store.close()


@pytest.mark.parametrize(
    "bad", [("a", "in", "admin", 17.0, '{"x": "\ud800"}'), ("a", "bogus", "admin", 17.0, "{}")]
)
def test_a_row_that_fails_in_a_statement_of_many_rows_is_refused_alone(
    tmp_path: Path, bad: tuple[str, str, str, float, str]
) -> None:
    # the bad row (a text with no UTF-8 form, a role the log refuses) among 40: inside a
    # statement of 32 rows; its input is left out, every other one stored in order
    store = Store(tmp_path / "s.db")
    for i in range(40):
        if i == 17:
            store._pending.append(bad)
        else:
            store.append("a", "admin", float(i), {"command": "players", "n": i}, [])
    assert store.commit() == 39
    assert store.refused == 1
    assert [item.data["n"] for item in store.inputs("a")] == [i for i in range(40) if i != 17]
    store.close()
