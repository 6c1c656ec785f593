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


def _kinds(path: Path) -> list[tuple[str, str]]:
    connection = sqlite3.connect(path)
    try:
        return list(connection.execute("SELECT table_id, kind FROM log ORDER BY seq"))
    finally:
        connection.close()


def test_deferred_rows_wait_for_their_tables_next_rows_in_order(tmp_path: Path) -> None:
    """Rows appended with ``defer`` wait: a commit of the queue only passes them by; the
    table's next rows not deferred take them along first; ``release`` lets those that
    waited long enough go; a commit of everything and ``close`` store them all."""
    path = tmp_path / "log.db"
    store = Store(path)
    tick = {"command": "x"}
    store.append("a", "tick", 1.0, {}, [{"type": "clock"}], defer=10.0)
    store.append("b", "tick", 1.5, {}, [], defer=11.0)
    store.append("a", "tick", 2.0, {}, [], defer=12.0)  # waits with a's first, since 10.0
    store.append("c", "admin", 2.5, tick, [])
    assert (store.pending, store.deferred, store.unstored) == (1, 2, 5)
    assert store.oldest_deferred() == 10.0
    assert set(store.deferred_tables()) == {"a", "b"}
    assert store.unstored_tables() == {"a", "b", "c"}
    store.commit(deferred=False)
    assert _kinds(path) == [("c", "admin")]
    store.append("b", "admin", 3.0, tick, [])  # b's deferred row goes first
    store.release(9.0)  # a has waited since 10.0: not yet
    store.commit(deferred=False)
    assert _kinds(path)[1:] == [("b", "tick"), ("b", "admin")]
    store.release(10.0)
    assert store.deferred == 0
    store.commit(deferred=False)
    assert _kinds(path)[3:] == [("a", "tick"), ("a", "clock"), ("a", "tick")]
    store.append("a", "tick", 4.0, {}, [], defer=13.0)
    store.commit()  # everything
    store.append("b", "tick", 5.0, {}, [], defer=14.0)
    store.release_table("b")
    assert (store.pending, store.deferred) == (1, 0)
    store.append("c", "tick", 6.0, {}, [], defer=15.0)
    store.close()  # stores what waits
    assert _kinds(path)[6:] == [("a", "tick"), ("b", "tick"), ("c", "tick")]


def test_rows_of_a_failing_store_are_not_deferred(tmp_path: Path) -> None:
    from service.store import StoreState

    store = Store(tmp_path / "log.db")
    store.state = StoreState.FAILING  # as after a refused commit
    store.append("a", "tick", 1.0, {}, [], defer=1.0)
    assert (store.pending, store.deferred) == (1, 0)
    store.state = StoreState.OK
    store.close()


def test_the_page_cache_grows_with_the_tables(tmp_path: Path) -> None:
    from service.store import CACHE_KIB_PER_TABLE, DEFAULT_CACHE_KIB

    store = Store(tmp_path / "log.db")
    store.plan_cache(2000)
    assert store._db.execute("PRAGMA cache_size").fetchone()[0] == -(
        DEFAULT_CACHE_KIB + 2000 * CACHE_KIB_PER_TABLE
    )
    store.close()
