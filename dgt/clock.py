"""The clock (DGT XL, DGT 3000, Revelation II) as seen through the board.

Two pure pieces with time injected, no timers and no I/O of their own:

* :class:`ClockState` is fed decoded :class:`~dgt.protocol.ClockTimes` and
  :class:`~dgt.protocol.ClockAck` messages and turns them into events from
  :mod:`dgt.events` (times, lever presses, buttons, clock appearing or going).
* :class:`ClockSender` queues clock commands (bytes from the ``dgt.protocol`` encoders),
  keeps at most one in flight, sends the next when the previous was acknowledged, resends
  on a time-out and, after :data:`MAX_TRIES`, reports a clock that stopped answering instead
  of waiting for it forever.

:class:`Clock` ties both to a :class:`dgt.Board` and offers ``await``-able commands.

Acknowledgement policy (docs/protocol.md §5.5): a command counts as acknowledged only by an ack
whose command byte matches it (or, for END and the Revelation II text, by the spontaneous
"ready" ack some clocks send instead).  Plain time frames do **not** count, unlike one
field host that unlocks on any BWTIME: in update mode time frames arrive every second, so
counting them would send the next command before the clock took the previous one, which is
exactly how the flooding symptoms reported in the field (frozen or flashing clocks) arise.
An error ack (ack0 not 0x10) is resent once if tries remain, then delivered as the result.
Acks only come while the board is in UPDATE or UPDATE_NICE mode: the sender holds its queue
(``active = False``) until the board is there.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import Enum

from dgt.errors import ClockNotAnswering, DgtError, LinkClosed
from dgt.events import (
    BoardEvent,
    ButtonPressed,
    ClockConnection,
    ClockUpdate,
    LeverMoved,
    Side,
    clock_update,
)
from dgt.protocol import (
    Button,
    ClockAck,
    ClockCommand,
    ClockTimes,
    SetNRunMode,
    encode_clock_beep,
    encode_clock_display,
    encode_clock_end,
    encode_clock_icons,
    encode_clock_setnrun,
    encode_clock_text,
    encode_clock_text_rev2,
    encode_clock_version,
)
from dgt.protocol.clock_codec import BIT_BATTERY_LOW as _BATTERY_LOW
from dgt.protocol.clock_codec import BIT_NO_CLOCK as _NO_CLOCK
from dgt.protocol.clock_codec import BIT_RIGHT_HIGH as _RIGHT_HIGH
from dgt.protocol.clock_codec import BIT_RUNNING as _RUNNING
from dgt.protocol.clock_codec import BIT_TURN_A as _TURN_A
from dgt.protocol.clock_codec import BIT_TURN_B as _TURN_B
from dgt.protocol.clock_codec import ClockStatus, read_valid_times

logger = logging.getLogger(__name__)

ACK_TIMEOUT = 2.0
"""Seconds to wait for the acknowledgement of a clock command before resending it."""

MAX_TRIES = 3
"""Sends of one clock command (the first one included) before the clock is reported as not
answering: a command is given up after ``ACK_TIMEOUT * MAX_TRIES`` seconds at most."""

READY_ACK = 0x81
"""ack1 of the spontaneous "ready" ack; some clocks answer END and REV2 text with it."""

BUTTON_ACK = 0x88

# The sides as plain module names: read on every clock report, and cheaper than an
# attribute of the enum class each time (the status bits likewise, from the codec).
_TURN_BITS = _TURN_A | _TURN_B
_LEFT = Side.LEFT
_RIGHT = Side.RIGHT

_BUTTON_NAMES: dict[Button, str] = {
    Button.BACK: "back",
    Button.PLUS: "plus",
    Button.RUN: "run",
    Button.MINUS: "minus",
    Button.OK: "ok",
}


# --- state ------------------------------------------------------------------------------


class ClockState:
    """What the clock reports, folded into events.  Pure: feed it messages with their
    receive times (monotonic seconds) and it returns the events they mean.

    Which turn bit means which side is contested (docs/protocol.md §3.4, §10): the 2015 header says
    0x08 = right, recorded boards show 0x08 while the *left* time runs.  The state starts
    with the recorded reading and switches to the other one as soon as it sees a running
    clock whose counting-down side contradicts it; the lever (bit 0x02) is always taken from
    its own bit and never from the turn bits.
    """

    __slots__ = (
        "_battery_low", "_left_flag", "_prev_left", "_prev_right", "_right_flag", "_status",
        "_turn", "_updated", "connected", "left", "lever", "right", "running", "turn_bit_left",
        "version",
    )  # fmt: skip

    def __init__(self) -> None:
        self.left: float | None = None
        """Seconds on the left display (None until the first valid times frame)."""
        self.right: float | None = None
        self.running: bool = False
        self.lever: Side | None = None
        """Side of the lever that is up (None until known)."""
        self.connected: bool | None = None
        """True/False once known: from the no-clock bit, the version ack, or a clock that
        stopped answering."""
        self.version: tuple[int, int] | None = None
        self.turn_bit_left: int = ClockStatus.TURN_A
        """The status bit that marks the left side running (learned, see class doc)."""
        # The last valid times frame read, kept as plain ints in slots of this object (no
        # tuple to make and to touch again a second later): left and right seconds, the
        # status byte (-1: none since the start or the clock went) and the running side its
        # ClockUpdate gave.
        self._status: int = -1
        self._prev_left: int = 0
        self._prev_right: int = 0
        self._turn: Side | None = None
        # The rest of the last report (:attr:`last_update`), kept as its fields: the
        # report itself is not kept (the consumer's one goes when the consumer is done
        # with it, and no report of a second ago is touched again to free it).
        self._updated: float | None = None
        """The last report's time (None: no report yet)."""
        self._left_flag = False
        self._right_flag = False
        self._battery_low = False

    @property
    def last_update(self) -> ClockUpdate | None:
        """The last clock report (None before the first): an equal one, made when asked."""
        updated = self._updated
        if updated is None or self.lever is None or self.left is None or self.right is None:
            return None
        return clock_update(
            updated, self.left, self.right, self.running, self.lever,
            self._left_flag, self._right_flag, self._battery_low, self._turn,
        )  # fmt: skip

    def feed(self, message: ClockTimes | ClockAck, now: float) -> list[BoardEvent]:
        """Fold one decoded BWTIME message in; return the events it produces."""
        if isinstance(message, ClockAck):
            return self._feed_ack(message, now)
        return self.feed_times(message, now)

    def set_connected(
        self, connected: bool, now: float, reason: str = "", version: tuple[int, int] | None = None
    ) -> list[BoardEvent]:
        """Record a change of the connection state; an event only when it changed."""
        if version is not None:
            changed = self.version != version or self.connected is not True
            self.version = version
            self.connected = True
            if changed:
                return [ClockConnection(now, True, version, reason)]
            return []
        if self.connected == connected:
            return []
        self.connected = connected
        if not connected:
            self.version = None
        return [ClockConnection(now, connected, self.version, reason)]

    # -- internals --

    def _feed_ack(self, ack: ClockAck, now: float) -> list[BoardEvent]:
        if ack.version is not None and not ack.spontaneous:
            return self.set_connected(True, now, "version", version=ack.version)
        if ack.ack1 == BUTTON_ACK:
            events: list[BoardEvent] = []
            if self.connected is not True:
                events += self.set_connected(True, now, "button")
            button = ack.button
            name = _BUTTON_NAMES[button] if button is not None else f"0x{ack.ack3:02x}"
            events.append(ButtonPressed(now, name, ack.ack2))
            return events
        return []

    def _learn_turn_bits(self, left: int, right: int, bits: int) -> None:
        """Called for a running clock whose previous reading ran too; ``bits`` are the turn
        bits of the status byte."""
        if bits != _TURN_A and bits != _TURN_B:
            return
        if self._status & _TURN_BITS != bits:
            return
        prev_left = self._prev_left
        prev_right = self._prev_right
        left_down = left < prev_left and right == prev_right
        right_down = right < prev_right and left == prev_left
        if left_down and bits != self.turn_bit_left:
            logger.info("clock turn bits: 0x%02x marks the left side running", bits)
            self.turn_bit_left = bits
        elif right_down and bits == self.turn_bit_left:
            other = _TURN_BITS & ~bits
            logger.info("clock turn bits: 0x%02x marks the left side running", other)
            self.turn_bit_left = other

    def feed_times(self, times: ClockTimes, now: float) -> list[BoardEvent]:
        """:meth:`feed` for a times frame (a clock report, once a second a board)."""
        return self.feed_raw(times.raw, now)

    def feed_raw(self, raw: bytes, now: float) -> list[BoardEvent]:
        """:meth:`feed_times` of the times frame of 7 bytes ``raw`` (``ClockTimes.raw``)."""
        update = self.same_status(raw, now)
        if update is None:
            return self._feed_raw(raw, now)
        return [update]

    def same_status(self, raw: bytes, now: float) -> ClockUpdate | None:
        """:meth:`feed_raw` of the common report, its one event: the same status byte as
        the last one, only the times and the flags moved (a running clock, once a second a
        board).  None, with nothing read, for any other report: :meth:`feed_raw` it."""
        status = raw[6]
        if status != self._status or self.connected is not True:
            return None
        # Lever, running, turn bits and battery are those of the last report: no
        # LeverMoved, the same turn.
        reading = read_valid_times(raw)
        if reading is None:  # bogus, or the null frame
            return None
        left, right, _, left_flag, right_flag = reading
        turn = self._turn
        if turn is not None:
            # a running clock whose turn bits mark a side: _learn_turn_bits switches them
            # when the other side counted down (and only then)
            if turn is _LEFT:
                if right < self._prev_right and left == self._prev_left:
                    return None
            elif left < self._prev_left and right == self._prev_right:
                return None
        self._prev_left = left
        self._prev_right = right
        self.left = seconds_left = float(left)
        self.right = seconds_right = float(right)
        self._updated = now
        self._left_flag = left_flag
        self._right_flag = right_flag
        return clock_update(
            now,
            seconds_left,
            seconds_right,
            self.running,
            self.lever,  # type: ignore[arg-type]  # known: the status byte is the last one's
            left_flag,
            right_flag,
            bool(status & _BATTERY_LOW),
            turn,
        )

    def _feed_raw(self, raw: bytes, now: float) -> list[BoardEvent]:
        """:meth:`feed_raw` of any report: the general path."""
        if not any(raw):  # times.is_null
            return []
        if raw[6] & _NO_CLOCK:  # times.status
            self._status = -1
            return self.set_connected(False, now, "no clock on the board")
        reading = read_valid_times(raw)  # times.read_valid()
        if reading is None:
            logger.debug("ignoring bogus clock times %s", raw.hex(" "))
            return []
        left, right, status, left_flag, right_flag = reading
        events: list[BoardEvent] = []
        if self.connected is not True:
            events += self.set_connected(True, now, "times")
        running = bool(status & _RUNNING)
        bits = status & _TURN_BITS
        turn: Side | None = None
        if running:
            if self._status >= 0 and self._status & _RUNNING:
                self._learn_turn_bits(left, right, bits)
            # the running side the turn bits mark, if any
            turn_bit_left = self.turn_bit_left
            if bits == turn_bit_left:
                turn = _LEFT
            elif bits and bits == _TURN_BITS & ~turn_bit_left:
                turn = _RIGHT
        lever = _RIGHT if status & _RIGHT_HIGH else _LEFT
        if lever is not self.lever and self.lever is not None:
            events.append(LeverMoved(now, lever))
        self.lever = lever
        self.left = seconds_left = float(left)
        self.right = seconds_right = float(right)
        self.running = running
        update = clock_update(
            now,
            seconds_left,
            seconds_right,
            running,
            lever,
            left_flag,
            right_flag,
            bool(status & _BATTERY_LOW),
            turn,
        )  # ClockUpdate(...), built cheaper
        self._updated = now
        self._left_flag = left_flag
        self._right_flag = right_flag
        self._battery_low = update.battery_low
        self._status = status
        self._prev_left = left
        self._prev_right = right
        self._turn = turn
        events.append(update)
        return events


