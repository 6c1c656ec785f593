"""In-process transport around :class:`dgt.emulator.board.VirtualBoard`: no OS involved.

Bytes written go straight into the virtual board; its answers come back on the next turn
of the event loop (like a line, never re-entrantly), and its own timed output (running
clock, scripted moves) is driven by an asyncio timer at the board's next deadline.  Tests
move pieces, press the lever or buttons through this object, and can pull the cable
(:meth:`unplug`) and put it back (:meth:`plug`).  The virtual board keeps its state while
unplugged, so pieces moved meanwhile show up after a reconnect.  A board that drops its
link (a clone crashing on a request, :class:`~dgt.emulator.board.Quirk`) is lost to the host
like a pulled cable; it is switched on again when the host reopens the link.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any

from dgt.errors import ConnectionFailed
from dgt.protocol import Piece
from dgt.transports.base import DataCallback, LostCallback, Transport

if TYPE_CHECKING:
    from dgt.emulator.board import VirtualBoard

logger = logging.getLogger(__name__)

MIN_POLL_DELAY = 0.001
"""Floor for the poll timer, so a virtual board whose deadline is already due cannot spin
the loop."""


class EmulatorTransport(Transport):
    """A link to a virtual board in this process.

    ``EmulatorTransport()`` builds a fresh :class:`VirtualBoard` (keyword arguments go to
    it); pass ``board=`` to use one you made.  Times given to the virtual board are
    ``time.monotonic()`` seconds.
    """

    def __init__(self, board: VirtualBoard | None = None, *, name: str = "emulator",
                 **board_kwargs: Any) -> None:  # fmt: skip
        if board is None:
            from dgt.emulator.board import VirtualBoard

            board = VirtualBoard(now=time.monotonic(), **board_kwargs)
        self.board = board
        self._name = name
        self._on_data: DataCallback | None = None
        self._on_lost: LostCallback | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._due = 0.0  # monotonic time the armed poll fires
        self._open = False
        self.unplugged = False
        self.written = bytearray()
        """Everything the host wrote, for tests."""

    @property
    def name(self) -> str:
        return self._name

    @property
    def is_open(self) -> bool:
        return self._open

    async def open(self, on_data: DataCallback, on_lost: LostCallback) -> None:
        if self.unplugged:
            raise ConnectionFailed(f"{self._name}: unplugged")
        if self._open:
            raise ConnectionFailed(f"{self._name} is already open")
        self._loop = asyncio.get_running_loop()
        self._on_data = on_data
        self._on_lost = on_lost
        self._open = True
        if self.board.crashed:  # a board that crashed restarts when the host comes back
            self.board.power_up(time.monotonic())
        self._poll()

    def write(self, data: bytes) -> None:
        if not self._open:
            raise ConnectionFailed(f"{self._name} is not open")
        self.written += data
        self._deliver(self.board.receive(bytes(data), time.monotonic()))
        if self.board.take_link_drop() and self._loop is not None:
            # after what the board sent before it crashed, and never re-entrantly
            self._loop.call_soon(self._drop)

    async def close(self) -> None:
        self._release()

    # -- the other end of the cable --

    def lift(self, square: int) -> None:
        """Lift the piece on ``square`` (python-chess number, board frame)."""
        self._deliver(self.board.lift(square, time.monotonic()))

    def place(self, square: int, piece: Piece) -> None:
        self._deliver(self.board.place(square, piece, time.monotonic()))

    def press_lever(self) -> None:
        self._deliver(self.board.press_lever(time.monotonic()))

    def press_button(self, button: int) -> None:
        self._deliver(self.board.press_button(button, time.monotonic()))

    def inject(self, data: bytes) -> None:
        """Put raw bytes on the line (garbage, or frames a test builds itself)."""
        self._deliver(data)

    def unplug(self) -> None:
        """Pull the cable: the host sees the link lost; the virtual board lives on."""
        self.unplugged = True
        if self._open:
            on_lost = self._on_lost
            self._release()
            if on_lost is not None:
                on_lost(f"{self._name}: unplugged")

    def plug(self) -> None:
        """Put the cable back: the next :meth:`open` succeeds."""
        self.unplugged = False

    # -- internals --

    def _drop(self) -> None:
        if not self._open:
            return
        on_lost = self._on_lost
        self._release()
        if on_lost is not None:
            on_lost(f"{self._name}: the board dropped the link")

    def _release(self) -> None:
        self._open = False
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _deliver(self, data: bytes) -> None:
        if data and self._open and self._loop is not None:
            self._loop.call_soon(self._hand_over, bytes(data))
        self._schedule()

    def _hand_over(self, data: bytes) -> None:
        if self._open and self._on_data is not None:
            self._on_data(data)

    def _schedule(self) -> None:
        if not self._open or self._loop is None:
            return
        deadline = self.board.next_deadline()
        if self._timer is not None:
            if deadline is not None and self._due <= deadline:
                return  # the armed poll comes first and schedules the next one itself
            self._timer.cancel()
            self._timer = None
        if deadline is not None:
            now = time.monotonic()
            delay = max(MIN_POLL_DELAY, deadline - now)
            self._due = now + delay
            self._timer = self._loop.call_later(delay, self._poll)

    def _poll(self) -> None:
        self._timer = None
        if not self._open:
            return
        self._deliver(self.board.poll(time.monotonic()))
