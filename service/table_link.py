"""``TableLink``: one :class:`dgt.Board` playing one :class:`service.table.Table`.

The table is pure (no I/O, no clock of its own); this is the thin async adapter that puts it
at a real board:

* every driver event (board, lever, clock times) goes into :meth:`Table.feed` as it arrives,
  with its time mapped to the table's time line (seconds since :meth:`TableLink.start`,
  times ``scale``);
* :meth:`Table.tick` runs every ``tick`` seconds, so settle delays complete moves and, without
  a clock, a flag can fall (FIDE 6.9);
* the table's clock orders (:meth:`Table.take_clock_orders`: set-and-run at the start of a
  game and after a penalty or an increment, FIDE 7.5.5 / 9.5; short texts such as
  ``ILLEGAL``, ``CLAIM?`` or T20 scores) are sent to ``board.clock`` one after another, in
  the order the table issued them (the clock takes one command at a time);
* :meth:`admin` passes an organiser's or arbiter's command (claims, decisions, a start from a
  FEN) to the table at the current table time;
* on a board with LEDs (``board.info.leds``: the Pegasus, the Revelation II) the squares to
  light (:mod:`service.leds`: the last move, a mismatch, squares to set right after a
  ruling) are worked out after every batch of table events and sent only when they changed;
  a board without LEDs is never sent an LED frame (it would stall a classic board).

Everything the table said is kept in :attr:`events` (and handed to ``on_events``); the orders
sent are kept in :attr:`sent`, the LED plan last shown in :attr:`leds`.  A clock that does
not answer, or LEDs that cannot be set, are logged and skipped: the game goes on, as it must
when a clock is unplugged mid-game.

``scale`` is for tests that play faster than people: the table sees the driver's times
multiplied by it, so its human delays (the recogniser's settle, FIDE 4.7's release time)
pass sooner.  The clock's own times are never scaled; keep ``scale = 1`` at a real table.

::

    async with Board(port) as board, TableLink(board, Table("t1", settings)) as link:
        ...
        link.admin("claim", side="white", kind="threefold")
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from dgt.board import Board
from dgt.events import BoardEvent, ClockConnection
from service.clock_orders import ClockOrderSender
from service.led_driver import LedDriver
from service.leds import LedPlan
from service.table import ClockOrder, TableEvent, TableLike

__all__ = ["TICK", "TableLink"]

log = logging.getLogger(__name__)

TICK = 0.1
"""Seconds between :meth:`Table.tick` calls."""


class TableLink:
    """Feeds ``board``'s events into ``table`` and sends the table's clock orders to
    ``board.clock`` (see the module docstring)."""

    def __init__(
        self,
        board: Board,
        table: TableLike,
        *,
        scale: float = 1.0,
        tick: float = TICK,
        on_events: Callable[[list[TableEvent]], None] | None = None,
    ) -> None:
        if scale <= 0 or tick <= 0:
            raise ValueError("scale and tick must be positive")
        self.board = board
        self.table = table
        self.scale = scale
        self.tick = tick
        self.on_events = on_events
        self.events: list[TableEvent] = []
        """Every table event so far, oldest first."""
        self.sent: list[ClockOrder] = []
        """Clock orders the clock acknowledged, oldest first."""
        self._leds = LedDriver(board, table) if board.info.leds is not None else None
        self._origin: float | None = None
        self._clock_orders = ClockOrderSender(board.clock, on_sent=self.sent.append)
        self._tasks: list[asyncio.Task[None]] = []

    # -- life cycle ----------------------------------------------------------------------

    async def start(self) -> None:
        """Start feeding: the clock's last report and the board as it stands go in first."""
        if self._origin is not None:
            raise RuntimeError("table link already started")
        self._origin = time.monotonic()
        state = self.board.clock.state
        if state.connected:
            self._feed(ClockConnection(0.0, True, state.version, "link"))
        if state.last_update is not None:
            self._feed(replace(state.last_update, time=0.0))
        self._feed(self.board.mirror.snapshot(0.0, "connect"))
        self.board.add_listener(self._on_event)
        self._tasks = [
            asyncio.create_task(self._tick(), name="table-link-tick"),
        ]
        if self._leds is not None:
            self._tasks.append(asyncio.create_task(self._leds.run(), name="table-link-leds"))

    async def close(self) -> None:
        """Stop feeding and sending (orders not sent yet are dropped).  Idempotent."""
        self.board.remove_listener(self._on_event)
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []
        await self._clock_orders.close()

    async def __aenter__(self) -> TableLink:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    @property
    def leds(self) -> LedPlan | None:
        """The LED plan the board shows (None: nothing sent yet, or no LEDs)."""
        return self._leds.leds if self._leds is not None else None

    # -- time and commands ---------------------------------------------------------------

    def table_time(self, monotonic: float) -> float:
        """A driver timestamp (``time.monotonic()``) on the table's time line."""
        if self._origin is None:
            raise RuntimeError("table link not started")
        return (monotonic - self._origin) * self.scale

    def now(self) -> float:
        """The table's time now."""
        return self.table_time(time.monotonic())

    def admin(self, command: str, **args: Any) -> list[TableEvent]:
        """:meth:`Table.admin` at the current table time; its clock orders are sent."""
        got = self.table.admin(command, args, self.now())
        self._record(got)
        return got

    async def flush(self) -> None:
        """Wait until every clock order issued so far was sent and acknowledged."""
        await self._clock_orders.flush()

    # -- internals -------------------------------------------------------------------------

    def _on_event(self, event: BoardEvent) -> None:
        self._feed(replace(event, time=self.table_time(event.time)))

    def _feed(self, event: BoardEvent) -> None:
        got = self.table.tick(event.time) + self.table.feed(event)
        self._record(got)

    def _record(self, got: list[TableEvent]) -> None:
        self.events += got
        if got and self.on_events is not None:
            self.on_events(got)
        self._clock_orders.submit(self.table.take_clock_orders())
        if self._leds is not None:
            self._leds.update(got)

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(self.tick)
            self._record(self.table.tick(self.now()))
