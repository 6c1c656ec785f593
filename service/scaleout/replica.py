"""``ReplicaHall``: every edge's tables, rebuilt from their log rows, for the central web.

The centre stores every edge's log rows in order and hands each committed batch to
:meth:`ReplicaHall.on_rows` (``edge_id``, rows as :mod:`service.scaleout.rows` describes
them).  Each table is made as a hall makes it (:func:`service.hall.default_table_factory`),
its inputs replayed one by one as a rebuild at start replays them
(:func:`service.store.apply_input`, the step of :func:`service.store.rebuild`), and its
games kept as a hall's table keeps them (:class:`service.hall.GameBook`): one path, so the
replica's state JSON and PGN are the edge's.  :class:`ReplicaHall` is a
:class:`~service.web.source.HallSource`: the web app serves it as it serves a hall.

* **Table ids** stay as the edges name them (the pages, the feeds' ``GameId`` and the
  lichess games are the same at the edge and the centre).  They must be unique across
  edges: the first edge to register a table owns it; a later registration of the same id
  by another edge is refused (logged as an error, shown in the edges panel) and that
  edge's rows of the table are dropped.  Configure each edge's tables with ids (and
  ``board`` numbers) of their own, e.g. hall A tables 1-300, hall B 301-700.
* **Order**: rows of an edge come in its log's order; a row whose sequence number is not
  above the last one applied from that edge is a repeat and is skipped.  An input is
  applied when the next input of its table comes or the batch ends, so that what is shown
  is never behind the rows received; its outputs may still come in the next batch (a batch
  of the broker holds at most so many rows): they are added to the table's log and the
  replay is compared with the stored outputs once the input is complete (a difference is
  counted and logged once per table, as a rebuild does).  Only a legacy ``players``
  command's replay reads its stored outputs (:func:`service.table.admin.replayed_admin_args`):
  cut from them by a batch, it replays as given.  Rows of a table not registered yet wait
  for its registration.
* **Admin commands** go to the owning edge through an injected :data:`AdminForward`; a
  failure or a time-out is a 503 with a one-line reason.  What the command changed arrives
  later with the edge's rows, like every other change.
* **Edges**: an injected :class:`EdgeDirectory` gives each edge's last heartbeat and each
  table's link (what the page shows as the board's connection); the tables of an edge
  silent for :data:`LATE_AFTER` heartbeat intervals are shown down, saying since when
  (:meth:`ReplicaHall.check_edges`, called every second or so, publishes the change).
* **Updates** are published after each batch, one per table that changed (a clock report
  that changed only the times at most every :data:`service.hall.CLOCK_REFRESH` seconds of
  the edge's time, as the hall does).
"""

from __future__ import annotations

import asyncio
import copyreg
import dataclasses
import gc
import io
import json
import logging
import pickle
import time
import zlib
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from service.broadcast.hall_feeds import HallFeeds, hall_feeds
from service.broadcast.push import pusher_of
from service.build_info import picklable_dataclasses
from service.config import TableConfig
from service.hall import (
    CLOCK_REFRESH,
    GameBook,
    GameEntry,
    HallError,
    TableFactory,
    Update,
    default_table_factory,
)
from service.listeners import Listeners
from service.scaleout.rows import INPUT_ROLES, REGISTRATION, RowLike
from service.store import Input, apply_input, echo_of, normalise, output_json
from service.table import TableEvent, TableLike
from service.table_runner import Connection
from service.web.source import StatusCallback, UpdateCallback

picklable_dataclasses()  # the compiled build's (build_compiled.py): tables are pickled here

logger = logging.getLogger(__name__)

AdminForward = Callable[[str, str, str, dict[str, Any]], Awaitable[list[dict[str, Any]]]]
"""Carries an admin command to the edge that owns the table: ``(edge_id, table_id,
command, args)`` -> the edge's answer (the command's outputs, as ``POST
/api/admin/tables/ID/COMMAND`` on the edge answers them).  It raises
:class:`service.hall.HallError` with the edge's status for the edge's own refusal, and
:class:`EdgeUnreachable` (or any other exception) when the command could not be delivered
or answered; :meth:`ReplicaHall.admin` bounds it by its time-out."""

LATE_AFTER = 3.0
"""Heartbeat intervals without one after which an edge is silent (its tables shown down)."""
DEFAULT_INTERVAL = 2.0
"""An edge's heartbeat interval when it does not say."""

