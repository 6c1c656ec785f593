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

Reading one table: the log's index by table (:mod:`service.store_index`) is written a table
at a time, some seconds after its rows, inside a later commit; the readers take the rows not
indexed yet from memory, and an open indexes what a stop or a crash left waiting.

Rebuilding: a table is rebuilt by feeding its inputs, in order, to a fresh table
(:func:`rebuild`); the table is deterministic, so the outputs must come out as stored.  A
difference is counted and logged as a warning; the stored outputs stay the record of what
was shown (``Store.outputs``).

Failing closed: when the database refuses a write (a full disk, an I/O error, a file gone
read-only), the store keeps every row it received in memory, in order, and the next commits
retry with a growing back-off (:data:`RETRY_FIRST` to :data:`RETRY_MAX`); its state
(:class:`StoreState`, :attr:`Store.healthy`, :attr:`Store.unstored`) says so, for the pages
and the admin API, and the log gets one line per change of state.  A :meth:`Store.close`
that still cannot commit writes the rows to a recovery file (:mod:`service.store_recovery`)
and raises :class:`StoreError` saying how many; the next start folds that file in before
anything new.  A process killed with SIGKILL loses what was not committed: while the store
is failing, every row since the failure.

A row whose text cannot be stored (a lone surrogate, which has no UTF-8 encoding) is refused
alone, with a warning: the other rows of its commit are written.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import operator
import os
import sqlite3
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import orjson

from dgt.events import BoardEvent, ClockUpdate, LeverMoved, Side, SquareChanged
from dgt.recording import event_from_json, event_to_json
from service.json_text import ORJSON_OPTIONS, dumps, encodable, utf8_dumps
from service.store_index import TableIndex
from service.store_recovery import (
    RecoveryError,
    Row,
    read_recovery,
    recovery_paths,
    remove_recovery,
    write_recovery,
)
from service.table.admin import replayed_admin_args
from service.table.events import TableEvent, lever_json, square_json

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 3
"""2: the ``echo`` role (an input that is also its own first output).  3: the ``table`` role
(a table's registration, written by a store that forwards its log: :meth:`Store.claim_edge`);
a database of schema 2 is brought to 3 when opened (its log copied under the new check)."""

_LOG_COLUMNS = """
    seq INTEGER PRIMARY KEY,
    table_id TEXT NOT NULL,
    -- not "role IN (...)": SQLite builds a lookup table for that at every insert
    role TEXT NOT NULL CHECK (role = 'in' OR role = 'echo' OR role = 'out' OR role = 'table'),
    kind TEXT NOT NULL,
    t REAL NOT NULL,
    data TEXT NOT NULL
"""

