"""``service.collector_pacer``: the process tuning the service runs with.

Python's cycle collector stops the event loop while it walks the live objects; with many
tables that pause grows with the hall.  :class:`CollectorPacer` keeps those pauses short (see
its docstring); :func:`paced` runs a coroutine with it, and :func:`service.event_loop.run`
runs the service inside :func:`paced`, so the tuning starts and ends with the loop.  Whoever
builds the service tells the pacer once it is built (:meth:`CollectorPacer.settled`: the
``dgt-service run`` and ``demo`` commands, before their hall opens its boards).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
from collections.abc import Awaitable, Mapping
from typing import Any, TypeVar

from dgt.tasks import cancel_and_wait

__all__ = ["THAW_CHECK", "THAW_INTERVAL", "CollectorPacer", "paced"]

T = TypeVar("T")

THAW_INTERVAL = 600.0
"""Seconds between thaws of the objects the pacer froze out of the cycle collector's way
(see :class:`CollectorPacer`)."""

THAW_CHECK = 0.5
"""Seconds between two looks at whether a thaw is due."""

# No thaw comes sooner because the frozen objects grew: counting them walks every frozen
# object (gc.get_freeze_count: tens of milliseconds at 1,000 tables, a pause every time it
# is asked), and counting instead every survivor of every young collection made a hall of
# 1,000 tables thaw several times a minute (each a full pass of some 400 ms).  A flood of
# requests no route matches leaves no garbage cycle to freeze (service.web.app answers it
# without raising), so the timed thaw is enough.


class CollectorPacer:
    """Keeps the pauses of Python's cycle collector short while the service runs.

    A full collection walks every live container object: with 1,000 tables (their games,
    recognisers, boards, the web server) that stops the event loop for a few hundred
    milliseconds, several times a minute, and every update waiting meanwhile is late.
    While it runs (:func:`paced`: the whole of :func:`service.event_loop.run`), what
    survives a collection of any generation is frozen (:func:`gc.freeze`): each collection
    then walks only what was made since the last one.
    (Freezing only after the older generations' collections left up to 17,000 survivors of
    young collections in the middle generation at N = 1,000, whose collections then took
    5-20 ms each, several times a second: a share of the p99 latency.)  Frozen objects
    are still freed by reference counting as usual; only garbage *cycles* among them (a
    service that runs long makes next to none: in the hall bench no full collection ever
    found any) wait for the next thaw: every :data:`THAW_INTERVAL` seconds
    (:meth:`thaw_if_due`, asked every :data:`THAW_CHECK` seconds) the frozen objects go back
    to the collector for one full collection, one long pass that frees them, and what survives
    it is frozen again.  Starts nest: the last :meth:`stop` thaws everything."""

    _runs = 0
    _thawed_at = 0.0

    @classmethod
    def start(cls) -> None:
        """The service starts: collect once (before any board talks), freeze what is
        left."""
        if cls._runs == 0:
            gc.callbacks.append(cls._after_collection)
            gc.collect()
            gc.freeze()
            cls._thawed_at = time.monotonic()
        cls._runs += 1

    @classmethod
    def stop(cls) -> None:
        """The service stops: the last of nested starts gives everything back to the
        collector."""
        if cls._runs == 0:
            return
        cls._runs -= 1
        if cls._runs == 0:
            with contextlib.suppress(ValueError):
                gc.callbacks.remove(cls._after_collection)
            gc.unfreeze()

    @classmethod
    def thaw_if_due(cls, now: float | None = None) -> bool:
        """Once :data:`THAW_INTERVAL` seconds passed since the last thaw: hand the frozen
        objects back and collect everything once (the garbage cycles among them are freed);
        the survivors are frozen again.  Returns whether it did."""
        now = time.monotonic() if now is None else now
        if cls._runs == 0 or now - cls._thawed_at < THAW_INTERVAL:
            return False
        cls._thaw(now)
        return True

    @classmethod
    def settled(cls) -> None:
        """The service is built (its tables rebuilt, before any board talks): thaw now, so
        that the one long collection of everything made at start-up (garbage cycles of
        building the tables among it) comes before the service is busy.  Nothing while the
        pacer does not run."""
        if cls._runs > 0:
            cls._thaw(time.monotonic())

    @classmethod
    def _thaw(cls, now: float) -> None:
        cls._thawed_at = now
        gc.unfreeze()
        gc.collect()  # _after_collection freezes the survivors

    @classmethod
    def _after_collection(cls, phase: str, info: Mapping[str, Any]) -> None:
        if phase == "stop":
            gc.freeze()


async def paced(main: Awaitable[T]) -> T:
    """Await ``main`` with the collector paced (:class:`CollectorPacer`): started before,
    looked at every :data:`THAW_CHECK` seconds for a thaw that is due, stopped after."""
    CollectorPacer.start()
    thaws = asyncio.create_task(_thaw_when_due(), name="collector thaws")
    try:
        return await main
    finally:
        await cancel_and_wait(thaws)
        CollectorPacer.stop()


async def _thaw_when_due() -> None:
    while True:
        await asyncio.sleep(THAW_CHECK)
        CollectorPacer.thaw_if_due()