ADMIN_TIMEOUT = 5.0
"""Seconds an admin command may wait for its edge's answer."""

STORE_OK: dict[str, Any] = {
    "state": "ok",
    "unstored": 0,
    "refused": 0,
    "error": None,
    "retry_in": 0.0,
    "tables_behind": [],
}
"""A replica's store status: its rows are the centre's, stored before they reach it."""

NO_PUSHER: dict[str, Any] = {"rounds": [], "configured": False}

_CLOCK_ONLY = frozenset({"board", "clock"})

ZLIB_LEVEL = 1
"""Compression of a frozen table (the fastest: 5 to 6 times smaller)."""


class EdgeUnreachable(Exception):
    """An admin command could not reach its edge or get its answer (one line: why)."""


@dataclass(frozen=True, slots=True)
class EdgeBeat:
    """An edge's last heartbeat as the centre saw it."""

    at: float
    """UNIX time at the centre when the heartbeat arrived."""
    skew: float | None = None
    """The edge's clock minus the centre's, in seconds, at that heartbeat."""
    interval: float | None = None
    """Seconds between the edge's heartbeats (a heartbeat older than a few is late)."""
    store: str | None = None
    """The state of the edge's store (``ok``, ``failing``)."""
    waiting: int | None = None
    """Rows of the edge's log not forwarded yet."""


class EdgeDirectory(Protocol):
    """What the centre knows of each edge besides its log (its key-value status)."""

    def beats(self) -> Mapping[str, EdgeBeat]:
        """Every edge heard of, with its last heartbeat."""
        ...

    def connection(self, edge_id: str, table_id: str) -> dict[str, Any] | None:
        """The link of a table as its edge last reported it (``state``, ``port``,
        ``error``, as a hall's page shows it); None: not reported."""
        ...


class _NoDirectory:
    def beats(self) -> Mapping[str, EdgeBeat]:
        return {}

    def connection(self, edge_id: str, table_id: str) -> dict[str, Any] | None:
        return None


@dataclass(slots=True)
class _Pending:
    """An input and the outputs stored after it, as far as they came."""

    seq: int
    kind: str
    t: float
    data: dict[str, Any]
    outputs: list[dict[str, Any]]
    replayed: list[Any] | None = None
    """What the replay gave (normalised), once applied."""

    def item(self) -> Input:
        return Input(self.seq, self.kind, self.t, self.data, tuple(self.outputs))


@dataclass(frozen=True, slots=True)
class FrozenTable:
    """A table as a snapshot keeps it: the table pickled, and what the pages read of it
    (its state, summary, change log, PGN and whether its game has moves) pickled apart,
    so that a replica comes up by reading bytes, and unpickles a table only when it is
    needed whole (its next input, a read the view does not hold).  Both are compressed
    (zlib level 1: a table of 6 hours 210 kB -> 37 kB, 0.5 ms to expand)."""

    table: bytes
    view: bytes

    @classmethod
    def of(cls, table: TableLike) -> FrozenTable:
        try:
            pgn: str | None = table.pgn()
        except Exception:  # noqa: BLE001 - thawed to say why, as a live table would
            pgn = None
        view = {
            "state": table.state(),
            "summary": table.summary(),
            "change_log": table.change_log(),
            "pgn": pgn,
            "has_moves": bool(table.moves()),
        }
        return cls(_packed(table), _packed(view))

    def read(self, key: str) -> Any:
        """One part of the view, as new objects at each call (as a live table's)."""
        return pickle.loads(zlib.decompress(self.view))[key]

    def thawed(self) -> TableLike:
        """The table, unpickled."""
        table: TableLike = unpickled(zlib.decompress(self.table))
        return table


def _packed(value: object) -> bytes:
    out = io.BytesIO()
    _Pickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump(value)
    return zlib.compress(out.getbuffer(), ZLIB_LEVEL)


class _Pickler(pickle.Pickler):
    """Pickles a frozen dataclass with slots (the table's records, a table holds hundreds)
    as its fields' values set back by :func:`_set_fields`: the same object unpickled, in
    about half the time of the dataclass's own ``__setstate__`` (which looks its fields up
    again for every object)."""

    def reducer_override(self, obj: Any) -> Any:
        kind = type(obj)
        slots = _slot_fields(kind)
        if slots is None:
            return NotImplemented
        values = tuple(getattr(obj, name) for name, _slot in slots)
        return copyreg.__newobj__, (kind,), values, None, None, _set_fields  # type: ignore[attr-defined]


