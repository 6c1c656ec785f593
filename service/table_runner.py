"""``service.table_runner``: one table at one board.

The table is pure (no I/O, no clock of its own); :class:`TableRunner` is the thin async
adapter that puts it at a board.  The hall of ``dgt-service run`` makes one per table
(:class:`service.hall.HallTable`), and the end-to-end tests make one at an emulated board.

* **The board.**  :meth:`TableRunner.run` opens the board (``make_board`` builds it: a
  :class:`dgt.Board` or one board of a bus line), trying again with back-off while it cannot
  be opened (:data:`OPEN_RETRY_MIN` doubling up to :data:`OPEN_RETRY_MAX`), and then hands
  the table every event the board gives from its opening on, until the board is closed (the
  board reconnects on its own).  :meth:`TableRunner.attach` takes a board that is open
  already: the board as it stands goes in first (its clock's link and last report, its
  squares), then every event as it happens.  :meth:`TableRunner.connection` tells how the
  link stands (:class:`Connection`), and the host hears of each change.
* **Feeding.**  Each board event goes to the table exactly as a log keeps it
  (:func:`dgt.recording.event_as_logged`) at its time on the table's time line
  (``table_time`` maps a driver's ``time.monotonic()`` onto it: the hall's line is UNIX
  time, a test's may run faster than people).  What the table answered goes to the host
  (:class:`RunnerHost`) as a :class:`TableInput`; a table that fails on an input is logged
  and the input dropped, so one table cannot stop a hall.  A clock report that changes
  nothing but time is answered by the table's :class:`~service.table.QuickClock` (the same
  answer, without the table's keeper and recogniser: most inputs of a hall).
* **Ticks.**  The owner ticks the table (:meth:`TableRunner.tick`; the hall ticks all its
  tables in one task), or, given ``tick``, the runner keeps its table's time itself: a tick
  every ``tick`` seconds and time passing up to each event before it is fed.  A tick
  before the table's next due time (:attr:`~service.table.QuickClock.due`) does nothing
  and is skipped.
* **Clock orders.**  After every input the table's clock orders
  (:meth:`~service.table.TableLike.take_clock_orders`) go to the board's clock through a
  :class:`~service.clock_orders.ClockOrderSender`, one after another -- or, with
  ``send_orders=False``, the host takes them and hands them to
  :meth:`TableRunner.send_clock_orders` when it sees fit (the hall: once the rows that gave
  them are committed).  They are dropped while the board is not ready (a reconnect re-syncs
  the clock from the table) and on a bus line (no clock commands there).
* **LEDs.**  On a board with LEDs (``board.info.leds``) a
  :class:`~service.led_driver.LedDriver` shows what the table's events mean; a board without
  LEDs is never sent an LED frame (it would stall a classic board).

::

    runner = TableRunner("t1", Table("t1", settings), host, lambda: Board(port))
    runner.start()
    ...
    await runner.close()
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any, Protocol

from dgt.board import Board
from dgt.bus_master import BusBoard
from dgt.errors import DgtError
from dgt.events import BoardEvent, ClockConnection, ClockUpdate, Side
from dgt.recording import event_as_logged, event_to_json
from dgt.tasks import cancel_and_wait
from service.clock_orders import ClockOrderSender
from service.led_driver import LedDriver
from service.table import ClockOrder, QuickClock, QuickTable, TableEvent, TableLike

__all__ = [
    "OPEN_RETRY_MAX",
    "OPEN_RETRY_MIN",
    "BoardMaker",
    "Connection",
    "InputKind",
    "RunnerBoard",
    "RunnerHost",
    "TableInput",
    "TableRunner",
]

logger = logging.getLogger(__name__)

OPEN_RETRY_MIN = 1.0
"""First delay before trying again to open a board that could not be opened..."""

OPEN_RETRY_MAX = 15.0
"""...doubling up to this cap."""

RunnerBoard = Board | BusBoard
"""A board a runner plays at: a serial or BLE board, or one board of a bus line."""

BoardMaker = Callable[[], RunnerBoard]
"""Builds the (unopened) board for one attempt to open it."""


class Connection(StrEnum):
    """How a runner's board link stands, as the web page shows it."""

    CONNECTING = "connecting"
    """Not opened yet."""
    UP = "up"
    RECONNECTING = "reconnecting"
    """Opened once, lost since; the board reconnects on its own."""
    DOWN = "down"
    """Cannot be opened (trying again with back-off)."""


class InputKind(StrEnum):
    """The inputs a runner makes on its own (their stored kinds)."""

    BOARD = "board"
    TICK = "tick"


