"""Records of the board's on-board memory (EE moves, and bus-mode change packets).

The memory is a stream of 1-, 2- and 3-byte records: piece changes, the clock time at each
lever press, and one-byte tags (power-up, start position seen, ...).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class EETag(IntEnum):
    NOP2 = 0x00
    POWERUP = 0x6A
    EOF = 0x6B
    FOURROWS = 0x6C
    EMPTYBOARD = 0x6D
    DOWNLOADED = 0x6E
    BEGINPOS = 0x6F
    BEGINPOS_ROT = 0x7A
    START_TAG = 0x7B
    WATCHDOG_ACTION = 0x7C
    FUTURE_1 = 0x7D
    FUTURE_2 = 0x7E
    NOP = 0x7F


@dataclass(frozen=True, slots=True)
class EEPieceChange:
    index: int  # board field number, 0 = a8
    code: int  # raw piece code, 0 = emptied
    quick: bool = False  # less than ~250 ms after the previous change


@dataclass(frozen=True, slots=True)
class EEClockTime:
    left: bool  # time of the left display (seen from the front)
    seconds: int


@dataclass(frozen=True, slots=True)
class EETagRecord:
    tag: int


EERecord = EEPieceChange | EEClockTime | EETagRecord


def _bcd(value: int) -> int:
    return ((value >> 4) & 0x07) * 10 + (value & 0x0F)


def decode_ee_stream(data: bytes) -> tuple[EERecord, ...]:
    """Decode a memory stream.  Never raises: a record cut short at the end is dropped."""
    out: list[EERecord] = []
    i, n = 0, len(data)
    while i < n:
        b = data[i]
        if 0x40 <= b <= 0x5F:
            if i + 1 >= n:
                break
            out.append(EEPieceChange(data[i + 1] & 0x3F, b & 0x0F, bool(b & 0x10)))
            i += 2
        elif (0x60 <= b <= 0x69) or (0x70 <= b <= 0x79):
            if i + 2 >= n:
                break
            seconds = (b & 0x0F) * 3600 + _bcd(data[i + 1]) * 60 + _bcd(data[i + 2])
            out.append(EEClockTime(bool(b & 0x10), seconds))
            i += 3
        else:
            out.append(EETagRecord(b))
            i += 1
    return tuple(out)


def encode_ee_stream(records: list[EERecord] | tuple[EERecord, ...]) -> bytes:
    out = bytearray()
    for r in records:
        if isinstance(r, EEPieceChange):
            out += bytes((0x40 | (0x10 if r.quick else 0) | (r.code & 0x0F), r.index & 0x3F))
        elif isinstance(r, EEClockTime):
            hours, rest = divmod(max(0, min(r.seconds, 9 * 3600 + 3599)), 3600)
            minutes, seconds = divmod(rest, 60)
            out += bytes(
                (
                    0x60 | (0x10 if r.left else 0) | hours,
                    ((minutes // 10) << 4) | (minutes % 10),
                    ((seconds // 10) << 4) | (seconds % 10),
                )
            )
        else:
            out.append(r.tag & 0x7F)
    return bytes(out)
