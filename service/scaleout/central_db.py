"""Reading the centre's database from another process: a web process on a read replica.

The aggregator (another process) stores every edge's log rows in one SQLite file, in
order, each message in one commit.  :class:`CentralTail` follows that file: it polls for
rows past the last one it handed on (by ``rowid``) and hands them, in order, to a
:data:`RowSink` (:meth:`service.scaleout.replica.ReplicaHall.on_rows`), one call per run of
rows of the same edge.  The single-process centre needs none of this: its aggregator calls
the sink itself after each commit.  The same file answers a table's stored outputs
(:meth:`CentralTail.outputs`, the replica's :class:`~service.scaleout.replica.LogReader`).

The file is opened read-only; it may not exist yet (the tail waits for it).  What is
assumed of it (:data:`SELECT_AFTER`, :data:`SELECT_OUTPUTS`): a table ``log`` with a
``rowid`` growing in the order rows were stored and the columns ``edge``, ``seq`` (the
row's number in its edge's log), ``table_id``, ``role``, ``kind``, ``t`` and ``data`` as an
edge's store has them; an index on ``(edge, table_id, seq)`` keeps the outputs' reads
quick.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from service.hall import HallError
from service.scaleout.rows import LogRow
from service.store import echo_of

logger = logging.getLogger(__name__)

RowSink = Callable[[str, Sequence[LogRow]], None]
"""Takes an edge's rows in its log's order, right after they are stored (``on_rows``)."""

SELECT_AFTER = (
    "SELECT rowid, edge, seq, table_id, role, kind, t, data FROM log "
    "WHERE rowid > ? ORDER BY rowid LIMIT ?"
)
SELECT_OUTPUTS = (
    "SELECT seq, role, t, data FROM log "
    "WHERE edge = ? AND table_id = ? AND role != 'in' AND seq > ? ORDER BY seq LIMIT ?"
)

POLL_INTERVAL = 0.02
"""Seconds between two looks for new rows when the last found none."""
BATCH = 5000
"""Rows read at most at once (the rest at the next look, at once)."""


class CentralError(Exception):
    """The centre's database cannot be read (one line: which file and why)."""


class CentralTail:
    """Follows the centre's database and feeds its new rows to ``sink``."""

    def __init__(
        self,
        path: str | Path,
        sink: RowSink,
        *,
        batch: int = BATCH,
        interval: float = POLL_INTERVAL,
    ) -> None:
        self.path = Path(path)
        self.sink = sink
        self.batch = batch
        self.interval = interval
        self.position = 0
        """The ``rowid`` of the last row handed on."""
        self.rows = 0
        self._db: sqlite3.Connection | None = None
        self._problem: str | None = None

    def _connection(self) -> sqlite3.Connection | None:
        if self._db is None:
            if not self.path.exists():
                return None
            uri = f"{self.path.resolve().as_uri()}?mode=ro"
            self._db = sqlite3.connect(uri, uri=True, check_same_thread=False)
        return self._db

    def poll(self) -> int:
        """Hand on the rows stored since the last poll (at most :attr:`batch`); returns
        how many.  Raises :class:`CentralError` when the file cannot be read."""
        try:
            db = self._connection()
            if db is None:
                return 0
            found = db.execute(SELECT_AFTER, (self.position, self.batch)).fetchall()
        except sqlite3.DatabaseError as exc:
            self.close()
            raise CentralError(f"{self.path}: cannot read the centre's log: {exc}") from None
        if not found:
            return 0
        if len(found) == self.batch:
            found = _whole_inputs(found)
        run: list[LogRow] = []
        edge = ""
        for rowid, row_edge, *columns in found:
            if row_edge != edge and run:
                self.sink(edge, run)
                run = []
            edge = row_edge
            run.append(LogRow(*columns))
            self.position = rowid
        if run:
            self.sink(edge, run)
        self.rows += len(found)
        return len(found)

    async def run(self) -> None:
        """Poll until cancelled (at once again while rows keep coming); a file that cannot
        be read is logged once and tried again."""
        while True:
            try:
                got = self.poll()
            except CentralError as exc:
                if str(exc) != self._problem:
                    logger.warning("%s", exc)
                    self._problem = str(exc)
                got = 0
            else:
                if self._problem is not None:
                    logger.warning("%s: read again", self.path)
                    self._problem = None
            await asyncio.sleep(0 if got == self.batch else self.interval)

    def outputs(
        self, edge_id: str, table_id: str, *, after: int, limit: int
    ) -> list[tuple[int, dict[str, Any]]]:
        """A table's stored outputs after ``after`` (as its edge's store gives them);
        :class:`~service.hall.HallError` 503 when the file cannot be read."""
        try:
            db = self._connection()
            if db is None:
                return []
            found = db.execute(SELECT_OUTPUTS, (edge_id, table_id, after, limit)).fetchall()
        except sqlite3.DatabaseError as exc:
            self.close()
            raise HallError(f"{self.path}: cannot read the centre's log: {exc}", 503) from None
        out: list[tuple[int, dict[str, Any]]] = []
        for seq, role, t, data in found:
            value = json.loads(data)
            out.append((seq, echo_of(t, value) if role == "echo" else value))
        return out

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


def _whole_inputs(found: list[Any]) -> list[Any]:
    """``found`` without its last input and the outputs after it (which may go on past
    the batch): they are read again with the rest."""
    for index in range(len(found) - 1, 0, -1):
        if found[index][4] != "out":
            return found[:index]
    return found
