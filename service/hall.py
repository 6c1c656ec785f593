"""``service.hall``: many tables in one process.

Each table is a :class:`HallTable`: a :class:`~service.table_runner.TableRunner` (it opens
the board with back-off, feeds the table, sends its clock orders and drives its LEDs) of a
:class:`dgt.Board` (which reconnects on its own) and a table (pure, deterministic; any
:class:`~service.table.TableLike`: the turn-based :class:`~service.table.Table` or the
:class:`~service.table.RealtimeTable`), with its log in the :class:`~service.store.Store`.
The :class:`Hall` owns them all and one event loop:

* every board event, every tick that produced something and every admin command is an
  *input*: it goes into the table, and the input with the table's answer is queued in the
  store;
* the queue is committed in one transaction once per turn of the event loop, but no sooner
  than :data:`COMMIT_SPACING` after the previous commit (inputs arriving meanwhile share the
  next one), and only then are the updates handed to subscribers (the web mirror): nothing
  is shown that is not on disk.  Rows that are shown to nobody (a clock report that changed
  only the times) may wait up to :data:`QUIET_COMMIT_DELAY` for a commit; any commit takes
  the whole queue, so they are on disk before anything that follows them is shown; a
  commit the loop leaves overdue (more busy boards than the CPU can serve) is made by the
  next input (:data:`FLUSH_OVERDUE`);
* at start each table is rebuilt from its log (:func:`service.store.rebuild`) before its
  board is opened; the board's first snapshot is then just the next input.

Board times are monotonic; the hall turns them into wall-clock seconds (UNIX time) before
the table sees them, so a log replays across restarts and the web page can count clocks
down from ``as_of``.  Each event is handed to the table exactly as the log keeps it (as its
JSON form reads back: :func:`dgt.recording.event_as_logged`), so a rebuild sees what the
live table saw.  Boards are opened without draining their memory (``read_memory=False``):
the games a board stored while no host was connected are not part of a table's log; a
table whose config says ``read_memory = true`` asks for it (the records go into its log).
With ``board_poll_ms`` (``[service]`` of the config) the boards on serial ports share one
:class:`~dgt.transports.poller.BoardPoller`: their bytes are read in one batch every so
many milliseconds rather than each waking the event loop (boards on a bus line, over
Bluetooth or emulated in the process are read as before).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from dgt.board import Board
from dgt.events import BoardEvent, ClockUpdate
from dgt.recording import event_as_logged
from dgt.tasks import cancel_and_wait
from dgt.transports import BoardPoller, SerialTransport, Transport, open_transport
from service.bus_links import BusConfigError, BusLinks
from service.committed_view import CommittedView
from service.config import TableConfig, settings_dict
from service.listeners import Listeners
from service.store import (
    ReplayReport,
    Store,
    StoreError,
    board_input,
    echo_of,
    output_json,
    rebuild,
)
from service.table import ClockOrder, RealtimeTable, Table, TableEvent, TableLike, TableSettings
from service.table_runner import InputKind, RunnerBoard, TableInput, TableRunner

logger = logging.getLogger(__name__)

_BOARD = InputKind.BOARD
"""(An enum member read from its class costs a lookup each time.)"""

TICK_INTERVAL = 0.5
"""Seconds between ticks of every table (flag fall, settle delays)."""

CHECKPOINT_INTERVAL = 2.0
"""Seconds between write-ahead-log checkpoints, done on a worker thread (they fsync)."""

MAX_ADMIN_ARGS = 32
"""Keys an admin command may carry."""

COMMIT_SPACING = 0.010
"""Shortest time in seconds between two commits of the queue.  When many boards talk at
once, inputs arriving within it share one transaction (and one wake-up of each stream)
instead of paying a commit each; an input waits at most this long before it is shown.
10 ms rather than 5: a commit's fixed cost (the transaction, the last page of the log
written again, a write to each stream) is shared by twice the inputs, for 2.5 ms more
latency on average (2,000 tables, about 4,000 inputs a second: 40 a commit instead of 20;
the commit's CPU per input about 15 % less in a replay of a 1,000-table log)."""

QUIET_COMMIT_DELAY = 1.0
"""Longest time in seconds a row that is shown to nobody (a clock report that changed only
the times) waits in the queue for a commit.  Losing it in a crash loses nothing shown."""

FLUSH_OVERDUE = 0.1
"""A commit due this many seconds ago that the event loop has not run yet is made by the
next input that queues rows: with more busy boards than the CPU can serve, the loop runs
the boards' reads ahead of its due callbacks, and the queue (rows in memory, updates not
shown) would otherwise grow for as long as the overload lasts."""

_CLOCK_ONLY = frozenset({"board", "clock"})
"""Output types of a clock report that changed nothing but the times."""

CLOCK_REFRESH = 5.0
"""Seconds between pushes of a table caused only by its clock's reports: the page counts the
clocks down itself from the last state, so a report that changes nothing but the times
(the running side unchanged) is logged at once but pushed at most this often."""


class HallError(Exception):
    """An admin request the hall cannot carry out (unknown table, table refused it)."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass(slots=True)
class Update:
    """What subscribers get after a commit: one table's new outputs."""

    table_id: str
    events: list[dict[str, Any]]
    source_time: float | None = None
    """``time.monotonic()`` when the oldest board event behind it was received."""


@dataclass(slots=True)
class GameEntry:
    """A game played (or being played) at a table."""

    table_id: str
    number: int
    round: str
    archived: str | None = None
    """The game's PGN once a new game replaced it at its table."""
    live: Callable[[], str | None] | None = field(default=None, repr=False, compare=False)
    """While the game is finished but still at its table: its PGN from the table."""
    changes: list[dict[str, Any]] | None = field(default=None, repr=False, compare=False)
    """The game's change log once a new game replaced it (while it is at its table, the
    table's :meth:`~service.table.TableLike.change_log`)."""

    @property
    def pgn(self) -> str | None:
        """The PGN of a finished game (None while it is in progress or has no moves)."""
        if self.archived is not None:
            return self.archived
        return self.live() if self.live is not None else None


class CentralLink(Protocol):
    """What carries the hall to a central service (``run --central``: the edge of
    :mod:`service.scaleout.edge`), started once the hall has started and closed first when
    it closes.  A hall without one is a club's: nothing of it is imported."""

    async def start(self, hall: Hall) -> None: ...

    async def close(self) -> None: ...


TableFactory = Callable[[str, Mapping[str, Any]], TableLike]
"""Builds a fresh table from an id and its settings."""


def default_table_factory(table_id: str, settings: Mapping[str, Any]) -> TableLike:
    """The table for ``settings``: a :class:`service.table.RealtimeTable` for
    realtime chess (no turns), else a :class:`service.table.Table`.  The hall's times are
    UNIX seconds (``epoch=0.0``): a game's PGN carries the day it began."""
    chosen = settings_dict(settings)
    if chosen.get("variant") == "realtime":
        return RealtimeTable(table_id, chosen, epoch=0.0)
    chosen.pop("tick", None)  # realtime only
    return Table(table_id, TableSettings(**chosen), epoch=0.0)


class GameBook:
    """The games played at one table, kept from the table's outputs: the part of a table
    that the hall's :class:`HallTable` and a read replica's table share (both note the
    outputs of every input, live or replayed, the same way)."""

    id: str
    table: TableLike
    games: list[GameEntry]
    finished: bool

    def _open_book(self, first_round: str) -> None:
        """Start the list of games: the first one, filed under ``first_round`` (the round
        of the table's configured settings)."""
        self.games = [GameEntry(self.id, 1, first_round)]
        self.finished = False

    def note_outputs(self, outs: Sequence[Mapping[str, Any]]) -> None:
        """Keep the list of games up to date from a batch of outputs.  A game with moves
        that a new game replaced is archived with the PGN the table kept of it; a finished
        game still at the table reads its PGN from the table (written when asked)."""
        finished = self.finished
        for out in outs:
            kind = out.get("type")
            if kind == "new_game":
                self.finished = False
            elif kind == "result":
                self.finished = True
        ended = self.table.take_ended_games()
        if not ended and self.finished is finished:
            return  # nothing changed: the last game's entry stands as the last call left it
        logs = self.table.take_ended_change_logs() if ended else []
        for index, pgn in enumerate(ended):
            self.games[-1].archived = pgn
            self.games[-1].changes = logs[index] if index < len(logs) else []
            self.games[-1].live = None
            self.games.append(GameEntry(self.id, len(self.games) + 1, self._round()))
        last = self.games[-1]
        if not self.finished:
            last.live = None
        elif last.live is None:  # else it reads the PGN from the table already
            last.live = self._finished_pgn

    def _finished_pgn(self) -> str | None:
        """The PGN of the finished game at the table (None without moves)."""
        return self._pgn() if self._has_moves() else None

    def _pgn(self) -> str | None:
        try:
            pgn = self.table.pgn()
        except Exception:
            logger.exception("table %s: cannot write the PGN", self.id)
            return None
        return pgn

    def _has_moves(self) -> bool:
        return bool(self.table.moves())

    def _round(self) -> str:
        """The table's round now (a new game's entry is filed under it)."""
        return self.table.settings.round

    def game_pgn(self, entry: GameEntry) -> str:
        if entry.archived is not None:
            return entry.archived
        return self.table.pgn()


class HallTable(TableRunner, GameBook):
    """One table of the hall: a :class:`~service.table_runner.TableRunner` at its board,
    reporting to the hall, with the games played at it (:class:`GameBook`) and how its
    clock reports were last shown."""

    __slots__ = ("clock_published", "clock_running", "hall", "inputs")
    # What every clock report reads and writes, in the object itself (as the runner's).

    def __init__(
        self, hall: Hall, config: TableConfig, table: TableLike, transport: Transport | None
    ) -> None:
        super().__init__(
            config.id,
            table,
            hall,
            self._make_board,
            port=config.port,
            table_time=hall.wall_time,
            send_orders=False,  # the hall sends them once their rows are committed
        )
        self.hall = hall
        self.config = config
        self.transport = transport
        self._open_book(config.settings.get("round", "?"))
        self.clock_published = 0.0
        """When the table was last published: the board event's time (its time line: the
        board's clock in a service, the log's in a replay), else ``time.monotonic()``."""
        self.clock_running: bool | None = None
        self.replay_divergences = 0
        self.inputs = 0

    def _make_board(self) -> RunnerBoard:
        """The board for one attempt to open it: a board of a bus line, or a board on its
        own transport (made once, reused by every attempt)."""
        if self.config.bus is not None:
            return self.hall.bus_links.board(self.config, self.transport)
        transport = self.transport or open_transport(
            self.config.port, watcher=self.hall.board_poller
        )
        self.transport = transport
        options = self.hall.board_options
        if self.config.read_memory:
            options = {**options, "read_memory": True}
        poller = self.hall.board_poller
        if (
            poller is not None
            and isinstance(transport, SerialTransport)
            and transport.watcher is poller
        ):
            # its timers on the polls' grid: they run in the turns of the loop the polls
            # wake, not in wake-ups of their own
            options = {"timer_grid": poller.grid, **options}
        return Board(transport, **options)

    def time_only(self, t: float, event: ClockUpdate) -> None:
        """:meth:`TableRunner.time_only`: the hall keeps the report straight from the
        driver's event (:meth:`Hall.clock_echo`), no answer made for it (a board with
        LEDs shows the answer: it takes the runner's way)."""
        if self.leds is None:
            self.hall.clock_echo(self, t, event)
        else:
            super().time_only(t, event)

    def quiet_clock(self, running: bool, now: float) -> bool:
        """Whether a clock report that changed only the times can stay off the stream."""
        if running == self.clock_running and now - self.clock_published < CLOCK_REFRESH:
            return True
        self.clock_running = running
        return False


class Hall:
    """Every table of a hall, their boards, the store, and the subscribers to updates."""

    def __init__(
        self,
        store: Store,
        *,
        table_factory: TableFactory | None = None,
        tick_interval: float = TICK_INTERVAL,
        board_options: Mapping[str, Any] | None = None,
        wall_clock: Callable[[], float] = time.time,
        central: CentralLink | None = None,
        board_poll_ms: float = 0.0,
        board_poll_longest_ms: float = 0.0,
    ) -> None:
        self.store = store
        self.board_poller = (
            BoardPoller(
                board_poll_ms / 1000,
                longest=max(board_poll_ms, board_poll_longest_ms) / 1000,
            )
            if board_poll_ms > 0
            else None
        )
        """What reads the serial boards' bytes (``board_poll_ms`` > 0): one poll of them
        all every so many milliseconds (up to ``board_poll_longest_ms`` while few boards
        speak) instead of a wake-up of the event loop for each board's (see
        :mod:`dgt.transports.poller`); None: the event loop watches each.
        A poll's inputs are committed at its end when a commit is due by then
        (:meth:`_commit_at_poll`), in the same wake-up of the loop."""
        if self.board_poller is not None:
            self.board_poller.after_poll = self._commit_at_poll
        self.central = central
        self.table_factory = table_factory or default_table_factory
        self.tick_interval = tick_interval
        self.board_options = {"read_memory": False, **(board_options or {})}
        self.bus_links = BusLinks(self.board_options)
        self._wall_clock = wall_clock
        self._offset = wall_clock() - time.monotonic()
        self.runners: dict[str, HallTable] = {}
        self._subscribers: Listeners[Update] = Listeners(logger, "update subscriber")
        self._batches: dict[str, Update] = {}
        """By table, the update each commit publishes (made as its first input is queued)."""
        self._flush_handle: asyncio.Handle | None = None
        self._flush_due = 0.0
        self._flush_delay = 0.0
        """The delay the commit due was asked for with: no later request with as long a
        delay can want it sooner (0: only the spacing holds it back)."""
        self._last_commit = float("-inf")
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tick_task: asyncio.Task[None] | None = None
        self._checkpoint_task: asyncio.Task[None] | None = None
        self.closing = False
        self.started = False
        self.store_error: str | None = None
        self._committed = CommittedView(self._shadow_runner, store.queued_tables)
        """The tables with rows not committed yet, and what the public is shown of each
        while the store cannot write (see :mod:`service.committed_view`)."""
        self._held_orders: dict[str, list[ClockOrder]] = {}
        """Clock orders waiting for the commit of the rows that gave them, by table."""
        self._status_subscribers: Listeners[dict[str, Any]] = Listeners(
            logger, "store status subscriber"
        )
        self._status_shown: tuple[str, int] = (str(store.state), 0)

    # --- building -------------------------------------------------------------------

    def add_table(self, config: TableConfig, transport: Transport | None = None) -> HallTable:
        """Register a table (or find it in the store), rebuild it from its log, and
        return its runner.  Its board is opened by :meth:`start`."""
        if config.id in self.runners:
            raise HallError(f"table {config.id} is configured twice")
        try:
            self.bus_links.check(config)
        except BusConfigError as exc:
            raise HallError(f"table {config.id}: {exc}") from None
        wanted = settings_dict(config.settings)
        stored = self.store.register_table(
            config.id, wanted, self._wall_clock(), board=config.board
        )
        if stored != wanted:
            logger.info(
                "table %s: the log was started with other settings; those are replayed, "
                "use the admin API to change players or rules",
                config.id,
            )
        runner, report = self._replayed(dataclasses.replace(config, settings=stored), transport)
        if report.inputs:
            logger.info(
                "table %s: rebuilt from %d inputs (%d outputs, %d differing)",
                config.id,
                report.inputs,
                report.outputs,
                report.divergences,
            )
        self.store.commit()
        self.runners[config.id] = runner
        return runner

    def _replayed(
        self, config: TableConfig, transport: Transport | None
    ) -> tuple[HallTable, ReplayReport]:
        """A runner with a fresh table fed the table's committed log (its games noted as
        they were played); its board is not opened."""
        try:
            table = self.table_factory(config.id, config.settings)
        except (ValueError, TypeError) as exc:
            raise HallError(f"table {config.id}: {_one_line(exc)}") from None
        runner = HallTable(self, config, table, transport)

        def seen(_item: object, produced: Sequence[TableEvent]) -> None:
            runner.inputs += 1
            if produced:
                runner.note_outputs([output_json(o) for o in produced])

        report = rebuild(table, config.id, self.store.inputs(config.id), on_input=seen)
        runner.replay_divergences = report.divergences
        table.take_clock_orders()  # orders of the past: the clock already had them
        return runner, report

    def _shadow_runner(self, table_id: str) -> HallTable:
        """The table as of its last commit, rebuilt from the log the way a start
        rebuilds it, for the public while the store cannot write.  Where even the log
        cannot be read, the table as it was created (never ahead of what is stored)."""
        config = self.runners[table_id].config
        try:
            return self._replayed(config, None)[0]
        except StoreError as exc:
            logger.warning(
                "table %s: cannot read its log (%s): shown as created until the store writes again",
                table_id,
                exc,
            )
            return HallTable(self, config, self.table_factory(table_id, config.settings), None)

    async def start(self) -> None:
        """Open every board (each on its own task) and start ticking."""
        self._loop = asyncio.get_running_loop()
        self.started = True
        self.store.plan_cache(len(self.runners))
        for runner in self.runners.values():
            runner.start()
        if self.tick_interval > 0:
            self._tick_task = self._loop.create_task(self._ticker(), name="hall ticks")
        self._checkpoint_task = self._loop.create_task(self._checkpointer(), name="checkpoints")
        if self.central is not None:
            await self.central.start(self)

    async def close(self) -> None:
        """Close every board, commit what is queued."""
        self.closing = True
        for task in (self._tick_task, self._checkpoint_task):
            await cancel_and_wait(task)
        await asyncio.gather(*(runner.close() for runner in self.runners.values()))
        await self.bus_links.close()
        if self.board_poller is not None:
            self.board_poller.close()
        self._flush()
        if self.central is not None:
            await self.central.close()  # after the last commit: it may still forward it

    # --- subscribers ----------------------------------------------------------------

    def subscribe(self, callback: Callable[[Update], None]) -> None:
        """Call ``callback(update)`` after each commit, for each table that changed."""
        self._subscribers.add(callback)

    def unsubscribe(self, callback: Callable[[Update], None]) -> None:
        self._subscribers.remove(callback)

    # --- inputs ---------------------------------------------------------------------

    def board_event(self, runner: HallTable, event: BoardEvent) -> None:
        """A board event (``time.monotonic()`` time) at ``runner``'s board: into the table,
        into the store's queue, published after the commit."""
        runner.board_event(event)

    def wall_time(self, monotonic: float) -> float:
        """A driver's time (``time.monotonic()``) as wall-clock seconds: the tables' time
        line."""
        return monotonic + self._offset

    def table_input(self, runner: TableRunner, item: TableInput) -> None:
        """What a runner's table answered to an input it made: into the store's queue,
        published after the commit (:class:`~service.table_runner.RunnerHost`)."""
        table = self.runners[runner.id]
        event = item.event
        if item.kind is not _BOARD or event is None:
            if item.produced:
                outs = [output_json(o) for o in item.produced]
                self._log(table, str(item.kind), item.time, {}, outs)
                self._queue(table, outs, None)
            return
        received = event.time
        data = board_input(event)
        produced = item.produced
        t = item.time
        if produced and _echoes(produced[0], t, data):
            self._echoed(table, t, data, produced, received)
            return
        outs = [output_json(o) for o in produced]
        self._log(table, "board", t, data, outs)
        quiet = False
        if data["event"] == "clock" and all(o.get("type") in _CLOCK_ONLY for o in outs):
            quiet = table.quiet_clock(bool(data["running"]), received)
        self._queue(table, outs, received, publish=not quiet)

    def clock_echo(self, table: HallTable, t: float, event: ClockUpdate) -> None:
        """:meth:`table_input` of a clock report that changed nothing but time (the quick
        clock took it: the table's answer is its echo alone, the table itself took no
        input), from the driver's event (its times floats, its turn a side or None): the
        most frequent input of a hall.  Kept off the stream while the times need not be
        shown (:meth:`HallTable.quiet_clock`): then its one row is written from the event's
        fields, with no event or dictionary made for it."""
        received = event.time
        if not table.quiet_clock(bool(event.running), received):
            # its data as logged (the same as the event's own for a driver's report, whose
            # flags are bools): the row and the echo shown, from one dictionary
            data = board_input(event_as_logged(t, event))
            self._log(table, "board", t, data, [], True)
            self._queue(table, [echo_of(t, data)], received)
            return
        self._log_clock(table, t, event)
        # no outputs to note: the table took no input (the quick clock answered), so no
        # game of it ended
        self._commit_quietly(table)

    def _log_clock(self, table: HallTable, t: float, event: ClockUpdate) -> None:
        """:meth:`_log` of the clock report :meth:`clock_echo` keeps off the stream."""
        self.store.append_clock(table.id, t, event)
        table.inputs += 1

    def _echoed(
        self,
        table: HallTable,
        t: float,
        data: dict[str, Any],
        produced: Sequence[Any],
        received: float,
    ) -> None:
        """:meth:`table_input` of a board input the table answered first with its echo
        (the common case): its rows straight from the table's events, and a clock report
        that changed only the times (most inputs of a hall) kept off the stream without
        the dictionaries the stream would need."""
        if len(produced) == 1:
            if data["event"] != "clock":
                rest: list[dict[str, Any]] = []
            elif table.quiet_clock(bool(data["running"]), received):
                # the most frequent input of a hall: its one row, kept off the stream
                self._log(table, "board", t, data, [], True)
                self._queue_quiet(table, [])
                return
            else:  # shown (quiet_clock said so once: it notes what it let through)
                self._log(table, "board", t, data, [], True)
                self._queue(table, [produced[0].to_json()], received)
                return
        else:
            rest = [output_json(o) for o in produced[1:]]
        self._log(table, "board", t, data, rest, True)
        if (
            data["event"] == "clock"
            and all(o.get("type") in _CLOCK_ONLY for o in rest)
            and table.quiet_clock(bool(data["running"]), received)
        ):
            self._queue_quiet(table, rest)
            return
        outs = [produced[0].to_json(), *rest]
        self._queue(table, outs, received)

    def _log(
        self,
        table: HallTable,
        kind: str,
        t: float,
        data: dict[str, Any],
        outs: list[dict[str, Any]],
        echoed: bool = False,
    ) -> None:
        """One input of ``table`` and what it caused into the store's queue: the table is
        ahead of its commit until the queue is committed.  ``echoed``: a board input whose
        first output was its echo (checked by the caller), ``outs`` the outputs after it."""
        if echoed:
            if outs:
                self.store.append_echoed(table.id, t, data, outs)
            else:
                self.store.append_echo(table.id, t, data)
        else:
            self.store.append(table.id, kind, t, data, outs)
        table.inputs += 1

    def link_changed(self, runner: TableRunner) -> None:
        """A runner's link changed (:class:`~service.table_runner.RunnerHost`)."""
        self.publish_status(self.runners[runner.id])

    def tick(self, now: float | None = None) -> None:
        """Tick every table (wall-clock ``now``); only ticks that produced something are
        logged."""
        now = self._wall_clock() if now is None else now
        for runner in self.runners.values():
            produced = runner.tick(now)
            if produced:
                outs = [output_json(o) for o in produced]
                self._log(runner, "tick", now, {}, outs)
                self._queue(runner, outs, None)

    async def admin(
        self, table_id: str, command: str, args: Mapping[str, Any]
    ) -> list[dict[str, Any]]:
        """Run an admin command on a table; returns its outputs once they are committed.
        Raises :class:`HallError` (404 unknown table, 400 refused by the table, 503 when
        the log cannot be written)."""
        runner = self.runners.get(table_id)
        if runner is None:
            raise HallError(f"no table {table_id!r}", 404)
        if len(args) > MAX_ADMIN_ARGS:
            raise HallError("too many arguments")
        now = self._wall_clock()
        try:
            produced = runner.admin(command, dict(args), now)
        except (ValueError, KeyError, TypeError) as exc:  # TableError is a ValueError
            raise HallError(_one_line(exc), 400) from None
        outs = [output_json(o) for o in produced]
        self._log(runner, "admin", now, {"command": command, "args": dict(args)}, outs)
        self._queue(runner, outs, None)
        self._flush()
        if self.store_error is not None:
            why = self.store.error or "the database refuses writes"
            raise HallError(
                f"not stored yet: kept in memory and retried ({why}); "
                "nothing of it is shown until it is stored",
                503,
            )
        return outs

    # --- commit, then publish -------------------------------------------------------

    def _queue(
        self,
        runner: HallTable,
        outs: list[dict[str, Any]],
        source: float | None,
        *,
        publish: bool = True,
    ) -> None:
        if outs and not publish:
            self._queue_quiet(runner, outs)
            return
        runner.note_outputs(outs)
        if not outs:
            if self._hold_clock_orders(runner):
                self._schedule_flush()
            return
        self._hold_clock_orders(runner)
        runner.clock_published = time.monotonic() if source is None else source
        batch = self._batches.get(runner.id)
        if batch is None:
            batch = self._batches[runner.id] = Update(runner.id, [])
        batch.events.extend(outs)
        if source is not None and (batch.source_time is None or source < batch.source_time):
            batch.source_time = source
        self._schedule_flush()

    def _queue_quiet(self, runner: HallTable, outs: list[dict[str, Any]]) -> None:
        """:meth:`_queue` of rows shown to nobody: logged (committed with the next commit, at
        the latest after :data:`QUIET_COMMIT_DELAY`) but not pushed on their own."""
        runner.note_outputs(outs)
        self._commit_quietly(runner)

    def _commit_quietly(self, runner: HallTable) -> None:
        """Have rows shown to nobody committed: with the next commit, at the latest after
        :data:`QUIET_COMMIT_DELAY` (at once when the table holds clock orders).  Called
        right after the rows were queued: the store is not asked whether it holds any (a row
        it refused leaves, at worst, a commit that finds nothing to write)."""
        if self._hold_clock_orders(runner):
            self._schedule_flush()
        else:
            self._schedule_flush(QUIET_COMMIT_DELAY)

    def _schedule_flush(self, delay: float = 0.0) -> None:
        """Have the queue committed (and published) ``delay`` seconds from now, on a later
        turn of the event loop, and never sooner than :data:`COMMIT_SPACING` after the last
        commit; an earlier commit already due is kept."""
        loop = self._loop
        handle = self._flush_handle
        if loop is not None and handle is not None and delay >= self._flush_delay:
            # (a quiet clock report's delay, one due already for one: most calls)
            if loop.time() - self._flush_due > FLUSH_OVERDUE:
                self._flush()  # the loop is starved of turns: commit from the input path
            return  # due no later than this one would be (asked for sooner, as long a delay)
        if loop is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                self._flush()
                return
        now = loop.time()
        if handle is not None and now - self._flush_due > FLUSH_OVERDUE:
            self._flush()
            return
        due = max(now + delay, self._last_commit + COMMIT_SPACING)
        if handle is not None:
            if self._flush_due <= due:
                return
            handle.cancel()
        self._flush_due = due
        self._flush_delay = delay
        if due <= now:
            self._flush_handle = loop.call_soon(self._flush)
        else:
            self._flush_handle = loop.call_at(due, self._flush)

    def _commit_at_poll(self) -> None:
        """After a poll of the boards: commit now what waits to be shown when its commit
        would come before the middle of the next poll's period, rather than wake the loop
        again for it a few milliseconds later (the spacing of commits then follows the
        polls')."""
        loop = self._loop
        poller = self.board_poller
        if self._flush_handle is None or self._flush_delay > 0 or loop is None:
            return
        if poller is not None and self._flush_due - loop.time() < poller.period / 2:
            self._flush()

    def _flush(self) -> None:
        """Commit the queue; only once the commit succeeded send the clock orders its
        rows gave and publish what it held.  While the store cannot write, everything
        waits (the rows in the store, the updates and the orders here) and the public
        reads see each table as of its last commit."""
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        try:
            if self.store.pending:
                self.store.commit()
                loop = self._loop
                self._last_commit = loop.time() if loop is not None else time.monotonic()
        except StoreError as exc:  # the store logs each change of its state, once
            self.store_error = str(exc)
            self._note_store_status()
            return
        self.store_error = None
        self._committed.caught_up()
        self._send_clock_orders()
        batches, self._batches = self._batches, {}
        for update in batches.values():
            self._publish(update)
        self._note_store_status()

    def settle(self) -> None:
        """Commit (and publish) whatever is queued now.  Every public read does this
        first (:meth:`state`, :meth:`summary`, :meth:`games`), and where the commit fails
        it shows the tables as of their last commit: nothing uncommitted is ever shown."""
        if self._batches or self.store.pending or self._committed.any_ahead:
            self._flush()

    # --- the store's state, for the pages ----------------------------------------------

    def subscribe_status(self, callback: Callable[[dict[str, Any]], None]) -> None:
        """Call ``callback(store.status())`` when the store starts or stops failing, and
        while it fails whenever the count of rows kept in memory changes."""
        self._status_subscribers.add(callback)

    def unsubscribe_status(self, callback: Callable[[dict[str, Any]], None]) -> None:
        self._status_subscribers.remove(callback)

    def store_status(self) -> dict[str, Any]:
        """The store's state (:meth:`service.store.Store.status`) for the pages and the
        admin API, with the tables shown as of their last commit meanwhile."""
        status = self.store.status()
        status["tables_behind"] = (
            sorted(self._committed.tables_ahead) if not self.store.healthy else []
        )
        return status

    def _note_store_status(self) -> None:
        state = self.store.state
        shown = (str(state), self.store.unstored if not self.store.healthy else 0)
        if shown == self._status_shown:
            return
        self._status_shown = shown
        if not self._status_subscribers:
            return
        self._status_subscribers.tell(self.store_status())

    def publish_status(self, runner: HallTable) -> None:
        """A change of the link shown on the page (not part of the log).  What is queued
        is committed first, as the page shows the table's whole state."""
        self.settle()
        self._publish(Update(runner.id, [{"type": "connection", **runner.connection()}]))

    def _publish(self, update: Update) -> None:
        self._subscribers.tell(update)

    # --- ticks and the clock ----------------------------------------------------------

    async def _checkpointer(self) -> None:
        # One thread of its own at a lower CPU priority: a checkpoint takes ~10 ms of CPU
        # (and waits for an fsync); on a busy core it must not take turns with the loop.
        loop = asyncio.get_running_loop()
        with concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="dgt-checkpoint", initializer=_lower_priority
        ) as worker:
            while True:
                await asyncio.sleep(CHECKPOINT_INTERVAL)
                await loop.run_in_executor(worker, self.store.checkpoint)

    async def _ticker(self) -> None:
        while True:
            await asyncio.sleep(self.tick_interval)
            self.tick()

    def _hold_clock_orders(self, runner: HallTable) -> bool:
        """Take the table's new clock orders and keep them until the rows that gave them
        are committed (a ruling the clock shows is never ahead of the log); orders made
        before the hall started are dropped.  Returns whether any are held."""
        orders = runner.take_clock_orders()  # the table asked only when orders may wait
        if not orders or self._loop is None:
            return False
        self._held_orders.setdefault(runner.id, []).extend(orders)
        return True

    def _send_clock_orders(self) -> None:
        """Send the orders held for rows that are committed now, oldest first."""
        if not self._held_orders:
            return
        held, self._held_orders = self._held_orders, {}
        for table_id, orders in held.items():
            runner = self.runners.get(table_id)
            if runner is not None:
                runner.send_clock_orders(orders)

    # --- reading --------------------------------------------------------------------

    def shown(self, table_id: str) -> HallTable:
        """The runner whose table and games the public sees: the live one once every row
        of the table is committed (committing what is queued first), else, while the
        store cannot write, a read-only runner rebuilt from the table's committed log
        (its board never opened).  Raises KeyError for an unknown table."""
        live = self.runners[table_id]
        if not self.store.pending or not self._committed.is_ahead(table_id):
            # (no row queued, as at every read right after a commit: no table is ahead,
            # and the queue is not read for its tables)
            return live
        self.settle()
        if not self._committed.is_ahead(table_id):
            return live
        return self._committed.shadow(table_id)

    def state(self, table_id: str) -> dict[str, Any]:
        """The table's state for the web as of its last commit, with its connection."""
        runner = self.runners[table_id]
        state: dict[str, Any] = dict(self.shown(table_id).table.state())
        state["connection"] = runner.connection()
        return state

    def summary(self, table_id: str) -> dict[str, Any]:
        """What the overview shows of the table (see :func:`service.web.stream.summary`)
        as of its last commit, with its connection, from the table's own summary, which
        skips what the overview does not show."""
        runner = self.runners[table_id]
        summary = self.shown(table_id).table.summary()
        summary["connection"] = runner.connection()
        return summary

    def games(self) -> list[tuple[HallTable, GameEntry]]:
        """Every game with moves or a result, table by table, as of the last commit (the
        runner of each is the one to ask for its PGN)."""
        out: list[tuple[HallTable, GameEntry]] = []
        for table_id in self.runners:
            runner = self.shown(table_id)
            for entry in runner.games:
                out.append((runner, entry))
        return out

    def game(self, table_id: str, number: int) -> tuple[HallTable, GameEntry] | None:
        """Game ``number`` (from 1) of a table as of the last commit (None when there is
        no such table or game)."""
        if table_id not in self.runners:
            return None
        runner = self.shown(table_id)
        if not 1 <= number <= len(runner.games):
            return None
        return runner, runner.games[number - 1]


def _echoes(first: Any, t: float, data: dict[str, Any]) -> bool:
    """Whether the table's first output ``first`` is the echo of the board input ``data``
    at ``t`` (``output_json(first) == echo_of(t, data)``), read off the table's event."""
    return (
        type(first) is TableEvent
        and first.type == "board"
        and first.time == t
        and first.data == data
        and "time" not in data
        and "type" not in data
    )


def _lower_priority() -> None:
    """Give the calling thread a lower CPU priority (nice 10), where the system lets a
    thread have its own (Linux); elsewhere nothing changes."""
    with contextlib.suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]
