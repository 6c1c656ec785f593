"""``dgt.BusMaster``: many DGT boards chained on one serial line (bus mode).

Tournament halls daisy-chain their boards on one line.  Every board hears every command;
only the board whose address a command carries answers it (docs/protocol.md §2.1, H14).  The
address is the board's serial number read as a 14-bit integer.  The host is the master of
the line: it asks each board in turn and never has more than one request outstanding, so
answers never collide.

::

    async with BusMaster("/dev/ttyUSB0", [10001, 10002]) as bus:
        board = bus.board(10002)
        async for event in board.events():
            ...

What it does:

* one transport (the same :func:`~dgt.transports.open_transport` specs as
  :class:`dgt.Board`), read through :class:`~dgt.protocol.BusFrameParser`: frames with a bad
  checksum and bytes that are no frame are dropped with a debug log;
* addresses given, or found by broadcast pings (:meth:`BusMaster.discover`; the replies
  are spread over about 1.1 s, and boards already found are told to ignore the next ping,
  so a second round hears the ones whose replies collided);
* a board is taken on with a version request, a drain of its pending changes and a full
  dump (the first :class:`~dgt.events.BoardSnapshot`); then every cycle asks each board for
  its changes (``SEND_CHANGES``: the records its memory took since the last request), asks
  its clock about once a second and at once after a lever press shows in its changes, and
  re-dumps it after any doubt (a reply that did not come or came garbled);
* a reply that does not come within :data:`REPLY_TIMEOUT` (plus the time its bytes take on
  a 9600-baud line) leaves that board for this cycle; its changes are asked again with
  ``REPEAT_CHANGES``, so none is lost.  After :data:`MAX_MISSES` misses in a row the board
  gets :class:`~dgt.events.LinkLost` and is tried again with capped back-off, without
  holding up the others;
* a lost line (cable pulled, device gone) gives every board :class:`~dgt.events.LinkLost`;
  the line is reopened with capped back-off and every board is taken on again, ending with
  ``BoardSnapshot(reason="reconnect")`` and :class:`~dgt.events.LinkRestored`.

:meth:`BusMaster.board` gives one :class:`BusBoard` per address with the interface a table
uses from :class:`dgt.Board` (``open``, ``events``, ``close``, ``info``, ``mirror``,
``ready``, ``clock``).  Bus mode has no clock command and no LED command: the clock's times
are read, but ``board.clock.set_and_run(...)`` and friends raise
:class:`~dgt.errors.NotSupported` (logged once per board), as do the LED methods.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from dgt.backoff import reopen_with_backoff
from dgt.board import RECONNECT_MAX, RECONNECT_MIN, BoardInfo, BoardState
from dgt.board_feed import BoardFeed
from dgt.clock import Clock
from dgt.errors import ConnectionFailed, LinkClosed, NotSupported
from dgt.events import BoardEvent, LinkLost
from dgt.protocol import (
    BoardDump,
    BusCommand,
    BusFrameParser,
    BusMessage,
    BusMessageId,
    ClockAck,
    ClockTimes,
    EEClockTime,
    EEPieceChange,
    FieldUpdate,
    encode_bus_command,
)
from dgt.protocol.bus import BUS_BROADCAST, BUS_HEADER_SIZE, MAX_BUS_SIZE
from dgt.tasks import cancel_and_wait, cancelling
from dgt.transports import Transport, open_transport

__all__ = [
    "CLOCK_INTERVAL",
    "CYCLE_MIN",
    "MAX_MISSES",
    "REPLY_TIMEOUT",
    "BusAddressNotAnswering",
    "BusBoard",
    "BusMaster",
    "NoBusBoards",
]

logger = logging.getLogger(__name__)

REPLY_TIMEOUT = 0.08
"""Seconds a board has to start its reply (once its header came, the time its bytes take
on the line is added): boards answer within milliseconds, up to about
20 ms while writing their memory; the header suggests about 80 ms (docs/protocol.md §2.1)."""

BYTE_TIME = 10 / 9600
"""Seconds one byte takes on the line (9600 baud, 8N1): added to the time-out per byte of
the expected reply."""

MAX_MISSES = 3
"""Requests in a row a board may leave unanswered before it counts as lost."""

CYCLE_MIN = 0.1
"""Shortest time between the starts of two poll cycles: a board scans its squares every
200-250 ms, so asking more often finds nothing new (a cycle of many boards on a real line
takes longer than this anyway)."""

CLOCK_INTERVAL = 1.0
"""Seconds between clock requests to one board (the displays change once a second); a
lever press seen in a board's changes asks its clock at once."""

