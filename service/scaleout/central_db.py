"""Reading the centre's database from another process: a web process on a read replica.

The aggregator (another process: ``dgt-service central``) stores every edge's log rows in
one SQLite file, each message with the stream position in one commit.  :class:`CentralTail`
follows that file: for each edge whose last stored row is past the last one it handed on,
it reads the edge's rows after it, in the order of the edge's log, and hands them to a
:data:`RowSink` (:meth:`service.scaleout.replica.ReplicaHall.on_rows`).  The single-process
centre needs none of this: its aggregator calls the sink itself after each commit.  The
same file answers a table's stored outputs (:meth:`CentralTail.outputs`, the replica's
:class:`~service.scaleout.replica.LogReader`).

It looks at the file every :data:`POLL_INTERVAL` seconds, or, once told the aggregator's
commit notices reach it (:meth:`CentralTail.listening`, by
:class:`~service.scaleout.central_link.CentralLink`), at each notice
(:meth:`CentralTail.committed`) and every :data:`NOTICE_FALLBACK` seconds besides (a notice
lost only delays the rows that long).

The file is opened read-only; it may not exist yet (the tail waits for it).  What is read
of it (:data:`SELECT_EDGES`, :data:`SELECT_ROWS`, :data:`SELECT_OUTPUTS`): a table
``edges`` (``edge``, ``last``: the seq of the edge's last row stored) and a table ``rows``
(``edge``, ``seq`` the row's number in its edge's log, ``table_id``, ``role``, ``kind``,
``t``, ``data`` as the edge's store has them; keyed by ``(edge, seq)``).  An index on
``rows (edge, table_id, seq)`` keeps the outputs' reads quick.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sqlite3
from pathlib import Path
from typing import Any

from dgt.tasks import cancelling
from service.hall import HallError
from service.scaleout.rows import LogRow, RowSink
from service.store import echo_of

logger = logging.getLogger(__name__)


SELECT_EDGES = "SELECT edge, last FROM edges"
SELECT_ROWS = (
    "SELECT seq, table_id, role, kind, t, data FROM rows "
    "WHERE edge = ? AND seq > ? ORDER BY seq LIMIT ?"
)
SELECT_OUTPUTS = (
    "SELECT seq, role, t, data FROM rows "
    "WHERE edge = ? AND table_id = ? AND (role = 'out' OR role = 'echo') AND seq > ? "
    "ORDER BY seq LIMIT ?"
)

BEFORE_ALL = -(2**62)
"""A seq before every row (an edge's registrations may be numbered 0 or below)."""

POLL_INTERVAL = 0.02
"""Seconds between two looks for new rows when the last found none."""
NOTICE_FALLBACK = 0.25
"""Seconds between two looks when the aggregator's notices wake the tail."""
BATCH = 5000
"""Rows of an edge read at most at once (the rest at the next look, at once)."""


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
        self.positions: dict[str, int] = {}
        """Per edge: the seq of the last row handed on."""
        self.rows = 0
        self.behind = False
        """Whether the last poll left rows to read (an edge's cut at :attr:`batch`)."""
        self.notices = 0
        """Commit notices received."""
        self._db: sqlite3.Connection | None = None
        self._problem: str | None = None
        self._wake = asyncio.Event()

    def committed(self, position: int) -> None:
        """The aggregator committed rows up to stream ``position``: look at once."""
        self.notices += 1
        self._wake.set()

    def listening(self, fallback: float = NOTICE_FALLBACK) -> None:
        """The aggregator's notices reach :meth:`committed` from now on: look at the file
        only every ``fallback`` seconds besides."""
        self.interval = max(self.interval, fallback)

    def resume(self, positions: dict[str, int]) -> None:
        """Go on after these rows of each edge (a replica restored from a snapshot)."""
        self.positions = dict(positions)

    def _connection(self) -> sqlite3.Connection | None:
        if self._db is None:
            if not self.path.exists():
                return None
            uri = f"{self.path.resolve().as_uri()}?mode=ro"
            self._db = sqlite3.connect(uri, uri=True, check_same_thread=False)
        return self._db

    def poll(self) -> int:
        """Hand on the rows stored since the last poll (at most :attr:`batch` an edge);
        returns how many.  Raises :class:`CentralError` when the file cannot be read."""
        handed = 0
        self.behind = False
        try:
            db = self._connection()
            if db is None:
                return 0
            edges = db.execute(SELECT_EDGES).fetchall()
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                return 0  # the aggregator has not made its tables yet
            self.close()
            raise CentralError(f"{self.path}: cannot read the centre's log: {exc}") from None
        except sqlite3.DatabaseError as exc:
            self.close()
            raise CentralError(f"{self.path}: cannot read the centre's log: {exc}") from None
        for edge, last in sorted(edges):
            after = self.positions.get(edge, BEFORE_ALL)
            if last <= after:
                continue
            try:
                found = db.execute(SELECT_ROWS, (edge, after, self.batch)).fetchall()
            except sqlite3.DatabaseError as exc:
                self.close()
                raise CentralError(f"{self.path}: cannot read the centre's log: {exc}") from None
            if not found:
                continue
            if len(found) == self.batch and found[-1][0] < last:
                found = _whole_inputs(found)
                self.behind = True
            rows = [LogRow(*columns) for columns in found]
            self.positions[edge] = rows[-1].seq
            self.sink(edge, rows)
            handed += len(rows)
        self.rows += handed
        return handed

    async def run(self) -> None:
        """Poll until cancelled (at once again while rows are left behind, and at each
        commit notice); a file that cannot be read is logged once and tried again."""
        while True:
            if cancelling():  # a cancel that met a notice: 3.11's wait_for returned the notice
                raise asyncio.CancelledError
            self._wake.clear()
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
            if got and self.behind:
                await asyncio.sleep(0)
                continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.interval)

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
        if found[index][2] != "out":
            return found[:index]
    return found
