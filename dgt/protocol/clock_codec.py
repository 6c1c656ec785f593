"""The clock inside the board protocol: the BWTIME frame (times or acknowledgement) and the
CLOCK_MESSAGE (0x2B) commands for the DGT XL, DGT 3000 and Revelation II.

Pure codec: no state, no I/O.  The stateful side (what the clock shows, one command in
flight, resends) is :mod:`dgt.clock`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import ClassVar

from dgt.protocol.constants import CLOCK_END, CLOCK_START, ClockCommand, Command, MessageId
from dgt.protocol.slots import slot_setters

ACK_OK = 0x10
ACK_ERROR = 0x40


class ClockStatus(IntEnum):
    """Bits of the status byte (p6) of a times frame."""

    RUNNING = 0x01
    RIGHT_HIGH = 0x02  # lever: 1 = right side high
    BATTERY_LOW = 0x04
    TURN_A = 0x08  # right player's turn per the 2015 header; left on boards we recorded
    TURN_B = 0x10
    NO_CLOCK = 0x20


class Button(IntEnum):
    """DGT 3000 buttons as reported in ack3 of a button ack (ASCII '1'..'5')."""

    BACK = 0x31
    PLUS = 0x32
    RUN = 0x33
    MINUS = 0x34
    OK = 0x35


def _bcd(value: int) -> int:
    return (value >> 4) * 10 + (value & 0x0F)


def _to_bcd(value: int) -> int:
    return ((value // 10) << 4) | (value % 10)


def _valid_bcd(value: int) -> bool:
    return (value >> 4) <= 5 and (value & 0x0F) <= 9


# Tables by byte value: every board's clock reports each second, and a lookup is several
# times cheaper than the arithmetic (or a call) per byte.
_BCD: tuple[int, ...] = tuple(_bcd(value) for value in range(256))
"""``_bcd(value)`` for every byte."""
_VALID_BCD: tuple[bool, ...] = tuple(_valid_bcd(value) for value in range(256))
"""``_valid_bcd(value)`` for every byte."""
_VALID_HOURS: tuple[bool, ...] = tuple((value & 0x0F) <= 9 for value in range(256))
"""Whether the hours nibble of a side's first byte is a digit."""
_HOURS_3600: tuple[int, ...] = tuple((value & 0x0F) * 3600 for value in range(256))
"""Seconds of the hours nibble of a side's first byte (its flag bits masked off)."""
_NOT_A_TIME = -(1 << 40)
"""What an impossible digit reads as below (any sum with it stays below zero)."""
_HOURS_OR_BAD: tuple[int, ...] = tuple(
    _HOURS_3600[value] if _VALID_HOURS[value] else _NOT_A_TIME for value in range(256)
)
"""Seconds of a side's first byte (hours, flag bits masked off), or :data:`_NOT_A_TIME`."""
_MINUTES_OR_BAD: tuple[int, ...] = tuple(
    _BCD[value] * 60 if _VALID_BCD[value] else _NOT_A_TIME for value in range(256)
)
"""Seconds of a side's minutes byte, or :data:`_NOT_A_TIME`."""
_SECONDS_OR_BAD: tuple[int, ...] = tuple(
    _BCD[value] if _VALID_BCD[value] else _NOT_A_TIME for value in range(256)
)
"""A side's seconds byte, or :data:`_NOT_A_TIME`."""
_TO_BCD: tuple[int, ...] = tuple(_to_bcd(value) for value in range(60))
"""``_to_bcd(value)`` for minutes and seconds."""


def read_valid_times(r: bytes) -> tuple[int, int, int, bool, bool] | None:
    """:meth:`ClockTimes.read_valid` of the 7 bytes ``r`` of a times frame (a function: the
    driver reads one a second a board): each side's seconds from three lookups whose
    impossible digits read as far below zero, so one test of the sum checks them all."""
    left = _HOURS_OR_BAD[r[3]] + _MINUTES_OR_BAD[r[4]] + _SECONDS_OR_BAD[r[5]]
    right = _HOURS_OR_BAD[r[0]] + _MINUTES_OR_BAD[r[1]] + _SECONDS_OR_BAD[r[2]]
    # the null frame (every byte 0) reads as no time: only a frame at 0:00:00 on both
    # sides needs its bytes looked at for it; a comparison makes each flag (no bool call)
    if left < 0 or right < 0 or not (left or right or any(r)):
        return None
    return (left, right, r[6], r[3] & 0x50 != 0, r[0] & 0x50 != 0)