@dataclass(slots=True)
class TableInput:
    """One input a runner put into its table, with the table's answer.  Not changed once
    made (not frozen: one is made an input of every table, and a frozen dataclass's fields
    cost a call each to set)."""

    kind: InputKind
    time: float
    """On the table's time line."""
    produced: Sequence[Any]
    """What the table answered (:class:`~service.table.TableEvent` s)."""
    event: BoardEvent | None = None
    """A board input: the event as the driver gave it (its time is ``time.monotonic()``)."""


_BOARD_INPUT = InputKind.BOARD
"""Read on every board input: an enum member read off its class goes through the enum's
metaclass."""


class RunnerHost(Protocol):
    """Whom a runner reports to: the hall logs, queues and publishes; a test records."""

    def table_input(self, runner: TableRunner, item: TableInput) -> None:
        """An input the runner made (a board event, one of its own ticks) and its answer."""
        ...

    def link_changed(self, runner: TableRunner) -> None:
        """:attr:`TableRunner.link` changed."""
        ...


def _same(t: float) -> float:
    return t


class TableRunner:
    """One table at one board (see the module docstring)."""

    __slots__ = (
        "__dict__", "__weakref__", "board_listeners", "host", "id", "leds", "quick",
        "send_orders", "table", "table_time", "tick_interval",
    )  # fmt: skip
    # What every board event and tick reads, in the object itself (the rest in its
    # __dict__): a hall's thousands of runners keep fewer of their cache lines in the
    # CPU's caches.

    def __init__(
        self,
        table_id: str,
        table: TableLike,
        host: RunnerHost,
        make_board: BoardMaker | None = None,
        *,
        port: str | None = None,
        table_time: Callable[[float], float] = _same,
        tick: float | None = None,
        send_orders: bool = True,
        on_order_sent: Callable[[ClockOrder], None] | None = None,
    ) -> None:
        if tick is not None and tick <= 0:
            raise ValueError("tick must be positive")
        self.id = table_id
        self.table = table
        self.quick: QuickClock | None = table.quick if isinstance(table, QuickTable) else None
        """The table's answer to the inputs that change nothing but time (None: a table
        without one takes every input)."""
        self.host = host
        self.make_board = make_board
        self.port = port
        """What the page shows as the board's port."""
        self.table_time = table_time
        """A driver's time (``time.monotonic()``) on the table's time line."""
        self.tick_interval = tick
        """Seconds between the runner's own ticks (None: the owner ticks the table)."""
        self.send_orders = send_orders
        """Whether the table's clock orders are sent after each input (else the host takes
        them)."""
        self.on_order_sent = on_order_sent
        self.board: RunnerBoard | None = None
        self.link = Connection.CONNECTING
        self.error: str | None = None
        self.task: asyncio.Task[None] | None = None
        """:meth:`run`, once :meth:`start` started it."""
        self.clock_orders: ClockOrderSender | None = None
        """Sends the table's clock orders to the clock of :attr:`board` (made on the first
        order for that board)."""
        self.leds: LedDriver | None = None
        """Keeps the board's LEDs on the game (boards with LEDs only)."""
        self._led_task: asyncio.Task[None] | None = None
        self._tick_task: asyncio.Task[None] | None = None
        self._attached: RunnerBoard | None = None
        """A board given open (:meth:`attach`): its owner closes it."""
        self._closing = False
        self._was_ready = False  # the board was opened once
        self._ready: asyncio.Event | None = None  # made for a caller that waits for it
        self.board_listeners: list[Callable[[BoardEvent], None]] = []
        """Called with each board event (as the driver gave it) after the table had it:
        readers of the board beside the table (the play API of ``run --play``).  They see
        the event only; what the table keeps and the host stores is theirs alone."""

    # --- life cycle -----------------------------------------------------------------

    def start(self) -> None:
        """Open the board and feed the table on a task of its own (:meth:`run`)."""
        if self.task is None:
            self.task = asyncio.get_running_loop().create_task(self.run(), name=f"table {self.id}")

    async def wait_ready(self, timeout: float) -> bool:  # noqa: ASYNC109
        """Wait until the board was opened once (False after ``timeout`` seconds)."""
        if self._was_ready:
            return True
        if self._ready is None:
            self._ready = asyncio.Event()
        try:
            await asyncio.wait_for(self._ready.wait(), timeout)
        except TimeoutError:
            return False
        return True

    async def run(self) -> None:
        """Open the board (trying again with back-off while it cannot be opened), then
        feed its events to the table until it is closed."""
        if self.make_board is None:
            raise RuntimeError(f"table {self.id}: no board to open")
        delay = OPEN_RETRY_MIN
        failures = 0
        while not self._closing:
            try:
                board = self.board = self.make_board()
                await board.open()
            except DgtError as exc:
                failures += 1
                self.error = str(exc)
                self._set_link(Connection.DOWN)
                logger.log(
                    logging.WARNING if failures == 1 else logging.DEBUG,
                    "table %s: %s (trying again in %.0f s)",
                    self.id,
                    exc,
                    delay,
                )
                await asyncio.sleep(delay)
                delay = min(delay * 2, OPEN_RETRY_MAX)
                continue
            self._opened(board)
            # Each event goes to the table as the driver reads it (no wake-up of this task
            # per event); this task waits for the board to close.
            board.consume(self.board_event)
            async for _ in board.events():
                pass
            return

    async def attach(self, board: RunnerBoard) -> None:
        """Play at ``board``, open already (its owner closes it): the board as it stands
        goes in first at the table's time now (its clock's link and last report, its
        squares), then every event as it happens."""
        if self.board is not None:
            raise RuntimeError(f"table {self.id}: already at a board")
        self.board = self._attached = board
        self._opened(board)
        now = time.monotonic()
        state = board.clock.state
        if state.connected:
            self.board_event(ClockConnection(now, True, state.version, "link"))
        if state.last_update is not None:
            self.board_event(replace(state.last_update, time=now))
        self.board_event(board.mirror.snapshot(now, "connect"))
        board.add_listener(self.board_event)

    def _opened(self, board: RunnerBoard) -> None:
        self.error = None
        self._set_link(Connection.UP)
        if board.info.leds is not None and self.leds is None:
            self.leds = LedDriver(board, self.table)
            self._led_task = asyncio.create_task(self.leds.run(), name=f"leds {self.id}")
        if self.tick_interval is not None and self._tick_task is None:
            self._tick_task = asyncio.create_task(self._ticker(), name=f"ticks {self.id}")
        self._was_ready = True
        if self._ready is not None:
            self._ready.set()  # the waiters hold it: the runner needs it no more
            self._ready = None

    async def close(self) -> None:
        """Stop feeding and sending (orders not sent yet are dropped) and close the board
        the runner opened.  Idempotent."""
        self._closing = True
        if self._attached is not None:
            self._attached.remove_listener(self.board_event)
        for task in (self._led_task, self._tick_task):
            await cancel_and_wait(task)
        self._led_task = self._tick_task = None
        if self.clock_orders is not None:
            await self.clock_orders.close()
        if self.board is not None and self._attached is None:
            await self.board.close()
        if self.task is not None and not self.task.done():
            await cancel_and_wait(self.task)

    # --- the link -------------------------------------------------------------------

    def _set_link(self, link: Connection) -> None:
        if link != self.link:
            self.link = link
            self.host.link_changed(self)

    def connection(self) -> dict[str, Any]:
        """How the link stands, for the web page."""
        state = self.link
        if self.board is not None and self.link is Connection.UP:
            state = Connection.UP if self.board.ready else Connection.RECONNECTING
        return {"state": state, "port": self.port, "error": self.error}

    # --- inputs ---------------------------------------------------------------------

    def board_event(self, event: BoardEvent) -> None:
        """A board event (``time.monotonic()`` time): into the table, its answer to the
        host."""
        t = self.table_time(event.time)
        if self.tick_interval is not None:
            self._own_tick(t)  # time passes up to the event first
        quick = self.quick
        if (
            quick is not None
            and type(event) is ClockUpdate
            and type(event.left) is float  # as logged: the quick clock and the row read them
            and type(event.right) is float
            and (event.turn is None or type(event.turn) is Side)
            and quick.takes(event, t)
        ):
            # the most frequent input: a report that changes nothing but time, answered by
            # the quick clock (as the table would) with no event as logged made for it
            self.time_only(t, event)
        else:
            # self.feed(event, t) less a call and a TableInput when the table failed
            produced = self._answer(event_as_logged(t, event))
            if produced is not None:
                if self.leds is not None or self.send_orders:
                    self.answered(produced)
                self.host.table_input(self, TableInput(_BOARD_INPUT, t, produced, event))
        if not self.board_listeners:
            return
        for listener in self.board_listeners:
            try:
                listener(event)
            except Exception:
                logger.exception("table %s: a board listener failed on %r", self.id, event)

    def feed(self, event: BoardEvent, t: float | None = None) -> TableInput | None:
        """``event`` into the table, exactly as a log keeps it, at ``t`` (default: its own
        time on the table's line); the LEDs and the clock follow.  None when the table
        failed on it (logged)."""
        t = self.table_time(event.time) if t is None else t
        # The table gets the event exactly as a replay will read it back from the log, so a
        # rebuild gives the same.
        produced = self._answer(event_as_logged(t, event))
        if produced is None:
            return None
        self.answered(produced)
        return TableInput(_BOARD_INPUT, t, produced, event)

    def time_only(self, t: float, event: ClockUpdate) -> None:
        """The board's clock report ``event`` (``t`` on the table's time line), which the
        quick clock took: it changed nothing but time, and the table's answer is its echo
        alone.  Here: that answer to the host, as any other; a host with a cheaper way
        to keep it overrides this."""
        produced = [TableEvent(t, "board", event_to_json(event_as_logged(t, event)))]
        if self.leds is not None or self.send_orders:
            self.answered(produced)
        self.host.table_input(self, TableInput(_BOARD_INPUT, t, produced, event))

    def _answer(self, logged: BoardEvent) -> list[TableEvent] | None:
        """The table's answer to the board event ``logged`` (as a log keeps it): from the
        quick clock when it is a report that changes nothing but time; None when the table
        failed on it (logged)."""
        quick = self.quick
        if quick is not None and type(logged) is ClockUpdate:
            produced = quick.report(logged)
            if produced is not None:
                return produced
        try:
            return self.table.feed(logged)
        except Exception:
            logger.exception("table %s: the table failed on %r", self.id, logged)
            if quick is not None:
                quick.disarm()  # the table takes every input until it arms it again
            return None

    def tick(self, now: float) -> list[TableEvent]:
        """Time passes on the table (``now`` on its time line); the LEDs and the clock
        follow.  A table that fails is logged and answers nothing.  A tick before the
        table's :attr:`QuickClock.due` would do nothing: it is skipped."""
        quick = self.quick
        if quick is not None and now < quick.due:
            return []
        try:
            produced = self.table.tick(now)
        except Exception:
            logger.exception("table %s: tick failed", self.id)
            return []
        self.answered(produced)
        return produced

    def admin(self, command: str, args: Mapping[str, Any], now: float) -> list[TableEvent]:
        """An admin command at ``now`` on the table's time line; the LEDs and the clock
        follow.  A command the table refuses raises the table's error."""
        produced = self.table.admin(command, args, now)
        self.answered(produced)
        return produced

    def now(self) -> float:
        """The table's time now."""
        return self.table_time(time.monotonic())

    def answered(self, produced: Sequence[TableEvent]) -> None:
        """The table answered an input: show it on the LEDs, send its clock orders
        (unless the host takes them)."""
        if self.leds is not None and produced:
            self.leds.update(produced)
        if self.send_orders:
            orders = self.take_clock_orders()
            if orders:
                self.send_clock_orders(orders)

    def take_clock_orders(self) -> list[ClockOrder]:
        """The table's clock orders issued since the last call
        (:meth:`~service.table.TableLike.take_clock_orders`), without asking a table whose
        quick clock tells it has none (most inputs)."""
        quick = self.quick
        if quick is not None and not quick.orders:
            return []
        return self.table.take_clock_orders()

    def _own_tick(self, now: float) -> None:
        produced = self.tick(now)
        if produced:
            self.host.table_input(self, TableInput(InputKind.TICK, now, produced))

    async def _ticker(self) -> None:
        assert self.tick_interval is not None
        while True:
            await asyncio.sleep(self.tick_interval)
            self._own_tick(self.now())

    # --- the clock ------------------------------------------------------------------

    def send_clock_orders(self, orders: Sequence[ClockOrder]) -> None:
        """Send ``orders`` (oldest first) to the board's clock, one after another; dropped
        while the board is not ready (a reconnect re-syncs the clock from the table)."""
        board = self.board
        if not orders or board is None or not board.ready:
            return
        if isinstance(board, BusBoard):
            return  # a bus line has no clock commands (BusBoard logs it once)
        sender = self.clock_orders
        if sender is None or sender.clock is not board.clock:
            sender = self.clock_orders = ClockOrderSender(
                board.clock, label=self.id, on_sent=self.on_order_sent
            )
        sender.submit(orders)

    async def flush_clock_orders(self) -> None:
        """Wait until every clock order issued so far was sent and answered."""
        if self.clock_orders is not None:
            await self.clock_orders.flush()
