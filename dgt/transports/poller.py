"""Many boards' file descriptors read in batches, on a timer of the event loop.

With each board's descriptor watched by the event loop itself (``loop.add_reader``), a hall
of thousands of boards wakes the loop for nearly every message: a few inputs per wake-up,
and each wake-up after a pause finds the CPU's caches cold.  A :class:`BoardPoller` holds
the descriptors in an epoll set of its own (a selector where there is no epoll) and, every
``period`` seconds, asks it without blocking which are ready and calls their callbacks one
after another: the loop then wakes about once a period for all the boards that spoke
meanwhile, for at most about one period of added latency.

A poller given a ``longest`` period stretches its period (doubling it, up to ``longest``)
while its polls find fewer than :data:`BATCH` descriptors ready, and shortens it again
(halving it, down to ``period``) once they find more than twice that: each wake-up after a
pause costs the CPU its cold caches, so a hall whose boards speak seldom is read in bigger
batches, for more latency, and a busy hall keeps the short period (its batches are big).
It stretches only while the process has CPU to spare (it used less than :data:`WARM` of a
CPU, on average over the last polls), and halves the period once it uses more than
:data:`HOT`, however few descriptors a poll found: near a full core, longer batches cost
more per input, not less, and a hall falls behind for good (5,000 boards, bench/README.md).

The poller and the event loop offer the same two methods (:class:`ReadWatcher`), so a
transport registers its descriptor with whichever it is given
(:class:`dgt.transports.serial.SerialTransport`).  Nothing here reads or writes a
descriptor: the callbacks do, on the event loop's thread, from a ``loop.call_at`` timer
(no thread, no blocking sleep).  The timer runs only while a descriptor is registered.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import select
import selectors
import time
from collections.abc import Callable
from typing import Protocol

logger = logging.getLogger(__name__)

ReadCallback = Callable[[], object]
"""Called with no argument when a watched descriptor is ready to read (or hung up)."""


class ReadWatcher(Protocol):
    """Something that calls a callback when a file descriptor is ready to read: the event
    loop (``loop.add_reader``) or a :class:`BoardPoller`."""

    def add_reader(self, fd: int, callback: ReadCallback) -> None:
        """Call ``callback()`` whenever ``fd`` is ready to read (replacing any callback
        ``fd`` had)."""

    def remove_reader(self, fd: int) -> object:
        """Stop watching ``fd`` (nothing happens if it was not watched)."""


BATCH = 48
"""Ready descriptors a poll should find: a stretching poller (``longest``) waits longer while
its polls find fewer, and less long once they find more than twice as many (at 2,000
boards of real games, about 15 at 5 ms; bench/README.md, "Reading the boards in batches")."""


WARM = 0.6
"""The share of a CPU the process may use (an average over the last polls) for a stretching
poller to stretch its period."""
HOT = 0.75
"""The share of a CPU above which a stretching poller halves its period whatever it found."""
_SHARE_WEIGHT = 0.25
"""The weight of the last interval in the average share (the rest the average before)."""


_GRID_SLACK = 1e-6
"""A time within this fraction of a grid step above a multiple counts as on it: a multiple
plus a step, in floats, may come out a hair above the next multiple (no step is skipped)."""


def on_grid(t: float, grid: float) -> float:
    """The first multiple of ``grid`` seconds at or after ``t`` (a time of the event loop's
    clock): timers armed on one grid fall due together, in one turn of the loop, however
    many boards arm them (see :attr:`BoardPoller.grid`)."""
    return math.ceil(t / grid - _GRID_SLACK) * grid


class _ReadySet(Protocol):
    """The descriptors a poller watches, asked without blocking which are ready."""

    def register(self, fd: int) -> None: ...

    def unregister(self, fd: int) -> None: ...

    def ready(self, most: int) -> list[tuple[int, int]]:
        """``(fd, events)`` of the descriptors ready to read (or hung up), at most ``most``."""

    def close(self) -> None: ...


class _Epoll:
    """An epoll set asked directly (Linux): its answer is already ``(fd, events)`` pairs,
    where a selector builds a key and a tuple in Python for each ready descriptor (a
    poll of a big hall finds a hundred)."""

    def __init__(self) -> None:
        self._epoll = select.epoll()

    def register(self, fd: int) -> None:
        self._epoll.register(fd, select.EPOLLIN)

    def unregister(self, fd: int) -> None:
        self._epoll.unregister(fd)

    def ready(self, most: int) -> list[tuple[int, int]]:
        return self._epoll.poll(0, most)

    def close(self) -> None:
        self._epoll.close()


class _Selected:
    """The system's default selector (where there is no epoll)."""

    def __init__(self) -> None:
        self._selector = selectors.DefaultSelector()

    def register(self, fd: int) -> None:
        self._selector.register(fd, selectors.EVENT_READ)

    def unregister(self, fd: int) -> None:
        self._selector.unregister(fd)

    def ready(self, most: int) -> list[tuple[int, int]]:
        return [(key.fd, events) for key, events in self._selector.select(0)[:most]]

    def close(self) -> None:
        self._selector.close()


