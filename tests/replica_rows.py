"""Log rows of an edge's store as a read replica is fed them, and a centre's database of
them for the central web's tailer.  (No tests here.)

An edge's store on main has no registration rows: :func:`edge_rows` makes one for each
table of its ``tables`` table (role and kind :data:`service.scaleout.rows.REGISTRATION`),
numbered before the log's first row, as an edge does for the tables it had before it
first forwarded its log."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from service.scaleout.rows import REGISTRATION, LogRow


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


CENTRAL_SCHEMA = """
CREATE TABLE IF NOT EXISTS edges (
    edge TEXT PRIMARY KEY,
    db TEXT NOT NULL,
    last INTEGER NOT NULL,
    stream_seq INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS rows (
    edge TEXT NOT NULL,
    seq INTEGER NOT NULL,
    table_id TEXT NOT NULL,
    role TEXT NOT NULL,
    kind TEXT NOT NULL,
    t REAL NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (edge, seq)
) WITHOUT ROWID;
"""
"""The part of the centre's database the tailer reads (as the aggregator's
``service.scaleout.central_store`` makes it)."""


def write_central(db: Path, edge_id: str, rows: Sequence[LogRow]) -> None:
    """Store ``rows`` of ``edge_id`` in the centre's database ``db`` in one commit, as the
    aggregator stores a message."""
    connection = sqlite3.connect(db, isolation_level=None)
    try:
        connection.execute("PRAGMA journal_mode=WAL")
        connection.executescript(CENTRAL_SCHEMA)
        connection.execute("BEGIN IMMEDIATE")
        connection.executemany(
            "INSERT INTO rows (edge, seq, table_id, role, kind, t, data) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(edge_id, *row) for row in rows],
        )
        connection.execute(
            "INSERT OR REPLACE INTO edges VALUES (?, 'db', ?, 0)", (edge_id, rows[-1].seq)
        )
        connection.execute("COMMIT")
    finally:
        connection.close()
