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
from dgt.errors import DgtError
from dgt.events import BoardEvent, ClockConnection
from service.clock_orders import ClockOrderSender
from service.leds import OFF, LedPlan, SquareMap, fit_to, follow_target, plan_leds
from service.table import ClockOrder, Table, TableEvent

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
        table: Table,
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
        self.leds: LedPlan | None = None
        """The LED plan the board shows (None: nothing sent yet, or no LEDs)."""
        self._origin: float | None = None
        self._clock_orders = ClockOrderSender(board.clock, on_sent=self.sent.append)
        self._led_plan: LedPlan = OFF
        self._led_target: SquareMap | None = None
        self._led_wake = asyncio.Event()
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
        if self.board.info.leds is not None:
            self._tasks.append(asyncio.create_task(self._send_leds(), name="table-link-leds"))

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
        self._feed(replace(event, time=self.table_time(event.time)))  # type: ignore[type-var]

    def _feed(self, event: BoardEvent) -> None:
        got = self.table.tick(event.time) + self.table.feed(event)
        self._record(got)

    def _record(self, got: list[TableEvent]) -> None:
        self.events += got
        if got and self.on_events is not None:
            self.on_events(got)
        self._clock_orders.submit(self.table.take_clock_orders())
        if got and self.board.info.leds is not None:
            try:
                self._plan_leds(got)
            except Exception:  # a bug in the LED plan must not stop the game
                log.exception("LED plan failed; the LEDs are left as they are")

    def _plan_leds(self, got: list[TableEvent]) -> None:
        """Work out the LED plan after ``got``; wake the LED sender if the board does not
        show it (a plan that failed to go out is tried again after the next batch)."""
        kind = self.board.info.leds
        assert kind is not None
        table = self.table
        physical = table.physical()
        self._led_target = follow_target(
            self._led_target, got, history=table.history(), plies=len(table.moves()),
            physical=physical,
        )  # fmt: skip
        plan = fit_to(plan_leds(table.state(), physical=physical, target=self._led_target), kind)
        if any(e.type == "board" and e.data.get("event") == "link_restored" for e in got):
            self.leds = None  # the board may have been switched off meanwhile: show it again
        self._led_plan = plan
        if plan != self.leds:
            self._led_wake.set()

    async def _send_leds(self) -> None:
        """Show the latest LED plan whenever it differs from what the board shows (plans
        made while one is being sent collapse into the newest)."""
        while True:
            await self._led_wake.wait()
            self._led_wake.clear()
            plan = self._led_plan
            if plan == self.leds:
                continue
            try:
                if plan.squares:
                    await self.board.set_leds(
                        sorted(plan.squares), speed=plan.speed, repeat=plan.repeat,
                        intensity=plan.intensity,
                    )  # fmt: skip
                else:
                    await self.board.clear_leds()
                self.leds = plan
            except DgtError as exc:
                log.warning("LEDs not set (%s): %s", plan.pattern, exc)

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(self.tick)
            self._record(self.table.tick(self.now()))