def _ready_set() -> _ReadySet:
    return _Epoll() if hasattr(select, "epoll") else _Selected()


class PollerClosed(RuntimeError):
    """A descriptor was added to a :class:`BoardPoller` after it was closed."""


class BoardPoller:
    """Descriptors polled together every ``period`` seconds on ``loop`` (by default the
    loop running when the timer starts: when a descriptor is added to an empty poller).

    Each poll calls the ready descriptors' callbacks in the order the selector gives them;
    a descriptor removed by an earlier callback of the same poll is not called.  A callback
    that raises is logged (a warning the first time for its descriptor, at debug level
    after that) and the others are called all the same.
    """

    def __init__(
        self,
        period: float,
        loop: asyncio.AbstractEventLoop | None = None,
        *,
        longest: float | None = None,
        cpu_time: Callable[[], float] = time.process_time,
    ) -> None:
        if not period > 0:
            raise ValueError(f"a board poller's period must be more than 0 s, not {period!r}")
        if longest is not None and not longest >= period:
            raise ValueError(
                f"a board poller's longest period must be at least its period ({period!r} s), "
                f"not {longest!r}"
            )
        self.period = period
        """The shortest time between two polls (the time, when the poller does not stretch)."""
        self.longest = period if longest is None else longest
        """The longest time between two polls while they find few descriptors ready."""
        self.now_period = period
        """The time between the last poll and the next one."""
        self.share = 0.0
        """The share of a CPU the process used, an average over the last polls (measured
        while the poller stretches: ``cpu_time``, the process's CPU time, against the
        loop's time)."""
        self._cpu_time = cpu_time
        self._since = (0.0, 0.0)  # the loop's time and cpu_time() at the last poll
        self._given_loop = loop
        self._loop = loop
        self._selector: _ReadySet | None = _ready_set()
        self._callbacks: dict[int, ReadCallback] = {}
        self._warned: set[int] = set()
        """Descriptors whose callback raised once already (warned about)."""
        self._timer: asyncio.TimerHandle | None = None
        self._due = 0.0
        self.polls = 0
        """Polls made so far (for benches and tests)."""
        self.after_poll: Callable[[], object] | None = None
        """Called once after the callbacks of a poll that found a descriptor ready (what
        the boards' bytes led to can then be finished in the same wake-up of the loop: a
        hall commits there).  An exception it raises is logged, not raised."""

    def __len__(self) -> int:
        return len(self._callbacks)

    def __contains__(self, fd: object) -> bool:
        return fd in self._callbacks

    @property
    def running(self) -> bool:
        """Whether the poll timer is scheduled."""
        return self._timer is not None

    @property
    def closed(self) -> bool:
        return self._selector is None

    @property
    def grid(self) -> float:
        """A grid the polls fall on whatever their period: their due times are multiples of
        the period in use, and every multiple of :attr:`longest` is one of them when the
        period doubles from :attr:`period` up to it (5 to 20 ms: a hall's).  A timer of a
        polled board armed on it (:func:`on_grid`) runs in the turn of the loop of a poll,
        not in a wake-up of its own (each finds the caches cold, and at 2,000 boards their
        settle and liveness timers were most of the loop's wake-ups)."""
        return self.longest

    def add_reader(self, fd: int, callback: ReadCallback) -> None:
        """Watch ``fd``: ``callback()`` is called from the next poll that finds it ready.
        Raises :class:`PollerClosed` after :meth:`close`."""
        selector = self._selector
        if selector is None:
            raise PollerClosed("the board poller is closed: no descriptor can be added")
        if fd in self._callbacks:
            # registered again (a new callback, or the number of a descriptor closed without
            # being removed, which the kernel then dropped from the poll): anew, to be sure
            with contextlib.suppress(KeyError, ValueError, OSError):
                selector.unregister(fd)
        selector.register(fd)
        self._callbacks[fd] = callback
        self._warned.discard(fd)
        if self._timer is None:
            self._start()

    def remove_reader(self, fd: int) -> bool:
        """Stop watching ``fd``; returns whether it was watched.  The timer stops with the
        last descriptor."""
        if self._callbacks.pop(fd, None) is None:
            return False
        self._warned.discard(fd)
        if self._selector is not None:
            with contextlib.suppress(KeyError, ValueError, OSError):  # closed already
                self._selector.unregister(fd)
        if not self._callbacks:
            self._stop()
        return True

    def close(self) -> None:
        """Stop the timer and forget every descriptor (they are not closed).  Idempotent."""
        self._stop()
        self._callbacks.clear()
        self._warned.clear()
        selector, self._selector = self._selector, None
        if selector is not None:
            selector.close()

    # -- the timer ------------------------------------------------------------------------

    def _start(self) -> None:
        loop = self._given_loop or asyncio.get_running_loop()
        self._loop = loop
        self.now_period = self.period
        self._since = (loop.time(), self._cpu_time())
        self._due = on_grid(loop.time() + self.period, self.period)
        self._timer = loop.call_at(self._due, self._poll)

    def _stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _poll(self) -> None:
        """One poll: the ready descriptors' callbacks, then the next poll scheduled one
        period after this one was due (no sooner than now: a late poll is not made up; the
        period stretched or shortened by what this poll found, see the module), on the
        first multiple of the period from there (:attr:`grid`)."""
        self._timer = None
        selector = self._selector
        if selector is None or not self._callbacks:
            return
        self.polls += 1
        callbacks = self._callbacks
        try:
            ready = selector.ready(len(callbacks))
        except OSError as exc:  # not expected of epoll; keep polling rather than go deaf
            logger.warning("board poller: poll failed: %s", exc)
            ready = []
        for fd, _events in ready:
            callback = callbacks.get(fd)
            if callback is None:  # removed by an earlier callback of this poll
                continue
            try:
                callback()
            except Exception as exc:  # noqa: BLE001  # one board's fault stops no other
                self._report(fd, exc)
        after = self.after_poll
        if ready and after is not None:
            try:
                after()
            except Exception as exc:  # the poller goes on whatever it did
                logger.warning(
                    "board poller: after the poll: %s: %s", type(exc).__name__, exc, exc_info=exc
                )
        if self._callbacks and self._timer is None and self._selector is not None:
            loop = self._loop
            assert loop is not None
            now = loop.time()
            if self.longest > self.period:
                self._stretch(len(ready), now)
            self._due = on_grid(max(self._due + self.now_period, now), self.now_period)
            self._timer = loop.call_at(self._due, self._poll)

    def _stretch(self, ready: int, now: float) -> None:
        """The period after a poll that found ``ready`` descriptors ready, ending at the
        loop's time ``now``."""
        cpu = self._cpu_time()
        then, cpu_then = self._since
        self._since = (now, cpu)
        if now > then:
            used = (cpu - cpu_then) / (now - then)
            self.share += _SHARE_WEIGHT * (used - self.share)
        if ready > 2 * BATCH or self.share > HOT:
            self.now_period = max(self.now_period / 2, self.period)
        elif ready < BATCH and self.share < WARM:
            self.now_period = min(self.now_period * 2, self.longest)

    def _report(self, fd: int, exc: Exception) -> None:
        if fd in self._warned:
            logger.debug("board poller: callback of fd %d raised again: %r", fd, exc)
            return
        self._warned.add(fd)
        logger.warning(
            "board poller: the callback of fd %d raised %s: %s (further errors of this fd "
            "are logged at debug level)",
            fd,
            type(exc).__name__,
            exc,
            exc_info=exc,
        )

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"{len(self._callbacks)} fds"
        every = f"{self.period * 1000:g}"
        if self.longest > self.period:
            every += f"-{self.longest * 1000:g}"
        return f"<BoardPoller every {every} ms, {state}>"
