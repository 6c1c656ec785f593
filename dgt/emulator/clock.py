"""A virtual DGT 3000 (or DGT XL) chess clock, as a DGT board sees it through its clock port.

Pure state machine: no I/O, no sleeping; every method that depends on time takes ``now``
(seconds, float, any monotonic origin).  The board (:class:`dgt.emulator.board.VirtualBoard`)
asks it for its times frame (BWTIME), hands it the clock commands the host sends
(``2B <size> 03 <sub> <data> 00``) and forwards its acknowledgements.

Facts: docs/protocol.md §3.4, §3.5, §5.  Choices where the sources leave a
gap are marked "choice" in the comments.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from enum import Enum

from dgt.events import Side
from dgt.protocol.clock_codec import ACK_ERROR, ACK_OK, Button, ClockTimes
from dgt.protocol.constants import CLOCK_END, CLOCK_START, ClockCommand

__all__ = ["BUTTON_ORDER", "ClockModel", "VirtualClock", "button_code"]

log = logging.getLogger(__name__)

Ack = tuple[int, int, int, int]
"""The four ack bytes (ack0, ack1, ack2, ack3) before they are spread over a BWTIME frame."""

_EPS = 1e-6
MAX_SECONDS = 9 * 3600 + 59 * 60 + 59
_STABLE_MARGIN = 1e-6
"""A cached frame is trusted until this long before the display's next change: far more
than the rounding of the running time, far less than the 0.1 ms after the change at which
the board looks (:meth:`VirtualClock.next_change`)."""


class ClockModel(Enum):
    DGT3000 = "dgt3000"
    XL = "xl"


BUTTON_ORDER: tuple[Button, ...] = (Button.BACK, Button.MINUS, Button.RUN, Button.PLUS, Button.OK)
"""Buttons by number 0..4 as the DGT 3000 is laid out from left to right (the numbering a
popular host uses: 0 back, 1 minus, 2 run, 3 plus, 4 ok)."""

_BUTTON_MASK = {
    Button.BACK: 0x04,
    Button.MINUS: 0x20,
    Button.RUN: 0x10,
    Button.PLUS: 0x08,
    Button.OK: 0x40,
}
"""ack2 of a button ack is 0x01 | one bit per button held (docs/protocol.md §5.3: our reading of the
values seen in the field: back 05, minus 21, run 11, plus 09, ok 41)."""

# Data bytes each sub-command carries (between the sub-command byte and the end marker).
_DATA_SIZE = {
    ClockCommand.DISPLAY: 8,
    ClockCommand.ICONS: 8,
    ClockCommand.END: 0,
    ClockCommand.BUTTON: 0,
    ClockCommand.VERSION: 0,
    ClockCommand.SETNRUN: 7,
    ClockCommand.BEEP: 1,
    ClockCommand.ASCII: 9,
    ClockCommand.REV2_ASCII: 12,
}


def button_code(button: int | Button) -> Button:
    """A button given as 0..4 (back, minus, run, plus, ok) or as a :class:`Button`."""
    if isinstance(button, Button):
        return button
    if 0 <= button < len(BUTTON_ORDER):
        return BUTTON_ORDER[button]
    if button in Button._value2member_map_:
        return Button(button)
    raise ValueError(f"no button {button}: use 0..4 (back, minus, run, plus, ok)")


@dataclass(slots=True)
class _SideState:
    seconds: float
    flag: bool = False
    count_up: bool = False


class VirtualClock:
    """A DGT 3000 (version 2.0) or DGT XL (version 1.x) connected to a board.

    State: the time of each side (seconds), the side whose time runs (``running``), a
    pause flag, the lever (``right_high``: the right side of the lever is up), whether the
    clock is in mode 23 (the mode in which a host may set and run it), the text on the
    display and the last beep.

    The lever is physical: pressing it puts the high side down and the other side up.
    The time of the *high* side runs (docs/protocol.md §10: status 0x09, lever bit clear = left
    high, while the left time counts down).  At power-up the clock waits for the first
    press, as a clock set up for a game does: the first press starts the side that goes
    up.  A host's set-and-run (mode 23 only) decides who runs, whether the clock is paused
    and whether the lever toggles the running side.
    """

    def __init__(
        self,
        *,
        left: float = 300.0,
        right: float = 300.0,
        increment: float = 0.0,
        model: ClockModel | str = ClockModel.DGT3000,
        version: tuple[int, int] | None = None,
        mode23: bool = True,
        right_high: bool = False,
        battery_low: bool = False,
        now: float = 0.0,
    ) -> None:
        self.model = ClockModel(model)
        self.version: tuple[int, int] = version or (
            (2, 0) if self.model is ClockModel.DGT3000 else (1, 2)
        )
        if not (0 <= self.version[0] <= 15 and 0 <= self.version[1] <= 15):
            raise ValueError(f"clock version {self.version} does not fit two nibbles")
        self.mode23 = mode23
        """Mode 23 is the clock mode in which the board's host may set and run it; a
        set-and-run in any other mode is answered with an error ack (H14)."""
        self.right_high = right_high
        self.battery_low = battery_low
        self.increment = increment
        self.running: Side | None = None
        """The side whose time runs (or would run, when paused or flagged)."""
        self.paused = False
        self.toggle_on_lever = True
        self.text: str | None = None
        """Text shown instead of the times (ASCII or 7-segment command) until END."""
        self.icons: bytes = bytes(8)
        self.beeps: list[tuple[float, float]] = []
        """(time, seconds) of each beep asked for, most recent last (kept short)."""
        self.buttons_held = 0
        self._sides = {Side.LEFT: _SideState(float(left)), Side.RIGHT: _SideState(float(right))}
        self._since = now
        self._framed: tuple[object, ...] = ()
        self._frame = ClockTimes(bytes(7))
        # The board asks for the frame several times a second (every poll, every deadline
        # it works out) and the display changes once a second: the frame is kept until the
        # state time (``_since``) reaches ``_frame_until``, unless a method changed the
        # times (``_changed``) or one of the public attributes it shows was set.
        self._frame_until = -math.inf
        self._frame_state: tuple[object, ...] = ()

    # -- time ------------------------------------------------------------------------

    def advance(self, now: float) -> None:
        """Let the running side's time pass up to ``now`` (earlier times are ignored)."""
        elapsed = now - self._since
        if elapsed <= 0:
            return
        self._since = now
        if not self.ticking:
            return
        assert self.running is not None
        side = self._sides[self.running]
        if side.count_up:
            side.seconds = min(side.seconds + elapsed, MAX_SECONDS)
            return
        side.seconds -= elapsed
        if side.seconds <= _EPS:
            # Flag: the time is blocked at zero (H14 byte 3 bit 4) and the clock stops.
            side.seconds = 0.0
            side.flag = True
            log.debug("clock: %s flag fell", self.running.value)

    @property
    def ticking(self) -> bool:
        """True while a time is actually running (not paused, no flag on the running side)."""
        if self.running is None or self.paused:
            return False
        return not self._sides[self.running].flag

    def times(self, now: float) -> tuple[float, float]:
        """(left, right) seconds at ``now``."""
        self.advance(now)
        return self._sides[Side.LEFT].seconds, self._sides[Side.RIGHT].seconds

    def flags(self) -> tuple[bool, bool]:
        return self._sides[Side.LEFT].flag, self._sides[Side.RIGHT].flag

    def frame(self, now: float) -> ClockTimes:
        """The times frame the clock reports at ``now`` (whole seconds as displayed)."""
        self.advance(now)
        state = (self.running, self.paused, self.right_high, self.battery_low)
        if self._since < self._frame_until and state == self._frame_state:
            return self._frame
        self._frame_state = state
        self._frame_until = self._stable_until()
        left = self._sides[Side.LEFT]
        right = self._sides[Side.RIGHT]
        running = self.running
        shown = (
            _shown(left), _shown(right),
            running is not None and not self.paused and not self._sides[running].flag,
            self.right_high, None if running is None else running is Side.LEFT,
            self.battery_low, left.flag, right.flag,
        )  # fmt: skip
        if shown != self._framed:
            self._framed = shown
            self._frame = ClockTimes.build(
                shown[0],
                shown[1],
                running=shown[2],
                right_high=shown[3],
                left_running=shown[4],
                battery_low=shown[5],
                left_flag=shown[6],
                right_flag=shown[7],
            )
        return self._frame

    def next_change(self, now: float) -> float | None:
        """When the displayed frame changes next without anyone acting (None: never)."""
        self.advance(now)
        if not self.ticking:
            return None
        return now + self._until_change() + 1e-4

    def _until_change(self) -> float:
        """Seconds until the running side's display changes (the clock is ticking)."""
        assert self.running is not None
        state = self._sides[self.running]
        if state.count_up:
            x = state.seconds + _EPS
            return math.floor(x) + 1 - x
        x = state.seconds - _EPS
        return x - (math.ceil(x) - 1)

    def _stable_until(self) -> float:
        """The state time up to which the displayed frame cannot change by itself."""
        if not self.ticking:
            return math.inf
        assert self.running is not None
        state = self._sides[self.running]
        if not state.count_up and state.seconds <= _EPS:
            return self._since  # the flag falls at the next tick of time: no caching
        return self._since + self._until_change() - _STABLE_MARGIN

    def _changed(self) -> None:
        """The times or the running side changed: the cached frame is out of date."""
        self._frame_until = -math.inf

    # -- physical actions ------------------------------------------------------------

    def set(
        self,
        left: float,
        right: float,
        now: float,
        *,
        increment: float | None = None,
        right_high: bool | None = None,
    ) -> None:
        """Set the clock up by hand for a new game: times, increment, stopped, lever."""
        self.advance(now)
        self._changed()
        self._sides = {Side.LEFT: _SideState(float(left)), Side.RIGHT: _SideState(float(right))}
        if increment is not None:
            self.increment = increment
        if right_high is not None:
            self.right_high = right_high
        self.running = None
        self.paused = False
        self.toggle_on_lever = True
        self.text = None

    def press_lever(self, now: float) -> tuple[Side, float] | None:
        """The lever is pressed: the high side goes down.  Returns the side whose time was
        halted and its time (what the board writes into its memory), or None when no time
        was running."""
        self.advance(now)
        self._changed()
        pressed = Side.RIGHT if self.right_high else Side.LEFT
        self.right_high = not self.right_high
        halted: tuple[Side, float] | None = None
        if self.ticking and self.running is pressed:
            state = self._sides[pressed]
            if self.increment and not state.count_up:
                state.seconds = min(state.seconds + self.increment, MAX_SECONDS)
            halted = (pressed, state.seconds)
        if self.toggle_on_lever:
            self.running = Side.RIGHT if self.right_high else Side.LEFT
        return halted

    def press_button(self, button: int | Button) -> Ack:
        """A button is pressed (and released): the spontaneous ack the clock sends."""
        code = button_code(button)
        return (ACK_OK, 0x88, 0x01 | _BUTTON_MASK[code], int(code))

    # -- host commands ---------------------------------------------------------------

    def command(self, data: bytes, now: float) -> Ack | None:
        """Handle the bytes of a CLOCK_MESSAGE after its size byte (``03 <sub> <data> 00``).

        Returns the ack the clock sends, or None for a frame the clock cannot read (no
        start or end marker, wrong length): choice, a clock that cannot parse a message
        has nothing to acknowledge.
        """
        if len(data) < 3 or data[0] != CLOCK_START or data[-1] != CLOCK_END:
            log.debug("clock: malformed message %s ignored", data.hex(" "))
            return None
        sub = data[1]
        body = data[2:-1]
        expected = _DATA_SIZE.get(sub)  # type: ignore[call-overload]
        if expected is None:
            log.debug("clock: unknown sub-command %#04x", sub)
            return (ACK_ERROR, sub, 0, 0)  # choice: unknown sub-commands get an error ack
        if len(body) != expected:
            log.debug("clock: sub-command %#04x with %d data bytes ignored", sub, len(body))
            return None
        self.advance(now)
        if sub == ClockCommand.VERSION:
            return (ACK_OK, sub, (self.version[0] << 4) | self.version[1], 0)
        if sub == ClockCommand.SETNRUN:
            if not self.mode23:
                return (ACK_ERROR, sub, 0, 0)
            self._setnrun(body)
            return (ACK_OK, sub, 0, 0)
        if sub == ClockCommand.ASCII:
            if self.model is not ClockModel.DGT3000:
                return (ACK_ERROR, sub, 0, 0)  # choice: the XL has no text display
            self.text = body[:8].decode("ascii", "replace")
            self._beep(now, 0.0 if body[8] == 0 else 0.0625 + body[8] / 16)
        elif sub == ClockCommand.REV2_ASCII:
            return (ACK_ERROR, sub, 0, 0)  # choice: only a Revelation II has 11 characters
        elif sub == ClockCommand.DISPLAY:
            self.text = _segments_text(body[:6])
            if body[7] == 0x03:
                self._beep(now, 0.064 * 16)
        elif sub == ClockCommand.ICONS:
            self.icons = bytes(body)
        elif sub == ClockCommand.END:
            self.text = None
        elif sub == ClockCommand.BEEP:
            self._beep(now, body[0] * 0.064)
        # BUTTON: the ack carries no button data (H14).
        return (ACK_OK, sub, 0, 0)

    def _setnrun(self, body: bytes) -> None:
        self._changed()
        mode = body[6]
        for side, (h, m, s) in ((Side.LEFT, body[0:3]), (Side.RIGHT, body[3:6])):
            seconds = min((h & 0x0F) * 3600 + m * 60 + s, MAX_SECONDS)
            self._sides[side] = _SideState(float(seconds), count_up=bool(h & 0x10))
        if mode & 0x01:
            self.running = Side.LEFT
        elif mode & 0x02:
            self.running = Side.RIGHT
        elif not mode & 0x04:
            self.running = None
        self.paused = bool(mode & 0x04)
        self.toggle_on_lever = bool(mode & 0x08)
        self.increment = 0.0  # choice: a host that sets and runs the clock adds increments itself
        self.text = None

    def _beep(self, now: float, seconds: float) -> None:
        if seconds > 0:
            self.beeps = [*self.beeps[-7:], (now, seconds)]

    def describe(self, now: float) -> str:
        """One line for people: times, who runs, lever, text."""
        left, right = self.times(now)
        run = f"{self.running.value} runs" if self.ticking and self.running else "stopped"
        lever = "right high" if self.right_high else "left high"
        text = f", shows {self.text!r}" if self.text is not None else ""
        flags = "".join(
            f", {side} flag"
            for side, flag in zip(("left", "right"), self.flags(), strict=True)
            if flag
        )
        return f"clock {_hms(left)} | {_hms(right)}, {run}, {lever}{flags}{text}"


def _shown(state: _SideState) -> int:
    """The whole seconds a side's display shows."""
    if state.count_up:
        return int(state.seconds + _EPS)
    return max(0, math.ceil(state.seconds - _EPS))  # a countdown shows 5:00 until it ticks


def _hms(seconds: float) -> str:
    total = max(0, math.ceil(seconds - _EPS))
    h, rest = divmod(total, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}"


_SEGMENT_CHARS = {
    0x00: " ", 0x3F: "0", 0x06: "1", 0x5B: "2", 0x4F: "3", 0x66: "4", 0x6D: "5", 0x7D: "6",
    0x07: "7", 0x7F: "8", 0x6F: "9", 0x40: "-",
}  # fmt: skip


def _segments_text(segments: bytes) -> str:
    """The six 7-segment bytes of a DISPLAY command (order C, B, A, F, E, D) as text
    "ABCDEF"; patterns other than digits show as '?'."""
    c, b, a, f, e, d = segments
    return "".join(_SEGMENT_CHARS.get(x, "?") for x in (a, b, c, d, e, f))