def read_times(r: bytes) -> tuple[int, int, int, bool, bool]:
    """:meth:`ClockTimes.read` of the 7 bytes ``r`` of a times frame."""
    return (
        _HOURS_3600[r[3]] + _BCD[r[4]] * 60 + _BCD[r[5]],
        _HOURS_3600[r[0]] + _BCD[r[1]] * 60 + _BCD[r[2]],
        r[6],
        bool(r[3] & 0x50),
        bool(r[0] & 0x50),
    )


_BWTIME_HEADER = bytes((MessageId.BWTIME, 0, 10))
"""The header of every times frame, built once (the emulated boards send one a second)."""

# The status bits as plain ints (for hot paths here and in dgt.clock): cheaper to read
# than an attribute of the enum class.
BIT_RUNNING = int(ClockStatus.RUNNING)
BIT_RIGHT_HIGH = int(ClockStatus.RIGHT_HIGH)
BIT_BATTERY_LOW = int(ClockStatus.BATTERY_LOW)
BIT_TURN_A = int(ClockStatus.TURN_A)
BIT_TURN_B = int(ClockStatus.TURN_B)
BIT_NO_CLOCK = int(ClockStatus.NO_CLOCK)


@dataclass(frozen=True, slots=True)
class ClockTimes:
    """A times frame, kept as its 7 raw bytes so it round-trips exactly; the fields a host
    needs are properties (and :meth:`read` gives the usual ones at once).  Left and right
    are as seen from the front of the clock."""

    ID: ClassVar[int] = MessageId.BWTIME
    raw: bytes

    def __init__(self, raw: bytes) -> None:
        _CT_RAW(self, raw)  # the slot set straight (dgt.protocol.slots): one a second a board

    @classmethod
    def build(
        cls,
        left: float,
        right: float,
        *,
        running: bool = False,
        right_high: bool = False,
        left_running: bool | None = None,
        battery_low: bool = False,
        no_clock: bool = False,
        left_flag: bool = False,
        right_flag: bool = False,
    ) -> ClockTimes:
        """Encode times in seconds.  ``left_running`` sets the turn bits the way the boards
        we recorded do (0x08 while the left time runs, 0x10 while the right runs)."""
        status = (
            (BIT_RUNNING if running else 0)
            | (BIT_RIGHT_HIGH if right_high else 0)
            | (BIT_BATTERY_LOW if battery_low else 0)
            | (BIT_TURN_A if left_running is True else BIT_TURN_B if left_running is False else 0)
            | (BIT_NO_CLOCK if no_clock else 0)
        )
        return cls(bytes((*_side_bytes(right, right_flag), *_side_bytes(left, left_flag), status)))

    @property
    def right(self) -> int:
        """Seconds on the right display."""
        return self.read()[1]

    @property
    def left(self) -> int:
        return self.read()[0]

    def read(self) -> tuple[int, int, int, bool, bool]:
        """``(left, right, status, left_flag, right_flag)`` in one call: what a host takes
        from every frame (the properties read one each)."""
        return read_times(self.raw)

    def read_valid(self) -> tuple[int, int, int, bool, bool] | None:
        """:meth:`read` of a frame whose digits are :attr:`valid`, else None: what a host
        takes from a frame it does not ignore, in one call."""
        return read_valid_times(self.raw)

    @property
    def status(self) -> int:
        return self.raw[6]

    @property
    def running(self) -> bool:
        return bool(self.raw[6] & BIT_RUNNING)

    @property
    def right_high(self) -> bool:
        """Lever position: True when the right side is up."""
        return bool(self.raw[6] & BIT_RIGHT_HIGH)

    @property
    def battery_low(self) -> bool:
        return bool(self.raw[6] & BIT_BATTERY_LOW)

    @property
    def clock_connected(self) -> bool:
        return not self.raw[6] & BIT_NO_CLOCK

    @property
    def right_flag(self) -> bool:
        return self.read()[4]

    @property
    def left_flag(self) -> bool:
        return self.read()[3]

    @property
    def is_null(self) -> bool:
        """All seven bytes zero: sent by some Bluetooth firmware after a clock command; to be
        ignored."""
        return not any(self.raw)

    @property
    def valid(self) -> bool:
        """False for frames a host should ignore: null frames, impossible digits."""
        r = self.raw
        return (
            any(r)
            and (r[0] & 0x0F) <= 9
            and (r[3] & 0x0F) <= 9
            and _VALID_BCD[r[1]]
            and _VALID_BCD[r[2]]
            and _VALID_BCD[r[4]]
            and _VALID_BCD[r[5]]
        )

    def to_bytes(self) -> bytes:
        return _BWTIME_HEADER + self.raw


