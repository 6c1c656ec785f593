"""``BoardFeed``: what :class:`dgt.Board` and :class:`dgt.BusBoard` both give their user.

A mirror of the board's squares, and the board's events: queued in order for
:meth:`BoardFeed.events` and :meth:`BoardFeed.next_event` (none is dropped) and passed to
listener callbacks as they happen.  The subclass runs the link: it names the board, opens
and closes it, and feeds what the board sends through :meth:`BoardFeed._emit`,
:meth:`BoardFeed._load_mirror` (the first dump after a connect) and
:meth:`BoardFeed._correct_mirror` (a later dump).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Self

from dgt.errors import LinkClosed
from dgt.events import BoardEvent, BoardFamily, LinkRestored
from dgt.mirror import Mirror
from dgt.protocol import BoardDump, Piece

if TYPE_CHECKING:
    from dgt.board import BoardInfo

__all__ = ["BoardFeed"]

logger = logging.getLogger(__name__)


class BoardFeed(ABC):
    """The mirror and the event stream of one board; the link is the subclass's."""

    info: BoardInfo

    def __init__(self) -> None:
        self.mirror = Mirror()
        self.resyncs = 0
        """Dumps compared with the mirror after the board was taken on (settle, doubt or
        on demand), for diagnostics."""
        self.corrections = 0
        """Squares such a dump found different from the mirror (updates lost or garbled)."""
        self._queue: asyncio.Queue[BoardEvent | None] | None = None
        """Events not read yet (made when first needed: a board whose events go to a
        consumer never needs one)."""
        self._closed = False
        self._waiting = 0
        """Readers waiting on :attr:`_queue` now."""
        self._close_waiter: asyncio.Future[None] | None = None
        self._listeners: tuple[Callable[[BoardEvent], None], ...] = ()
        """Replaced, never changed in place: :meth:`_emit` iterates the one it read, and a
        board without listeners (a hall's) reads the shared empty tuple, no object of its own
        to bring into the cache for each event."""
        self._consumer: Callable[[BoardEvent], None] | None = None

    @property
    @abstractmethod
    def name(self) -> str: ...

    @abstractmethod
    async def open(self) -> None: ...

    @abstractmethod
    async def close(self) -> None: ...

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    @property
    def family(self) -> BoardFamily:
        return self.info.family

    @property
    def squares(self) -> tuple[Piece, ...]:
        """The mirror's contents by square (0 = a1), board frame."""
        return self.mirror.squares

    # --- reading events -----------------------------------------------------------------

    async def events(self) -> AsyncIterator[BoardEvent]:
        """Every event, in order, until the board is closed."""
        while True:
            queue = self._queue
            if queue is None:
                if self._consumer is not None:  # every event goes to it: wait for the close
                    await self._wait_closed()
                    return
                queue = self._events_queue()
            self._waiting += 1
            try:
                event = await queue.get()
            finally:
                self._waiting -= 1
            if event is None:
                queue.put_nowait(None)  # let other readers end too
                return
            yield event

    def _events_queue(self) -> asyncio.Queue[BoardEvent | None]:
        queue = self._queue
        if queue is None:
            queue = self._queue = asyncio.Queue()
            if self._closed:
                queue.put_nowait(None)
        return queue

    async def _wait_closed(self) -> None:
        if self._closed:
            return
        waiter = self._close_waiter
        if waiter is None or waiter.done():
            waiter = self._close_waiter = asyncio.get_running_loop().create_future()
        await asyncio.shield(waiter)

    async def next_event(self, timeout: float | None = None) -> BoardEvent:  # noqa: ASYNC109
        """The next event; ``TimeoutError`` after ``timeout`` seconds, ``LinkClosed`` once
        the board is closed and every event was read."""
        queue = self._events_queue()
        self._waiting += 1
        try:
            event = await asyncio.wait_for(queue.get(), timeout)
        finally:
            self._waiting -= 1
        if event is None:
            queue.put_nowait(None)
            raise LinkClosed(f"{self.name}: the board was closed")
        return event

    def pending_events(self) -> int:
        """Events queued and not read yet."""
        return 0 if self._queue is None else self._queue.qsize()

    def add_listener(self, callback: Callable[[BoardEvent], None]) -> None:
        """Call ``callback(event)`` for each event as it happens, on the event loop (in
        addition to the :meth:`events` queue)."""
        self._listeners = (*self._listeners, callback)

    def remove_listener(self, callback: Callable[[BoardEvent], None]) -> None:
        listeners = list(self._listeners)
        with contextlib.suppress(ValueError):
            listeners.remove(callback)
            self._listeners = tuple(listeners)

    def consume(self, callback: Callable[[BoardEvent], None]) -> None:
        """Hand every event to ``callback`` as it happens instead of queueing it (those
        already queued first, in order); :meth:`events` then yields nothing and only ends
        when the board is closed.  For a reader that handles each event at once, as the
        hall's tables do: no task has to wake up for each event.  An exception in
        ``callback`` is logged and the next event still comes."""
        self._consumer = callback
        queue = self._queue
        while queue is not None and not queue.empty():
            event = queue.get_nowait()
            if event is None:
                queue.put_nowait(None)  # closed already: events() ends at once
                return
            self._consume(callback, event)
        if queue is not None and not self._waiting and queue.empty():
            self._queue = None  # nothing is queued from now on

    def _consume(self, callback: Callable[[BoardEvent], None], event: BoardEvent) -> None:
        try:
            callback(event)
        except Exception:
            logger.exception("%s: event consumer failed on %r", self.name, event)

    # --- fed by the subclass ------------------------------------------------------------

    def _emit(self, event: BoardEvent) -> None:
        consumer = self._consumer
        if consumer is not None:
            try:  # self._consume(consumer, event), without the call: one an event
                consumer(event)
            except Exception:
                logger.exception("%s: event consumer failed on %r", self.name, event)
        else:
            queue = self._queue
            if queue is None:
                queue = self._events_queue()
            queue.put_nowait(event)
        listeners = self._listeners
        if not listeners:
            return
        for listener in listeners:  # one a listener adds or removes counts from the next event
            try:
                listener(event)
            except Exception:
                logger.exception("%s: event listener failed", self.name)

    def _end_events(self) -> None:
        """The board was closed: :meth:`events` ends once every event was read."""
        self._closed = True
        waiter = self._close_waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
        if self._queue is not None:
            self._queue.put_nowait(None)

    def _load_mirror(
        self, dump: BoardDump, now: float, *, restored: bool, lost_at: float | None
    ) -> float | None:
        """Take the first dump after a connect as the mirror and announce it: a
        ``BoardSnapshot``, and when the link was ``restored`` a ``LinkRestored`` with the
        squares that changed since it was lost at ``lost_at`` (None: unknown, no downtime).
        Returns the downtime in seconds when restored, else None."""
        before = self.mirror.copy()
        self.mirror.load(dump.pieces(self.mirror.presence_only), now)
        if not restored:
            self._emit(self.mirror.snapshot(now, "connect"))
            return None
        downtime = now - lost_at if lost_at is not None else 0.0
        self._emit(self.mirror.snapshot(now, "reconnect"))
        self._emit(LinkRestored(now, self.mirror.diff(before), downtime))
        return downtime

    def _correct_mirror(self, dump: BoardDump, now: float) -> None:
        """Compare a later dump with the mirror: each square that differs is corrected and
        reported as ``SquareChanged``."""
        self.resyncs += 1
        changes = self.mirror.apply_dump(dump, now)
        if not changes:
            return
        self.corrections += len(changes)
        logger.info(
            "%s: re-dump corrected %d square(s): %s",
            self.name, len(changes), ", ".join(str(c.square) for c in changes),
        )  # fmt: skip
        for event in changes:
            self._emit(event)