# --- sender -----------------------------------------------------------------------------


class CommandState(Enum):
    QUEUED = "queued"
    SENT = "sent"
    DONE = "done"
    FAILED = "failed"


@dataclass(eq=False)
class ClockRequest:
    """One queued clock command and, once finished, its result: the acknowledgement, or the
    exception saying why there is none (``ClockNotAnswering``, ``LinkClosed``).

    Like a future: :meth:`done`, :meth:`result`, :meth:`exception`,
    :meth:`add_done_callback` (callbacks run synchronously when it finishes)."""

    data: bytes
    max_tries: int = MAX_TRIES
    report: bool = True
    """Whether giving up on this command reports the clock as not answering (False for
    probes such as the version request at connect, where silence only means "no clock")."""
    state: CommandState = CommandState.QUEUED
    tries: int = 0
    deadline: float | None = None
    _result: ClockAck | None = None
    _exception: DgtError | None = None
    _callbacks: list[Callable[[ClockRequest], None]] = field(default_factory=list)

    @property
    def command(self) -> int:
        """The clock sub-command id (byte 3 of ``2B size 03 sub ...``)."""
        return self.data[3] if len(self.data) > 3 else -1

    def done(self) -> bool:
        return self.state in (CommandState.DONE, CommandState.FAILED)

    def result(self) -> ClockAck:
        """The ack; raises the failure, or ``RuntimeError`` if not finished yet."""
        if self._exception is not None:
            raise self._exception
        if self._result is None:
            raise RuntimeError("clock command not finished yet")
        return self._result

    def exception(self) -> DgtError | None:
        return self._exception

    def add_done_callback(self, callback: Callable[[ClockRequest], None]) -> None:
        if self.done():
            callback(self)
        else:
            self._callbacks.append(callback)

    def _finish(self, result: ClockAck | None, exception: DgtError | None) -> None:
        if self.done():
            return
        self._result = result
        self._exception = exception
        self.state = CommandState.FAILED if exception is not None else CommandState.DONE
        self.deadline = None
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback(self)


