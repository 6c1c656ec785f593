"""Log rows of an edge's store as a read replica is fed them, and a central database of
them for the central web's tailer.  (No tests here.)

An edge's store has no registration rows today: :func:`edge_rows` makes one for each table
of its ``tables`` table (kind :data:`service.scaleout.rows.REGISTER_KIND`), numbered before
the log's rows, which keep their order (their numbers shifted past the registrations)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from service.scaleout.rows import REGISTER_KIND, LogRow


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
    rows = []
    for number, (table_id, settings, created) in enumerate(tables, 1):
        board = (boards or {}).get(table_id)
        data = json.dumps({"settings": json.loads(settings), "board": board})
        rows.append(LogRow(number, table_id, "in", REGISTER_KIND, created, data))
    shift = len(rows)
    rows.extend(LogRow(seq + shift, *rest) for seq, *rest in log)
    return rows


def batches(rows: Sequence[LogRow], sizes: Sequence[int]) -> list[list[LogRow]]:
    """``rows`` cut into batches of about ``sizes`` (cycled) rows, each ending before an
    input row (an edge commits an input with its outputs)."""
    out: list[list[LogRow]] = []
    start = 0
    turn = 0
    while start < len(rows):
        end = min(start + max(1, sizes[turn % len(sizes)]), len(rows))
        while end < len(rows) and rows[end].role == "out":
            end += 1
        out.append(list(rows[start:end]))
        start = end
        turn += 1
    return out


CENTRAL_SCHEMA = """
CREATE TABLE IF NOT EXISTS log (
    id INTEGER PRIMARY KEY,
    edge TEXT NOT NULL,
    seq INTEGER NOT NULL,
    table_id TEXT NOT NULL,
    role TEXT NOT NULL,
    kind TEXT NOT NULL,
    t REAL NOT NULL,
    data TEXT NOT NULL,
    UNIQUE (edge, seq)
);
"""
"""The central database the tailer reads (as assumed here: see
:mod:`service.scaleout.central_db`)."""


def write_central(db: Path, edge_id: str, rows: Sequence[LogRow]) -> None:
    """Append ``rows`` of ``edge_id`` to the central database ``db`` in one commit."""
    connection = sqlite3.connect(db)
    try:
        connection.executescript(CENTRAL_SCHEMA)
        with connection:
            connection.executemany(
                "INSERT INTO log (edge, seq, table_id, role, kind, t, data) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(edge_id, *row) for row in rows],
            )
    finally:
        connection.close()