(_CT_RAW,) = slot_setters(ClockTimes)


@dataclass(frozen=True, slots=True)
class ClockAck:
    """A clock acknowledgement (same frame as the times, recognised by an hours nibble of
    0x0A).  ``ack0``..``ack3`` are the four reassembled 8-bit ack bytes."""

    ID: ClassVar[int] = MessageId.BWTIME
    ack0: int
    ack1: int
    ack2: int
    ack3: int

    def __init__(self, ack0: int, ack1: int, ack2: int, ack3: int) -> None:
        _ACK0(self, ack0)  # the slots set straight (dgt.protocol.slots)
        _ACK1(self, ack1)
        _ACK2(self, ack2)
        _ACK3(self, ack3)

    @property
    def command(self) -> int:
        """The clock sub-command this answers (ack1 without its spontaneous bit)."""
        return self.ack1 & 0x7F

    @property
    def spontaneous(self) -> bool:
        """Sent by the clock on its own (ready, button), not as a reply."""
        return bool(self.ack1 & 0x80)

    @property
    def ok(self) -> bool:
        return self.ack0 == ACK_OK

    @property
    def button(self) -> Button | None:
        if self.ack1 == 0x88 and self.ack3 in Button._value2member_map_:
            return Button(self.ack3)
        return None

    @property
    def button_mask(self) -> int:
        """ack2 of a button ack: 0x01 | a bit per button held (our reading of a table seen
        in the field; multi-press)."""
        return self.ack2 if self.ack1 == 0x88 else 0

    @property
    def version(self) -> tuple[int, int] | None:
        if self.ack1 == ClockCommand.VERSION:
            return (self.ack2 >> 4, self.ack2 & 0x0F)
        return None

    def to_bytes(self) -> bytes:
        p0 = 0x0A | (0x10 if self.ack2 & 0x80 else 0) | (0x20 if self.ack3 & 0x80 else 0)
        p3 = 0x0A | (0x10 if self.ack0 & 0x80 else 0) | (0x20 if self.ack1 & 0x80 else 0)
        body = (p0, self.ack0 & 0x7F, self.ack1 & 0x7F, p3, self.ack2 & 0x7F, self.ack3 & 0x7F, 0)
        return bytes((self.ID, 0, 10, *body))


_ACK0, _ACK1, _ACK2, _ACK3 = slot_setters(ClockAck)


def decode_bwtime(p: bytes) -> ClockTimes | ClockAck:
    """Decode the 7 payload bytes of a BWTIME frame."""
    if (p[0] & 0x0F) == 0x0A or (p[3] & 0x0F) == 0x0A:
        return ClockAck(
            (p[1] & 0x7F) | ((p[3] << 3) & 0x80),
            (p[2] & 0x7F) | ((p[3] << 2) & 0x80),
            (p[4] & 0x7F) | ((p[0] << 3) & 0x80),
            (p[5] & 0x7F) | ((p[0] << 2) & 0x80),
        )
    return ClockTimes(bytes(p))


# --- host -> clock commands ------------------------------------------------------------


def clock_message(sub: int, data: bytes = b"") -> bytes:
    """Wrap a clock sub-command: ``2B <size> 03 <sub> <data> 00``."""
    return (
        bytes((Command.CLOCK_MESSAGE, len(data) + 3, CLOCK_START, sub)) + data + bytes((CLOCK_END,))
    )


def encode_clock_end() -> bytes:
    """Back to the time display after a text or display message."""
    return clock_message(ClockCommand.END)


def encode_clock_version() -> bytes:
    return clock_message(ClockCommand.VERSION)


