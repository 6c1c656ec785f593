"""The log's rows are compact JSON (service.json_text, shared with the web) that read back
as the values written; text stays UTF-8."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from service.store import Store
from service.web.stream import dumps


def test_rows_are_compact_json_that_reads_back_the_same(tmp_path: Path) -> None:
    store = Store(tmp_path / "log.db")
    data = {"event": "clock", "left": 299.5, "name": 'Żaneta "Z" Ünal', "nested": [1, None]}
    outs = [{"time": 12.25, "type": "board", **data}, {"type": "clock", "data": {"é": True}}]
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
