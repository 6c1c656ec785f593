"""``LedDriver``: keeps a board's square LEDs on the plan of :mod:`service.leds`.

The thin async half of the LED feature: :meth:`LedDriver.update` works out the plan after a
batch of table events (pure, from the table), :meth:`LedDriver.run` sends it to the board
whenever it differs from what the board shows (plans made meanwhile collapse into the
newest).  Made by :class:`service.table_runner.TableRunner` (the runner of each table of
the hall of ``dgt-service run``) only for boards that have LEDs (``board.info.leds``), since
an LED frame stalls a classic board.  It needs of a board only
:class:`LedBoard` (a :class:`dgt.Board` and a bus line's :class:`dgt.bus_master.BusBoard`
both are one) and of a table only the contract :class:`service.table.TableLike`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Sequence
from typing import Protocol

from dgt.board import BoardInfo
from dgt.errors import DgtError
from service.leds import OFF, LedPlan, SquareMap, fit_to, follow_target, plan_leds
from service.table import TableEvent, TableLike

__all__ = ["LedBoard", "LedDriver"]

log = logging.getLogger(__name__)


class LedBoard(Protocol):
    """What the LED driver needs of a board."""

    @property
    def name(self) -> str: ...

    @property
    def info(self) -> BoardInfo: ...

    async def set_leds(
        self, squares: Iterable[int], *, speed: int = 3, repeat: int = 0, intensity: int = 1
    ) -> None: ...

    async def clear_leds(self) -> None: ...


class LedDriver:
    """The LEDs of ``board`` for the game of ``table``."""

    def __init__(self, board: LedBoard, table: TableLike) -> None:
        if board.info.leds is None:
            raise ValueError(f"{board.name} has no LEDs")
        self.board = board
        self.table = table
        self.leds: LedPlan | None = None
        """The plan the board shows (None: nothing sent yet)."""
        self._plan: LedPlan = OFF
        self._target: SquareMap | None = None
        self._wake = asyncio.Event()

    def update(self, events: Sequence[TableEvent]) -> None:
        """Work out the plan after ``events``; wake the sender if the board does not show it
        (a plan that failed to go out is tried again after the next batch).  Never raises:
        a bug in the plan must not stop the game."""
        if not events:
            return
        try:
            kind = self.board.info.leds
            assert kind is not None
            table = self.table
            physical = table.physical()
            self._target = follow_target(
                self._target, events, history=table.history(), plies=len(table.moves()),
                physical=physical,
            )  # fmt: skip
            plan = fit_to(plan_leds(table.state(), physical=physical, target=self._target), kind)
        except Exception:
            log.exception("LED plan failed; the LEDs are left as they are")
            return
        if any(e.type == "board" and e.data.get("event") == "link_restored" for e in events):
            self.leds = None  # the board may have been switched off meanwhile: show it again
        self._plan = plan
        if plan != self.leds:
            self._wake.set()

    async def run(self) -> None:
        """Send plans as they change, until cancelled."""
        while True:
            await self._wake.wait()
            self._wake.clear()
            plan = self._plan
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