# The index by table is service.store_index's (written in batches, not with every row).
_LOG_GUARDS = (
    """CREATE TRIGGER IF NOT EXISTS log_no_update BEFORE UPDATE ON log
    BEGIN SELECT RAISE(ABORT, 'the log is append-only'); END""",
    """CREATE TRIGGER IF NOT EXISTS log_no_delete BEFORE DELETE ON log
    BEGIN SELECT RAISE(ABORT, 'the log is append-only'); END""",
)

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tables (
    id TEXT PRIMARY KEY,
    settings TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS log ({_LOG_COLUMNS});
{";".join(_LOG_GUARDS)};
"""

ECHO = 1
"""A queued row's role ``"echo"`` as the store queues it (see :data:`QueuedRow`)."""
OUT = 2
"""A queued row's role ``"out"`` as the store queues it."""
BOARD = 1
"""A queued row's kind ``"board"`` as the store queues it."""

QueuedRow = tuple[str, str | int, str | int, float, str]
"""A row queued for the next commit: a log row (:data:`service.store_recovery.Row`) whose
role and kind may be given by their codes (:data:`ECHO`, :data:`OUT`, :data:`BOARD`), which
the insert writes as their text: the log holds the same rows.  SQLite copies each text it
is given into memory of its own (an allocation and a copy a value); a small integer it
takes as it is.  Most rows have both coded (a board input echoed by its table: ``echo``,
``board``): about 1,000 fewer instructions a row, a seventh of its insert (callgrind, rows
of 32-row statements), about a tenth of its commit."""


_ROLE_TEXT: dict[str | int, str] = {ECHO: "echo", OUT: "out"}
_KIND_TEXT: dict[str | int, str] = {BOARD: "board"}


def _as_text(parameter: int, texts: dict[str | int, str]) -> str:
    """SQL giving parameter ``parameter`` as its text when it is one of the codes of
    ``texts`` (else as given)."""
    cases = " ".join(f"WHEN {code} THEN '{text}'" for code, text in texts.items())
    return f"CASE ?{parameter} {cases} ELSE ?{parameter} END"


def _values(first: int) -> str:
    """One row's values in the insert: parameters ``first`` to ``first + 4``, the role and
    the kind written as their text when given by their codes (else as given)."""
    role = _as_text(first + 1, _ROLE_TEXT)
    kind = _as_text(first + 2, _KIND_TEXT)
    return f"(?{first}, {role}, {kind}, ?{first + 3}, ?{first + 4})"


_INSERT = "INSERT INTO log (table_id, role, kind, t, data) VALUES " + _values(1)

_INSERT_ROWS = {
    size: "INSERT INTO log (table_id, role, kind, t, data) VALUES "
    + ", ".join(_values(5 * i + 1) for i in range(size))
    for size in (32, 8)
}
"""Statements inserting 32 and 8 rows at once, by their sizes: a commit inserts its rows
by these and the rest one by one (:meth:`Store._insert`).  A statement's fixed cost (its
step, its end, the lock given back to Python's other threads) is paid once for its rows:
about a sixth less CPU a row than one statement a row (callgrind, 41-row commits).  The
rest go first, so that a commit of 8 rows or more ends with one of these, whose cursor
tells the number of its last row (no query for it)."""

def row_text(row: QueuedRow) -> Row:
    """The log row a queued row stands for (its role and kind as text)."""
    table_id, role, kind, t, data = row
    if not isinstance(role, str):
        role = _ROLE_TEXT[role]
    if not isinstance(kind, str):
        kind = _KIND_TEXT[kind]
    return (table_id, role, kind, t, data)


_flat = itertools.chain.from_iterable
_table_of = operator.itemgetter(0)
"""A queued row's table id."""

INPUT_KINDS = ("board", "tick", "admin")
"""Kinds of input rows: a board event, a clock tick of the service, an admin command."""


DEFAULT_CACHE_KIB = 2000
"""SQLite's default page cache, KiB."""
CACHE_KIB_PER_TABLE = 4
"""Page cache added per table (:meth:`Store.plan_cache`): a page of 4 KiB."""

_orjson_dumps = orjson.dumps

_ENCODABLE_IDS_KEPT = 100_000
"""Table ids remembered as encodable at most."""

RETRY_FIRST = 0.5
"""Seconds before the first retry of a failed commit; each failure doubles it..."""
RETRY_MAX = 8.0
"""... up to this."""


REGISTRATION = "table"
"""Role (and kind) of a table's registration row: its ``data`` is
``{"board": N or null, "settings": {...}}``, the settings the table was created with (what
``tables.settings`` holds) and the board number its games carry in the feeds (null: its
position in the hall), its time the creation's.  Only a store with an edge id writes them
(:meth:`Store.claim_edge`), so that a reader of the forwarded log can build every table
from the log alone; readers of inputs and outputs pass them by."""


def registration_data(settings: Mapping[str, Any], board: int | None) -> str:
    """The ``data`` of a registration row."""
    return dumps({"board": board, "settings": dict(settings)})


EDGE_ID_KEY = "edge_id"
"""The ``meta`` key of the edge id a database forwards its log under."""
EDGE_DB_KEY = "edge_db"
"""The ``meta`` key of a random name the database got with its edge id: the stream tells
the rows of one database from those of another given the same edge id."""


class LogRow(NamedTuple):
    """One row of the log as stored (``data`` is the JSON text): what an edge forwards."""

    seq: int
    table_id: str
    role: str
    kind: str
    t: float
    data: str


class StoreError(Exception):
    """The database cannot be opened or written; the message says which file and why."""


class StoreDamaged(StoreError):
    """The database file is damaged (a bad page, a row that is not JSON)."""


class StoreState(StrEnum):
    """What the store can do now (shown as is on the pages and by the admin API)."""

    OK = "ok"
    """Every row received is committed or queued for the next commit."""
    FAILING = "failing"
    """The database refuses writes: the rows are kept in memory and retried."""
    CLOSED = "closed"


def damaged_message(path: Path, what: str) -> str:
    """One line: what is damaged in the database ``path`` and what to do."""
    what = " ".join(what.split())
    return (
        f"{path} is damaged ({what}): start a new store with --db NEW, or copy what can be "
        f"read with 'dgt-service store recover {path} NEW' "
        f"(see 'dgt-service store check {path}')"
    )


def _is_damage(exc: sqlite3.DatabaseError) -> bool:
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text or "corrupt" in text


def _disk_hint(path: Path) -> str:
    """ " (read-only file system)" or " (the disk is full)" when the database's file system
    is so; else nothing."""
    try:
        fs = os.statvfs(path.parent)
    except OSError:
        return ""
    if fs.f_flag & os.ST_RDONLY:
        return " (read-only file system)"
    if fs.f_bavail * fs.f_frsize < 64 * 1024:
        return " (the disk is full)"
    return ""


def check_database(path: str | Path) -> None:
    """Run SQLite's quick check on the database ``path`` (read only, before anything writes
    to it); raises :class:`StoreDamaged` when it finds damage.  Nothing is checked when the
    file does not exist or cannot be opened for reading (opening the store says why)."""
    path = Path(path)
    if not path.is_file():
        return
    try:
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.DatabaseError:
        return
    try:
        _quick_check(connection, path)
    finally:
        connection.close()


def _quick_check(connection: sqlite3.Connection, path: Path) -> None:
    try:
        problems = [str(row[0]) for row in connection.execute("PRAGMA quick_check(3)")]
    except sqlite3.DatabaseError as exc:
        if not _is_damage(exc) or "not a database" in str(exc):
            return  # opening the store says what is wrong
        problems = [str(exc)]
    if problems != ["ok"]:
        raise StoreDamaged(damaged_message(path, "; ".join(problems)))


def _row_error(exc: Exception) -> bool:
    """Whether ``exc``, raised while inserting rows, is the fault of a row (its text cannot
    be encoded, a value SQLite refuses) rather than of the database (full, read-only,
    failing), which no other row would get past either."""
    if isinstance(exc, sqlite3.IntegrityError | sqlite3.DataError):
        return True
    return not isinstance(exc, sqlite3.DatabaseError)


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
    """A board event as the ``data`` of an input row (``event_to_json(event)``; a square
    change and a lever press, the board inputs a move makes, written straight)."""
    if type(event) is SquareChanged:
        return square_json(event)
    if type(event) is LeverMoved:
        return lever_json(event)
    return event_to_json(event)


def echo_of(t: float, data: Mapping[str, Any]) -> dict[str, Any]:
    """The output a table gives first for the board input ``data`` at ``t``: the event
    itself (see the module docstring)."""
    return {"time": t, "type": "board", **data}


_SECONDS_KEPT = 36_000.0
"""The times whose text :func:`clock_text` keeps: whole seconds above 0 and below ten hours
(a DGT 3000 shows at most 9:59:59), at most 35,999 texts."""

_SECONDS_TEXT: dict[float, str] = {}
"""``repr(x)`` of the whole seconds ``0 < x <`` :data:`_SECONDS_KEPT` met so far (not 0:
``-0.0`` would find its text)."""


def _whole_text(value: float) -> str | None:
    """``repr(value)`` of a whole number of seconds (kept in :data:`_SECONDS_TEXT` when in
    its range), else None (a NaN or an infinity too: its remainder is a NaN, which is
    true)."""
    if value % 1.0:
        return None
    text = repr(value)
    if 0.0 < value < _SECONDS_KEPT:
        _SECONDS_TEXT[value] = text
    return text


_STATE_TEXT: dict[tuple[Any, ...], str] = {}
"""The text of a clock row after its times (``"running"`` to the end) by its fields
``(running, lever_high, left_flag, right_flag, battery_low, turn)``, for those of the
driver's types (bools and sides: at most 96 texts)."""


def _state_text(state: tuple[Any, ...]) -> str:
    """The text of a clock row after its times, for its fields ``state`` (see
    :data:`_STATE_TEXT`, where it is kept when they are of the driver's types)."""
    running, lever_high, left_flag, right_flag, battery_low, turn = state
    turn_text = "null" if turn is None else f'"{turn._value_}"'
    text = (
        f'"running":{"true" if running else "false"},'
        f'"lever_high":"{lever_high._value_}",'
        f'"left_flag":{"true" if left_flag else "false"},'
        f'"right_flag":{"true" if right_flag else "false"},'
        f'"battery_low":{"true" if battery_low else "false"},'
        f'"turn":{turn_text}}}'
    )
    if (
        type(lever_high) is Side
        and (turn is None or type(turn) is Side)
        and all(type(flag) is bool for flag in (running, left_flag, right_flag, battery_low))
    ):
        _STATE_TEXT[state] = text
    return text


def clock_text(report: ClockUpdate) -> str | None:
    """``utf8_dumps(board_input(report))`` of a clock report whose fields are of their
    declared types, written in one step (no dictionary): most rows of a hall.  None where
    the two could be spelled differently (a time that is not a whole number of seconds:
    orjson and ``repr`` differ on some, such as ``1e-05``)."""
    left = report.left
    right = report.right
    if type(left) is not float or type(right) is not float:
        return None
    # each time's text kept from the last time it was met (most of a row's cost was the
    # two float reprs)
    left_text = _SECONDS_TEXT.get(left) or _whole_text(left)
    right_text = _SECONDS_TEXT.get(right) or _whole_text(right)
    if left_text is None or right_text is None:
        return None
    # and the rest (its flags, lever and turn), of which a clock shows a handful
    state = (
        report.running,
        report.lever_high,
        report.left_flag,
        report.right_flag,
        report.battery_low,
        report.turn,
    )
    try:
        rest = _STATE_TEXT.get(state) or _state_text(state)
    except TypeError:  # a field that cannot be a key (not of its declared type)
        rest = _state_text(state)
    return f'{{"event":"clock","left":{left_text},"right":{right_text},{rest}'


def output_json(event: Any) -> dict[str, Any]:
    """A table event as the ``data`` of an output row (``to_json()`` when it has one)."""
    if type(event) is TableEvent:  # event.to_json(), less the method's call
        return {"time": event.time, "type": event.type, **event.data}
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

    def __init__(
        self,
        path: str | Path,
        *,
        durable: bool = False,
        check: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Open (or create) the database and make sure it can be written; fold in the rows
        of a recovery file left by the last stop.  ``check``: also run SQLite's quick check
        first (:class:`StoreDamaged` when the file is damaged).  ``clock`` times the
        retries."""
        self.path = Path(path)
        self._clock = clock
        self._pending: list[QueuedRow] = []
        self._queued_ids: set[str] = set()
        """The tables of the first :attr:`_queued_seen` rows of :attr:`_pending`
        (:meth:`queued_tables`)."""
        self._queued_seen = 0
        self._encodable_ids: set[str] = set()
        """Table ids whose text was found to have a UTF-8 form."""
        self.commits = 0
        self.rows_written = 0
        self.refused = 0
        """Rows refused alone because their text cannot be stored."""
        self.state = StoreState.OK
        self.error: str | None = None
        """Why the store is failing (None while it is not)."""
        self._retry_delay = 0.0
        self._retry_at = 0.0
        self._checkpoint_failed = False
        self._synchronous = "FULL" if durable else "NORMAL"
        try:
            self._db = sqlite3.connect(str(self.path), isolation_level=None)
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"{self.path}: cannot open the database: {exc}{_disk_hint(self.path)}"
            ) from None
        self._index = TableIndex(self._db, clock)
        try:
            self._open(durable, check)
        except BaseException:
            self._db.close()
            raise

    def _open(self, durable: bool, check: bool) -> None:
        try:
            if check:
                _quick_check(self._db, self.path)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(f"PRAGMA synchronous={self._synchronous}")
            self._db.execute("PRAGMA busy_timeout=5000")
            # Checkpoints (which fsync) run off the event loop: see checkpoint().
            self._db.execute("PRAGMA wal_autocheckpoint=0")
            self._db.executescript(_SCHEMA)
            row = self._db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if row is None:
                self._db.execute(
                    "INSERT INTO meta (key, value) VALUES ('schema', ?)", (str(SCHEMA_VERSION),)
                )
            elif int(row[0]) == 2:
                self._migrate_from_2()
            elif int(row[0]) != SCHEMA_VERSION:
                raise StoreError(
                    f"{self.path}: database schema {row[0]} is not {SCHEMA_VERSION}: "
                    "use a new --db file"
                )
        except sqlite3.DatabaseError as exc:
            if "not a database" in str(exc):
                raise StoreError(
                    f"{self.path}: cannot open the database: {exc} (another kind of file, or "
                    "its first page is damaged): give another --db"
                ) from None
            if _is_damage(exc):
                raise StoreDamaged(damaged_message(self.path, str(exc))) from None
            raise StoreError(
                f"{self.path}: cannot open the database: {exc}{_disk_hint(self.path)}"
            ) from None
        except ValueError as exc:  # a schema value that is not a number
            raise StoreDamaged(damaged_message(self.path, f"meta: {exc}")) from None
        try:
            # A write at start: a read-only file or directory, or a full disk, is found
            # here, not after the first move has been shown.
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('opened', ?)", (str(time.time()),)
            )
            self._index.open()
            self._db.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            self._rollback()
            if _is_damage(exc):
                raise StoreDamaged(damaged_message(self.path, str(exc))) from None
            raise StoreError(
                f"{self.path}: the database cannot be written: {exc}{_disk_hint(self.path)}"
            ) from None
        self._fold_recovery()

    def _migrate_from_2(self) -> None:
        """Schema 2 to 3: the log copied into a table whose check also takes the ``table``
        role (SQLite cannot change a check in place), in one transaction."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            self._db.execute(f"CREATE TABLE log_3 ({_LOG_COLUMNS})")
            self._db.execute("INSERT INTO log_3 SELECT seq, table_id, role, kind, t, data FROM log")
            self._db.execute("DROP TABLE log")
            self._db.execute("ALTER TABLE log_3 RENAME TO log")
            for statement in _LOG_GUARDS:
                self._db.execute(statement)
            self._db.execute("UPDATE meta SET value=? WHERE key='schema'", (str(SCHEMA_VERSION),))
            self._db.execute("COMMIT")
        finally:
            self._rollback()
        logger.info("%s: database schema 2 brought to %d", self.path, SCHEMA_VERSION)

    def _fold_recovery(self) -> None:
        for path in recovery_paths(self.path):
            try:
                rows = read_recovery(path)
            except RecoveryError as exc:
                raise StoreError(str(exc)) from None
            try:
                self._db.execute("PRAGMA synchronous=FULL")  # before the file goes
                self._db.execute("BEGIN IMMEDIATE")
                self._db.executemany(_INSERT, rows)
                self._index.catch_up()
                self._db.execute("COMMIT")
                self._db.execute(f"PRAGMA synchronous={self._synchronous}")
            except sqlite3.DatabaseError as exc:
                self._rollback()
                raise StoreError(
                    f"{self.path}: cannot fold in the recovery file {path}: {exc}"
                ) from None
            try:
                remove_recovery(path)
            except OSError as exc:
                raise StoreError(
                    f"{self.path}: the rows of {path} are stored now, but the file cannot be "
                    f"removed ({exc.strerror}): remove it before the next start"
                ) from None
            logger.warning(
                "%s: stored the %d row(s) of %s (left by the last stop)", self.path, len(rows), path
            )

    def _rollback(self) -> None:
        if self._db.in_transaction:
            try:
                self._db.execute("ROLLBACK")
            except sqlite3.DatabaseError as exc:
                logger.warning("%s: rollback failed: %s", self.path, exc)

    def plan_cache(self, tables: int) -> None:
        """Size SQLite's page cache for ``tables`` tables writing at once: every commit
        updates, for each table it holds rows of, the page of the log's index where that
        table's entries end, which is read from the file first when it is not cached
        (SQLite's default cache, 2 MB, holds that page for about 500 tables).  A page's
        worth a table on top of the default; the cache grows only as pages are read."""
        kib = DEFAULT_CACHE_KIB + CACHE_KIB_PER_TABLE * max(0, tables)
        try:
            self._db.execute(f"PRAGMA cache_size=-{kib}")
        except sqlite3.DatabaseError as exc:  # a cache of the default size still works
            logger.warning("%s: cannot size the page cache: %s", self.path, exc)

    # --- tables -------------------------------------------------------------------------

    def register_table(
        self, table_id: str, settings: Mapping[str, Any], now: float, *, board: int | None = None
    ) -> dict[str, Any]:
        """Add a table (its settings at creation) unless it exists; returns the stored
        settings, which are what its log replays against.  A store with an edge id also
        logs the registration (with ``board``, the table's board number in the feeds)."""
        stored = self.settings(table_id)
        if stored is not None:
            return stored
        text = json.dumps(dict(settings), sort_keys=True)
        try:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute(
                "INSERT INTO tables (id, settings, created) VALUES (?, ?, ?)",
                (table_id, text, now),
            )
            if self.edge_id is not None:
                cursor = self._db.execute(
                    _INSERT,
                    (table_id, REGISTRATION, REGISTRATION, now, registration_data(settings, board)),
                )
                if cursor.lastrowid is not None:
                    self._index.add_now(table_id, cursor.lastrowid)
            self._db.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: cannot write: {exc}") from None
        finally:
            self._rollback()
        return dict(settings)

    # --- an edge of a central service ----------------------------------------------------

    @property
    def edge_id(self) -> str | None:
        """The edge id this database forwards its log under (None: it never did)."""
        with self._reading("the meta table"):
            row = self._db.execute("SELECT value FROM meta WHERE key=?", (EDGE_ID_KEY,)).fetchone()
        return None if row is None else str(row[0])

    @property
    def edge_db(self) -> str | None:
        """The random name of this database as an edge (None: it never was one)."""
        with self._reading("the meta table"):
            row = self._db.execute("SELECT value FROM meta WHERE key=?", (EDGE_DB_KEY,)).fetchone()
        return None if row is None else str(row[0])

    def claim_edge(self, edge_id: str, boards: Mapping[str, int | None] | None = None) -> None:
        """Have this database forward its log as edge ``edge_id``: the id is kept, and
        from now on each table's registration is a row of the log (:data:`REGISTRATION`);
        the tables registered before get theirs now (their board numbers from ``boards``),
        before the first row of the log, so every table's rows follow its registration.
        Raises :class:`StoreError` when the database is another edge's."""
        boards = boards or {}
        known = self.edge_id
        if known is not None and known != edge_id:
            raise StoreError(
                f"{self.path} is the store of edge {known!r}, not {edge_id!r}: give "
                f"--edge-id {known}, or another --db for a new edge"
            )
        try:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (EDGE_ID_KEY, edge_id)
            )
            self._db.execute(
                "INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)",
                (EDGE_DB_KEY, uuid.uuid4().hex),
            )
            missing = self._db.execute(
                "SELECT id, settings, created FROM tables AS t WHERE NOT EXISTS "
                "(SELECT 1 FROM log WHERE table_id=t.id AND role=?) ORDER BY created, rowid",
                (REGISTRATION,),
            ).fetchall()
            first = self._db.execute("SELECT min(seq) FROM log").fetchone()[0]
            seq = (1 if first is None else int(first)) - len(missing)
            for table_id, settings, created in missing:
                self._db.execute(
                    "INSERT INTO log (seq, table_id, role, kind, t, data) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        seq,
                        table_id,
                        REGISTRATION,
                        REGISTRATION,
                        created,
                        registration_data(json.loads(settings), boards.get(table_id)),
                    ),
                )
                self._index.add_now(table_id, seq)
                seq += 1
            self._db.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: cannot write: {exc}") from None
        finally:
            self._rollback()

    def table_ids(self) -> list[str]:
        """Every table ever registered, in creation order."""
        with self._reading("the tables"):
            rows = self._db.execute("SELECT id FROM tables ORDER BY created, rowid").fetchall()
        return [row[0] for row in rows]

    def settings(self, table_id: str) -> dict[str, Any] | None:
        with self._reading(f"the settings of table {table_id}"):
            row = self._db.execute("SELECT settings FROM tables WHERE id=?", (table_id,)).fetchone()
        if row is None:
            return None
        try:
            value = json.loads(row[0])
        except (TypeError, ValueError):
            value = None
        if not isinstance(value, dict):
            raise StoreDamaged(
                damaged_message(self.path, f"the settings of table {table_id} are not JSON")
            )
        return value

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
        if outputs and kind == "board" and outputs[0] == echo_of(t, data):
            self._append(table_id, kind, "echo", t, data, outputs[1:])
        else:
            self._append(table_id, kind, "in", t, data, outputs)

    def append_echoed(
        self,
        table_id: str,
        t: float,
        data: Mapping[str, Any],
        outputs: Sequence[Mapping[str, Any]] = (),
    ) -> None:
        """:meth:`append` of a board input whose first output was its echo (the caller
        made sure: ``echo_of(t, data)``), given the outputs after the echo."""
        self._append(table_id, "board", "echo", t, data, outputs)

    def append_echo(self, table_id: str, t: float, data: Mapping[str, Any]) -> None:
        """:meth:`append_echoed` of a board input whose only output was its echo: its one
        row (of a table whose id was stored before: none of :meth:`_append`'s lists)."""
        if table_id in self._encodable_ids:
            try:
                text = utf8_dumps(data)
            except (TypeError, ValueError):
                text = None  # _append says why
            if text is not None:
                self._pending.append((table_id, ECHO, BOARD, t, text))
                return
        self._append(table_id, "board", "echo", t, data, ())

    def append_clock(self, table_id: str, t: float, report: ClockUpdate) -> None:
        """:meth:`append_echo` of the clock report ``report`` (its fields of their declared
        types; the data is ``board_input(report)``), a report that changed nothing but time:
        most inputs of a hall.  Its row's text is written from the report's fields in one
        step, as orjson writes that data (:func:`clock_text`)."""
        if table_id in self._encodable_ids:
            text = clock_text(report)
            if text is not None:
                self._pending.append((table_id, ECHO, BOARD, t, text))
                return
        self._append(table_id, "board", "echo", t, board_input(report), ())

    def _append(
        self,
        table_id: str,
        kind: str,
        role: str,
        t: float,
        data: Mapping[str, Any],
        outputs: Sequence[Mapping[str, Any]],
    ) -> None:
        ids = self._encodable_ids
        known = table_id in ids
        fits = known or encodable(table_id)
        try:
            text: str | None
            try:  # utf8_dumps(data) (orjson's text always has a UTF-8 form)
                text = _orjson_dumps(data, option=ORJSON_OPTIONS).decode()
            except TypeError:
                text = utf8_dumps(data)
                fits = fits and text is not None
            rows: list[QueuedRow] = [
                (
                    table_id,
                    ECHO if role == "echo" else role,
                    BOARD if kind == "board" else kind,
                    t,
                    text or "",
                )
            ]
            for out in outputs:
                # str(out.get("type", "?")) and float(out.get("time", t) or t), read once
                out_kind = out.get("type", "?")
                if type(out_kind) is not str:
                    out_kind = str(out_kind)
                out_t = out.get("time", t)
                if type(out_t) is not float or not out_t:
                    out_t = float(out_t or t)
                try:  # utf8_dumps(out) (orjson's text always has a UTF-8 form)
                    text = _orjson_dumps(out, option=ORJSON_OPTIONS).decode()
                except TypeError:
                    text = utf8_dumps(out)
                    fits = fits and text is not None
                fits = fits and (out_kind.isascii() or encodable(out_kind))
                rows.append((table_id, OUT, out_kind, out_t, text or ""))
        except (TypeError, ValueError) as exc:
            self._refuse(table_id, kind, len(outputs) + 1, str(exc))
            return
        if not fits:
            self._refuse(table_id, kind, len(rows), "its text has no UTF-8 form (a lone surrogate)")
            return
        if not known and len(ids) < _ENCODABLE_IDS_KEPT:
            ids.add(table_id)
        self._pending.extend(rows)

    def _refuse(self, table_id: str, kind: str, rows: int, why: str) -> None:
        self.refused += rows
        logger.warning(
            "%s: table %s: an input (%s) and its outputs not stored: %s",
            self.path,
            table_id.encode("utf-8", "backslashreplace").decode(),
            kind,
            why.encode("utf-8", "backslashreplace").decode(),
        )

    def queued_tables(self) -> set[str]:
        """The tables with rows queued and not committed yet, read off the queue when
        asked (the rows it had at the last call are not read again): not kept up to date
        on each row."""
        rows = self._pending
        if self._queued_seen < len(rows):
            self._queued_ids.update(row[0] for row in rows[self._queued_seen :])
            self._queued_seen = len(rows)
        return self._queued_ids

    def _dequeued(self) -> None:
        """The queue was emptied (committed, or handed to a recovery file)."""
        self._pending = []
        self._queued_ids = set()
        self._queued_seen = 0

    @property
    def pending(self) -> int:
        """Rows queued and not committed yet."""
        return len(self._pending)

    @property
    def unstored(self) -> int:
        """Rows received and not committed yet (queued, or kept while failing)."""
        return len(self._pending)

    @property
    def healthy(self) -> bool:
        """Whether the database takes writes (the last commit succeeded)."""
        return self.state is StoreState.OK

    def retry_in(self) -> float:
        """Seconds until a failing store tries to write again (0 when it may now)."""
        if self.state is not StoreState.FAILING:
            return 0.0
        return max(0.0, self._retry_at - self._clock())

    def status(self) -> dict[str, Any]:
        """The store's state for the pages and the admin API."""
        return {
            "state": str(self.state),
            "unstored": self.unstored,
            "refused": self.refused,
            "error": self.error,
            "retry_in": round(self.retry_in(), 3),
        }

    def commit(self) -> int:
        """Write every queued row in one transaction; returns the number of rows.  Raises
        :class:`StoreError` when the database refuses (the rows stay queued, in order, and
        are retried by a later commit); a failing store retries only once its back-off is
        over (raising again before)."""
        if not self._pending:
            return 0
        if self.state is StoreState.FAILING and self._clock() < self._retry_at:
            raise StoreError(self._failure_message())
        return self._commit_now()

    def _commit_now(self) -> int:
        rows = self._pending
        numbered: list[tuple[str, int]] | None = None
        """The rows written with their sequence numbers, when they are not consecutive."""
        try:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                last = self._insert(rows)
            except Exception as exc:
                if not _row_error(exc):
                    raise
                # A bad row: find it, keep the rest.
                self._rollback()
                logger.warning(
                    "%s: a row could not be written (%s); writing one input at a time",
                    self.path,
                    exc,
                )
                self._db.execute("BEGIN IMMEDIATE")
                rows, numbered = self._insert_one_at_a_time(rows)
            if numbered is None:
                # In order in one write transaction: the rows are numbered one after
                # another up to the last (the log is append-only, so max(seq) + 1 each).
                first = last - len(rows) + 1
                indexed = self._index.write_due(first)
            else:
                indexed = self._index.write_due(numbered[0][1] if numbered else None)
            self._db.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            self._failed(exc)
            raise StoreError(self._failure_message()) from None
        finally:
            self._rollback()  # never left open, whatever happened
        if numbered is None:
            self._index.committed(indexed, map(_table_of, rows), first)
        else:
            self._index.committed_rows(indexed, numbered)
        self._dequeued()
        self.commits += 1
        self.rows_written += len(rows)
        if self.state is StoreState.FAILING:
            self.state = StoreState.OK
            self.error = None
            self._retry_delay = 0.0
            logger.warning(
                "%s: writing again: the %d row(s) kept in memory are stored", self.path, len(rows)
            )
        return len(rows)

    def _insert(self, rows: list[QueuedRow]) -> int:
        """Insert ``rows`` in order inside the open transaction, their sequence numbers
        consecutive: the rows beyond a multiple of 8 one by one (one ``executemany``),
        then the others by the statements of :data:`_INSERT_ROWS`.  Returns the sequence
        number of the last row."""
        db = self._db
        start = len(rows) % 8
        if start:
            db.executemany(_INSERT, rows[:start])
        last: int | None = None
        for size, sql in _INSERT_ROWS.items():
            while len(rows) - start >= size:
                last = db.execute(sql, tuple(_flat(rows[start : start + size]))).lastrowid
                start += size
        return self._last_insert() if last is None else last

    def _index_all(self) -> None:
        """Index every row still waiting (a stop), so the next open has none to find."""
        try:
            self._db.execute("BEGIN IMMEDIATE")
            self._index.write_all()
            self._db.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            logger.warning(
                "%s: cannot write the index by table (%s): the next start does", self.path, exc
            )
        else:
            self._index.written_all()
        finally:
            self._rollback()

    def _last_insert(self) -> int:
        return int(self._db.execute("SELECT last_insert_rowid()").fetchone()[0])

    def _insert_one_at_a_time(
        self, rows: list[QueuedRow]
    ) -> tuple[list[QueuedRow], list[tuple[str, int]]]:
        """Insert ``rows`` input by input (each with its outputs) inside the open
        transaction; an input whose rows cannot be written is left out, alone.  Returns the
        rows written, and their tables and sequence numbers."""
        written: list[QueuedRow] = []
        numbered: list[tuple[str, int]] = []
        entry: list[QueuedRow] = []
        entries: list[list[QueuedRow]] = []
        for row in rows:
            if row[1] != OUT and row[1] != "out" and entry:
                entries.append(entry)
                entry = []
            entry.append(row)
        if entry:
            entries.append(entry)
        for entry in entries:
            self._db.execute("SAVEPOINT entry")
            try:
                self._db.executemany(_INSERT, entry)
            except Exception as exc:
                if not _row_error(exc):
                    raise
                self._db.execute("ROLLBACK TO entry")
                self._db.execute("RELEASE entry")
                self._refuse(entry[0][0], row_text(entry[0])[2], len(entry), str(exc))
                continue
            self._db.execute("RELEASE entry")
            first = self._last_insert() - len(entry) + 1
            numbered.extend((row[0], first + i) for i, row in enumerate(entry))
            written.extend(entry)
        return written, numbered

    def _failed(self, exc: sqlite3.DatabaseError) -> None:
        was_failing = self.state is StoreState.FAILING
        self.state = StoreState.FAILING
        self.error = str(exc)
        self._retry_delay = min(RETRY_MAX, max(RETRY_FIRST, self._retry_delay * 2))
        self._retry_at = self._clock() + self._retry_delay
        if not was_failing:
            logger.error(
                "%s: cannot write the log (%s): every row is kept in memory and retried "
                "(a stop with SIGTERM or Ctrl-C keeps them in a recovery file; a kill -9 "
                "loses them)",
                self.path,
                exc,
            )

    def _failure_message(self) -> str:
        return (
            f"{self.path}: cannot write the log: {self.error} "
            f"({self.unstored} row(s) kept in memory, retried)"
        )

    def checkpoint(self) -> None:
        """Copy the write-ahead log into the database file (a passive checkpoint, which
        never blocks the writer).  It fsyncs, so call it from a worker thread
        (``asyncio.to_thread(store.checkpoint)``): it opens its own connection.  Skipped
        while the store is failing; a failure is logged once until one succeeds."""
        if self.state is not StoreState.OK:
            return
        try:
            connection = sqlite3.connect(str(self.path), timeout=5)
        except sqlite3.DatabaseError as exc:
            self._checkpoint_error(exc)
            return
        try:
            connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
            self._checkpoint_failed = False
        except sqlite3.DatabaseError as exc:
            self._checkpoint_error(exc)
        finally:
            connection.close()

    def _checkpoint_error(self, exc: sqlite3.DatabaseError) -> None:
        if not self._checkpoint_failed:
            logger.warning("%s: checkpoint failed: %s", self.path, exc)
        self._checkpoint_failed = True

    def _write(self, sql: str, params: tuple[Any, ...]) -> None:
        try:
            self._db.execute(sql, params)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: cannot write: {exc}") from None

    # --- reading ------------------------------------------------------------------------

    def log_rows(self, after: int | None = None, limit: int = 1000) -> list[LogRow]:
        """Committed rows of the log (every table's, registrations too) in order, after the
        row ``after`` (None: from the first), at most ``limit``."""
        sql = "SELECT seq, table_id, role, kind, t, data FROM log"
        params: tuple[int, ...] = (limit,)
        if after is not None:
            sql += " WHERE seq>?"
            params = (after, limit)
        with self._reading("the log"):
            return [LogRow(*row) for row in self._db.execute(f"{sql} ORDER BY seq LIMIT ?", params)]

    def last_seq(self) -> int | None:
        """The sequence number of the last committed row (None: the log is empty)."""
        with self._reading("the log"):
            row = self._db.execute("SELECT max(seq) FROM log").fetchone()
        return None if row[0] is None else int(row[0])

    def inputs(self, table_id: str) -> Iterator[Input]:
        """The table's inputs in order, each with the outputs stored after it.  Raises
        :class:`StoreDamaged` at a row that cannot be read."""
        rows = self._index.rows(table_id, "l.seq, l.role, l.kind, l.t, l.data")
        with self._reading(f"the log of table {table_id}"):
            yield from grouped_inputs(rows, self._json)

    def outputs(
        self, table_id: str, *, after: int = 0, limit: int = 1000, kind: str | None = None
    ) -> list[tuple[int, dict[str, Any]]]:
        """Stored outputs of a table (what was shown), oldest first, after ``after``.  A
        board event's echo has the sequence number of its input."""
        where = " AND l.role!='in' AND l.role!='table'"
        params: list[Any] = []
        if kind is not None:
            where += " AND l.kind=?"
            params.append(kind)
        rows = self._index.rows(
            table_id,
            "l.seq, l.role, l.t, l.data",
            after=after,
            where=where,
            params=params,
            limit=limit,
        )
        with self._reading(f"the log of table {table_id}"):
            return [
                (
                    seq,
                    echo_of(t, self._json(data, seq)) if role == "echo" else self._json(data, seq),
                )
                for seq, role, t, data in rows
            ]

    @contextlib.contextmanager
    def _reading(self, what: str) -> Iterator[None]:
        try:
            yield
        except sqlite3.DatabaseError as exc:
            if _is_damage(exc):
                raise StoreDamaged(damaged_message(self.path, f"{what}: {exc}")) from None
            raise StoreError(f"{self.path}: cannot read {what}: {exc}") from None

    def _json(self, text: Any, seq: int) -> dict[str, Any]:
        try:
            value = json.loads(text)
        except (TypeError, ValueError):
            raise StoreDamaged(damaged_message(self.path, f"row {seq} is not JSON")) from None
        if not isinstance(value, dict):
            raise StoreDamaged(damaged_message(self.path, f"row {seq} is not a JSON object"))
        return value

    def count(self, table_id: str | None = None) -> int:
        """Rows in the log (of one table, or all)."""
        if table_id is None:
            return int(self._db.execute("SELECT count(*) FROM log").fetchone()[0])
        return self._index.count(table_id)

    def close(self) -> None:
        """Commit what is queued (trying once more even while failing), checkpoint and
        close.  When rows still cannot be committed, they are written to a recovery file,
        which the next start folds in, and :class:`StoreError` says how many and where."""
        if self.state is StoreState.CLOSED:
            return
        try:
            if self._pending:
                with contextlib.suppress(StoreError):
                    self._commit_now()
            if not self._pending:
                self._index_all()
                try:
                    self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                except sqlite3.DatabaseError as exc:
                    logger.warning("%s: final checkpoint failed: %s", self.path, exc)
        finally:
            self._db.close()
            self.state = StoreState.CLOSED
        rows = self._pending
        self._dequeued()
        if not rows:
            return
        why = self.error or "the database refused the last commit"
        try:
            where = write_recovery(self.path, [row_text(row) for row in rows])
        except RecoveryError as exc:
            raise StoreError(
                f"{self.path}: {len(rows)} row(s) could not be stored ({why}) and are LOST: "
                f"no recovery file could be written ({exc})"
            ) from None
        raise StoreError(
            f"{self.path}: {len(rows)} row(s) could not be stored ({why}); they are in "
            f"{where}, which the next start with this --db stores first"
        )


