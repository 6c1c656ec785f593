"""``service.store_index``: the log's index by table, written in batches.

Reading one table's rows (a rebuild at start, a page of its history) needs an index of the
log by table.  An index SQLite keeps itself is written with every row, and every input of a
busy hall lands on another table's page of it: each commit wrote a page of the index per
input (a 4 KiB frame to the write-ahead log), most of a commit's cost.  This index is a table
of its own, ``table_rows (table_id, seq, seqs)``, written a table at a time: a table's rows
wait :data:`INDEX_DELAY` seconds after their commit and then go in as one row of it (``seq``
the first of them, ``seqs`` all of them, comma-separated), inside a later commit (so it
costs no transaction of its own).

What is not indexed yet is known: in memory, the rows this store committed (by table, in
order), and in the file, the ``meta`` key :data:`MARK_KEY`, below which every row is
indexed.  Readers take a table's sequence numbers from ``table_rows`` and from memory, and
read its rows by them.  At open, every row after the mark is indexed (the rows a stop or a crash
left waiting, those another program wrote), so the index of a database opened here is
whole.

The rows of the log are untouched: a database of the older layout (SQLite's index
``log_by_table``) is brought to this one when opened (the index dropped, ``table_rows`` built
from the log), and older code opening a database of this layout builds its index again.
"""

from __future__ import annotations

import bisect
import itertools
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

INDEX_DELAY = 10.0
"""Seconds a table's committed rows wait before they are indexed (together)."""

MAX_TABLES_PER_COMMIT = 256
"""Tables indexed at most by one commit (the rest wait for the next ones)."""

MARK_KEY = "indexed"
"""The ``meta`` key of the sequence number up to which every row of the log is indexed."""

OLD_INDEX = "log_by_table"
"""SQLite's index of the log by table, of the older layout (written with every row)."""

CREATE = """CREATE TABLE IF NOT EXISTS table_rows (
    table_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    seqs TEXT NOT NULL,
    PRIMARY KEY (table_id, seq)
) WITHOUT ROWID"""

_ADD = "INSERT OR REPLACE INTO table_rows (table_id, seq, seqs) VALUES (?, ?, ?)"
_MARK = "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)"
_CHUNK = 500
"""Sequence numbers asked for in one query (SQLite limits a statement's parameters)."""


