"""``service.scaleout.central_store``: the centre's copy of every edge's log, in SQLite.

Each row is kept with its edge and the seq it has in the edge's own log (the edge's
:class:`~service.store.LogRow` as it was forwarded: table ``rows``, keyed by ``(edge, seq)``,
indexed by ``(edge, table_id, seq)`` for a table's outputs; table ``edges``: each edge's
database name and ``last`` row stored); the position in the log stream (the
stream sequence of the last message taken) is committed in the same transaction as the rows
of that message, so a reader that stops anywhere starts again exactly after it.  The
stream read is named by when the broker made it (:meth:`CentralStore.stream_made`): a
stream made anew (the broker's storage wiped) is read from its start
(:meth:`CentralStore.new_stream`).

:meth:`CentralStore.take` checks each message against what is stored of its edge:

* the next one (its ``prev`` is the last row stored of the edge; ``null`` for an edge not
  seen yet): its rows are stored;
* a repeat (its rows are stored already): dropped, counted;
* one that overlaps what is stored (it begins at or before the edge's last row stored and
  goes past it: an edge sending its whole log again to a stream made anew): the rows after
  the last one stored are stored, the others dropped;
* anything else is a *gap* (rows of the edge would be missing) or a stream message out of
  order: nothing of it is stored, the position stays before it, and the caller re-reads
  from there (:class:`Gap`).  A gap is never skipped.
* a message of another database under a known edge id (two edges run with the same id), or
  one that is no batch at all: not stored, noted in ``foreign_messages`` with its stream
  sequence, and counted; the stream goes on.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from service.scaleout.log_wire import Batch
from service.store import LogRow

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS position (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL);
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
CREATE INDEX IF NOT EXISTS rows_by_table ON rows (edge, table_id, seq);
CREATE TABLE IF NOT EXISTS foreign_messages (
    stream_seq INTEGER PRIMARY KEY,
    edge TEXT NOT NULL,
    db TEXT NOT NULL,
    payload_rows INTEGER NOT NULL
);
"""


class CentralStoreError(Exception):
    """The centre's database cannot be opened or written; the message says which and why."""


class Gap(Exception):
    """A message that does not follow what is stored (rows of an edge missing before it, or
    the stream's sequence jumping); nothing of it was stored."""

    def __init__(self, message: str, stream_seq: int) -> None:
        super().__init__(message)
        self.stream_seq = stream_seq


@dataclass(slots=True)
class Taken:
    """What one :meth:`CentralStore.take` stored."""

    rows: list[tuple[str, list[LogRow]]] = field(default_factory=list)
    """(edge, rows) in the order stored."""
    repeats: int = 0
    foreign: int = 0
    gap: Gap | None = None
    """The message the take stopped at (the ones before it are stored)."""


@dataclass(frozen=True, slots=True)
class EdgeState:
    edge: str
    db: str
    last: int
    """The seq of the edge's last row stored."""
    stream_seq: int


