"""A recorded hall log (``bench/hall.py --keep-db``) read back into a fresh hall, for the
benches that replay it (``replay_cost.py``, ``publish_cost.py``): each table of the log
rebuilt from its stored settings, and its inputs grouped with what they answered."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from service.config import TableConfig
from service.hall import Hall, HallTable
from service.store import Input, grouped_inputs

Stream = list[tuple[float, int, HallTable, Input]]
"""One table's inputs as ``(time, seq, runner, input)``, to be merged in time order."""


def parse_json(text: str, seq: int) -> dict[str, Any]:
    """A row's data (:func:`service.store.grouped_inputs`'s parser)."""
    value: dict[str, Any] = json.loads(text)
    return value


def table_settings(source: sqlite3.Connection, table_id: str) -> dict[str, Any]:
    """The settings a table of the log was registered with (none: the defaults)."""
    row = source.execute(
        "SELECT data FROM log WHERE table_id = ? AND role = 'registration' ORDER BY seq LIMIT 1",
        (table_id,),
    ).fetchone()
    data: dict[str, Any] = json.loads(row[0]) if row else {}
    return data.get("settings", data)


def rebuilt_tables(source: sqlite3.Connection, hall: Hall) -> tuple[list[str], list[Stream]]:
    """Every table of the log ``source`` added to ``hall`` with its stored settings, and
    each one's inputs."""
    tables = [r[0] for r in source.execute("SELECT DISTINCT table_id FROM log ORDER BY 1")]
    streams: list[Stream] = []
    for table_id in tables:
        settings = table_settings(source, table_id)
        runner = hall.add_table(TableConfig(table_id, f"replay-{table_id}", None, settings))
        rows = source.execute(
            "SELECT seq, role, kind, t, data FROM log WHERE table_id = ? ORDER BY seq",
            (table_id,),
        )
        items = list(grouped_inputs(iter(list(rows)), parse_json))
        streams.append([(item.t, item.seq, runner, item) for item in items])
    return tables, streams
