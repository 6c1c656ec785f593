"""The eboards API over WebSocket (aiohttp), and the link from a board to its feed.

:class:`BoardLink` runs one opened :class:`dgt.Board`: its events go to an
:class:`~service.play.eboard.Eboard` as they happen, a ticker lets the settle delay pass,
and on a board with LEDs the squares the board must show after a setup are lit.
:class:`PlayServer` serves ``ws://127.0.0.1:1982/api/v1.0`` (by default) to the pages of
the sites, refusing a WebSocket whose ``Origin`` is not allowed (a page of any other site
must not read or set up the board), and sends each connection the feeds it subscribed to
as they change.  It serves any :class:`FeedLink`: a :class:`BoardLink` (``dgt-service
play``) or a hall table's (:mod:`service.play.hall_feed`, ``dgt-service run --play``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Protocol
from urllib.parse import urlsplit

from aiohttp import WSMsgType, web

from dgt.board import BoardInfo, LedKind
from dgt.errors import DgtError
from dgt.events import BoardEvent, BoardFamily
from dgt.tasks import cancel_and_wait
from service.play.api import Api, Message, Session
from service.play.eboard import Eboard

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_ORIGINS",
    "DEFAULT_PORT",
    "PATH",
    "PLAY_SETTLE",
    "BoardLink",
    "FeedLink",
    "OriginPolicy",
    "PlayServer",
    "PlayServerError",
]

log = logging.getLogger(__name__)

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 1982
PATH = "/api/v1.0"
DEFAULT_ORIGINS = ("https://lichess.org", "https://www.chess.com", "localhost")
"""Origins whose pages may open the socket: the two sites, and any page served from this
machine (``localhost`` stands for ``http(s)://localhost``, ``127.0.0.1`` and ``[::1]`` on any
port)."""
PLAY_SETTLE = 1.0
"""Seconds the board must stand still before a move is complete when no clock completes it.
Shorter than the recogniser's default (2 s, for a hall's boards with clocks) so that a move
reaches the site soon; longer than the pause between the two pieces of a castling made rook
first in the human-handling model (up to 0.8 s; at 0.5 s the rook move went out first in
5 of 1,255 replayed moves, bench/play_latency.py).  A clock press completes a move at once."""
TICK = 0.1
"""Seconds between ticks of the recognisers (the settle delay passes in these steps)."""
MAX_MESSAGE = 64 * 1024
"""Bytes a client's message may have (the sites' calls are a few hundred)."""
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


class PlayServerError(OSError):
    """The server cannot start (its port is taken)."""


class OriginPolicy:
    """Which ``Origin`` headers may open the socket.  An entry is an origin
    (``https://lichess.org``) or ``localhost`` (any page of this machine).  A request
    without an ``Origin`` (not a browser: a script on this machine) is allowed."""

    def __init__(self, allowed: Iterable[str] = DEFAULT_ORIGINS) -> None:
        self.exact = frozenset(a.rstrip("/").lower() for a in allowed if a != "localhost")
        self.loopback = "localhost" in allowed

    def allows(self, origin: str | None) -> bool:
        if origin is None:
            return True
        origin = origin.rstrip("/").lower()
        if origin in self.exact:
            return True
        if self.loopback:
            parts = urlsplit(origin)
            return parts.scheme in ("http", "https") and parts.hostname in LOOPBACK_HOSTS
        return False


class PlayBoard(Protocol):
    """What a board link needs of a board (a :class:`dgt.Board` is one)."""

    @property
    def name(self) -> str: ...

    @property
    def info(self) -> BoardInfo: ...

    @property
    def family(self) -> BoardFamily: ...

    def consume(self, callback: Callable[[BoardEvent], None]) -> None: ...

    async def set_leds(
        self, squares: Iterable[int], *, speed: int = 3, repeat: int = 0, intensity: int = 1
    ) -> None: ...

    async def clear_leds(self) -> None: ...


class FeedLink(Protocol):
    """What the server needs of a board's link: the board's feed state (named by
    ``eboard.serialnr``), started and stopped with the server; the server sets
    ``on_change``, to be called after anything that may have changed the feed."""

    eboard: Eboard
    on_change: Callable[[], None]

    def start(self) -> None: ...

    async def stop(self) -> None: ...

    def setup_done(self) -> None:
        """A client set up a board (the LEDs may have to show it)."""
        ...


class _Boards(Mapping[str, Eboard]):
    """The boards by the name each has now (a hall's board takes its serial number once
    it is opened); a name a board had before still finds it, so a client subscribed
    under that name keeps its feed."""

    def __init__(self, links: Sequence[FeedLink]) -> None:
        self._links = links
        self._former: dict[str, Eboard] = {}

    def _current(self) -> dict[str, Eboard]:
        current = {link.eboard.serialnr: link.eboard for link in self._links}
        self._former.update(current)
        return current

    def __getitem__(self, name: str) -> Eboard:
        current = self._current()
        return current[name] if name in current else self._former[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._current())

    def __len__(self) -> int:
        return len(self._current())


class BoardLink:
    """One opened board and its feed state.  ``on_change`` is called after every event or
    tick that may have changed the feed."""

    def __init__(self, board: PlayBoard, *, settle: float, serialnr: str | None = None) -> None:
        self.board = board
        info = board.info
        serial = serialnr or info.serial or info.long_serial or board.name
        presence = board.family is BoardFamily.PRESENCE_ONLY
        self.eboard = Eboard(serial, board.name, presence_only=presence, settle=settle)
        self.on_change: Callable[[], None] = lambda: None
        self._leds_shown: frozenset[int] | None = None
        self._led_wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    @property
    def serialnr(self) -> str:
        return self.eboard.serialnr

    def start(self) -> None:
        self.board.consume(self._event)
        self._tasks.append(asyncio.create_task(self._ticker(), name=f"play-tick {self.serialnr}"))
        if self.board.info.leds is not None:
            self._tasks.append(asyncio.create_task(self._leds(), name=f"play-leds {self.serialnr}"))

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks.clear()

    def setup_done(self) -> None:
        """A setup was made: the LEDs may have to show something."""
        self._led_wake.set()

    def _event(self, event: BoardEvent) -> None:
        self.eboard.feed(event)
        self._led_wake.set()
        self.on_change()

    async def _ticker(self) -> None:
        while True:
            await asyncio.sleep(TICK)
            if self.eboard.tick(time.monotonic()):
                self._led_wake.set()
            self.on_change()

    async def _leds(self) -> None:
        """Keep the LEDs on :meth:`Eboard.led_squares` (sent only when it changes)."""
        while True:
            await self._led_wake.wait()
            self._led_wake.clear()
            squares = self.eboard.led_squares()
            if self.board.info.leds is LedKind.REV2:
                squares = frozenset(sorted(squares)[:2])  # one pair per frame: the first two
            if squares == self._leds_shown:
                continue
            try:
                if squares:
                    await self.board.set_leds(sorted(squares), speed=6, repeat=0, intensity=1)
                else:
                    await self.board.clear_leds()
                self._leds_shown = squares
            except DgtError as exc:
                log.warning("%s: LEDs not set: %s", self.board.name, exc)


class PlayServer:
    """The WebSocket server of the eboards API over ``links``."""

    def __init__(
        self,
        links: Sequence[FeedLink],
        *,
        host: str = DEFAULT_HOST,
        port: int = DEFAULT_PORT,
        origins: OriginPolicy | None = None,
    ) -> None:
        self.links = {link.eboard.serialnr: link for link in links}
        """The links by the name their boards had when the server was made."""
        self.api = Api(_Boards(list(links)))
        self.host = host
        self.port = port
        self.origins = origins or OriginPolicy()
        self._clients: list[_Client] = []
        self._runner: web.AppRunner | None = None
        self.refused = 0
        """WebSocket handshakes refused for their origin."""

    async def start(self) -> str:
        """Start serving; returns the address (``ws://127.0.0.1:1982/api/v1.0``)."""
        app = web.Application()
        app.router.add_get(PATH, self._handle)
        self._runner = web.AppRunner(app, handle_signals=False, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        try:
            await site.start()
        except OSError as exc:
            await self._runner.cleanup()
            self._runner = None
            raise PlayServerError(
                f"cannot listen on {self.host}:{self.port}: {exc.strerror or exc} (is DGT "
                "LiveChess or another 'dgt-service play' running?)"
            ) from None
        if self.port == 0:
            self.port = int(self._runner.addresses[0][1])
        for link in self.links.values():
            link.on_change = self._changed
            link.start()
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"ws://{host}:{self.port}{PATH}"

    async def close(self) -> None:
        for link in self.links.values():
            await link.stop()
        for client in list(self._clients):
            await client.ws.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        origin = request.headers.get("Origin")
        if not self.origins.allows(origin):
            self.refused += 1
            log.warning("WebSocket from origin %s refused (not in the allowed list)", origin)
            return web.Response(status=403, text=f"origin {origin} not allowed\n")
        ws = web.WebSocketResponse(heartbeat=30.0, max_msg_size=MAX_MESSAGE)
        await ws.prepare(request)
        client = _Client(ws, Session())
        self._clients.append(client)
        writer = asyncio.create_task(self._write(client), name="play-feed-writer")
        log.info("client connected (origin %s)", origin or "none")
        try:
            async for msg in ws:
                if msg.type in (WSMsgType.TEXT, WSMsgType.BINARY):
                    async with client.lock:
                        replies = self.api.handle(client.session, msg.data, time.monotonic())
                        await _send(ws, replies)
                    for link in self.links.values():
                        link.setup_done()
                    self._changed()  # a setup changes the feeds of the other clients too
        finally:
            self._clients.remove(client)
            await cancel_and_wait(writer)
            log.info("client disconnected")
        return ws

    def _changed(self) -> None:
        """Some feed may have changed: wake every client's writer."""
        for client in self._clients:
            client.wake.set()

    async def _write(self, client: _Client) -> None:
        """Send a client the feeds it subscribed to whenever they change."""
        while True:
            await client.wake.wait()
            client.wake.clear()
            async with client.lock:
                await _send(client.ws, client.session.updates(self.api.boards))


class _Client:
    """One connection: its socket, its session, and a lock so that an answer and its feed
    go out together, never with a later feed between them."""

    def __init__(self, ws: web.WebSocketResponse, session: Session) -> None:
        self.ws = ws
        self.session = session
        self.lock = asyncio.Lock()
        self.wake = asyncio.Event()


async def _send(ws: web.WebSocketResponse, messages: list[Message]) -> None:
    for message in messages:
        if ws.closed:
            return
        try:
            await ws.send_json(message)
        except ConnectionError as exc:
            log.debug("not sent: %s", exc)
            return
