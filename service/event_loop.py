"""The event loop the service runs on: uvloop where it is installed (a dependency on Linux
and macOS), else asyncio's own, with the process tuned for it (the cycle collector paced:
:mod:`service.collector_pacer`).

uvloop runs the same asyncio code with the loop, its timers and its sockets written in C
(libuv).  In the hall bench (1,000 tables on one core) it took about 4 % of the core off
the service, whose work is mostly many small callbacks and timers.  Set
``DGT_EVENT_LOOP=asyncio`` to run on asyncio's loop instead (to compare, or to rule uvloop
out when something misbehaves).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from service.collector_pacer import paced

__all__ = ["loop_factory", "name", "run"]

logger = logging.getLogger(__name__)

T = TypeVar("T")


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop]:
    """uvloop's loop factory, or asyncio's own (asked for, or no uvloop installed)."""
    if os.environ.get("DGT_EVENT_LOOP", "").strip().lower() == "asyncio":
        return _asyncio_loop
    try:
        import uvloop
    except ImportError:
        return _asyncio_loop
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


def name() -> str:
    """``"uvloop"`` or ``"asyncio"``: the loop :func:`run` runs on."""
    return "asyncio" if loop_factory() is _asyncio_loop else "uvloop"


def _asyncio_loop() -> asyncio.AbstractEventLoop:
    """asyncio's own loop for this system, whatever event loop policy is set."""
    if sys.platform == "win32":
        proactor: Callable[[], asyncio.AbstractEventLoop] = asyncio.ProactorEventLoop  # type: ignore[attr-defined]
        return proactor()
    return asyncio.SelectorEventLoop()


def run(main: Coroutine[Any, Any, T], *, pace_collector: bool = True) -> T:
    """Run ``main`` to completion on a new loop (as :func:`asyncio.run` does), with the
    cycle collector paced while it runs (:func:`service.collector_pacer.paced`; off with
    ``pace_collector=False``, for a process that keeps its own collector settings)."""
    factory = loop_factory()
    logger.debug("event loop: %s", "asyncio" if factory is _asyncio_loop else "uvloop")
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(paced(main) if pace_collector else main)
