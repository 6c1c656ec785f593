"""``service.store``: the append-only log of every table, in SQLite (WAL mode).

Each table has a log of *inputs* (what went into its :class:`~service.table.Table`: board
events, ticks that produced something, admin commands) and, after each input, the *outputs*
the table answered with (moves, rulings, results: :class:`~service.table.TableEvent` as
JSON).  Rows are only ever inserted: triggers refuse updates and deletes.

A table answers every board event with the event itself first (``type`` "board", the
input's time and data), so that the page sees what the board did.  That output is not
written twice: the input row takes the role ``echo`` instead of ``in`` and stands for both
(the readers give the output back).  It halves the rows of a busy hall, most of whose
inputs are clock reports.

Durability: nothing is shown before it is committed.  The writer collects the rows of one
turn of the event loop and commits them in one transaction (:meth:`Store.commit`); the
caller publishes only after that returns.  In WAL mode with ``synchronous=NORMAL`` (the
default here) a committed transaction survives the process being killed at any moment
(kill -9); ``durable=True`` (``synchronous=FULL``) also survives a power cut, at the cost
of an fsync per commit.

Rebuilding: a table is rebuilt by feeding its inputs, in order, to a fresh table
(:func:`rebuild`); the table is deterministic, so the outputs must come out as stored.  A
difference is counted and logged as a warning; the stored outputs stay the record of what
was shown (``Store.outputs``).
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from dgt.events import BoardEvent
from dgt.recording import event_from_json, event_to_json
from service.json_text import dumps

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 2
"""2: the ``echo`` role (an input that is also its own first output)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tables (
    id TEXT PRIMARY KEY,
    settings TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS log (
    seq INTEGER PRIMARY KEY,
    table_id TEXT NOT NULL,
    -- not "role IN (...)": SQLite builds a lookup table for that at every insert
    role TEXT NOT NULL CHECK (role = 'in' OR role = 'echo' OR role = 'out'),
    kind TEXT NOT NULL,
    t REAL NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS log_by_table ON log (table_id, seq);
CREATE TRIGGER IF NOT EXISTS log_no_update BEFORE UPDATE ON log
    BEGIN SELECT RAISE(ABORT, 'the log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS log_no_delete BEFORE DELETE ON log
    BEGIN SELECT RAISE(ABORT, 'the log is append-only'); END;
"""

INPUT_KINDS = ("board", "tick", "admin")
"""Kinds of input rows: a board event, a clock tick of the service, an admin command."""


class StoreError(Exception):
    """The database cannot be opened or written; the message says which file and why."""


class Replayable(Protocol):
    """What :func:`rebuild` needs of a table (``service.table.Table`` fits)."""

    def feed(self, event: BoardEvent) -> Sequence[Any]: ...

    def tick(self, now: float) -> Sequence[Any]: ...

    def admin(self, command: str, args: Mapping[str, Any], now: float) -> Sequence[Any]: ...


@dataclass(frozen=True, slots=True)
class Input:
    """One input row with the outputs stored after it."""

    seq: int
    kind: str
    t: float
    data: dict[str, Any]
    outputs: tuple[dict[str, Any], ...]


@dataclass(slots=True)
class ReplayReport:
    """What :func:`rebuild` found."""

    table_id: str
    inputs: int = 0
    outputs: int = 0
    divergences: int = 0
    first_divergence: int | None = None
    """Sequence number of the first input whose outputs differ from the stored ones."""
    errors: list[str] = field(default_factory=list)


def normalise(obj: Any) -> Any:
    """``obj`` as it reads back from JSON (tuples become lists, keys strings)."""
    return json.loads(dumps(obj))


def board_input(event: BoardEvent) -> dict[str, Any]:
    """A board event as the ``data`` of an input row."""
    return event_to_json(event)


def echo_of(t: float, data: Mapping[str, Any]) -> dict[str, Any]:
    """The output a table gives first for the board input ``data`` at ``t``: the event
    itself (see the module docstring)."""
    return {"time": t, "type": "board", **data}


def output_json(event: Any) -> dict[str, Any]:
    """A table event as the ``data`` of an output row (``to_json()`` when it has one)."""
    to_json = getattr(event, "to_json", None)
    if to_json is not None:
        result: dict[str, Any] = to_json()
        return result
    if isinstance(event, Mapping):
        return dict(event)
    raise TypeError(f"not a table event: {event!r}")


class Store:
    """One SQLite database holding the logs of every table.

    Writes go into an open transaction (:meth:`append`) until :meth:`commit`.  Use from one
    thread (the event loop's)."""

    def __init__(self, path: str | Path, *, durable: bool = False) -> None:
        self.path = Path(path)
        try:
            self._db = sqlite3.connect(str(self.path), isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}")
            self._db.execute("PRAGMA busy_timeout=5000")
            # Checkpoints (which fsync) run off the event loop: see checkpoint().
            self._db.execute("PRAGMA wal_autocheckpoint=0")
            self._db.executescript(_SCHEMA)
            row = self._db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if row is None:
                self._db.execute(
                    "INSERT INTO meta (key, value) VALUES ('schema', ?)", (str(SCHEMA_VERSION),)
                )
            elif int(row[0]) != SCHEMA_VERSION:
                raise StoreError(
                    f"{self.path}: database schema {row[0]} is not {SCHEMA_VERSION}: "
                    "use a new --db file"
                )
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: cannot open the database: {exc}") from None
        self._pending: list[tuple[str, str, str, float, str]] = []
        self.commits = 0
        self.rows_written = 0

    # --- tables -------------------------------------------------------------------------

    def register_table(
        self, table_id: str, settings: Mapping[str, Any], now: float
    ) -> dict[str, Any]:
        """Add a table (its settings at creation) unless it exists; returns the stored
        settings, which are what its log replays against."""
        row = self._db.execute("SELECT settings FROM tables WHERE id=?", (table_id,)).fetchone()
        if row is not None:
            stored: dict[str, Any] = json.loads(row[0])
            return stored
        self._write(
            "INSERT INTO tables (id, settings, created) VALUES (?, ?, ?)",
            (table_id, json.dumps(dict(settings), sort_keys=True), now),
        )
        return dict(settings)

    def table_ids(self) -> list[str]:
        """Every table ever registered, in creation order."""
        rows = self._db.execute("SELECT id FROM tables ORDER BY created, rowid").fetchall()
        return [row[0] for row in rows]

    def settings(self, table_id: str) -> dict[str, Any] | None:
        row = self._db.execute("SELECT settings FROM tables WHERE id=?", (table_id,)).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    # --- writing ------------------------------------------------------------------------

    def append(
        self,
        table_id: str,
        kind: str,
        t: float,
        data: Mapping[str, Any],
        outputs: Sequence[Mapping[str, Any]] = (),
    ) -> None:
        """Queue one input and the outputs it produced; they reach the database (all or
        nothing, with everything else queued) at the next :meth:`commit`."""
        if kind not in INPUT_KINDS:
            raise ValueError(f"unknown input kind {kind!r}")
        pending = self._pending
        role = "in"
        if outputs and kind == "board" and outputs[0] == echo_of(t, data):
            role = "echo"
            outputs = outputs[1:]
        pending.append((table_id, role, kind, t, dumps(data)))
        for out in outputs:
            pending.append(
                (
                    table_id,
                    "out",
                    str(out.get("type", "?")),
                    float(out.get("time", t) or t),
                    dumps(out),
                )
            )

    @property
    def pending(self) -> int:
        """Rows queued and not committed yet."""
        return len(self._pending)

    def commit(self) -> int:
        """Write every queued row in one transaction; returns the number of rows.  Raises
        :class:`StoreError` when the database refuses (the rows stay queued)."""
        rows, self._pending = self._pending, []
        if not rows:
            return 0
        try:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.executemany(
                "INSERT INTO log (table_id, role, kind, t, data) VALUES (?, ?, ?, ?, ?)", rows
            )
            self._db.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            self._pending = rows + self._pending  # kept for the next attempt
            raise StoreError(f"{self.path}: cannot write the log: {exc}") from None
        self.commits += 1
        self.rows_written += len(rows)
        return len(rows)

    def checkpoint(self) -> None:
        """Copy the write-ahead log into the database file (a passive checkpoint, which
        never blocks the writer).  It fsyncs, so call it from a worker thread
        (``asyncio.to_thread(store.checkpoint)``): it opens its own connection."""
        connection = sqlite3.connect(str(self.path), timeout=5)
        try:
            connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except sqlite3.DatabaseError as exc:
            logger.warning("%s: checkpoint failed: %s", self.path, exc)
        finally:
            connection.close()

    def _write(self, sql: str, params: tuple[Any, ...]) -> None:
        try:
            self._db.execute(sql, params)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: cannot write: {exc}") from None

    # --- reading ------------------------------------------------------------------------

    def inputs(self, table_id: str) -> Iterator[Input]:
        """The table's inputs in order, each with the outputs stored after it."""
        cursor = self._db.execute(
            "SELECT seq, role, kind, t, data FROM log WHERE table_id=? ORDER BY seq", (table_id,)
        )
        current: tuple[int, str, float, dict[str, Any]] | None = None
        outs: list[dict[str, Any]] = []
        for seq, role, kind, t, data in cursor:
            if role != "out":
                if current is not None:
                    yield Input(*current, tuple(outs))
                current = (seq, kind, t, json.loads(data))
                outs = [echo_of(t, current[3])] if role == "echo" else []
            elif current is not None:
                outs.append(json.loads(data))
        if current is not None:
            yield Input(*current, tuple(outs))

    def outputs(
        self, table_id: str, *, after: int = 0, limit: int = 1000, kind: str | None = None
    ) -> list[tuple[int, dict[str, Any]]]:
        """Stored outputs of a table (what was shown), oldest first, after ``after``.  A
        board event's echo has the sequence number of its input."""
        sql = "SELECT seq, role, t, data FROM log WHERE table_id=? AND role!='in' AND seq>?"
        params: list[Any] = [table_id, after]
        if kind is not None:
            sql += " AND kind=?"
            params.append(kind)
        sql += " ORDER BY seq LIMIT ?"
        params.append(limit)
        return [
            (seq, echo_of(t, json.loads(data)) if role == "echo" else json.loads(data))
            for seq, role, t, data in self._db.execute(sql, params)
        ]

    def count(self, table_id: str | None = None) -> int:
        """Rows in the log (of one table, or all)."""
        if table_id is None:
            return int(self._db.execute("SELECT count(*) FROM log").fetchone()[0])
        return int(
            self._db.execute("SELECT count(*) FROM log WHERE table_id=?", (table_id,)).fetchone()[0]
        )

    def close(self) -> None:
        """Commit what is queued, checkpoint and close."""
        try:
            self.commit()
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.DatabaseError as exc:
            logger.warning("%s: final checkpoint failed: %s", self.path, exc)
        finally:
            self._db.close()


def apply_input(table: Replayable, item: Input) -> Sequence[Any]:
    """Feed one stored input to ``table``; returns what the table answered."""
    if item.kind == "board":
        return table.feed(event_from_json(item.t, item.data))
    if item.kind == "tick":
        return table.tick(item.t)
    return table.admin(str(item.data["command"]), dict(item.data.get("args", {})), item.t)


def rebuild(
    table: Replayable,
    table_id: str,
    items: Iterator[Input] | Sequence[Input],
    *,
    on_input: Callable[[Input, Sequence[Any]], None] | None = None,
) -> ReplayReport:
    """Replay stored inputs into a fresh ``table`` and compare its outputs with the stored
    ones.  A difference is logged once per table as a warning and counted; an input the
    table rejects is logged and skipped (it was not rejected when it was stored)."""
    report = ReplayReport(table_id)
    for item in items:
        report.inputs += 1
        try:
            produced = apply_input(table, item)
        except Exception as exc:  # noqa: BLE001 - a bad row must not stop the rebuild
            report.errors.append(f"input {item.seq}: {exc}")
            logger.warning(
                "table %s: stored input %d failed on replay: %s", table_id, item.seq, exc
            )
            produced = ()
        report.outputs += len(produced)
        if on_input is not None:
            on_input(item, produced)
        got = normalise([output_json(out) for out in produced])
        if got != list(item.outputs):
            report.divergences += 1
            if report.first_divergence is None:
                report.first_divergence = item.seq
                logger.warning(
                    "table %s: replay differs from the stored log at input %d (%s): "
                    "stored %d output(s), replay gave %d; the stored outputs stay the record",
                    table_id,
                    item.seq,
                    item.kind,
                    len(item.outputs),
                    len(got),
                )
    return report