class TableIndex:
    """The index of one connection's log: what waits, and when it is written.  Every
    method that writes runs inside the caller's open transaction."""

    def __init__(self, db: sqlite3.Connection, clock: Callable[[], float]) -> None:
        self._db = db
        self._clock = clock
        self._waiting: dict[str, tuple[float, list[int]]] = {}
        """Committed rows not indexed yet, by table, oldest table first: when its first
        row was committed, and the rows' sequence numbers in order."""
        self._marked = float("-inf")

    # --- opening --------------------------------------------------------------------

    def open(self) -> None:
        """Bring the file to this layout and index every row after the mark (inside the
        caller's write transaction)."""
        db = self._db
        db.execute(CREATE)
        old = db.execute(
            "SELECT 1 FROM sqlite_master WHERE type='index' AND name=?", (OLD_INDEX,)
        ).fetchone()
        if old is not None:
            db.execute(f"DROP INDEX {OLD_INDEX}")
        self.catch_up()

    def catch_up(self) -> None:
        """Index every row of the file after the mark (inside the caller's transaction);
        the mark moves to the last row.  Rows indexed already are passed by."""
        db = self._db
        row = db.execute("SELECT value FROM meta WHERE key=?", (MARK_KEY,)).fetchone()
        sql = "SELECT table_id, seq FROM log"
        args: tuple[int, ...] = ()
        if row is not None:
            sql += " WHERE seq > ?"
            args = (int(row[0]),)
        by_table: dict[str, list[int]] = {}
        for table_id, seq in db.execute(sql + " ORDER BY seq", args):
            by_table.setdefault(table_id, []).append(seq)
        db.executemany(_ADD, [_chunk(table_id, seqs) for table_id, seqs in by_table.items()])
        last = db.execute("SELECT max(seq) FROM log").fetchone()[0]
        if last is not None and not self._waiting:
            db.execute(_MARK, (MARK_KEY, str(int(last))))

    def add_now(self, table_id: str, seq: int) -> None:
        """Index one row at once (inside the caller's transaction): a row written out of
        the commits' order (a table's registration)."""
        self._db.execute(_ADD, _chunk(table_id, [seq]))

    # --- the commits ----------------------------------------------------------------

    def write_due(self, first_new: int | None) -> list[str]:
        """Inside a commit's transaction, before its ``COMMIT``: index the rows of the
        tables that have waited :data:`INDEX_DELAY` (and move the mark, at most once per
        delay).  ``first_new``: the first sequence number of the commit's own rows (None:
        it has none, the mark stays).  Returns
        the tables indexed, for :meth:`committed`."""
        waiting = self._waiting
        if not waiting:
            return []
        now = self._clock()
        due_before = now - INDEX_DELAY
        tables: list[str] = []
        rows: list[tuple[str, int, str]] = []
        for table_id, (since, seqs) in waiting.items():
            if since > due_before or len(tables) >= MAX_TABLES_PER_COMMIT:
                break
            tables.append(table_id)
            rows.append(_chunk(table_id, seqs))
        if not tables:
            return tables
        self._db.executemany(_ADD, rows)
        if first_new is not None and now - self._marked >= INDEX_DELAY:
            # Below every row still waiting: the commit's own, and the first of the
            # oldest table left (the tables wait in the order of their first rows).
            mark = first_new - 1
            if len(tables) < len(waiting):
                rest = waiting[_nth_key(waiting, len(tables))]
                mark = min(mark, rest[1][0] - 1)
            self._db.execute(_MARK, (MARK_KEY, str(mark)))
            self._marked = now
        return tables

    def write_all(self) -> None:
        """Index every row waiting and move the mark to the last row (inside the
        caller's write transaction; :meth:`committed` with no new rows once it
        commits)."""
        self._db.executemany(
            _ADD, [_chunk(table_id, seqs) for table_id, (_, seqs) in self._waiting.items()]
        )
        last = self._db.execute("SELECT max(seq) FROM log").fetchone()[0]
        if last is not None:
            self._db.execute(_MARK, (MARK_KEY, str(int(last))))

    def written_all(self) -> None:
        """The transaction of :meth:`write_all` went through."""
        self._waiting.clear()

    def committed(self, indexed: Sequence[str], tables: Iterable[str], first: int) -> None:
        """A commit went through: the tables ``indexed`` by its :meth:`write_due` are no
        longer waiting, and its own rows (of ``tables``, in order, numbered from
        ``first``) wait now."""
        self.committed_rows(indexed, zip(tables, itertools.count(first)))

    def committed_rows(self, indexed: Sequence[str], rows: Iterable[tuple[str, int]]) -> None:
        """:meth:`committed` for rows whose numbers are not consecutive (``(table_id,
        seq)`` in order)."""
        waiting = self._waiting
        for table_id in indexed:
            del waiting[table_id]
        now = self._clock()
        for table_id, seq in rows:
            entry = waiting.get(table_id)
            if entry is None:
                waiting[table_id] = (now, [seq])
            else:
                entry[1].append(seq)

    # --- reading --------------------------------------------------------------------

    def seqs(self, table_id: str) -> list[int]:
        """The sequence numbers of the table's committed rows, in order."""
        found: set[int] = set()
        for (text,) in self._db.execute(
            "SELECT seqs FROM table_rows WHERE table_id = ?", (table_id,)
        ):
            found.update(map(int, text.split(",")))
        entry = self._waiting.get(table_id)
        if entry is not None:
            found.update(entry[1])
        return sorted(found)

    def rows(
        self,
        table_id: str,
        columns: str,
        *,
        after: int | None = None,
        where: str = "",
        params: Sequence[Any] = (),
        limit: int | None = None,
    ) -> Iterator[tuple[Any, ...]]:
        """The table's rows (``columns`` of ``log`` named with the prefix ``l.``) in order
        of their sequence numbers: those after ``after`` that pass ``where`` (SQL on
        ``l.``, starting with `` AND``, with ``params``), at most ``limit``."""
        seqs = self.seqs(table_id)
        if after is not None:
            seqs = seqs[bisect.bisect_right(seqs, after) :]
        left = limit
        for start in range(0, len(seqs), _CHUNK):
            chunk = seqs[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT {columns} FROM log AS l WHERE l.seq IN ({marks}){where} ORDER BY l.seq"
            for row in self._db.execute(sql, [*chunk, *params]):
                if left is not None:
                    if left <= 0:
                        return
                    left -= 1
                yield row

    def count(self, table_id: str) -> int:
        """Rows of the table."""
        return len(self.seqs(table_id))


def _chunk(table_id: str, seqs: Sequence[int]) -> tuple[str, int, str]:
    """The row of ``table_rows`` for ``seqs`` (in order) of a table."""
    return (table_id, seqs[0], ",".join(map(str, seqs)))


def _nth_key(waiting: dict[str, Any], n: int) -> str:
    """The key of ``waiting`` after its first ``n``."""
    it = iter(waiting)
    for _ in range(n):
        next(it)
    return next(it)