class ClockSender:
    """A queue of clock commands with at most one in flight.  Pure: the caller injects the
    time, calls :meth:`poll` at :meth:`next_deadline`, writes what :meth:`take_output`
    returns, and feeds every clock ack to :meth:`on_ack`.

    When a command is given up after ``max_tries`` sends it fails with
    :class:`~dgt.errors.ClockNotAnswering`, the commands queued behind it are dropped the same
    way (a clock that does not answer one command will not answer the next; sending each
    would only delay the report), and a ``ClockConnection(connected=False)`` event is
    returned.  Later commands are tried afresh.
    """

    def __init__(self, *, timeout: float = ACK_TIMEOUT, max_tries: int = MAX_TRIES) -> None:
        self.timeout = timeout
        self.max_tries = max_tries
        self._queue: list[ClockRequest] = []  # a few at most: a list is smaller than a deque
        self._in_flight: ClockRequest | None = None
        self._output: list[bytes] = []
        self._active = False
        self.answering: bool | None = None
        """False after a command was given up, True after any ack, None before either."""

    # -- feeding --

    @property
    def active(self) -> bool:
        return self._active

    def set_active(self, active: bool, now: float) -> None:
        """Whether commands may be sent (the board is in an update mode that sends acks and
        the link is up).  Going inactive puts the command in flight back at the head of the
        queue, with its tries kept; going active sends the next command."""
        if active == self._active:
            return
        self._active = active
        if not active:
            req = self._in_flight
            if req is not None:
                self._in_flight = None
                req.state = CommandState.QUEUED
                req.deadline = None
                self._queue.insert(0, req)
        else:
            self._send_next(now)

    def submit(
        self, data: bytes, now: float, *, max_tries: int | None = None, report: bool = True
    ) -> ClockRequest:
        """Queue a clock command (bytes of a ``dgt.protocol`` clock encoder)."""
        if len(data) < 5 or data[0] != 0x2B:
            raise ValueError("not a clock message: use the dgt.protocol clock encoders")
        req = ClockRequest(data, max_tries or self.max_tries, report)
        self._queue.append(req)
        if self._in_flight is None:
            self._send_next(now)
        return req

    def on_ack(self, ack: ClockAck, now: float) -> list[BoardEvent]:
        """Feed a clock acknowledgement; completes the command in flight when it matches."""
        events: list[BoardEvent] = []
        if self.answering is False:
            events.append(ClockConnection(now, True, None, "answering again"))
        self.answering = True
        req = self._in_flight
        if req is None:
            return events
        matches = (not ack.spontaneous and ack.command == req.command) or (
            ack.ack1 == READY_ACK and req.command in (ClockCommand.END, ClockCommand.REV2_ASCII)
        )
        if not matches:
            if not ack.spontaneous:
                logger.debug(
                    "clock ack for 0x%02x while 0x%02x is in flight", ack.command, req.command
                )
            return events
        if not ack.ok and ack.ack1 != READY_ACK and req.tries < req.max_tries:
            logger.debug("clock error ack 0x%02x for 0x%02x: resending", ack.ack0, req.command)
            self._send(req, now)
            return events
        self._in_flight = None
        req._finish(ack, None)
        self._send_next(now)
        return events

    def poll(self, now: float) -> list[BoardEvent]:
        """Handle an expired time-out: resend, or give up and report."""
        req = self._in_flight
        if req is None or req.deadline is None or now < req.deadline:
            return []
        if req.tries < req.max_tries:
            logger.debug(
                "no ack for clock command 0x%02x after %.1f s: resending (try %d of %d)",
                req.command, self.timeout, req.tries + 1, req.max_tries,
            )  # fmt: skip
            self._send(req, now)
            return []
        self._in_flight = None
        events: list[BoardEvent] = []
        if req.report:
            reason = (
                f"clock did not acknowledge command 0x{req.command:02x} after {req.tries} tries"
            )
            logger.warning("%s", reason)
            req._finish(None, ClockNotAnswering(reason))
            dropped = list(self._queue)
            self._queue.clear()
            for other in dropped:
                other._finish(None, ClockNotAnswering(f"dropped: {reason}"))
            if self.answering is not False:
                events.append(ClockConnection(now, False, None, reason))
            self.answering = False
        else:
            req._finish(None, ClockNotAnswering("no clock answered"))
            self._send_next(now)
        return events

    def next_deadline(self) -> float | None:
        req = self._in_flight
        return req.deadline if req is not None else None

    def take_output(self) -> list[bytes]:
        """Bytes to write to the board, in order; the list is emptied."""
        out, self._output = self._output, []
        return out

    def cancel_all(self, exception: DgtError | None = None) -> None:
        """Fail every queued and in-flight command (the board was closed)."""
        exc = exception or LinkClosed("the board was closed")
        pending = ([self._in_flight] if self._in_flight else []) + list(self._queue)
        self._in_flight = None
        self._queue.clear()
        for req in pending:
            req._finish(None, exc)

    @property
    def in_flight(self) -> ClockRequest | None:
        return self._in_flight

    @property
    def queued(self) -> int:
        """Commands waiting behind the one in flight."""
        return len(self._queue)

    # -- internals --

    def _send(self, req: ClockRequest, now: float) -> None:
        req.tries += 1
        req.state = CommandState.SENT
        req.deadline = now + self.timeout
        self._output.append(req.data)

    def _send_next(self, now: float) -> None:
        if not self._active or self._in_flight is not None or not self._queue:
            return
        req = self._queue.pop(0)
        self._in_flight = req
        self._send(req, now)


