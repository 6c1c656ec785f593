"""``service.scaleout.log_wire``: what an edge's log looks like on the broker (pure: no I/O,
no ``nats`` import).

Every edge publishes its log to the subject ``dgt.log.<edge>`` of the JetStream stream
:data:`LOG_STREAM`, one message per batch of rows, in the order of its log.  A message is a
JSON object::

    {"edge": "hall-a", "db": "3f2c...", "prev": 41, "rows": [[42, "7", "echo", "board",
     1732600000.5, "{...}"], ...]}

``rows`` are :class:`~service.store.LogRow` tuples (seq, table, role, kind, time, data: the
JSON text as stored); ``prev`` is the seq of the last row of the edge's previous message
(null for its first), so a reader sees a gap or a repeat at once; ``db`` names the database
the rows come from (a new database under an old edge id is refused, not mixed in).

Edge status goes to the key-value bucket :data:`STATUS_BUCKET` under the edge id; admin
commands for an edge's tables are requests on ``dgt.admin.<edge>.command``
(:func:`admin_subject`).  After each commit of the centre's database the aggregator sends a
notice on :data:`COMMITTED_SUBJECT` (core NATS, not kept: the stream position committed,
as decimal text), on which the web processes that follow the database read it at once.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import Any

from service.json_text import dumps
from service.store import LogRow

LOG_STREAM = "DGT_LOG"
"""The JetStream stream (file storage) of every edge's log."""

LOG_SUBJECTS = "dgt.log.>"

STATUS_BUCKET = "dgt_edges"
"""The key-value bucket of the edges' heartbeats and link status, a key per edge."""

COMMITTED_SUBJECT = "dgt.central.committed"
"""The aggregator's notices that it committed rows (a wake-up; a lost one only delays)."""

EXPECTED_LAST_SUBJECT_SEQ = "Nats-Expected-Last-Subject-Sequence"
"""The header that makes the broker refuse a message unless the last one on its subject has
that stream sequence (0: none yet)."""

WRONG_LAST_SEQUENCE = 10071
"""JetStream's error code for a publish refused by that header."""

SUBJECTS_OVERLAP = 10065
"""JetStream's error code for a stream made on subjects another stream holds."""

MAX_BATCH_ROWS = 500
MAX_BATCH_BYTES = 256 * 1024
"""A batch stops at this many rows or bytes of row data as sent (the broker takes 1 MB a
message unless told otherwise); it has at least one row."""


class WireError(ValueError):
    """A message on the log stream that is not a batch of this format."""


def log_subject(edge_id: str) -> str:
    return f"dgt.log.{edge_id}"


def admin_subject(edge_id: str) -> str:
    """The subject an edge answers its tables' admin commands on."""
    return f"dgt.admin.{edge_id}.command"


def admin_subjects(edge_id: str) -> str:
    """What an edge subscribes to for its admin requests."""
    return f"dgt.admin.{edge_id}.>"


@dataclass(frozen=True, slots=True)
class Batch:
    """One message of an edge's log."""

    edge: str
    db: str
    prev: int | None
    rows: tuple[LogRow, ...]

    @property
    def last(self) -> int:
        """The seq of its last row."""
        return self.rows[-1].seq


def encode_batch(batch: Batch) -> bytes:
    rows = [list(row) for row in batch.rows]
    return dumps({"edge": batch.edge, "db": batch.db, "prev": batch.prev, "rows": rows}).encode()


def decode_batch(payload: bytes) -> Batch:
    """Raises :class:`WireError` for anything that is not a batch."""
    try:
        obj: Any = json.loads(payload)
        rows = tuple(_row(r) for r in obj["rows"])
        edge, db, prev = obj["edge"], obj["db"], obj["prev"]
        if not isinstance(edge, str) or not isinstance(db, str) or not rows:
            raise TypeError("edge, db or rows")
        if prev is not None and (not isinstance(prev, int) or isinstance(prev, bool)):
            raise TypeError("prev")
    except (ValueError, TypeError, KeyError, IndexError) as exc:
        raise WireError(f"not a batch of log rows: {exc}") from None
    for before, after in itertools.pairwise(rows):
        if after.seq <= before.seq:
            raise WireError(f"rows out of order: {after.seq} after {before.seq}")
    if prev is not None and rows[0].seq <= prev:
        raise WireError(f"first row {rows[0].seq} not after prev {prev}")
    return Batch(edge, db, prev, rows)


def _row(raw: Any) -> LogRow:
    seq, table_id, role, kind, t, data = raw
    if not (
        isinstance(seq, int)
        and isinstance(table_id, str)
        and isinstance(role, str)
        and isinstance(kind, str)
        and isinstance(t, int | float)
        and isinstance(data, str)
    ):
        raise TypeError("a row is [seq, table, role, kind, time, data]")
    return LogRow(seq, table_id, role, kind, float(t), data)


def take_batch(rows: list[LogRow]) -> list[LogRow]:
    """The first rows of ``rows`` that fit one message (:data:`MAX_BATCH_ROWS`,
    :data:`MAX_BATCH_BYTES`; at least one)."""
    size = 0
    for index, row in enumerate(rows[:MAX_BATCH_ROWS]):
        size += len(row.data.encode("utf-8")) + row.data.count('"') + len(row.table_id) + 64
        if size > MAX_BATCH_BYTES and index > 0:
            return rows[:index]
    return rows[:MAX_BATCH_ROWS]