def encode_clock_button() -> bytes:
    return clock_message(ClockCommand.BUTTON)


def encode_clock_beep(seconds: float) -> bytes:
    """Beep for about ``seconds`` (64 ms units, at most 127 units)."""
    return clock_message(ClockCommand.BEEP, bytes((max(0, min(127, round(seconds / 0.064))),)))


class SetNRunMode(IntEnum):
    LEFT_RUNS = 0x01
    RIGHT_RUNS = 0x02
    PAUSED = 0x04
    TOGGLE_ON_LEVER = 0x08


def _hms(seconds: float) -> tuple[int, int, int]:
    total = max(0, min(int(seconds), 9 * 3600 + 59 * 60 + 59))
    hours, rest = divmod(total, 3600)
    return (hours, *divmod(rest, 60))


def _side_bytes(seconds: float, flag: bool) -> tuple[int, int, int]:
    """The three bytes of one side of a times frame: hours (and the flag bit), BCD minutes
    and seconds."""
    hours, minutes, secs = _hms(seconds)
    return (hours | (0x10 if flag else 0), _TO_BCD[minutes], _TO_BCD[secs])


def encode_clock_setnrun(
    left: float, right: float, mode: int = SetNRunMode.PAUSED | SetNRunMode.TOGGLE_ON_LEVER
) -> bytes:
    """Set both times (seconds, binary h/m/s as every host sends them) and start/pause."""
    return clock_message(ClockCommand.SETNRUN, bytes((*_hms(left), *_hms(right), mode)))


def decode_clock_setnrun(data: bytes) -> tuple[int, int, int]:
    """(left seconds, right seconds, mode) from the 7 data bytes of a SETNRUN."""
    left = (data[0] & 0x0F) * 3600 + data[1] * 60 + data[2]
    right = (data[3] & 0x0F) * 3600 + data[4] * 60 + data[5]
    return left, right, data[6]


def _text(text: str, width: int) -> bytes:
    return text.encode("ascii", "replace")[:width].ljust(width, b" ")


def encode_clock_text(text: str, beep: int = 0) -> bytes:
    """DGT 3000: show 8 ASCII characters; ``beep`` 0 (none) to 15."""
    return clock_message(ClockCommand.ASCII, _text(text, 8) + bytes((max(0, min(15, beep)),)))


def encode_clock_text_rev2(text: str, beep: int = 0) -> bytes:
    """Revelation II (firmware 3.24H and later): 11 ASCII characters."""
    return clock_message(ClockCommand.REV2_ASCII, _text(text, 11) + bytes((max(0, min(15, beep)),)))


SEGMENTS = {
    " ": 0x00, "0": 0x3F, "1": 0x06, "2": 0x5B, "3": 0x4F, "4": 0x66, "5": 0x6D, "6": 0x7D,
    "7": 0x07, "8": 0x7F, "9": 0x6F, "-": 0x40, "a": 0x77, "b": 0x7C, "c": 0x39, "d": 0x5E,
    "e": 0x79, "f": 0x71, "g": 0x3D, "h": 0x76, "i": 0x30, "j": 0x1E, "l": 0x38, "n": 0x54,
    "o": 0x5C, "p": 0x73, "q": 0x67, "r": 0x50, "s": 0x6D, "t": 0x78, "u": 0x3E, "y": 0x6E,
}  # fmt: skip
"""7-segment patterns (bit 0x01 top ... 0x40 middle); letters without a fair 7-segment
form show as blank."""


def encode_clock_display(text: str, icons: int = 0, beep: bool = False) -> bytes:
    """DGT XL: six 7-segment characters "ABCDEF" shown as ``1A:BC 1D:EF``.  ``icons`` is the
    dots/colons/ones bit mask."""
    chars = [SEGMENTS.get(c, 0) for c in text.lower()[:6].ljust(6)]
    a, b, c, d, e, f = chars
    return clock_message(ClockCommand.DISPLAY, bytes((c, b, a, f, e, d, icons, 3 if beep else 1)))


def encode_clock_icons(
    left: int = 0, right: int = 0, left_periods: int = 0, right_periods: int = 0, special: int = 0
) -> bytes:
    return clock_message(
        ClockCommand.ICONS, bytes((left, right, left_periods, right_periods, special, 0, 0, 0))
    )