# --- the clock of a board ---------------------------------------------------------------


class Clock:
    """The clock of a :class:`dgt.Board`: its state (``left``, ``right``, ``running``,
    ``lever``, ``version``, ``connected``) and commands that resolve to the clock's ack or
    raise :class:`~dgt.errors.ClockNotAnswering`.  Created by the board; not for direct use.
    """

    def __init__(self, submit: Callable[[bytes], Awaitable[ClockAck]]) -> None:
        self.state = ClockState()
        self._submit = submit

    @property
    def left(self) -> float | None:
        return self.state.left

    @property
    def right(self) -> float | None:
        return self.state.right

    @property
    def running(self) -> bool:
        return self.state.running

    @property
    def lever(self) -> Side | None:
        return self.state.lever

    @property
    def version(self) -> tuple[int, int] | None:
        return self.state.version

    @property
    def connected(self) -> bool | None:
        return self.state.connected

    @property
    def is_dgt3000(self) -> bool:
        """Version major 2 = DGT 3000 (text commands); major 1 = DGT XL."""
        return self.state.version is not None and self.state.version[0] >= 2

    async def send(self, data: bytes) -> ClockAck:
        """Send any clock message built with the ``dgt.protocol`` encoders."""
        return await self._submit(data)

    async def set_and_run(
        self, left: float, right: float, *, run: Side | None = None, toggle_on_lever: bool = True
    ) -> ClockAck:
        """Set both times (seconds); ``run`` starts that side counting down, else paused."""
        mode: int = {
            None: SetNRunMode.PAUSED,
            Side.LEFT: SetNRunMode.LEFT_RUNS,
            Side.RIGHT: SetNRunMode.RIGHT_RUNS,
        }[run]
        if toggle_on_lever:
            mode |= SetNRunMode.TOGGLE_ON_LEVER
        return await self._submit(encode_clock_setnrun(left, right, mode))

    async def show_text(self, text: str, *, beep: int = 0, rev2: bool = False) -> ClockAck:
        """Show text: 8 characters on a DGT 3000, 11 on a Revelation II (``rev2``), six
        7-segment characters on a DGT XL (chosen from the clock version)."""
        if rev2:
            return await self._submit(encode_clock_text_rev2(text, beep))
        if self.state.version is not None and self.state.version[0] < 2:
            return await self._submit(encode_clock_display(text, beep=bool(beep)))
        return await self._submit(encode_clock_text(text, beep))

    async def end_text(self) -> ClockAck:
        """Back to the time display."""
        return await self._submit(encode_clock_end())

    async def beep(self, seconds: float = 0.5) -> ClockAck:
        return await self._submit(encode_clock_beep(seconds))

    async def set_icons(
        self,
        left: int = 0,
        right: int = 0,
        left_periods: int = 0,
        right_periods: int = 0,
        special: int = 0,
    ) -> ClockAck:
        return await self._submit(
            encode_clock_icons(left, right, left_periods, right_periods, special)
        )

    async def request_version(self) -> ClockAck:
        return await self._submit(encode_clock_version())
