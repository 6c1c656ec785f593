"""Incremental frame parsers: board-to-host messages (single-board and bus mode) and, for
the emulator, host-to-board commands.

Every parser here is pure: it is fed bytes and returns what they complete; it never reads a
port, never raises on input, and gives the same output however the input is split into
chunks.  After garbage it resyncs on the next byte with bit 7 set (the only bytes that can
start a message), and it rejects a header whose length is impossible for its id.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dgt.protocol.bus import BUS_HEADER_SIZE, BusMessage, bus_size_allowed, checksum
from dgt.protocol.clock_codec import ClockTimes, decode_bwtime
from dgt.protocol.constants import HEADER_SIZE, Command, MessageId
from dgt.protocol.messages import BoardDump, FieldUpdate, Message, decode_message, size_allowed

_HIGH = re.compile(rb"[\x80-\xff]")

# Field updates are most of the traffic: every valid 5-byte frame maps to one shared
# immutable object, so the hot path is a slice and a dict lookup.
_FIELD_UPDATES: dict[bytes, FieldUpdate] = {
    bytes((MessageId.FIELD_UPDATE, 0, 5, index, code)): FieldUpdate(index, code)
    for index in range(64)
    for code in range(128)
}

# The ids of the fast paths below as plain ints (cheaper than the enum attributes).
_FIELD_UPDATE_ID = int(MessageId.FIELD_UPDATE)
_BWTIME_ID = int(MessageId.BWTIME)
_DUMP_ID = int(MessageId.BOARD_DUMP)


class FrameParser:
    """Board-to-host messages in single-board mode.

    >>> FrameParser().feed(bytes.fromhex("8e0005 0c01"))
    [FieldUpdate(index=12, code=1)]
    """

    __slots__ = ("_buffer", "discarded")

    def __init__(self) -> None:
        self._buffer = b""
        """The start of a frame whose rest has not come yet (immutable: replaced, never
        grown in place)."""
        self.discarded = 0
        """Bytes skipped as garbage so far (for diagnostics)."""

    @property
    def pending(self) -> int:
        """Bytes held back waiting for the rest of a frame."""
        return len(self._buffer)

    def reset(self) -> None:
        self._buffer = b""

    def lone_times(self, data: bytes | bytearray) -> bytes | None:
        """The clock's 7 bytes when ``data`` is one whole times frame and nothing else, and
        nothing is pending: what :meth:`feed` would give as one :class:`ClockTimes` (the
        read a board whose clock runs makes once a second).  None otherwise (an
        acknowledgement too): then :meth:`feed` it."""
        if (
            self._buffer
            or len(data) != 10
            or data[0] != _BWTIME_ID
            or data[1]
            or data[2] != 10
            or type(data) is not bytes
        ):
            return None
        payload = data[3:]
        if not payload.isascii() or (payload[0] & 0x0F) == 0x0A or (payload[3] & 0x0F) == 0x0A:
            return None
        return payload

    def lone_update(self, data: bytes | bytearray) -> FieldUpdate | None:
        """The field update ``data`` is, whole and alone, when nothing is pending: what
        :meth:`feed` would give (a lift or a placing, most often read alone).  None
        otherwise: then :meth:`feed` it."""
        if self._buffer or len(data) != 5 or type(data) is not bytes:
            return None
        return _FIELD_UPDATES.get(data)

    def lone_dump(self, data: bytes | bytearray) -> BoardDump | None:
        """The board dump ``data`` is, whole and alone, when nothing is pending: what
        :meth:`feed` would give (the answer to the settle re-dump after every move).  None
        otherwise: then :meth:`feed` it."""
        if (
            self._buffer
            or len(data) != 67
            or data[0] != _DUMP_ID
            or data[1]
            or data[2] != 67
            or type(data) is not bytes
        ):
            return None
        payload = data[3:]
        return BoardDump(payload) if payload.isascii() else None

    def feed(self, data: bytes | bytearray) -> list[Message]:
        # Work on the new bytes directly when nothing is pending (the usual case): no copy.
        buf = self._buffer + data if self._buffer else bytes(data)
        out: list[Message] = []
        n = len(buf)
        i = 0
        field_updates = _FIELD_UPDATES
        while i < n:
            if buf[i] < 0x80:
                m = _HIGH.search(buf, i)
                if m is None:
                    self.discarded += n - i
                    i = n
                    break
                self.discarded += m.start() - i
                i = m.start()
            if n - i < HEADER_SIZE:
                break
            if buf[i] == _FIELD_UPDATE_ID:
                hit = field_updates.get(buf[i : i + 5])
                if hit is not None:
                    out.append(hit)
                    i += 5
                    continue
            elif buf[i] == _BWTIME_ID and n - i >= 10 and buf[i + 1] == 0 and buf[i + 2] == 10:
                payload = buf[i + 3 : i + 10]
                if payload.isascii():  # no byte with bit 7 set: a whole clock frame
                    if (payload[0] & 0x0F) == 0x0A or (payload[3] & 0x0F) == 0x0A:
                        out.append(decode_bwtime(payload))  # an acknowledgement
                    else:
                        out.append(ClockTimes(payload))
                    i += 10
                    continue
            elif buf[i] == _DUMP_ID and n - i >= 67 and buf[i + 1] == 0 and buf[i + 2] == 67:
                payload = buf[i + 3 : i + 67]
                if payload.isascii():  # a whole dump (the answer to every settle re-dump)
                    out.append(BoardDump(payload))
                    i += 67
                    continue
            msg_id = buf[i]
            hi = buf[i + 1]
            lo = buf[i + 2]
            if hi >= 0x80 or lo >= 0x80:
                self.discarded += 1
                i += 1
                continue
            size = (hi << 7) | lo
            if not size_allowed(msg_id, size):
                self.discarded += 1
                i += 1
                continue
            end = i + size
            m = _HIGH.search(buf, i + HEADER_SIZE, end if end < n else n)
            if m is not None:  # a message starts inside this one: this header was garbage
                self.discarded += m.start() - i
                i = m.start()
                continue
            if end > n:
                break
            out.append(decode_message(msg_id, buf[i + HEADER_SIZE : end]))
            i = end
        self._buffer = buf[i:] if i < n else b""
        return out


class BusFrameParser:
    """Addressed replies of bus mode.  Frames with a wrong checksum are dropped (counted in
    ``bad_checksums``) and parsing resumes right after their header byte."""

    __slots__ = ("_buffer", "bad_checksums", "discarded")

    def __init__(self) -> None:
        self._buffer = bytearray()
        self.discarded = 0
        self.bad_checksums = 0

    def feed(self, data: bytes | bytearray) -> list[BusMessage]:
        buf = self._buffer
        buf += data
        out: list[BusMessage] = []
        n = len(buf)
        i = 0
        while i < n:
            if buf[i] < 0x80:
                m = _HIGH.search(buf, i)
                if m is None:
                    self.discarded += n - i
                    i = n
                    break
                self.discarded += m.start() - i
                i = m.start()
            if n - i < HEADER_SIZE:
                break
            hi, lo = buf[i + 1], buf[i + 2]
            size = (hi << 7) | lo
            if hi >= 0x80 or lo >= 0x80 or not bus_size_allowed(buf[i], size):
                self.discarded += 1
                i += 1
                continue
            end = i + size
            m = _HIGH.search(buf, i + HEADER_SIZE, min(end, n))
            if m is not None:
                self.discarded += m.start() - i
                i = m.start()
                continue
            if end > n:
                break
            frame = bytes(buf[i:end])
            if checksum(frame[:-1]) != frame[-1]:
                self.bad_checksums += 1
                i += 1
                continue
            address = (frame[3] << 7) | frame[4]
            out.append(BusMessage(frame[0], address, frame[BUS_HEADER_SIZE:-1]))
            i = end
        del buf[:i]
        return out


# --- host -> board ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HostCommand:
    """A command as a board receives it: the command byte and its data (for the
    multi-byte commands, the bytes after the size byte; for bus commands, the address)."""

    code: int
    data: bytes = b""
    address: int | None = None  # bus commands only


SIZED_COMMANDS = frozenset(
    (Command.CLOCK_MESSAGE, Command.SET_LEDS, Command.DEVELOPER_KEY, Command.SET_BOARD_NAME)
)
"""Commands followed by a size byte, on a board that knows them all (Pegasus, Rev II)."""


class CommandParser:
    """Host-to-board commands, as a board reads its line.

    One-byte commands; sized commands ``code, n, n bytes``; bus commands (bit 7 set)
    ``code, addr_hi, addr_lo, checksum``.  Which codes take a size depends on the board:
    a classic board knows only the clock message, so it reads the bytes of an LED frame as
    one-byte commands (that is how an LED frame stalls it).  A bus command with a bad
    checksum is dropped whole: dropping one byte would read its address bytes as
    single-board commands.  Never raises.
    """

    __slots__ = ("_buffer", "bad_checksums", "sized")

    def __init__(self, sized: frozenset[int] = SIZED_COMMANDS) -> None:
        self._buffer = bytearray()
        self.sized = sized
        self.bad_checksums = 0

    def reset(self) -> None:
        self._buffer.clear()

    def feed(self, data: bytes | bytearray) -> list[HostCommand]:
        buf = self._buffer
        buf += data
        out: list[HostCommand] = []
        n = len(buf)
        i = 0
        sized = self.sized
        while i < n:
            code = buf[i]
            if code >= 0x80:
                if n - i < 4:
                    break
                hi, lo = buf[i + 1], buf[i + 2]
                if hi < 0x80 and lo < 0x80 and checksum(buf[i : i + 3]) == buf[i + 3]:
                    out.append(HostCommand(code, b"", (hi << 7) | lo))
                    i += 4
                else:
                    # Drop the damaged command whole, but not a command that starts inside
                    # it: only the first byte of a bus command has bit 7 set.
                    self.bad_checksums += 1
                    end = i + 4
                    i += 1
                    while i < end and buf[i] < 0x80:
                        i += 1
            elif code in sized:
                if n - i < 2:
                    break
                end = i + 2 + buf[i + 1]
                if end > n:
                    break
                out.append(HostCommand(code, bytes(buf[i + 2 : end])))
                i = end
            else:
                out.append(HostCommand(code))
                i += 1
        del buf[:i]
        return out
