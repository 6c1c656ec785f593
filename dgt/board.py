"""``dgt.Board``: one DGT board (and its clock) over any transport, async at the core.

::

    async with Board("/dev/ttyACM0") as board:
        async for event in board.events():
            ...

What it does:

* handshake: reset and version request, repeated every :data:`HANDSHAKE_RETRY` seconds until
  the board answers (a port that never answers like a DGT board raises
  :class:`~dgt.errors.NotADgtBoard` after ``handshake_timeout``); then serial numbers and
  trademark (which tells a Pegasus), the update mode (UPDATE_NICE for classic boards, so the
  clock talks; UPDATE_BRD on a Pegasus, after its developer key), and a full dump; then, on
  a classic board, the clock's times (SEND_CLK, asked again until they come, because in
  UPDATE_NICE a clock that stands still never reports) and the clock's version;
* a 64-square :class:`~dgt.mirror.Mirror` patched by field updates, and checked against a
  fresh dump whenever the updates settle or something looks wrong (the parser skipped
  garbage): differences are reported as :class:`~dgt.events.SquareChanged`, so the mirror
  always ends equal to the real board;
* typed events (:mod:`dgt.events`) stamped with ``time.monotonic()`` at reception, through
  ``async for event in board.events()`` and/or :meth:`Board.add_listener` callbacks; events
  are buffered until read, none is dropped;
* the board's memory (EE moves) drained after the first connect when asked for
  (``read_memory=True``; off by default: some clone boards drop the link on that request)
  (:class:`BoardMemory`);
* a liveness check (a serial-number request after :data:`LIVENESS_IDLE` seconds of silence,
  link lost when nothing comes back within :data:`LIVENESS_TIMEOUT`), and reconnection with
  capped exponential back-off after a lost link, ending with a fresh dump, a
  ``BoardSnapshot(reason="reconnect")`` and a :class:`LinkRestored` that lists the squares
  changed while the link was down; a link that drops within :data:`REQUEST_DROP_WINDOW` of a
  write is reported with the request written (a clone that cannot answer it);
* the clock (:attr:`Board.clock`) with one command in flight (:mod:`dgt.clock`), and LEDs on
  the boards that have them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, TypeVar

from dgt.backoff import reopen_with_backoff
from dgt.board_feed import BoardFeed
from dgt.clock import Clock, ClockSender
from dgt.errors import (
    ConnectionFailed,
    DgtError,
    LinkClosed,
    NotADgtBoard,
    NotSupported,
)
from dgt.events import (
    BoardEvent,
    BoardFamily,
    BoardMemory,
    ClockConnection,
    LinkLost,
)
from dgt.protocol import (
    BatteryStatus,
    BoardDump,
    ClockAck,
    ClockTimes,
    Command,
    EEMoves,
    FieldUpdate,
    FrameParser,
    HardwareVersion,
    LongSerialNumber,
    Message,
    Piece,
    SerialNumber,
    Trademark,
    Version,
    encode_clock_version,
    encode_command,
    encode_pegasus_key,
    encode_pegasus_leds,
    encode_pegasus_leds_off,
    encode_rev2_leds,
    encode_rev2_leds_off,
)
from dgt.protocol.request_names import describe_written, written_commands
from dgt.tasks import cancel_and_wait
from dgt.transports import Transport, open_transport
from dgt.transports.poller import on_grid

logger = logging.getLogger(__name__)
_feed_logger = logging.getLogger("dgt.board_feed")
"""Where :meth:`BoardFeed._emit` logs a failing consumer (the short way of a clock report
logs it there too)."""

_monotonic = time.monotonic
"""The receive time of every read (a module name: cheaper than ``time.monotonic``)."""

HANDSHAKE_RETRY = 2.0
"""Seconds between handshake attempts (reset + version request) until the version arrives."""

NOT_A_BOARD_TIMEOUT = 6.0
"""Default seconds after which a port that never answered like a DGT board is given up."""

IDENT_TIMEOUT = 1.0
"""Seconds to wait for the trademark text after the version (boards that do not send one
are fine)."""

DUMP_TIMEOUT = 2.0
"""Seconds to wait for a requested board dump before asking again."""

DUMP_TRIES = 3
"""Dump requests during the handshake before the connection attempt fails."""

SETTLE_DELAY = 0.3
"""Quiet seconds after the last field update before the mirror is checked against a fresh
dump (field hosts use 0.25 s on USB, 0.5 s on Bluetooth)."""

LIFTED_SETTLE_FACTOR = 6.0
"""How many times its settle delay a board waits, after a field update that emptied a
square (a piece lifted: most often put down again within a second or two), before the
re-dump (1.8 s at :data:`SETTLE_DELAY`).  A move's lift and its placing then share the one
re-dump the placing asks a settle delay after it, where a player who held the piece longer
than the settle delay cost one each (a dump asked, read, parsed and compared: about half
of a hall's re-dumps).  A board left with a square emptied is still checked, only later."""

DOUBT_DELAY = 0.1
"""Seconds after garbage on the line before the re-dump (lets the burst pass)."""

LIVENESS_IDLE = 5.0
"""Seconds without any received byte before a cheap request checks the link."""

LIVENESS_TIMEOUT = 3.0
"""Seconds the board has to answer that request before the link counts as lost."""

RECONNECT_MIN = 0.5
"""First back-off delay after a lost link; doubles after each failed attempt..."""

RECONNECT_MAX = 10.0
"""...up to this cap."""

CLOCK_TIMES_RETRY = 1.0
"""Seconds to wait for the answer to a clock-times request (SEND_CLK) before asking again:
in UPDATE_NICE mode a clock reports only when its display changes, so an idle clock that
already shows the time control would otherwise stay unseen (docs/protocol.md §2: SEND_CLK is
answered with one BWTIME in any mode; §5.5: Bluetooth firmware may answer it with a clock
ack, or send an all-zero BWTIME, for about a second after a clock command)."""

CLOCK_TIMES_TRIES = 3
"""Clock-times requests after each handshake before giving up (silence then means the board
does not report its clock; nothing else depends on the answer)."""

TIMER_RESOLUTION = 0.001
"""Shortest wait a timer is armed with for a due time still ahead.  uvloop (libuv) counts
timers in whole milliseconds of a loop time read once per loop turn, so a timer can fire up
to a millisecond before ``time.monotonic()`` reaches its due time, and a wait of less than
half a millisecond is rounded to none: a timer that re-armed itself for the rest of such a
wait ran again and again until the time came (up to hundreds of calls, tens of them per
move of every board on average with the settle timer)."""

TIMER_GRID = 0.005
"""Seconds: the settle, dump-retry and liveness timers fall due on multiples of this (of the
event loop's clock, which is ``time.monotonic()``'s), up to this much after their time, so
that a hall's many boards share the loop's wake-ups rather than wake it each (each wake-up
finds the caches cold).  A board whose bytes a :class:`~dgt.transports.BoardPoller` reads
takes the poller's grid (``timer_grid``): its timers then run in the turn of a poll."""

REQUEST_DROP_WINDOW = 1.0
"""Seconds after a write within which a lost link is reported as dropped after that request
(a board that crashes on a request it cannot answer drops the link at once)."""

_MEMORY_HINT = "some clone boards cannot answer it; leave read_memory (--read-memory) off"
"""Added to the warning when the request before a dropped link was the board-memory request
(a Centaur emulating a classic board crashes on it)."""

_SEND_BRD = encode_command(Command.SEND_BRD)
"""The dump request, encoded once: sent after every move (the settle re-dump)."""

_PEGASUS_TRADEMARK = re.compile(r"pegasus|serial no:\s*P", re.IGNORECASE)
_REV2_TRADEMARK = re.compile(r"revelation|rev\s*-?\s*ii|pcs-rev", re.IGNORECASE)

M = TypeVar("M")


def _wait(due: float, now: float) -> float:
    """Seconds to arm a timer with for ``due`` at ``now``: none when it is due already, at
    least :data:`TIMER_RESOLUTION` when it is not."""
    wait = due - now
    if wait <= 0.0:
        return 0.0
    return wait if wait > TIMER_RESOLUTION else TIMER_RESOLUTION


class BoardState(Enum):
    """Where the board's connection stands."""

    DISCONNECTED = "disconnected"
    CONNECTING = "connecting"
    HANDSHAKING = "handshaking"
    READY = "ready"
    CLOSED = "closed"


_READY = BoardState.READY
"""The state as a module name: an enum class's attribute is looked up afresh at each read
(the interpreter does not specialise it), and :meth:`Board._settle` reads it every square
change."""
_EMPTY = Piece.EMPTY


class LedKind(Enum):
    PEGASUS = "pegasus"
    REV2 = "rev2"


@dataclass
class BoardInfo:
    """What the board told about itself during the handshake."""

    version: Version | None = None
    serial: str | None = None
    long_serial: str | None = None
    trademark: str | None = None
    hardware_version: HardwareVersion | None = None
    battery: BatteryStatus | None = None
    family: BoardFamily = BoardFamily.PIECE_IDENTITY
    leds: LedKind | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class Board(BoardFeed):
    """One DGT board.  Create it, then ``await board.open()`` (or use ``async with`` or
    :meth:`Board.connect`).

    ``port`` is a port path, a pyserial URL, ``"emulator"``, or a :class:`Transport`.
    ``family`` forces the board family (else told from the board's messages or the
    transport); ``leds`` forces the LED kind (LEDs are only driven on boards known to have
    them: sending the LED command to other boards stalls them).  ``read_memory=True`` asks
    for the board's memory (EE moves) after the first connect and reports it as
    :class:`~dgt.events.BoardMemory`; off by default, as some clone boards drop the link on
    that request.  ``reconnect`` keeps reconnecting after a lost link
    (else the board closes).  The time constants default to the module constants
    (``timer_grid``: :data:`TIMER_GRID`).
    """

    __slots__ = (
        "_clock_state", "_consumer", "_discarded", "_last_rx", "_last_update",
        "_listeners", "_loop", "_mirror_valid", "_parser", "_resync_at", "_resync_due",
        "_resync_timer", "_times_tries", "_waiters", "bytes_received", "mirror", "settle_delay",
        "state", "timer_grid",
    )  # fmt: skip
    # What every frame reads and writes, in the object itself (the rest in its __dict__):
    # a hall's thousands of boards keep fewer of their cache lines in the CPU's caches.

    def __init__(
        self,
        port: str | Transport,
        *,
        family: BoardFamily | None = None,
        leds: LedKind | None = None,
        read_memory: bool = False,
        reconnect: bool = True,
        handshake_timeout: float = NOT_A_BOARD_TIMEOUT,
        handshake_retry: float = HANDSHAKE_RETRY,
        settle_delay: float = SETTLE_DELAY,
        liveness_idle: float = LIVENESS_IDLE,
        liveness_timeout: float = LIVENESS_TIMEOUT,
        reconnect_min: float = RECONNECT_MIN,
        reconnect_max: float = RECONNECT_MAX,
        clock_timeout: float | None = None,
        clock_times_retry: float = CLOCK_TIMES_RETRY,
        timer_grid: float = TIMER_GRID,
    ) -> None:
        super().__init__()
        self.transport: Transport = open_transport(port) if isinstance(port, str) else port
        self._forced_family = family
        self._forced_leds = leds
        self.read_memory = read_memory
        self.reconnect = reconnect
        self.handshake_timeout = handshake_timeout
        self.handshake_retry = handshake_retry
        self.settle_delay = settle_delay
        self.liveness_idle = liveness_idle
        self.liveness_timeout = liveness_timeout
        self.reconnect_min = reconnect_min
        self.reconnect_max = reconnect_max
        self.clock_times_retry = clock_times_retry
        if not timer_grid > 0:
            raise ValueError(f"a board's timer grid must be more than 0 s, not {timer_grid!r}")
        self.timer_grid = timer_grid

        self.state = BoardState.DISCONNECTED
        self.info = BoardInfo()
        self._mirror_valid = False
        self._handshake_reason = "connect"
        self._parser = FrameParser()
        self._discarded = 0
        self._waiters: list[tuple[type, asyncio.Future[Any]]] | None = None
        """Who waits for a kind of message (None: nobody, as after the handshake: no list
        to read on every frame)."""
        self._sender = (
            ClockSender() if clock_timeout is None else ClockSender(timeout=clock_timeout)
        )
        self.clock = Clock(self._clock_submit)
        self._clock_state = self.clock.state
        """``self.clock.state`` (fed every clock report)."""
        self._clock_timer: asyncio.TimerHandle | None = None
        self._times_timer: asyncio.TimerHandle | None = None
        self._times_tries = 0
        """Clock-times requests sent since the handshake and not answered yet (0: none
        pending)."""
        self._resync_timer: asyncio.TimerHandle | None = None
        self._resync_due: float | None = None
        """When the re-dump is due (None: none is)."""
        self._resync_at = 0.0
        """When the armed resync timer fires (it may fire before :attr:`_resync_due`: it then
        arms itself again)."""
        self._last_update: float = 0.0
        self._dump_requested: float | None = None
        self._dump_retry_timer: asyncio.TimerHandle | None = None
        self._liveness_timer: asyncio.TimerHandle | None = None
        self._probe_sent: float | None = None
        self._last_rx = 0.0
        self._lost_at: float | None = None
        self._handshake_error: DgtError | None = None
        self._reconnect_task: asyncio.Task[None] | None = None
        self._memory_read = False
        self._last_write: tuple[float, bytes] | None = None
        """When the last bytes were written, and what (names the request before a drop)."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self.bytes_received = 0

    # --- public API -------------------------------------------------------------------

    @classmethod
    async def connect(cls, port: str | Transport, **kwargs: Any) -> Board:
        """Create a board and open it (handshake done, first snapshot queued)."""
        board = cls(port, **kwargs)
        await board.open()
        return board

    @property
    def name(self) -> str:
        return self.transport.name

    @property
    def ready(self) -> bool:
        return self.state is BoardState.READY

    async def open(self) -> None:
        """Connect and handshake.  Raises a one-line :class:`~dgt.errors.ConnectionFailed`
        (``PortNotFound``, ``PortPermissionDenied``, ``PortBusy``, ``NotADgtBoard``, ...)."""
        if self.state is BoardState.CLOSED:
            raise LinkClosed(f"{self.name}: the board was closed")
        if self.state is not BoardState.DISCONNECTED:
            raise ConnectionFailed(f"{self.name} is already open")
        self._loop = asyncio.get_running_loop()
        await self._establish("connect")

    async def close(self) -> None:
        """Close the link, fail pending clock commands with ``LinkClosed`` and end
        :meth:`events`.  Idempotent."""
        if self.state is BoardState.CLOSED:
            return
        self.state = BoardState.CLOSED
        task = self._reconnect_task
        self._reconnect_task = None
        await cancel_and_wait(task)
        self._stop_timers()
        self._sender.cancel_all(LinkClosed(f"{self.name}: the board was closed"))
        self._fail_waiters(LinkClosed(f"{self.name}: the board was closed"))
        await self.transport.close()
        self._end_events()
        logger.debug("%s closed", self.name)

    async def resync(self, timeout: float = DUMP_TIMEOUT * DUMP_TRIES) -> None:  # noqa: ASYNC109
        """Ask for a fresh dump now and wait until it was compared with the mirror (any
        difference is reported as ``SquareChanged``)."""
        self._require_ready()
        deadline = time.monotonic() + timeout
        while True:
            self._request_dump()
            remaining = deadline - time.monotonic()
            try:
                await self._wait_for(BoardDump, min(DUMP_TIMEOUT, max(0.0, remaining)))
                return
            except TimeoutError:
                if time.monotonic() >= deadline:
                    raise

    async def battery(self, timeout: float = DUMP_TIMEOUT) -> BatteryStatus:  # noqa: ASYNC109
        """Ask for the battery status (Bluetooth boards and the Pegasus, docs/protocol.md §3.7,
        §6.5) and return it; it is also kept in ``info.battery``.  ``TimeoutError`` after
        ``timeout`` seconds without an answer (USB boards do not know the command)."""
        self._require_ready()
        self._write(encode_command(Command.SEND_BATTERY_STATUS))
        return await self._wait_for(BatteryStatus, timeout)

    def write(self, data: bytes) -> None:
        """Send raw bytes to the board (commands from ``dgt.protocol``)."""
        self._require_ready()
        self._write(data)

    async def set_leds(
        self, squares: Iterable[int], *, speed: int = 3, repeat: int = 0, intensity: int = 1
    ) -> None:
        """Light squares (python-chess numbers, board frame) on a Pegasus or Revelation II.
        ``speed``, ``repeat`` and ``intensity`` apply to the Pegasus.  Raises
        :class:`~dgt.errors.NotSupported` on boards without LEDs."""
        kind = self._led_kind()
        squares = list(squares)
        for square in squares:
            if not 0 <= square < 64:
                raise ValueError(f"no square {square}")
        if kind is LedKind.PEGASUS:
            self._write(encode_pegasus_leds(squares, speed, repeat, intensity))
            return
        # Revelation II: one frame lights a from/to pair.
        self._write(encode_rev2_leds_off())
        for i in range(0, len(squares), 2):
            pair = squares[i : i + 2]
            self._write(encode_rev2_leds(pair[0], pair[-1]))

    async def clear_leds(self) -> None:
        """All LEDs off."""
        kind = self._led_kind()
        self._write(
            encode_pegasus_leds_off() if kind is LedKind.PEGASUS else encode_rev2_leds_off()
        )

    # --- connection -------------------------------------------------------------------

    async def _establish(self, reason: str) -> None:
        """Open the transport and run the handshake; on failure leave the transport closed
        and raise."""
        self.state = BoardState.CONNECTING
        self._handshake_error = None
        self._last_write = None
        try:
            await self.transport.open(self._on_data, self._on_lost)
        except BaseException:
            if self.state is not BoardState.CLOSED:
                self.state = BoardState.DISCONNECTED
            raise
        if self.state is BoardState.CLOSED:
            await self.transport.close()
            raise LinkClosed(f"{self.name}: the board was closed")
        self.state = BoardState.HANDSHAKING
        try:
            await self._handshake(reason)
        except BaseException:
            if self.state is not BoardState.CLOSED:
                self.state = BoardState.DISCONNECTED
            self._fail_waiters(ConnectionFailed(f"{self.name}: handshake aborted"))
            await self.transport.close()
            raise
        if self.state is BoardState.CLOSED:
            await self.transport.close()
            raise LinkClosed(f"{self.name}: the board was closed")
        self.state = BoardState.READY
        now = time.monotonic()
        self._lost_at = None
        self._last_rx = max(self._last_rx, now)
        self._probe_sent = None
        self._arm_liveness(now)
        if self.info.family is BoardFamily.PIECE_IDENTITY:
            # The clock's times first, before any clock command (a command in flight may make
            # some firmware answer SEND_CLK with its ack instead of the times).
            self._times_tries = 0
            self._ask_clock_times()
            self._sender.set_active(True, now)
            self._pump_clock()
            if self.clock.version is None and self.clock.connected is not False:
                self._sender.submit(encode_clock_version(), now, max_tries=1, report=False)
                self._pump_clock()
        if self.read_memory and not self._memory_read:
            self._memory_read = True
            self._write(encode_command(Command.SEND_EE_MOVES))
        logger.info(
            "%s ready: %s board, version %s, serial %s",
            self.name, self.info.family.value, self.info.version, self.info.serial,
        )  # fmt: skip

    async def _handshake(self, reason: str) -> None:
        self._handshake_reason = reason
        self._mirror_valid = False
        self._parser = FrameParser()
        self._discarded = 0
        start = time.monotonic()
        deadline = start + self.handshake_timeout
        version: Version | None = None
        while version is None:
            self._write(encode_command(Command.SEND_RESET) + encode_command(Command.SEND_VERSION))
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise NotADgtBoard(self.name, self.handshake_timeout)
            try:
                version = await self._wait_for(Version, min(self.handshake_retry, remaining))
            except TimeoutError:
                if time.monotonic() >= deadline:
                    raise NotADgtBoard(self.name, self.handshake_timeout) from None
                logger.debug("%s: no version yet, retrying the handshake", self.name)
        self.info.version = version
        self._write(
            encode_command(Command.RETURN_SERIALNR)
            + encode_command(Command.RETURN_LONG_SERIALNR)
            + encode_command(Command.SEND_TRADEMARK)
        )
        with contextlib.suppress(TimeoutError):
            await self._wait_for(Trademark, IDENT_TIMEOUT)
        self._identify()
        for attempt in range(DUMP_TRIES + 1):
            self._start_updates()
            try:
                dump: BoardDump = await self._wait_for(BoardDump, DUMP_TIMEOUT)
            except TimeoutError:
                if attempt + 1 >= DUMP_TRIES:
                    raise ConnectionFailed(
                        f"{self.name}: the board answered but sent no position"
                    ) from None
                continue
            if self._mirror_valid:
                return
            # An unkeyed Pegasus reports 0x7F everywhere: it is one; send the key, ask again.
            if all(code == 0x7F for code in dump.fields):
                logger.info("%s: board reports no squares: taking it for a Pegasus", self.name)
                self.info.family = BoardFamily.PRESENCE_ONLY
                self.mirror.family = BoardFamily.PRESENCE_ONLY
                if self._forced_leds is None:
                    self.info.leds = LedKind.PEGASUS
        raise ConnectionFailed(f"{self.name}: the board sent no readable position")

    def _identify(self) -> None:
        info = self.info
        trademark = info.trademark or ""
        family = self._forced_family or self.transport.family_hint
        if family is None:
            if _PEGASUS_TRADEMARK.search(trademark):
                family = BoardFamily.PRESENCE_ONLY
            else:
                family = BoardFamily.PIECE_IDENTITY
        info.family = family
        self.mirror.family = family
        if self._forced_leds is not None:
            info.leds = self._forced_leds
        elif family is BoardFamily.PRESENCE_ONLY:
            info.leds = LedKind.PEGASUS
        elif _REV2_TRADEMARK.search(trademark):
            info.leds = LedKind.REV2
        else:
            info.leds = None

    def _start_updates(self) -> None:
        """Update mode first, then the dump: a change between the two is then either in the
        dump or reported after it, never lost."""
        if self.info.family is BoardFamily.PRESENCE_ONLY:
            self._write(
                encode_pegasus_key()
                + encode_command(Command.SEND_UPDATE_BRD)
                + encode_command(Command.SEND_BRD)
            )
        else:
            self._write(encode_command(Command.SEND_UPDATE_NICE) + encode_command(Command.SEND_BRD))
        self._dump_requested = time.monotonic()

    def _on_lost(self, reason: str) -> None:
        """The transport lost the link (or a write failed, or the liveness check)."""
        if self.state is BoardState.CLOSED:
            return
        now = time.monotonic()
        dropped = self._dropped_after(now)
        if self.state is BoardState.READY:
            self._lost_at = now
            self.state = BoardState.DISCONNECTED
            self._stop_timers()
            self._sender.set_active(False, now)
            self._mirror_valid = False
            if dropped is None:
                logger.warning("%s: link lost (%s); reconnecting", self.name, reason)
            else:
                logger.warning("%s: link lost (%s): %s; reconnecting", self.name, reason, dropped)
            self._emit(LinkLost(now, reason))
            if self.reconnect:
                self._reconnect_task = asyncio.get_running_loop().create_task(
                    self._reconnect_loop(), name=f"dgt-reconnect {self.name}"
                )
            else:
                self._reconnect_task = asyncio.get_running_loop().create_task(self.close())
        else:
            # During connect/handshake: make the pending wait (and any later one) fail now.
            text = reason if dropped is None else f"{reason}: {dropped}"
            self._handshake_error = ConnectionFailed(f"{self.name}: {text}")
            self._fail_waiters(self._handshake_error)

    async def _reconnect_loop(self) -> None:
        await self.transport.close()
        failures = await reopen_with_backoff(
            lambda: self._establish("reconnect"),
            closed=lambda: self.state is BoardState.CLOSED,
            first=self.reconnect_min,
            cap=self.reconnect_max,
            name=self.name,
            attempt="reconnect attempt",
            log=logger,
        )
        if failures is not None:
            logger.info("%s: link restored after %d failed attempts", self.name, failures)

    # --- receiving --------------------------------------------------------------------

    def _on_data(self, data: bytes) -> None:
        now = _monotonic()
        self._last_rx = now
        self.bytes_received += len(data)
        parser = self._parser
        # A clock report, a square's update or a dump alone in the read (most reads of a
        # hall): what _handle does with it, without the parser's loop (and the clock's
        # message).
        size = len(data)
        if size == 10:
            raw = parser.lone_times(data)
            if raw is not None and not self._times_tries and not self._waiters:
                clock = self._clock_state
                report = clock.same_status(raw, now)
                if report is None:
                    for event in clock.feed_raw(raw, now):
                        self._emit(event)
                    return
                # self._emit(update) less a call: a running clock's report, the most
                # frequent read of a hall
                consumer = self._consumer
                if consumer is None or self._listeners:
                    self._emit(report)
                    return
                try:
                    consumer(report)
                except Exception:
                    _feed_logger.exception("%s: event consumer failed on %r", self.name, report)
                return
        elif size == 5:
            update = parser.lone_update(data)
            if update is not None and not self._waiters:
                if self._mirror_valid:
                    change = self.mirror.apply_update(update, now)
                    if change is None:
                        self._settle(now)
                        return
                    self._emit(change)
                    self._settle(now, change.piece is _EMPTY)
                return
        elif size == 67:
            dump = parser.lone_dump(data)
            if dump is not None and not self._waiters:
                self._on_dump(dump, now)
                return
        handle = self._handle
        for message in parser.feed(data):
            handle(message, now)
        if parser.discarded != self._discarded:
            logger.debug(
                "%s: %d garbage bytes on the line", self.name, parser.discarded - self._discarded
            )
            self._discarded = parser.discarded
            self._doubt(now)

    def _handle(self, message: Message, now: float) -> None:
        if type(message) is FieldUpdate:
            if self._mirror_valid:
                change = self.mirror.apply_update(message, now)
                if change is None:
                    self._settle(now)
                else:
                    self._emit(change)
                    self._settle(now, change.piece is _EMPTY)
        elif type(message) is ClockTimes or isinstance(message, ClockTimes):
            if self._times_tries and (not message.clock_connected or message.valid):
                self._clock_times_answered()
            for event in self._clock_state.feed_times(message, now):
                self._emit(event)
        elif isinstance(message, BoardDump):
            self._on_dump(message, now)
        elif isinstance(message, ClockAck):
            for event in self.clock.state.feed(message, now):
                self._emit(event)
            for event in self._sender.on_ack(message, now):
                self._clock_connection(event)
            self._pump_clock()
        elif isinstance(message, Version):
            self.info.version = message
        elif isinstance(message, SerialNumber):
            self.info.serial = message.text.strip()
        elif isinstance(message, LongSerialNumber):
            self.info.long_serial = message.text.strip()
        elif isinstance(message, Trademark):
            self.info.trademark = message.text
        elif isinstance(message, HardwareVersion):
            self.info.hardware_version = message
        elif isinstance(message, BatteryStatus):
            self.info.battery = message
        elif isinstance(message, EEMoves):
            self._emit(BoardMemory(now, message.records))
        else:
            logger.debug("%s: unhandled message %r", self.name, message)
        if self._waiters:
            self._resolve(message)

    def _on_dump(self, dump: BoardDump, now: float) -> None:
        self._dump_requested = None
        if self._dump_retry_timer is not None:
            self._dump_retry_timer.cancel()
            self._dump_retry_timer = None
        if self.state is BoardState.HANDSHAKING and not self._mirror_valid:
            if self.info.family is BoardFamily.PRESENCE_ONLY or any(
                code != 0x7F for code in dump.fields
            ):
                self._load_first_dump(dump, now)
            return
        if self._mirror_valid:
            self._correct_mirror(dump, now)

    def _load_first_dump(self, dump: BoardDump, now: float) -> None:
        self._mirror_valid = True
        restored = self._handshake_reason == "reconnect"
        self._load_mirror(dump, now, restored=restored, lost_at=self._lost_at)

    def _resolve(self, message: Message) -> None:
        waiters = self._waiters
        if not waiters:
            return
        keep: list[tuple[type, asyncio.Future[Any]]] = []
        for kind, future in waiters:
            if isinstance(message, kind) and not future.done():
                future.set_result(message)
            elif not future.done():
                keep.append((kind, future))
        self._waiters = keep or None

    async def _wait_for(self, kind: type[M], seconds: float) -> M:
        if self._handshake_error is not None and self.state is not BoardState.READY:
            raise self._handshake_error
        loop = asyncio.get_running_loop()
        future: asyncio.Future[M] = loop.create_future()
        entry = (kind, future)
        waiters = self._waiters
        if waiters is None:
            waiters = self._waiters = []
        waiters.append(entry)
        try:
            return await asyncio.wait_for(future, seconds)
        finally:
            waiters = self._waiters
            if waiters is not None:
                with contextlib.suppress(ValueError):
                    waiters.remove(entry)
                if not waiters:
                    self._waiters = None

    def _fail_waiters(self, exc: DgtError) -> None:
        waiters, self._waiters = self._waiters or [], None
        for _, future in waiters:
            if not future.done():
                future.set_exception(exc)

    # --- events -----------------------------------------------------------------------

    def _clock_connection(self, event: BoardEvent) -> None:
        if isinstance(event, ClockConnection):
            for out in self.clock.state.set_connected(
                event.connected, event.time, event.reason, event.version
            ):
                self._emit(out)

    # --- writing ----------------------------------------------------------------------

    def _write(self, data: bytes) -> None:
        self._last_write = (time.monotonic(), data)
        try:
            self.transport.write(data)
        except ConnectionFailed as exc:
            self._on_lost(str(exc))

    def _dropped_after(self, now: float) -> str | None:
        """When the link went within :data:`REQUEST_DROP_WINDOW` of the last write: which
        request it followed, in words (with what to do about the board-memory request)."""
        last = self._last_write
        if last is None or now - last[0] > REQUEST_DROP_WINDOW:
            return None
        written, data = last
        text = f"the board dropped the link {now - written:.2f} s after {describe_written(data)}"
        if any(c.code == Command.SEND_EE_MOVES for c in written_commands(data)):
            text += f": {_MEMORY_HINT}"
        return text

    def _require_ready(self) -> None:
        if self.state is BoardState.CLOSED:
            raise LinkClosed(f"{self.name}: the board was closed")
        if self.state is not BoardState.READY:
            raise ConnectionFailed(f"{self.name}: not connected ({self.state.value})")

    def _led_kind(self) -> LedKind:
        self._require_ready()
        kind = self.info.leds
        if kind is None:
            raise NotSupported(
                f"{self.name} has no LEDs (only the Pegasus and the Revelation II have them)"
            )
        return kind

    # --- resync (settle and doubt) ------------------------------------------------------

    def _settle(self, now: float, lifted: bool = False) -> None:
        """A field update at ``now``: the re-dump is due a settle delay after it (longer
        after a square ``lifted``: :data:`LIFTED_SETTLE_FACTOR`), whatever was due before."""
        self._last_update = now
        delay = self.settle_delay
        due = now + (delay * LIFTED_SETTLE_FACTOR if lifted else delay)
        timer = self._resync_timer
        loop = self._loop
        if timer is None or self._resync_due is None or self.state is not _READY or loop is None:
            self._arm_resync(now + delay)
            if lifted and self._resync_timer is not None:
                # armed for the settle delay all the same (the placing most often comes
                # before it: then no timer is armed twice): it arms itself again, for the
                # lifted piece's longer wait, when it fires early
                self._resync_due = due
            return
        # _arm_resync's usual case (a move under way), without the call
        at = self._resync_at
        self._resync_due = due
        if at <= due:
            return  # the armed timer fires no later: it arms itself again when early
        when = on_grid(due, self.timer_grid)
        if at <= when:
            return
        # armed for a lifted piece's longer wait, which this update cuts short
        timer.cancel()
        self._resync_at = when
        self._resync_timer = loop.call_at(when, self._resync_fire)

    def _doubt(self, now: float) -> None:
        if self._mirror_valid and self.state is BoardState.READY:
            self._arm_resync(now + DOUBT_DELAY, earlier_only=True)

    def _arm_resync(self, due: float, earlier_only: bool = False) -> None:
        if self.state is not BoardState.READY or self._loop is None:
            return
        current = self._resync_due
        if current is not None and (current <= due if earlier_only else current >= due):
            return
        if current is not None and self._resync_timer is not None and not earlier_only:
            # A later due time: the armed timer re-arms itself when it fires (cheaper than
            # cancelling a timer on every field update).
            self._resync_due = due
            return
        if self._resync_timer is not None:
            self._resync_timer.cancel()
        self._resync_due = due
        self._resync_at = when = on_grid(due, self.timer_grid)
        self._resync_timer = self._loop.call_at(when, self._resync_fire)

    def _resync_fire(self) -> None:
        self._resync_timer = None
        due = self._resync_due
        if due is None or self.state is not BoardState.READY or self._loop is None:
            self._resync_due = None
            return
        now = time.monotonic()
        if now < due:  # moved on since the timer was armed, or fired early (uvloop:
            # TIMER_RESOLUTION): armed again at least that far ahead, so it does not spin
            self._resync_at = when = on_grid(now + _wait(due, now), self.timer_grid)
            self._resync_timer = self._loop.call_at(when, self._resync_fire)
            return
        self._resync_due = None
        self._request_dump()

    def _request_dump(self) -> None:
        self._dump_requested = now = time.monotonic()
        self._write(_SEND_BRD)
        # If the dump never comes (garbled on the line), ask again.
        if self._dump_retry_timer is not None:
            self._dump_retry_timer.cancel()
        if self._loop is not None:
            self._dump_retry_timer = self._loop.call_at(
                on_grid(now + DUMP_TIMEOUT, self.timer_grid), self._dump_retry
            )

    def _dump_retry(self) -> None:
        self._dump_retry_timer = None
        if self.state is BoardState.READY and self._dump_requested is not None:
            logger.debug("%s: no dump within %.1f s: asking again", self.name, DUMP_TIMEOUT)
            self._request_dump()

    # --- clock ------------------------------------------------------------------------

    async def _clock_submit(self, data: bytes) -> ClockAck:
        if self.state is BoardState.CLOSED:
            raise LinkClosed(f"{self.name}: the board was closed")
        if self.info.family is BoardFamily.PRESENCE_ONLY:
            raise NotSupported(f"{self.name}: a Pegasus has no clock")
        request = self._sender.submit(data, time.monotonic())
        self._pump_clock()
        future: asyncio.Future[ClockAck] = asyncio.get_running_loop().create_future()

        def done(req: Any) -> None:
            if future.done():
                return
            exc = req.exception()
            if exc is not None:
                future.set_exception(exc)
            else:
                future.set_result(req.result())

        request.add_done_callback(done)
        return await future

    def _pump_clock(self) -> None:
        for data in self._sender.take_output():
            self._write(data)
        if self._clock_timer is not None:
            self._clock_timer.cancel()
            self._clock_timer = None
        deadline = self._sender.next_deadline()
        if deadline is not None and self._loop is not None and self.state is BoardState.READY:
            self._clock_timer = self._loop.call_later(
                _wait(deadline, time.monotonic()), self._clock_fire
            )

    def _clock_fire(self) -> None:
        self._clock_timer = None
        for event in self._sender.poll(time.monotonic()):
            self._clock_connection(event)
        self._pump_clock()

    def _ask_clock_times(self) -> None:
        """Ask for the clock's times (one BWTIME comes back, whatever the mode) and arm a
        retry in case the answer is lost, garbled, an ack or an all-zero frame."""
        self._times_tries += 1
        self._write(encode_command(Command.SEND_CLK))
        if self._times_timer is not None:
            self._times_timer.cancel()
            self._times_timer = None
        if self._loop is not None and self.state is BoardState.READY:
            self._times_timer = self._loop.call_later(
                self.clock_times_retry, self._clock_times_retry
            )

    def _clock_times_answered(self) -> None:
        """A readable times frame came (a clock's times, or "no clock"): stop asking."""
        self._times_tries = 0
        if self._times_timer is not None:
            self._times_timer.cancel()
            self._times_timer = None

    def _clock_times_retry(self) -> None:
        self._times_timer = None
        if self.state is not BoardState.READY or not self._times_tries:
            return
        if self._times_tries >= CLOCK_TIMES_TRIES:
            logger.debug(
                "%s: no clock times after %d requests; waiting for the clock to report",
                self.name, self._times_tries,
            )  # fmt: skip
            self._times_tries = 0
            return
        logger.debug("%s: no clock times yet: asking again", self.name)
        self._ask_clock_times()

    # --- liveness ---------------------------------------------------------------------

    def _arm_liveness(self, now: float) -> None:
        if self._loop is None or self.liveness_idle <= 0:
            return
        if self._liveness_timer is not None:
            self._liveness_timer.cancel()
        if self._probe_sent is not None:
            due = self._probe_sent + self.liveness_timeout
        else:
            due = self._last_rx + self.liveness_idle
        self._liveness_timer = self._loop.call_at(
            on_grid(now + _wait(due, now), self.timer_grid), self._liveness_fire
        )

    def _liveness_fire(self) -> None:
        self._liveness_timer = None
        if self.state is not BoardState.READY:
            return
        now = time.monotonic()
        probe = self._probe_sent
        if probe is not None:
            if self._last_rx >= probe:
                self._probe_sent = None
            elif now >= probe + self.liveness_timeout:
                self._probe_sent = None
                reason = f"no answer for {now - self._last_rx:.1f} s"
                self._on_lost(reason)  # the reconnect loop closes the transport first
                return
        elif now - self._last_rx >= self.liveness_idle:
            self._probe_sent = now
            self._write(encode_command(Command.RETURN_SERIALNR))
        self._arm_liveness(now)

    def _stop_timers(self) -> None:
        timers = (
            self._clock_timer, self._resync_timer, self._liveness_timer, self._dump_retry_timer,
            self._times_timer,
        )  # fmt: skip
        for timer in timers:
            if timer is not None:
                timer.cancel()
        self._clock_timer = self._resync_timer = self._liveness_timer = None
        self._times_timer = None
        self._times_tries = 0
        self._dump_retry_timer = None
        self._dump_requested = None
        self._resync_due = None
        self._probe_sent = None

    def __repr__(self) -> str:
        return f"<Board {self.name} {self.state.value}>"
