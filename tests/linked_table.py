"""A table at an open (emulated) board through the service's own runner, in real time.

:class:`LinkedTable` is the end-to-end tests' view of :class:`service.table_runner.TableRunner`:
the runner the hall uses, attached to a board the test opened, ticking its table itself
every ``tick`` seconds, on a time line that starts at zero when the link starts and runs
``scale`` times faster than the driver's clock (so a test plays faster than people: the
recogniser's settle and FIDE 4.7's release time pass sooner; the clock's own times are never
scaled).  It is the runner's host: everything the table said is kept in :attr:`events`, the
clock orders the clock answered in :attr:`sent`.

::

    async with Board(transport) as board, LinkedTable(board, Table("t1", settings)) as link:
        ...
        link.admin("claim", side="white", kind="threefold")
"""

from __future__ import annotations

import time
from typing import Any

from dgt.board import Board
from service.leds import LedPlan
from service.table import ClockOrder, TableEvent, TableLike
from service.table_runner import TableInput, TableRunner

TICK = 0.1
"""Seconds between the runner's ticks of the table."""


class LinkedTable:
    """``table`` at ``board`` through a :class:`TableRunner` (see the module docstring)."""

    def __init__(
        self,
        board: Board,
        table: TableLike,
        *,
        scale: float = 1.0,
        tick: float = TICK,
        name: str = "linked",
    ) -> None:
        if scale <= 0:
            raise ValueError("scale must be positive")
        self.board = board
        self.table = table
        self.scale = scale
        self.events: list[TableEvent] = []
        """Every table event so far, oldest first."""
        self.sent: list[ClockOrder] = []
        """Clock orders the clock acknowledged, oldest first."""
        self._origin = time.monotonic()
        self.runner = TableRunner(
            name,
            table,
            self,
            table_time=self.table_time,
            tick=tick,
            on_order_sent=self.sent.append,
        )

    async def __aenter__(self) -> LinkedTable:
        self._origin = time.monotonic()
        await self.runner.attach(self.board)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.runner.close()

    # -- the runner's host ------------------------------------------------------------------

    def table_input(self, runner: TableRunner, item: TableInput) -> None:
        self.events += item.produced

    def link_changed(self, runner: TableRunner) -> None:
        pass

    # -- what the tests ask ---------------------------------------------------------------

    def table_time(self, monotonic: float) -> float:
        """A driver timestamp (``time.monotonic()``) on the table's time line."""
        return (monotonic - self._origin) * self.scale

    def now(self) -> float:
        """The table's time now."""
        return self.runner.now()

    @property
    def leds(self) -> LedPlan | None:
        """The LED plan the board shows (None: nothing sent yet, or no LEDs)."""
        return self.runner.leds.leds if self.runner.leds is not None else None

    def admin(self, command: str, **args: Any) -> list[TableEvent]:
        """An admin command at the table's time now; its clock orders are sent."""
        got = self.runner.admin(command, args, self.now())
        self.events += got
        return got

    async def flush(self) -> None:
        """Wait until every clock order issued so far was sent and acknowledged."""
        await self.runner.flush_clock_orders()
