"""``SyncBoard``: a blocking facade over the async :class:`dgt.Board` for scripts.

The board runs on an event loop in a background thread; each call here hands a coroutine to
that loop (``run_coroutine_threadsafe``) and waits for it with a time-out::

    with SyncBoard("/dev/ttyACM0") as board:
        for event in board:
            print(event)

After :meth:`SyncBoard.close` every call raises :class:`~dgt.errors.LinkClosed`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import queue
import threading
from collections.abc import Coroutine, Iterable, Iterator
from typing import Any, TypeVar

from dgt.board import Board, BoardInfo, BoardState
from dgt.errors import LinkClosed
from dgt.events import BoardEvent, Side
from dgt.protocol import ClockAck, Piece
from dgt.transports import Transport

logger = logging.getLogger(__name__)

COMMAND_TIMEOUT = 30.0
"""Seconds a blocking call waits for the board (clock commands wait for their acks, which
may take ``ACK_TIMEOUT * MAX_TRIES``)."""

CONNECT_GRACE = 30.0
"""Seconds added to the handshake time-out while waiting for the connection."""

T = TypeVar("T")
_CLOSED = object()


class SyncBoard:
    """A :class:`dgt.Board` driven from synchronous code.  Keyword arguments go to
    :class:`dgt.Board` (``read_memory=True`` to get the board's memory: off by default, as
    some clone boards drop the link on that request).  Connects in the constructor; raises
    the board's one-line :class:`~dgt.errors.ConnectionFailed` errors."""

    def __init__(
        self, port: str | Transport, *, timeout: float = COMMAND_TIMEOUT, **kwargs: Any
    ) -> None:
        self.timeout = timeout
        self._closed = False
        self._events: queue.Queue[object] = queue.Queue()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="dgt-sync-board", daemon=True
        )
        self._thread.start()
        connect_timeout = kwargs.get("handshake_timeout", 6.0) + CONNECT_GRACE
        try:
            self._board: Board = self._call(self._start(port, kwargs), connect_timeout)
        except BaseException:
            self._stop_loop()
            self._closed = True
            raise

    @classmethod
    def connect(cls, port: str | Transport, **kwargs: Any) -> SyncBoard:
        return cls(port, **kwargs)

    async def _start(self, port: str | Transport, kwargs: dict[str, Any]) -> Board:
        board = await Board.connect(port, **kwargs)
        self._pump = asyncio.get_running_loop().create_task(self._pump_events(board))
        return board

    async def _pump_events(self, board: Board) -> None:
        try:
            async for event in board.events():
                self._events.put(event)
        finally:
            self._events.put(_CLOSED)

    # --- plumbing ---------------------------------------------------------------------

    def _call(self, coro: Coroutine[Any, Any, T], timeout: float | None) -> T:
        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError(f"no answer from the board within {timeout:g} s") from None

    def _run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        if self._closed:
            coro.close()
            raise LinkClosed("the board was closed")
        return self._call(coro, self.timeout if timeout is None else timeout)

    def _stop_loop(self) -> None:
        if self._loop.is_closed():
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5.0)
        if not self._thread.is_alive():
            self._loop.close()

    # --- life cycle -------------------------------------------------------------------

    def close(self) -> None:
        """Close the board and stop the background loop.  Idempotent."""
        if self._closed:
            return
        try:
            self._call(self._board.close(), self.timeout)
            self._call(self._finish_pump(), self.timeout)
        finally:
            self._closed = True
            self._stop_loop()

    async def _finish_pump(self) -> None:
        await self._pump

    def __enter__(self) -> SyncBoard:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def closed(self) -> bool:
        return self._closed

    # --- events -----------------------------------------------------------------------

    def next_event(self, timeout: float | None = None) -> BoardEvent | None:
        """The next event, blocking up to ``timeout`` seconds (forever if None); None on a
        time-out.  Raises :class:`~dgt.errors.LinkClosed` once the board is closed and every
        event was read."""
        try:
            item = self._events.get(timeout=timeout)
        except queue.Empty:
            return None
        if item is _CLOSED:
            self._events.put(_CLOSED)
            raise LinkClosed("the board was closed")
        return item  # type: ignore[return-value]

    def __iter__(self) -> Iterator[BoardEvent]:
        """Events as they come, until the board is closed."""
        while True:
            try:
                event = self.next_event()
            except LinkClosed:
                return
            if event is not None:
                yield event

    # --- state ------------------------------------------------------------------------

    @property
    def board(self) -> Board:
        """The async board (only touch it from the background loop)."""
        return self._board

    @property
    def state(self) -> BoardState:
        return self._board.state

    @property
    def info(self) -> BoardInfo:
        return self._board.info

    @property
    def squares(self) -> tuple[Piece, ...]:
        return self._board.squares

    @property
    def clock_times(self) -> tuple[float | None, float | None]:
        """(left, right) seconds as last reported."""
        return self._board.clock.left, self._board.clock.right

    @property
    def clock_connected(self) -> bool | None:
        return self._board.clock.connected

    @property
    def clock_version(self) -> tuple[int, int] | None:
        return self._board.clock.version

    # --- commands ---------------------------------------------------------------------

    def resync(self) -> None:
        """Compare the mirror with a fresh dump now (differences come as events)."""
        self._run(self._board.resync())

    def set_leds(self, squares: Iterable[int], **kwargs: int) -> None:
        self._run(self._board.set_leds(list(squares), **kwargs))

    def clear_leds(self) -> None:
        self._run(self._board.clear_leds())

    def set_and_run(
        self, left: float, right: float, *, run: Side | None = None, toggle_on_lever: bool = True
    ) -> ClockAck:
        return self._run(
            self._board.clock.set_and_run(left, right, run=run, toggle_on_lever=toggle_on_lever)
        )

    def show_text(self, text: str, *, beep: int = 0, rev2: bool = False) -> ClockAck:
        return self._run(self._board.clock.show_text(text, beep=beep, rev2=rev2))

    def end_text(self) -> ClockAck:
        return self._run(self._board.clock.end_text())

    def beep(self, seconds: float = 0.5) -> ClockAck:
        return self._run(self._board.clock.beep(seconds))

    def send_clock(self, data: bytes) -> ClockAck:
        return self._run(self._board.clock.send(data))

    def __repr__(self) -> str:
        return f"<SyncBoard {self._board.name if hasattr(self, '_board') else '?'}>"