class CentralStore:
    """The centre's SQLite database (WAL): rows of every edge and the stream position."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self._db = sqlite3.connect(str(self.path), isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
            row = self._db.execute("SELECT value FROM meta WHERE key='central_schema'").fetchone()
            if row is None:
                self._db.execute(
                    "INSERT INTO meta (key, value) VALUES ('central_schema', ?)",
                    (str(SCHEMA_VERSION),),
                )
            elif row[0] != str(SCHEMA_VERSION):
                raise CentralStoreError(
                    f"{self.path}: not a centre's database of schema {SCHEMA_VERSION}"
                )
        except sqlite3.DatabaseError as exc:
            raise CentralStoreError(f"{self.path}: cannot open the database: {exc}") from None
        self._edges = {state.edge: state for state in self._read_edges()}
        self.repeats = 0
        self.foreign = 0

    def close(self) -> None:
        self._db.close()

    # --- reading --------------------------------------------------------------------

    def position(self) -> int:
        """The stream sequence of the last message taken (0: none)."""
        row = self._db.execute("SELECT seq FROM position WHERE id=1").fetchone()
        return 0 if row is None else int(row[0])

    def stream_made(self) -> str | None:
        """When the broker made the stream read so far (None: not known yet)."""
        row = self._db.execute("SELECT value FROM meta WHERE key='stream_made'").fetchone()
        return None if row is None else str(row[0])

    def new_stream(self, made: str, *, restart: bool) -> None:
        """The stream read from now on was made at ``made``; with ``restart`` it is a new
        one, read from its start (the position goes back to 0; the rows stay, so what the
        edges send again is dropped as repeats).  Raises :class:`CentralStoreError`."""
        try:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('stream_made', ?)", (made,)
            )
            if restart:
                self._db.execute("INSERT OR REPLACE INTO position (id, seq) VALUES (1, 0)")
            self._db.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise CentralStoreError(f"{self.path}: cannot store the stream read: {exc}") from None

    def edges(self) -> dict[str, EdgeState]:
        return dict(self._edges)

    def _read_edges(self) -> list[EdgeState]:
        return [
            EdgeState(str(e), str(d), int(last), int(s))
            for e, d, last, s in self._db.execute("SELECT edge, db, last, stream_seq FROM edges")
        ]

    def rows(self, edge: str, after: int | None = None, limit: int = 10_000) -> list[LogRow]:
        """An edge's rows in the order of its log, after its row ``after``."""
        sql = "SELECT seq, table_id, role, kind, t, data FROM rows WHERE edge=?"
        params: tuple[object, ...] = (edge, limit)
        if after is not None:
            sql += " AND seq>?"
            params = (edge, after, limit)
        return [LogRow(*row) for row in self._db.execute(f"{sql} ORDER BY seq LIMIT ?", params)]

    def count(self, edge: str | None = None) -> int:
        if edge is None:
            return int(self._db.execute("SELECT count(*) FROM rows").fetchone()[0])
        return int(
            self._db.execute("SELECT count(*) FROM rows WHERE edge=?", (edge,)).fetchone()[0]
        )

    # --- writing --------------------------------------------------------------------

    def take(self, messages: Sequence[tuple[int, Batch | None]]) -> Taken:
        """Store the rows of ``messages`` ((stream sequence, batch or None for a message
        that is no batch, kept aside like a foreign one), in stream order) and
        the new position, in one transaction; stops at the first that is a :class:`Gap`
        (returned in :attr:`Taken.gap`, the ones before stored).  Raises
        :class:`CentralStoreError` when the database refuses (nothing stored)."""
        taken = Taken()
        position = self.position()
        edges = dict(self._edges)
        try:
            self._db.execute("BEGIN IMMEDIATE")
            for stream_seq, batch in messages:
                if stream_seq <= position:
                    taken.repeats += 1  # a message taken before (a re-read overlapping)
                    continue
                if stream_seq != position + 1:
                    taken.gap = Gap(
                        f"the stream jumps from message {position} to {stream_seq}", stream_seq
                    )
                    break
                if batch is None:
                    self._db.execute(
                        "INSERT OR IGNORE INTO foreign_messages VALUES (?, '?', '?', 0)",
                        (stream_seq,),
                    )
                    taken.foreign += 1
                    position = stream_seq
                    continue
                known = edges.get(batch.edge)
                if known is not None and known.db != batch.db:
                    self._db.execute(
                        "INSERT OR IGNORE INTO foreign_messages VALUES (?, ?, ?, ?)",
                        (stream_seq, batch.edge, batch.db, len(batch.rows)),
                    )
                    taken.foreign += 1
                elif known is not None and batch.last <= known.last:
                    taken.repeats += 1
                elif batch.prev != (known.last if known is not None else None) and not (
                    known is not None and (batch.prev is None or batch.prev < known.last)
                ):
                    have = "nothing" if known is None else f"up to row {known.last}"
                    taken.gap = Gap(
                        f"edge {batch.edge}: message {stream_seq} follows row {batch.prev}, "
                        f"the centre has {have}",
                        stream_seq,
                    )
                    break
                else:
                    rows = batch.rows
                    if known is not None and batch.prev != known.last:  # an overlap
                        rows = tuple(row for row in rows if row.seq > known.last)
                    self._insert(batch.edge, rows)
                    state = EdgeState(batch.edge, batch.db, batch.last, stream_seq)
                    self._db.execute(
                        "INSERT OR REPLACE INTO edges VALUES (?, ?, ?, ?)",
                        (state.edge, state.db, state.last, state.stream_seq),
                    )
                    edges[batch.edge] = state
                    taken.rows.append((batch.edge, list(rows)))
                position = stream_seq
            self._db.execute("INSERT OR REPLACE INTO position (id, seq) VALUES (1, ?)", (position,))
            self._db.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise CentralStoreError(f"{self.path}: cannot store the rows: {exc}") from None
        self._edges = edges
        self.repeats += taken.repeats
        self.foreign += taken.foreign
        return taken

    def _insert(self, edge: str, rows: Iterable[LogRow]) -> None:
        self._db.executemany(
            "INSERT INTO rows (edge, seq, table_id, role, kind, t, data) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            ((edge, *row) for row in rows),
        )
