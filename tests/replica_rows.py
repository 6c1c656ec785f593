"""Log rows of an edge's store as a read replica is fed them, and a centre's database of
them for the central web's tailer; a hall store's input rows as its tests compare them.
(No tests here.)

:func:`edge_rows` reads a club hall's store (no registration rows: a store writes them
once it is an edge's) and makes a registration for each table of its ``tables`` table
(role and kind :data:`service.scaleout.rows.REGISTRATION`), numbered before the log's
first row, as an edge does for the tables it had before it first forwarded its log."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from service.scaleout.central_store import CentralStore
from service.scaleout.log_wire import Batch
from service.scaleout.rows import REGISTRATION, LogRow


def input_rows(db: Path) -> list[tuple[object, ...]]:
    """The rows of the store ``db`` that the tables' inputs and answers made (no
    registration rows), in log order, as ``(table_id, role, kind, t, data)``."""
    connection = sqlite3.connect(db)
    try:
        return connection.execute(
            "SELECT table_id, role, kind, t, data FROM log WHERE role != 'table' ORDER BY seq"
        ).fetchall()
    finally:
        connection.close()


def edge_rows(db: Path, boards: dict[str, int] | None = None) -> list[LogRow]:
    """Every row of the edge store ``db``: a registration per table, then its log."""
    connection = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    try:
        tables = connection.execute(
            "SELECT id, settings, created FROM tables ORDER BY created, rowid"
        ).fetchall()
        log = connection.execute(
            "SELECT seq, table_id, role, kind, t, data FROM log ORDER BY seq"
        ).fetchall()
    finally:
        connection.close()
    first = log[0][0] if log else 1
    rows = []
    for number, (table_id, settings, created) in enumerate(tables):
        data = json.dumps({"board": (boards or {}).get(table_id), "settings": json.loads(settings)})
        seq = first - len(tables) + number
        rows.append(LogRow(seq, table_id, REGISTRATION, REGISTRATION, created, data))
    rows.extend(LogRow(*row) for row in log)
    return rows


def batches(rows: Sequence[LogRow], sizes: Sequence[int]) -> list[list[LogRow]]:
    """``rows`` cut into batches of ``sizes`` (cycled) rows, wherever that falls (inside
    an input too, as the broker's messages may)."""
    out: list[list[LogRow]] = []
    start = 0
    turn = 0
    while start < len(rows):
        end = min(start + max(1, sizes[turn % len(sizes)]), len(rows))
        out.append(list(rows[start:end]))
        start = end
        turn += 1
    return out


def write_central(db: Path, edge_id: str, rows: Sequence[LogRow]) -> None:
    """Store ``rows`` of ``edge_id`` in the centre's database ``db`` as the aggregator
    stores the next message of the stream (one commit)."""
    store = CentralStore(db)
    try:
        known = store.edges().get(edge_id)
        batch = Batch(edge_id, "db", known.last if known is not None else None, tuple(rows))
        taken = store.take([(store.position() + 1, batch)])
        assert taken.gap is None, taken.gap
    finally:
        store.close()