_SLOT_FIELDS: dict[type, tuple[tuple[str, Any], ...] | None] = {}


def _slot_fields(kind: type) -> tuple[tuple[str, Any], ...] | None:
    """The fields of a frozen dataclass with slots pickled by its dataclass state (their
    names and slot descriptors), or None for any other type."""
    try:
        return _SLOT_FIELDS[kind]
    except KeyError:
        pass
    found = None
    setstate = getattr(kind, "__setstate__", None)
    if (
        dataclasses.is_dataclass(kind)
        and "__slots__" in kind.__dict__
        and getattr(setstate, "__qualname__", "") == "_dataclass_setstate"
    ):
        found = tuple((f.name, getattr(kind, f.name)) for f in dataclasses.fields(kind))
    _SLOT_FIELDS[kind] = found
    return found


def _set_fields(obj: Any, values: tuple[Any, ...]) -> None:
    """Set the fields pickled by :class:`_Pickler` (a frozen dataclass: through its slots)."""
    slots = _slot_fields(type(obj))
    assert slots is not None
    for (_name, slot), value in zip(slots, values, strict=True):
        slot.__set__(obj, value)


def unpickled(data: bytes) -> Any:
    """``data`` unpickled (our own snapshot's: trusted as the centre's database is) with
    the garbage collector paused: the thousands of small objects of a table would else
    have it walk the whole replica again and again (4 times slower in a big process)."""
    paused = gc.isenabled()
    gc.disable()
    try:
        return pickle.loads(data)
    finally:
        if paused:
            gc.enable()


