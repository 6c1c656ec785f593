"""Sending a table's clock orders to a board's clock: ``service.clock_orders``.

A :class:`~service.table.Table` issues :class:`~service.table.ClockOrder` s (set-and-run,
a short text, back to the times, a beep) that wait in :meth:`Table.take_clock_orders`.
The runner that puts a table at a board (:class:`service.table_runner.TableRunner`, one for
each table of the hall) hands them to a :class:`ClockOrderSender`,
which sends them to the clock one after another, in the order given, each waiting for the
clock's answer (the clock takes one command at a time); a clock that does not answer is
logged and the next order is tried, so a game goes on when a clock is unplugged mid-game.

:func:`send_order` is the one place that turns an order into a :class:`dgt.clock.Clock`
command.  The sender runs a task only while orders wait, so a hall of a thousand idle
tables holds no task for their clocks.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from typing import Protocol

from dgt.errors import DgtError
from dgt.events import Side
from dgt.tasks import cancel_and_wait
from service.table import ClockOrder

__all__ = ["BEEP_UNIT", "ClockOrderSender", "OrderClock", "beep_units", "send_order"]

logger = logging.getLogger(__name__)

BEEP_UNIT = 1 / 16
"""Seconds per step of the DGT 3000 text beep (0..15)."""


class OrderClock(Protocol):
    """What :func:`send_order` needs of a clock (:class:`dgt.clock.Clock` fits)."""

    async def set_and_run(
        self, left: float, right: float, *, run: Side | None = None
    ) -> object: ...

    async def show_text(self, text: str, *, beep: int = 0) -> object: ...

    async def end_text(self) -> object: ...

    async def beep(self, seconds: float = 0.5) -> object: ...


def beep_units(seconds: float) -> int:
    """A beep length in seconds as the DGT 3000 text command's units (0-15, 1/16 s each)."""
    return max(0, min(15, round(float(seconds or 0) / BEEP_UNIT)))


async def send_order(clock: OrderClock, order: ClockOrder) -> bool:
    """Carry out one order on ``clock``.  Returns False for an order kind it does not know
    (logged, nothing sent); raises :class:`~dgt.errors.DgtError` when the clock does not
    answer."""
    kind = order.kind
    if kind == "set_and_run":
        await clock.set_and_run(float(order.left), float(order.right), run=order.run)
    elif kind == "text":
        await clock.show_text(str(order.text), beep=beep_units(order.beep))
    elif kind == "end_text":
        await clock.end_text()
    elif kind == "beep":
        await clock.beep(float(order.beep) or 0.5)
    else:
        logger.warning("clock order %r not understood; ignored", kind)
        return False
    return True


class ClockOrderSender:
    """Sends clock orders to one clock, one after another in the order submitted.

    ``on_sent(order)`` is called for each order the clock acknowledged.  ``label`` names the
    table in log lines.  Use from the event loop's thread; :meth:`submit` needs a running
    loop to send (orders submitted outside one wait for the next call made in one)."""

    def __init__(
        self,
        clock: OrderClock,
        *,
        label: str = "",
        on_sent: Callable[[ClockOrder], None] | None = None,
    ) -> None:
        self.clock = clock
        self.label = label
        self.on_sent = on_sent
        self.failures = 0
        """Orders the clock did not answer."""
        self._queue: list[ClockOrder] = []  # a few at most: a list is smaller than a deque
        self._task: asyncio.Task[None] | None = None

    @property
    def pending(self) -> int:
        """Orders submitted and not finished yet (the one being sent included)."""
        return len(self._queue) + (1 if self._busy() else 0)

    def submit(self, orders: Iterable[ClockOrder]) -> None:
        """Queue ``orders`` (oldest first) behind those already waiting.  Sending starts at
        once in a running event loop; outside one, at the next :meth:`submit` or
        :meth:`flush` made in a loop."""
        self._queue.extend(orders)
        self._start()

    async def flush(self) -> None:
        """Wait until every order submitted so far was sent (or given up)."""
        self._start()
        while self._busy():
            task = self._task
            assert task is not None
            await asyncio.wait({task})

    async def close(self) -> None:
        """Stop sending; orders not sent yet are dropped.  Idempotent."""
        self._queue.clear()
        task, self._task = self._task, None
        if task is not None and not task.done():
            await cancel_and_wait(task)

    def _start(self) -> None:
        if not self._queue or self._busy():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop yet: the orders wait
        self._task = loop.create_task(self._drain(), name=f"clock orders {self.label}".rstrip())

    def _busy(self) -> bool:
        return self._task is not None and not self._task.done()

    async def _drain(self) -> None:
        while self._queue:
            order = self._queue.pop(0)
            try:
                sent = await send_order(self.clock, order)
            except DgtError as exc:
                self.failures += 1
                logger.warning("%sclock order %s not sent: %s", self._prefix(), order.kind, exc)
                continue
            if sent and self.on_sent is not None:
                self.on_sent(order)

    def _prefix(self) -> str:
        return f"table {self.label}: " if self.label else ""
