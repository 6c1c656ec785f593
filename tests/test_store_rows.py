"""The log's rows are written exactly as ``json.dumps(..., separators=(",", ":"))`` writes
them (one shared encoder does it), so logs written before and after read the same."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from service.store import Store
from service.web.stream import dumps


def test_rows_are_compact_json_as_before(tmp_path: Path) -> None:
    store = Store(tmp_path / "log.db")
    data = {"event": "clock", "left": 299.5, "name": 'Żaneta "Z" Ünal', "nested": [1, None]}
    outs = [{"type": "board", "time": 12.25, "data": {"é": True}}, {"type": "clock"}]
    store.register_table("1", {}, 0.0)
    store.append("1", "board", 12.25, data, outs)
    store.commit()
    store.close()
    connection = sqlite3.connect(tmp_path / "log.db")
    try:
        rows = [r[0] for r in connection.execute("SELECT data FROM log ORDER BY seq")]
    finally:
        connection.close()
    compact = (",", ":")
    assert rows == [json.dumps(o, separators=compact) for o in (data, *outs)]


def test_web_json_is_compact_and_keeps_non_ascii_text() -> None:
    obj = {"white": "Żaneta", "n": [1.5, None, True]}
    assert dumps(obj) == '{"white":"Żaneta","n":[1.5,null,true]}'
    assert json.loads(dumps(obj)) == obj