class ReplicaTable(GameBook):
    """One edge's table on the replica: the table replayed from its rows, its games.

    Restored from a snapshot, the table stays frozen (:class:`FrozenTable`) until it is
    needed whole: :attr:`table` unpickles it on first use; the pages' reads of a frozen
    table (:meth:`state`, :meth:`summary`, :meth:`change_log`, :meth:`game_pgn`) come from
    its view, which is what the table answered when the snapshot was taken."""

    def __init__(self, edge_id: str, config: TableConfig, table: TableLike) -> None:
        self.edge_id = edge_id
        self.id = config.id
        self.config = config
        self._table: TableLike | None = table
        self._frozen: FrozenTable | None = None
        self._open_book(config.settings.get("round", "?"))
        self.pending: _Pending | None = None
        """The last input received: not applied yet (``replayed`` None), or applied with
        its outputs perhaps still to come."""
        self.log: list[tuple[int, dict[str, Any]]] | None = None
        """The outputs, where the replica keeps them (no :class:`LogReader`)."""
        self.inputs = 0
        self.divergences = 0
        self.clock_published = float("-inf")
        self.clock_running: bool | None = None

    # --- frozen or live -------------------------------------------------------------

    @property
    def table(self) -> TableLike:
        """The table, unpickled first if it is frozen."""
        if self._table is None:
            assert self._frozen is not None
            self._table = self._frozen.thawed()
            self._frozen = None
        return self._table

    @table.setter
    def table(self, table: TableLike) -> None:
        self._table, self._frozen = table, None

    @property
    def frozen(self) -> bool:
        """Whether the table is still as the snapshot kept it (not unpickled)."""
        return self._table is None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_frozen"] = self._frozen if self._table is None else FrozenTable.of(self._table)
        state["_table"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    # --- what the pages read --------------------------------------------------------

    def state(self) -> dict[str, Any]:
        if self._frozen is not None:
            return dict(self._frozen.read("state"))
        return dict(self.table.state())

    def summary(self) -> dict[str, Any]:
        if self._frozen is not None:
            return dict(self._frozen.read("summary"))
        return self.table.summary()

    def change_log(self) -> list[dict[str, Any]]:
        if self._frozen is not None:
            return list(self._frozen.read("change_log"))
        return self.table.change_log()

    def game_pgn(self, entry: GameEntry) -> str:
        if entry.archived is None and self._frozen is not None:
            pgn = self._frozen.read("pgn")
            if isinstance(pgn, str):
                return pgn
        return super().game_pgn(entry)

    def _pgn(self) -> str | None:
        if self._frozen is not None:
            pgn = self._frozen.read("pgn")
            if isinstance(pgn, str):
                return pgn
        return super()._pgn()

    def _has_moves(self) -> bool:
        if self._frozen is not None:
            return bool(self._frozen.read("has_moves"))
        return super()._has_moves()

    def quiet_clock(self, item: Input) -> bool:
        """Whether a clock report that changed only the times stays off the stream (the
        hall's rule, on the edge's time)."""
        if item.kind != "board" or item.data.get("event") != "clock":
            return False
        if not all(out.get("type") in _CLOCK_ONLY for out in item.outputs):
            return False
        running = bool(item.data.get("running"))
        if running == self.clock_running and item.t - self.clock_published < CLOCK_REFRESH:
            return True
        self.clock_running = running
        return False


@dataclass(slots=True)
class ReplicaState:
    """What a replica rebuilt, as of the last row it took of each edge: a snapshot's
    content (:mod:`service.scaleout.snapshot`), from which another replica goes on."""

    runners: dict[str, ReplicaTable]
    last_seq: dict[str, int]
    rows: dict[str, int]
    refused: dict[str, list[str]]
    refused_tables: set[tuple[str, str]]
    waiting: dict[tuple[str, str], list[RowLike]]


class LogReader(Protocol):
    """Reads a table's stored outputs (``/api/tables/ID/log``) where the rows are kept."""

    def outputs(
        self, edge_id: str, table_id: str, *, after: int, limit: int
    ) -> list[tuple[int, dict[str, Any]]]: ...


class ReplicaHall:
    """Every edge's tables rebuilt from their log rows (see the module docstring)."""

    def __init__(
        self,
        *,
        admin: AdminForward | None = None,
        directory: EdgeDirectory | None = None,
        log: LogReader | None = None,
        table_factory: TableFactory | None = None,
        admin_timeout: float = ADMIN_TIMEOUT,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self._admin = admin
        self.directory: EdgeDirectory = directory or _NoDirectory()
        self._log = log
        self.table_factory = table_factory or default_table_factory
        self.admin_timeout = admin_timeout
        self._wall_clock = wall_clock
        self.runners: dict[str, ReplicaTable] = {}
        self.last_seq: dict[str, int] = {}
        """Per edge: the sequence number of the last row applied."""
        self.rows: dict[str, int] = {}
        """Per edge: rows applied."""
        self.refused: dict[str, list[str]] = {}
        """Per edge: one line for each of its tables refused (an id another edge owns,
        settings no table accepts)."""
        self._refused_tables: set[tuple[str, str]] = set()
        self._waiting: dict[tuple[str, str], list[RowLike]] = {}
        self._new: set[str] = set()
        self._late_edges: set[str] = set()
        """Tables registered by the batch being applied (published even without events)."""
        self._subscribers: Listeners[Update] = Listeners(logger, "update subscriber")

    def use_log(self, log: LogReader) -> None:
        """Read the tables' outputs from ``log`` (before any row comes: the replica then
        keeps none of them itself)."""
        if self.runners:
            raise ValueError("use_log comes before the first rows")
        self._log = log

    def taken(self) -> ReplicaState:
        """Everything rebuilt so far (shared, not copied: pickle it before the next rows)."""
        return ReplicaState(
            self.runners,
            self.last_seq,
            self.rows,
            self.refused,
            self._refused_tables,
            self._waiting,
        )

    def restore(self, state: ReplicaState) -> None:
        """Go on from ``state`` (before any rows): the rows to feed next are those after
        :attr:`last_seq` of each edge."""
        if self.runners or self.last_seq:
            raise ValueError("restore comes before the first rows")
        self.runners = state.runners
        self.last_seq = state.last_seq
        self.rows = state.rows
        self.refused = state.refused
        self._refused_tables = state.refused_tables
        self._waiting = state.waiting
        for runner in self.runners.values():
            runner.log = None if self._log is not None else (runner.log or [])

    # --- feeding --------------------------------------------------------------------

    def on_rows(self, edge_id: str, rows: Iterable[RowLike]) -> None:
        """Apply a batch of an edge's rows (in its log's order), then publish an update
        for each table that changed."""
        changed: dict[str, list[dict[str, Any]]] = {}
        last = self.last_seq.get(edge_id)
        for row in rows:
            if last is not None and row.seq <= last:
                continue  # a repeat
            last = row.seq
            self.rows[edge_id] = self.rows.get(edge_id, 0) + 1
            self._row(edge_id, row, changed)
        if last is not None:
            self.last_seq[edge_id] = last
        for table_id in list(changed):
            runner = self.runners[table_id]
            if runner.pending is not None and runner.pending.replayed is None:
                self._apply(runner, changed)
        for table_id, events in changed.items():
            if events or table_id in self._new:
                self._publish(Update(table_id, events))  # a new table: a card of its own
        self._new.clear()

    def _row(self, edge_id: str, row: RowLike, changed: dict[str, list[dict[str, Any]]]) -> None:
        key = (edge_id, row.table_id)
        if key in self._refused_tables:
            return
        if row.role == REGISTRATION:
            self._register(edge_id, row, changed)
            return
        runner = self.runners.get(row.table_id)
        if runner is None or runner.edge_id != edge_id:
            if runner is not None:
                self._refuse(
                    edge_id,
                    row.table_id,
                    f"table {row.table_id} belongs to edge {runner.edge_id}: "
                    f"rows of edge {edge_id} for it are dropped",
                )
                return
            self._waiting.setdefault(key, []).append(row)
            return
        data = self._json(edge_id, row)
        if data is None:
            return
        if row.role in INPUT_ROLES:
            self._complete(runner, changed)
            outputs = [echo_of(row.t, data)] if row.role == "echo" else []
            runner.pending = _Pending(row.seq, row.kind, row.t, data, outputs)
            changed.setdefault(runner.id, [])
            if runner.log is not None and row.role == "echo":
                runner.log.append((row.seq, outputs[0]))
        elif row.role == "out":
            pending = runner.pending
            if pending is None:
                logger.warning(
                    "edge %s, table %s: output %d before any input: kept in the log only",
                    edge_id,
                    row.table_id,
                    row.seq,
                )
            else:
                pending.outputs.append(data)
                if pending.replayed is not None:  # applied already: shown as it comes
                    changed.setdefault(runner.id, []).append(data)
            if runner.log is not None:
                runner.log.append((row.seq, data))
        else:
            logger.warning("edge %s: row %d has an unknown role %r", edge_id, row.seq, row.role)

    def _register(
        self, edge_id: str, row: RowLike, changed: dict[str, list[dict[str, Any]]]
    ) -> None:
        table_id = row.table_id
        owner = self.runners.get(table_id)
        if owner is not None:
            if owner.edge_id != edge_id:
                self._refuse(
                    edge_id,
                    table_id,
                    f"table {table_id} is registered by edges {owner.edge_id} and {edge_id}: "
                    f"ids must be unique across edges; shown from {owner.edge_id} only",
                )
            return  # registered again: the settings at creation are what it replays
        data = self._json(edge_id, row) or {}
        settings = data.get("settings")
        board = data.get("board")
        if not isinstance(settings, dict) or not (board is None or isinstance(board, int)):
            self._refuse(edge_id, table_id, f"table {table_id}: its registration is malformed")
            return
        config = TableConfig(table_id, edge_id, None, dict(settings), board=board)
        try:
            table = self.table_factory(table_id, config.settings)
        except (ValueError, TypeError) as exc:
            self._refuse(edge_id, table_id, f"table {table_id}: {_one_line(exc)}")
            return
        runner = ReplicaTable(edge_id, config, table)
        if self._log is None:
            runner.log = []
        self.runners[table_id] = runner
        changed.setdefault(table_id, [])
        self._new.add(table_id)
        for waiting in self._waiting.pop((edge_id, table_id), []):
            self._row(edge_id, waiting, changed)

    def _refuse(self, edge_id: str, table_id: str, why: str) -> None:
        self._refused_tables.add((edge_id, table_id))
        self._waiting.pop((edge_id, table_id), None)
        self.refused.setdefault(edge_id, []).append(why)
        logger.error("edge %s: %s", edge_id, why)

    def _json(self, edge_id: str, row: RowLike) -> dict[str, Any] | None:
        try:
            value = json.loads(row.data)
        except (TypeError, ValueError):
            value = None
        if not isinstance(value, dict):
            logger.warning("edge %s: row %d is not a JSON object: skipped", edge_id, row.seq)
            return None
        return value

    def _apply(self, runner: ReplicaTable, changed: dict[str, list[dict[str, Any]]]) -> None:
        """Replay the table's pending input through the table code a rebuild uses
        (:func:`service.store.apply_input`), its games noted as a hall notes them."""
        pending = runner.pending
        if pending is None or pending.replayed is not None:
            return
        item = pending.item()
        try:
            produced: Sequence[TableEvent] = apply_input(runner.table, item)
        except Exception as exc:  # noqa: BLE001 - a bad row must not stop the replica
            logger.warning("table %s: input %d failed on replay: %s", runner.id, item.seq, exc)
            produced = ()
        runner.inputs += 1
        outs = [output_json(o) for o in produced]
        if outs:
            runner.note_outputs(outs)
        runner.table.take_clock_orders()  # the edge's clock had them
        pending.replayed = normalise(outs)
        events = changed.setdefault(runner.id, [])
        if item.outputs and not runner.quiet_clock(item):
            runner.clock_published = item.t
            events.extend(item.outputs)

    def _complete(self, runner: ReplicaTable, changed: dict[str, list[dict[str, Any]]]) -> None:
        """The table's pending input has all its outputs (the next input came): applied
        if it was not, and its replay compared with them."""
        pending = runner.pending
        if pending is None:
            return
        self._apply(runner, changed)
        runner.pending = None
        if pending.replayed == pending.outputs:
            return
        runner.divergences += 1
        if runner.divergences == 1:
            logger.warning(
                "table %s: replay differs from the stored log at input %d (%s): stored %d "
                "output(s), replay gave %d; the stored outputs stay the record",
                runner.id,
                pending.seq,
                pending.kind,
                len(pending.outputs),
                len(pending.replayed or ()),
            )

    # --- links ----------------------------------------------------------------------

    def link_changed(self, table_id: str) -> None:
        """The edge reported a new link for a table: published as the hall does."""
        if table_id in self.runners:
            self._publish(Update(table_id, [{"type": "connection", **self.connection(table_id)}]))

    def connection(self, table_id: str) -> dict[str, Any]:
        """The table's link as its edge last reported it; ``down`` while the edge is
        silent (no heartbeat for :data:`LATE_AFTER` of its intervals)."""
        runner = self.runners[table_id]
        edge = runner.edge_id
        reported = self.directory.connection(edge, table_id)
        if reported is None:
            return {
                "state": Connection.CONNECTING,
                "port": runner.config.port,
                "error": f"no link status from edge {edge} yet",
            }
        beat = self.directory.beats().get(edge)
        if beat is None or not self._late(beat):
            return reported
        return {
            "state": Connection.DOWN,
            "port": reported.get("port"),
            "error": f"edge {edge} is silent: no heartbeat since "
            f"{time.strftime('%H:%M:%S', time.localtime(beat.at))}",
        }

    def _late(self, beat: EdgeBeat) -> bool:
        return self._wall_clock() - beat.at > LATE_AFTER * (beat.interval or DEFAULT_INTERVAL)

    def check_edges(self) -> None:
        """Publish the links of the tables of every edge that fell silent or spoke again
        since the last check (call it every second or so)."""
        late = {edge for edge, beat in self.directory.beats().items() if self._late(beat)}
        changed = late ^ self._late_edges
        self._late_edges = late
        if not changed:
            return
        for runner in self.runners.values():
            if runner.edge_id in changed:
                self.link_changed(runner.id)

    # --- the web's source (service.web.source.HallSource) ---------------------------

    def table_ids(self) -> Sequence[str]:
        """The tables by board number (those without one after), then by edge, then in
        the order their edge registered them: the same in every web process, whatever
        order the edges' rows reached it in."""
        order = {table_id: index for index, table_id in enumerate(self.runners)}

        def key(table_id: str) -> tuple[bool, int, str, int]:
            runner = self.runners[table_id]
            board = runner.config.board
            return (board is None, board or 0, runner.edge_id, order[table_id])

        return sorted(self.runners, key=key)

    def has_table(self, table_id: str) -> bool:
        return table_id in self.runners

    def settle(self) -> None:
        """Nothing is queued here: every row applied came committed."""

    def state(self, table_id: str) -> dict[str, Any]:
        state = self.runners[table_id].state()
        state["connection"] = self.connection(table_id)
        return state

    def summary(self, table_id: str) -> dict[str, Any]:
        summary = self.runners[table_id].summary()
        summary["connection"] = self.connection(table_id)
        return summary

    def outputs(self, table_id: str, *, after: int, limit: int) -> list[tuple[int, dict[str, Any]]]:
        runner = self.runners[table_id]
        if self._log is not None:
            return self._log.outputs(runner.edge_id, table_id, after=after, limit=limit)
        kept = runner.log or []
        return [(seq, out) for seq, out in kept if seq > after][:limit]

    def corrections(self, table_id: str) -> list[dict[str, Any]]:
        return self.runners[table_id].change_log()

    def games(self) -> list[tuple[ReplicaTable, GameEntry]]:
        return [(runner, entry) for runner in self.runners.values() for entry in runner.games]

    def shown(self, table_id: str) -> ReplicaTable:
        return self.runners[table_id]

    def game(self, table_id: str, number: int) -> tuple[ReplicaTable, GameEntry] | None:
        runner = self.runners.get(table_id)
        if runner is None or not 1 <= number <= len(runner.games):
            return None
        return runner, runner.games[number - 1]

    def feeds(self) -> HallFeeds:
        return hall_feeds(self)

    def broadcast_status(self) -> dict[str, Any]:
        pusher = pusher_of(self)
        return pusher.status() if pusher is not None else dict(NO_PUSHER)

    async def admin(
        self, table_id: str, command: str, args: Mapping[str, Any]
    ) -> list[dict[str, Any]]:
        """The command, carried to the table's edge (503 with the reason when it cannot
        be: no link to the edges, not delivered, no answer in time)."""
        runner = self.runners.get(table_id)
        if runner is None:
            raise HallError(f"no table {table_id!r}", 404)
        edge = runner.edge_id
        if self._admin is None:
            raise HallError(f"edge {edge} is not reachable from here (no admin link)", 503)
        try:
            return await asyncio.wait_for(
                self._admin(edge, table_id, command, dict(args)), self.admin_timeout
            )
        except HallError:
            raise
        except TimeoutError:
            raise HallError(
                f"edge {edge} did not answer within {self.admin_timeout:g} s", 503
            ) from None
        except EdgeUnreachable as exc:
            raise HallError(f"edge {edge} is not reachable: {_one_line(exc)}", 503) from None
        except Exception as exc:  # noqa: BLE001 - any failure of the link: not reachable
            logger.warning("edge %s: admin %s on table %s failed: %s", edge, command, table_id, exc)
            raise HallError(f"edge {edge} is not reachable: {_one_line(exc)}", 503) from None

    def subscribe(self, callback: UpdateCallback) -> None:
        self._subscribers.add(callback)

    def unsubscribe(self, callback: UpdateCallback) -> None:
        self._subscribers.remove(callback)

    def subscribe_status(self, callback: StatusCallback) -> None:
        """Nothing to tell: a replica's store status (:meth:`store_status`) never changes."""

    def unsubscribe_status(self, callback: StatusCallback) -> None:
        """See :meth:`subscribe_status`."""

    def store_status(self) -> dict[str, Any]:
        return {**STORE_OK, "tables_behind": []}

    def store_healthy(self) -> bool:
        return True

    def edges(self) -> list[dict[str, Any]]:
        """Every edge (heard of or with tables here): its last heartbeat, its age, its
        clock skew, its tables, the rows applied and the tables refused."""
        beats = self.directory.beats()
        tables: dict[str, int] = {}
        for runner in self.runners.values():
            tables[runner.edge_id] = tables.get(runner.edge_id, 0) + 1
        names = sorted(set(beats) | set(tables) | set(self.last_seq))
        now = self._wall_clock()
        out = []
        for name in names:
            beat = beats.get(name)
            out.append(
                {
                    "id": name,
                    "heartbeat": beat.at if beat is not None else None,
                    "age": round(now - beat.at, 3) if beat is not None else None,
                    "late": self._late(beat) if beat is not None else None,
                    "skew": beat.skew if beat is not None else None,
                    "interval": beat.interval if beat is not None else None,
                    "store": beat.store if beat is not None else None,
                    "waiting": beat.waiting if beat is not None else None,
                    "tables": tables.get(name, 0),
                    "rows": self.rows.get(name, 0),
                    "last_seq": self.last_seq.get(name, 0),
                    "refused": list(self.refused.get(name, [])),
                }
            )
        return out

    def _publish(self, update: Update) -> None:
        self._subscribers.tell(update)


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:200]