def grouped_inputs(
    rows: Iterable[tuple[int, str, str, float, str]],
    parse: Callable[[str, int], dict[str, Any]],
) -> Iterator[Input]:
    """One table's rows (seq, role, kind, t, data text, in order) as its inputs, each with
    the outputs stored after it; registrations are passed by.  ``parse(text, seq)`` reads a
    row's JSON."""
    current: tuple[int, str, float, dict[str, Any]] | None = None
    outs: list[dict[str, Any]] = []
    for seq, role, kind, t, data in rows:
        if role == REGISTRATION:
            continue
        if role != "out":
            if current is not None:
                yield Input(*current, tuple(outs))
            current = (seq, kind, t, parse(data, seq))
            outs = [echo_of(t, current[3])] if role == "echo" else []
        elif current is not None:
            outs.append(parse(data, seq))
    if current is not None:
        yield Input(*current, tuple(outs))


def row_inputs(rows: Iterable[LogRow]) -> Iterator[Input]:
    """The inputs among one table's log rows (as :meth:`Store.log_rows` reads them or an
    edge forwards them), as :meth:`Store.inputs` gives them: what :func:`rebuild` replays.
    Raises ValueError at a row that is not a JSON object."""

    def parse(text: str, seq: int) -> dict[str, Any]:
        value = json.loads(text)
        if not isinstance(value, dict):
            raise ValueError(f"row {seq} is not a JSON object")
        return value

    return grouped_inputs(((r.seq, r.role, r.kind, r.t, r.data) for r in rows), parse)


def apply_input(table: Replayable, item: Input) -> Sequence[Any]:
    """Feed one stored input to ``table``; returns what the table answered."""
    if item.kind == "board":
        return table.feed(event_from_json(item.t, item.data))
    if item.kind == "tick":
        return table.tick(item.t)
    command = str(item.data["command"])
    args = replayed_admin_args(command, item.data.get("args", {}), item.outputs)
    return table.admin(command, args, item.t)


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
