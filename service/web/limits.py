"""How many connections the web server holds, and what it does at the limit.

The service's descriptors are shared by the store (the database and its write-ahead log),
the boards (a serial port or socket each), the log files and the web server's
connections.  At start the open-files soft limit is raised to the hard limit; the web
server then keeps :data:`HEADROOM` descriptors (and a few a table) out of its clients'
reach.  When the connections reach that cap, a new one makes room by closing the
connections that were quiet longest (a keep-alive connection waiting for its next
request, a client that never finished its headers); live streams and requests being
answered are left alone.  Where nothing can be closed the newcomer gets a one-line 503
and is closed, so every descriptor the service needs for itself stays free.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any, cast

from aiohttp.web_protocol import RequestHandler

logger = logging.getLogger(__name__)

HEADROOM = 256
"""Descriptors the web server leaves for the rest of the service (store, boards, logs)."""

HEADROOM_PER_TABLE = 4
"""...and a few more for each table (its board's port, a reconnection in progress)."""

MAX_CONNECTIONS = 16_384
"""Connections held at most whatever the open-files limit (an idle one costs memory)."""

HEADER_TIMEOUT = 15.0
"""Seconds a connection may stay without a complete request (slow header lines, or an
idle keep-alive connection) before the server closes it."""

EVICT_BATCH = 16
"""Quiet connections closed at once when the cap is reached."""

REFUSAL = (
    b"HTTP/1.1 503 Service Unavailable\r\n"
    b"Content-Type: application/json; charset=utf-8\r\n"
    b"Retry-After: 5\r\n"
    b"Connection: close\r\n"
    b"Content-Length: 50\r\n\r\n"
    b'{"error":"too many connections; try again later"}\n'
)


def raise_open_files_limit() -> int | None:
    """Raise this process's open-files soft limit to its hard limit; returns the limit
    now in force (None where the system has no such limit)."""
    try:
        import resource
    except ImportError:  # Windows
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft != hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError) as exc:
            logger.warning("open files: cannot raise the limit %d to %d: %s", soft, hard, exc)
    return None if soft == resource.RLIM_INFINITY else soft


def connection_cap(open_files: int | None, tables: int) -> int:
    """Connections the web server holds at most under an open-files limit of
    ``open_files`` with ``tables`` tables (at least 16)."""
    if open_files is None:
        return MAX_CONNECTIONS
    spare = open_files - HEADROOM - HEADROOM_PER_TABLE * tables
    return max(16, min(MAX_CONNECTIONS, spare))


class _Connection(asyncio.Protocol):
    """One accepted connection: hands everything to aiohttp's protocol and keeps the
    times the guard sorts by."""

    def __init__(self, guard: ConnectionGuard, inner: RequestHandler) -> None:
        self.guard = guard
        self.inner = inner
        self.seen = time.monotonic()
        self.answering = 0
        """Requests being answered (counted by :meth:`ConnectionGuard.answering`)."""
        self.on_lost: Callable[[], None] | None = None
        """Set while a live stream runs on the connection: called if it is lost."""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not asyncio.Transport subclasses, only alike.
        self.transport = cast(asyncio.Transport, transport)
        self.guard.opened(self, transport)
        self.inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        self.seen = time.monotonic()
        self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        self.inner.eof_received()
        return None

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        self.guard.closed(self)
        self.inner.connection_lost(exc)
        if self.on_lost is not None:
            self.on_lost()

    def quiet_close(self) -> None:
        """Close now where no request is being answered, else once it is."""
        if self.answering:
            self.inner.close()
        else:
            self.inner.force_close()


class _Refusal(asyncio.Protocol):
    """A connection over the cap: one 503 line, then closed."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        stream = cast(asyncio.Transport, transport)
        stream.write(REFUSAL)
        stream.close()

    def data_received(self, data: bytes) -> None:
        pass


class ConnectionGuard:
    """The protocol factory the listening socket uses: aiohttp's protocol wrapped to be
    counted, up to ``cap`` connections."""

    def __init__(self, cap: int = MAX_CONNECTIONS) -> None:
        self.factory: Callable[[], RequestHandler] | None = None
        self.cap = cap
        self.live: dict[_Connection, None] = {}
        self._by_transport: dict[asyncio.BaseTransport, _Connection] = {}
        self.evicted = 0
        self.refused = 0
        self._warned_at = float("-inf")

    def serve(self, factory: Callable[[], RequestHandler], cap: int) -> None:
        """Make the connections with ``factory`` (aiohttp's server), ``cap`` at most."""
        self.factory = factory
        self.cap = cap

    def __call__(self) -> asyncio.Protocol:
        if self.factory is None:
            raise RuntimeError("the connection guard serves nothing yet")
        if len(self.live) >= self.cap and not self._make_room():
            self.refused += 1
            self._warn()
            return _Refusal()
        return _Connection(self, self.factory())

    def opened(self, connection: _Connection, transport: asyncio.BaseTransport) -> None:
        self.live[connection] = None
        self._by_transport[transport] = connection

    def closed(self, connection: _Connection) -> None:
        self.live.pop(connection, None)
        if connection.transport is not None:
            self._by_transport.pop(connection.transport, None)

    def answering(self, transport: Any, change: int) -> None:
        """A request on the connection of ``transport`` is being answered (+1) or was
        answered (-1)."""
        connection = self._by_transport.get(transport)
        if connection is not None:
            connection.answering += change

    def streaming(self, transport: Any, on_lost: Callable[[], None] | None) -> None:
        """A live stream runs on the connection of ``transport`` (``on_lost`` is called
        if the connection is lost), or ended (None).  A stream is never closed to make
        room."""
        connection = self._by_transport.get(transport)
        if connection is not None:
            connection.on_lost = on_lost

    def _make_room(self) -> bool:
        """Close the quietest connections that are not streams (those with no request
        being answered first); whether any was."""
        quiet = sorted(
            (c for c in self.live if c.on_lost is None), key=lambda c: (c.answering > 0, c.seen)
        )
        for connection in quiet[:EVICT_BATCH]:
            self.live.pop(connection, None)  # counted out now; its close follows
            connection.quiet_close()
            self.evicted += 1
        if quiet:
            self._warn()
        return bool(quiet)

    def _warn(self) -> None:
        now = time.monotonic()
        if now - self._warned_at >= 60.0:
            self._warned_at = now
            logger.warning(
                "web: %d connections open (the cap under the open-files limit): %d quiet "
                "ones closed, %d refused so far",
                len(self.live),
                self.evicted,
                self.refused,
            )