DISCOVERY_WAIT = 1.3
"""Seconds to collect replies to one broadcast ping (boards spread them over ~1.1 s)."""

DISCOVERY_ROUNDS = 4
"""Broadcast pings at most while looking for boards; another round is made only while the
previous one found a new board or heard garbled frames (colliding replies)."""

NOT_A_BUS_TIMEOUT = 6.0
"""Default seconds within which at least one board (or the board asked for) must answer."""

RESYNC_TIMEOUT = 2.0
"""Default seconds :meth:`BusBoard.resync` waits for the fresh dump."""

_REPLY_SIZES: dict[int, int] = {
    BusMessageId.BRD_DUMP: 70,
    BusMessageId.BWTIME: 13,
    BusMessageId.VERSION: 8,
    BusMessageId.PING: 6,
    BusMessageId.UPDATE: MAX_BUS_SIZE,
}


class NoBusBoards(ConnectionFailed):
    """No board answered on the line at all."""

    def __init__(self, port: str, seconds: float) -> None:
        super().__init__(
            f"{port}: no DGT board answered on the bus within {seconds:g} s: is this the "
            "right port, and are the boards chained and switched on?"
        )
        self.port = port


class BusAddressNotAnswering(ConnectionFailed):
    """The line works but no board answers at this address."""

    def __init__(self, port: str, address: int, seconds: float) -> None:
        super().__init__(
            f"{port}: no board answered at bus address {address} within {seconds:g} s: check "
            "the address (the board's serial number, up to 16383) and the board's cable"
        )
        self.port = port
        self.address = address


class _LineDown(Exception):
    """Raised inside the poller when the line went away under a request."""


class _Phase(Enum):
    NEW = "new"  # never taken on since the line opened
    READY = "ready"
    LOST = "lost"  # was ready, stopped answering (or the line went)


@dataclass(slots=True)
class _Pending:
    """The one request on the line, and how far its reply has come."""

    address: int
    reply: int
    future: asyncio.Future[tuple[BusMessage, float]]
    header: re.Pattern[bytes]
    seen: bytearray = field(default_factory=bytearray)
    started: float | None = None  # when the reply's header arrived
    size: int = 0

    def look(self, data: bytes, now: float) -> None:
        """Note when the header of the awaited reply shows up (its length is known then)."""
        if self.started is not None:
            return
        self.seen += data
        match = self.header.search(self.seen)
        if match is None:
            del self.seen[: max(0, len(self.seen) - (BUS_HEADER_SIZE - 1))]
            return
        self.started = now
        self.size = (match[0][1] << 7) | match[0][2]


class BusBoard(BoardFeed):
    """One board on a bus line: the events and mirror of a :class:`dgt.Board`.

    Made by :meth:`BusMaster.board`.  :meth:`open` starts the line if needed and waits until
    this board was taken on (its first :class:`~dgt.events.BoardSnapshot` is queued);
    :meth:`close` ends :meth:`events` and releases the line once no board uses it.
    """

    clock_commands = False
    """Whether :attr:`clock` can send commands (never on a bus: bus mode has none)."""

    def __init__(self, master: BusMaster, address: int) -> None:
        super().__init__()
        self.master = master
        self.address = address
        self.info = BoardInfo(extra={"bus_address": address})
        self.clock = Clock(self._clock_submit)
        self.handshake_timeout = master.handshake_timeout
        self.misses = 0
        """Requests in a row this board left unanswered."""
        self._phase = _Phase.NEW
        self._closed = False
        self._attached = False
        self._ready = asyncio.Event()
        self._dumped = asyncio.Event()
        self._clock_warned = False
        # poller state
        self.tried = False
        self.repeat = False
        self.verify = False
        self.last_batch: bytes | None = None
        self.last_clock: bytes | None = None
        self.clock_due = 0.0
        self.retry_at = 0.0
        self.retry_delay = master.reconnect_min
        self.lost_at: float | None = None

    # --- the interface of dgt.Board -------------------------------------------------------

    @property
    def name(self) -> str:
        return f"{self.master.name}#{self.address}"

    @property
    def ready(self) -> bool:
        return self._phase is _Phase.READY and not self._closed and self.master.line_up

    @property
    def state(self) -> BoardState:
        if self._closed:
            return BoardState.CLOSED
        if self.ready:
            return BoardState.READY
        if self._phase is _Phase.NEW and self.master.running:
            return BoardState.HANDSHAKING
        return BoardState.DISCONNECTED

    async def open(self) -> None:
        """Start the line if it is not running (one-line ``ConnectionFailed`` errors for a
        wrong port, as :meth:`dgt.Board.open`) and wait until this board was taken on;
        :class:`BusAddressNotAnswering` after ``handshake_timeout`` seconds.  May be called
        again after a failure."""
        if self._closed:
            raise LinkClosed(f"{self.name}: the board was closed")
        if self._attached:
            raise ConnectionFailed(f"{self.name} is already open")
        self._attached = True
        try:
            await self.master._attach(self)
            await asyncio.wait_for(self._ready.wait(), self.handshake_timeout)
        except TimeoutError:
            await self._detach()
            raise BusAddressNotAnswering(
                self.master.name, self.address, self.handshake_timeout
            ) from None
        except BaseException:
            await self._detach()
            raise

    async def _detach(self) -> None:
        self._attached = False
        await self.master._detach(self)

    async def close(self) -> None:
        """End :meth:`events`; the line is closed once no board of it is open.  Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._end_events()
        if self._attached:
            await self._detach()

    async def resync(self, timeout: float = RESYNC_TIMEOUT) -> None:  # noqa: ASYNC109
        """Have the board dumped on its next turn and wait until the dump was compared with
        the mirror (differences come as ``SquareChanged``)."""
        self._require_ready()
        self._dumped.clear()
        self.verify = True
        self.master._wake.set()
        await asyncio.wait_for(self._dumped.wait(), timeout)

    def write(self, data: bytes) -> None:
        raise NotSupported(
            f"{self.name}: raw bytes cannot be sent to one board of a bus line (a single-board "
            "command would take every board on the line out of bus mode)"
        )

    async def set_leds(self, squares: Iterable[int], **_: int) -> None:
        raise NotSupported(f"{self.name} has no LEDs (boards on a bus line are classic boards)")

    async def clear_leds(self) -> None:
        raise NotSupported(f"{self.name} has no LEDs (boards on a bus line are classic boards)")

    async def battery(self, timeout: float = 0.0) -> Any:  # noqa: ASYNC109
        raise NotSupported(f"{self.name}: bus mode has no battery request")

    def __repr__(self) -> str:
        return f"<BusBoard {self.name} {self.state.value}>"

    # --- fed by the master ------------------------------------------------------------

    def _require_ready(self) -> None:
        if self._closed:
            raise LinkClosed(f"{self.name}: the board was closed")
        if not self.ready:
            raise ConnectionFailed(f"{self.name}: not connected ({self.state.value})")

    async def _clock_submit(self, data: bytes) -> ClockAck:
        if self._closed:
            raise LinkClosed(f"{self.name}: the board was closed")
        if not self._clock_warned:
            self._clock_warned = True
            logger.warning(
                "%s: clock commands are not sent on a bus line (bus mode has none); the "
                "clock's times are still read",
                self.name,
            )
        raise NotSupported(
            f"{self.name}: a clock on a bus line cannot take commands (bus mode has none)"
        )

    def _emit(self, event: BoardEvent) -> None:
        if not self._closed:  # (the master may still poll a board closed meanwhile)
            super()._emit(event)

    def _taken_on(self, dump: BoardDump, now: float) -> None:
        """The first dump after the board was (re)found."""
        self.misses = 0
        self.repeat = False
        self.verify = False
        self.last_batch = None
        self.last_clock = None
        self.clock_due = 0.0
        self.retry_delay = self.master.reconnect_min
        lost_at = self.lost_at
        was_lost = self._phase is _Phase.LOST
        self._phase = _Phase.READY
        self.lost_at = None
        downtime = self._load_mirror(dump, now, restored=was_lost, lost_at=lost_at)
        if downtime is not None:
            logger.info("%s: back after %.1f s", self.name, downtime)
        else:
            logger.info("%s ready: bus board, version %s", self.name, self.info.version)
        self._ready.set()

    def _lost(self, now: float, reason: str) -> None:
        if self._phase is not _Phase.READY:
            return
        self._phase = _Phase.LOST
        self.lost_at = now
        self._ready.clear()
        self._emit(LinkLost(now, reason))

    def _forget(self) -> None:
        """The line was stopped: the board is taken on afresh when it starts again."""
        if self._phase is _Phase.READY:
            self._phase = _Phase.NEW
        self._ready.clear()
        self.tried = False

    def _apply_changes(self, data: bytes, now: float) -> None:
        for record in _records(data):
            if isinstance(record, EEPieceChange):
                event = self.mirror.apply_update(FieldUpdate(record.index, record.code), now)
                if event is not None:
                    self._emit(event)
            elif isinstance(record, EEClockTime):
                self.clock_due = 0.0  # the lever was pressed: ask the clock now

    def _compare_dump(self, dump: BoardDump, now: float) -> None:
        self._correct_mirror(dump, now)
        self._dumped.set()

    def _clock_times(self, message: BusMessage, now: float) -> None:
        if message.data == self.last_clock:
            return  # unchanged: nothing to report (as a board in UPDATE_NICE mode)
        self.last_clock = message.data
        decoded = message.clock()
        if isinstance(decoded, ClockTimes | ClockAck):
            for event in self.clock.state.feed(decoded, now):
                self._emit(event)


def _records(data: bytes) -> tuple[object, ...]:
    return BusMessage(BusMessageId.UPDATE, 0, data).records()


class BusMaster:
    """The host end of one bus line.  ``port`` is a port path, a pyserial URL or a
    :class:`Transport`; ``addresses`` the boards to poll (none: found by
    :meth:`discover` when the line opens).  The time constants default to the module's.
    """

    def __init__(
        self,
        port: str | Transport,
        addresses: Iterable[int] | None = None,
        *,
        reply_timeout: float = REPLY_TIMEOUT,
        cycle_min: float = CYCLE_MIN,
        clock_interval: float | None = CLOCK_INTERVAL,
        max_misses: int = MAX_MISSES,
        handshake_timeout: float = NOT_A_BUS_TIMEOUT,
        discovery_wait: float = DISCOVERY_WAIT,
        discovery_rounds: int = DISCOVERY_ROUNDS,
        reconnect_min: float = RECONNECT_MIN,
        reconnect_max: float = RECONNECT_MAX,
    ) -> None:
        self.transport: Transport = open_transport(port) if isinstance(port, str) else port
        self.reply_timeout = reply_timeout
        self.cycle_min = cycle_min
        self.clock_interval = clock_interval
        self.max_misses = max(1, max_misses)
        self.handshake_timeout = handshake_timeout
        self.discovery_wait = discovery_wait
        self.discovery_rounds = discovery_rounds
        self.reconnect_min = reconnect_min
        self.reconnect_max = reconnect_max
        self._boards: dict[int, BusBoard] = {}
        self._parser = BusFrameParser()
        self._garbage = (0, 0)
        self._pending: _Pending | None = None
        self._pings: set[int] | None = None
        self._last_rx = 0.0
        self._task: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        self._wake = asyncio.Event()
        self._progress = asyncio.Event()
        self._users: set[BusBoard] = set()
        self._explicit = False
        self._closed = False
        self.line_up = False
        """Whether the transport is open and the poller runs on it."""
        # figures
        self.requests = 0
        self.timeouts = 0
        self.line_losses = 0
        self.bytes_received = 0
        self.dropped_frames = 0
        """Frames with a bad checksum, and replies nobody waited for (late, stray)."""
        self.cycle_times: deque[float] = deque(maxlen=10_000)
        """Seconds each of the last poll cycles took (for diagnostics and the bench)."""
        for address in addresses or ():
            self.board(address)

    # --- public API -------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.transport.name

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    @property
    def boards(self) -> dict[int, BusBoard]:
        """The boards polled, by address."""
        return dict(self._boards)

    def board(self, address: int) -> BusBoard:
        """The board at ``address`` (1-16383), polled from now on."""
        if isinstance(address, bool) or not isinstance(address, int) or not 0 < address < 0x4000:
            raise ValueError(f"a bus address is a number 1-16383, not {address!r}")
        found = self._boards.get(address)
        if found is None:
            found = self._boards[address] = BusBoard(self, address)
            self._wake.set()
        return found

    async def __aenter__(self) -> BusMaster:
        await self.open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def open(self) -> None:
        """Open the line, find the boards if no address was given, and wait until every
        board was tried once.  Raises a one-line ``ConnectionFailed`` (``PortNotFound``,
        ``PortBusy``, ..., :class:`NoBusBoards` when no board answers)."""
        if self._closed:
            raise LinkClosed(f"{self.name}: the bus line was closed")
        self._explicit = True
        try:
            await self._start()
            deadline = time.monotonic() + self.handshake_timeout
            while not all(b.ready or b.tried for b in self._boards.values()):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._progress.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._progress.wait(), remaining)
            if not any(b.ready for b in self._boards.values()):
                raise NoBusBoards(self.name, self.handshake_timeout)
        except BaseException:
            self._explicit = False
            if not self._users:
                await self._stop()
            raise

    async def close(self) -> None:
        """Stop polling, close the line and every board.  Idempotent."""
        if self._closed:
            return
        self._closed = True
        await self._stop()
        for board in self._boards.values():
            board._closed = True
            board._end_events()
        self._users.clear()

    async def discover(self) -> list[int]:
        """Broadcast pings (the line must be open and the poller not running) and return
        the addresses that answered, each also added to :attr:`boards`."""
        if self.running:
            raise RuntimeError("discover() runs before polling starts (open() calls it)")
        if not self.line_up:
            raise ConnectionFailed(f"{self.name}: the bus line is not open")
        found: set[int] = set()
        for round_ in range(self.discovery_rounds):
            self._pings = set()
            before = self._parser.bad_checksums + self._parser.discarded
            try:
                self._write(encode_bus_command(BusCommand.PING, BUS_BROADCAST))
                await asyncio.sleep(self.discovery_wait)
                heard, self._pings = self._pings, None
            finally:
                self._pings = None
            new = heard - found
            garbled = self._parser.bad_checksums + self._parser.discarded != before
            found |= new
            logger.debug(
                "%s: discovery round %d: %d new, garbled %s", self.name, round_ + 1, len(new),
                garbled,
            )  # fmt: skip
            if not new and not garbled:
                break
            for address in sorted(new):
                # Found boards keep quiet at the next broadcast: the rest answer alone.
                await self._request(BusCommand.IGNORE_NEXT_BUS_PING, address, BusMessageId.PING)
        for address in sorted(found):
            self.board(address)
        logger.info("%s: boards found on the bus: %s", self.name, sorted(found) or "none")
        return sorted(found)

    def stats(self) -> dict[str, Any]:
        """Figures of the line: requests, time-outs, dropped frames, cycles."""
        return {
            "requests": self.requests,
            "timeouts": self.timeouts,
            "dropped_frames": self.dropped_frames,
            "line_losses": self.line_losses,
            "cycles": len(self.cycle_times),
        }

    def __repr__(self) -> str:
        state = "up" if self.line_up else "down"
        return f"<BusMaster {self.name} {state} {sorted(self._boards)}>"

    # --- line life cycle ----------------------------------------------------------------

    async def _attach(self, board: BusBoard) -> None:
        self._users.add(board)
        try:
            await self._start()
        except BaseException:
            self._users.discard(board)
            raise

    async def _detach(self, board: BusBoard) -> None:
        self._users.discard(board)
        if not self._users and not self._explicit:
            await self._stop()

    async def _start(self) -> None:
        async with self._lock:
            if self._closed:
                raise LinkClosed(f"{self.name}: the bus line was closed")
            if self.running:
                return
            await self._open_line()
            try:
                if not self._boards and not await self.discover():
                    raise NoBusBoards(self.name, self.discovery_wait * self.discovery_rounds)
            except _LineDown as exc:
                self.line_up = False
                await self.transport.close()
                raise ConnectionFailed(f"{self.name}: the line went away ({exc})") from None
            except BaseException:
                self.line_up = False
                await self.transport.close()
                raise
            self._task = asyncio.get_running_loop().create_task(
                self._run(), name=f"dgt-bus {self.name}"
            )

    async def _stop(self) -> None:
        async with self._lock:
            task, self._task = self._task, None
            await cancel_and_wait(task)
            self.line_up = False
            await self.transport.close()
            for board in self._boards.values():
                board._forget()

    async def _open_line(self) -> None:
        await self.transport.open(self._on_data, self._on_lost)
        self._parser = BusFrameParser()
        self._garbage = (0, 0)
        self._last_rx = time.monotonic()
        self.line_up = True

    def _on_lost(self, reason: str) -> None:
        """The transport lost the line (or a write failed)."""
        if not self.line_up:
            return
        self.line_up = False
        self.line_losses += 1
        now = time.monotonic()
        logger.warning("%s: bus line lost (%s); reconnecting", self.name, reason)
        for board in self._boards.values():
            board._lost(now, reason)
        pending = self._pending
        if pending is not None and not pending.future.done():
            pending.future.set_exception(_LineDown(reason))
        self._wake.set()

    async def _reconnect(self) -> None:
        await self.transport.close()
        failures = await reopen_with_backoff(
            self._open_line,
            closed=lambda: self._closed,
            first=self.reconnect_min,
            cap=self.reconnect_max,
            name=self.name,
            attempt="bus line reopening attempt",
            log=logger,
        )
        if failures is None:
            return
        for board in self._boards.values():
            board.retry_at = 0.0
            board.retry_delay = self.reconnect_min
            board.misses = 0
        logger.info("%s: bus line open again after %d failed attempts", self.name, failures)

    # --- polling ----------------------------------------------------------------------

    async def _run(self) -> None:
        while not self._closed:
            with contextlib.suppress(_LineDown):
                await self._poll()
            if self._closed:
                return
            await self._reconnect()

    async def _poll(self) -> None:
        while True:
            if not self.line_up:
                raise _LineDown("line closed")
            start = time.monotonic()
            for board in list(self._boards.values()):
                await self._serve(board)
                self._progress.set()
            end = time.monotonic()
            self.cycle_times.append(end - start)
            self._wake.clear()
            rest = self.cycle_min - (end - start)
            if not self._boards:
                await self._wake.wait()
            elif rest > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), rest)
                if cancelling():  # a cancel that met a wake: 3.11's wait_for returned the wake
                    raise asyncio.CancelledError

    async def _serve(self, board: BusBoard) -> None:
        """This board's turn: take it on, or ask for its changes (and dump, clock)."""
        now = time.monotonic()
        if board._phase is not _Phase.READY:
            if now >= board.retry_at:
                await self._take_on(board)
            return
        command = BusCommand.REPEAT_CHANGES if board.repeat else BusCommand.SEND_CHANGES
        got = await self._request(command, board.address, BusMessageId.UPDATE)
        if got is None:
            self._miss(board, "changes")
            board.repeat = True
            board.verify = True
            return
        reply, received = got
        board.misses = 0
        if not (board.repeat and reply.data == board.last_batch):
            # (a repeat equal to the batch already applied: the request never reached the
            # board, which still holds the changes for the next request)
            board._apply_changes(reply.data, received)
        board.last_batch = reply.data
        board.repeat = False
        if board.verify:
            got = await self._request(BusCommand.SEND_BRD, board.address, BusMessageId.BRD_DUMP)
            if got is None:
                self._miss(board, "dump")
                return
            dump = got[0].board_dump()
            if dump is not None:
                board.verify = False
                board._compare_dump(dump, got[1])
        if self.clock_interval is not None and time.monotonic() >= board.clock_due:
            got = await self._request(BusCommand.SEND_CLK, board.address, BusMessageId.BWTIME)
            if got is None:
                self._miss(board, "clock")
                return
            board.clock_due = got[1] + self.clock_interval
            board._clock_times(*got)

    async def _take_on(self, board: BusBoard) -> None:
        """Version, drain of the changes held since power-up or loss, then the dump."""
        address = board.address
        steps = (
            (BusCommand.SEND_VERSION, BusMessageId.VERSION),
            (BusCommand.SEND_CHANGES, BusMessageId.UPDATE),
            (BusCommand.SEND_BRD, BusMessageId.BRD_DUMP),
        )
        replies: list[tuple[BusMessage, float]] = []
        for command, reply_id in steps:
            got = await self._request(command, address, reply_id)
            if got is None:
                board.tried = True
                board.retry_at = time.monotonic() + board.retry_delay
                board.retry_delay = min(board.retry_delay * 2, self.reconnect_max)
                logger.debug("%s: not answering (next try in %.1f s)", board.name,
                             board.retry_at - time.monotonic())  # fmt: skip
                return
            replies.append(got)
        version = replies[0][0].version()
        if version is not None:
            board.info.version = version
        dump = replies[2][0].board_dump()
        board.tried = True
        if dump is None:
            return
        board._taken_on(dump, replies[2][1])

    def _miss(self, board: BusBoard, what: str) -> None:
        board.misses += 1
        logger.debug("%s: no %s reply (%d in a row)", board.name, what, board.misses)
        if board.misses >= self.max_misses:
            now = time.monotonic()
            logger.warning(
                "%s: stopped answering (%d requests unanswered); trying again", board.name,
                board.misses,
            )  # fmt: skip
            board._lost(now, f"bus address {board.address} stopped answering")
            board.retry_delay = self.reconnect_min
            board.retry_at = now + board.retry_delay

    async def _request(
        self, command: BusCommand, address: int, reply: int
    ) -> tuple[BusMessage, float] | None:
        """Send one command and wait for its reply (the message and its reception time);
        None when it did not come in time."""
        if not self.line_up:
            raise _LineDown("line closed")
        future: asyncio.Future[tuple[BusMessage, float]] = (
            asyncio.get_running_loop().create_future()
        )
        header = re.compile(
            re.escape(bytes((reply,)))
            + b"[\x00-\x7f]{2}"
            + re.escape(bytes(((address >> 7) & 0x7F, address & 0x7F)))
        )
        pending = self._pending = _Pending(address, reply, future, header)
        sent = time.monotonic()
        most = _REPLY_SIZES.get(reply, MAX_BUS_SIZE)
        self.requests += 1
        try:
            self._write(encode_bus_command(command, address))
            while not future.done():
                # Once the reply has begun, its bytes get the time the line needs for them.
                if pending.started is None:
                    deadline = sent + self.reply_timeout
                else:
                    size = min(pending.size, most)
                    deadline = pending.started + self.reply_timeout + size * BYTE_TIME
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                await asyncio.wait((future,), timeout=remaining)
        finally:
            self._pending = None
        if not future.done():
            future.cancel()
            self.timeouts += 1
            return None
        return future.result()  # raises _LineDown if the line went meanwhile

    def _write(self, data: bytes) -> None:
        try:
            self.transport.write(data)
        except ConnectionFailed as exc:
            self._on_lost(str(exc))
            raise _LineDown(str(exc)) from None
        if not self.line_up:
            raise _LineDown("line closed")

    def _on_data(self, data: bytes) -> None:
        now = time.monotonic()
        self._last_rx = now
        self.bytes_received += len(data)
        if self._pending is not None:
            self._pending.look(data, now)
        parser = self._parser
        messages = parser.feed(data)
        garbage = (parser.discarded, parser.bad_checksums)
        if garbage != self._garbage:
            skipped = garbage[0] - self._garbage[0]
            bad = garbage[1] - self._garbage[1]
            self._garbage = garbage
            self.dropped_frames += bad
            pending = self._pending
            logger.debug(
                "%s: %d garbage bytes, %d frames with a bad checksum dropped%s",
                self.name, skipped, bad,
                f" (waiting for bus address {pending.address})" if pending else "",
            )  # fmt: skip
            if pending is not None:
                board = self._boards.get(pending.address)
                if board is not None:
                    board.verify = True  # its reply may have been the garbled one
        for message in messages:
            pending = self._pending
            if (
                pending is not None
                and message.address == pending.address
                and message.id == pending.reply
                and not pending.future.done()
            ):
                pending.future.set_result((message, now))
            elif self._pings is not None and message.id == BusMessageId.PING:
                self._pings.add(message.address)
            else:
                self.dropped_frames += 1
                logger.debug(
                    "%s: reply %#04x from bus address %d not waited for (late?): dropped",
                    self.name, message.id, message.address,
                )  # fmt: skip

