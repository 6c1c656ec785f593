"""One frozen dataclass per board-to-host message, each with ``to_bytes()`` and a decoder.

``decode_message(msg_id, payload)`` turns a complete frame (already cut by the parser) into
its dataclass; it never raises: a payload that does not fit becomes :class:`Unknown`.
``SIZES`` lists the total size (header included) each known id may have; the parser uses it
to reject impossible frames.  Time and ack fields of the clock frame (BWTIME) are decoded in
:mod:`dgt.protocol.clock_codec` and used here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dgt.protocol.clock_codec import ClockAck, ClockTimes, decode_bwtime
from dgt.protocol.constants import HEADER_SIZE, MessageId, Piece
from dgt.protocol.eeprom import EERecord, decode_ee_stream, encode_ee_stream
from dgt.protocol.slots import slot_setters


def frame(msg_id: int, payload: bytes) -> bytes:
    """Wrap a payload in the 3-byte header (id, 14-bit total length)."""
    size = len(payload) + HEADER_SIZE
    return bytes((msg_id, (size >> 7) & 0x7F, size & 0x7F)) + payload


_FIELD_OF_SQUARE: tuple[int, ...] = tuple((7 - (i >> 3)) * 8 + (i & 7) for i in range(64))
"""The board's field number of each python-chess square, and (the mapping is its own
inverse) the square of each field number: a dump lists a8 first, python-chess a1."""


# Piece.from_wire of every byte, for each board family: a dump decodes 64 squares, and a
# lookup is cheaper than a call per square.
_PIECE_OF_CODE: dict[bool, tuple[Piece, ...]] = {
    presence_only: tuple(Piece.from_wire(code, presence_only) for code in range(256))
    for presence_only in (False, True)
}


def _ascii(payload: bytes) -> str:
    return payload.decode("ascii", "replace")


@dataclass(frozen=True, slots=True)
class BoardDump:
    """All 64 squares in the board's field order (index 0 = a8 ... 63 = h1)."""

    ID: ClassVar[int] = MessageId.BOARD_DUMP
    fields: bytes  # 64 raw piece codes

    def __init__(self, fields: bytes) -> None:
        _BD_FIELDS(self, fields)  # the slot set straight (dgt.protocol.slots): after each move

    def pieces(self, presence_only: bool = False) -> tuple[Piece, ...]:
        """Square contents in python-chess order (index 0 = a1), board frame."""
        fields = self.fields
        if len(fields) < 64:  # decode_message never makes one; read what is missing as empty
            fields = fields + bytes(64 - len(fields))
        piece_of = _PIECE_OF_CODE[bool(presence_only)]
        return tuple([piece_of[fields[index]] for index in _FIELD_OF_SQUARE])

    @classmethod
    def from_pieces(cls, squares: tuple[Piece, ...] | list[Piece]) -> BoardDump:
        """Build a dump from square contents in python-chess order (index 0 = a1)."""
        if len(squares) != 64:
            raise ValueError(f"a board has 64 squares, not {len(squares)}")
        return cls(bytes([squares[square].to_wire() for square in _FIELD_OF_SQUARE]))

    def to_bytes(self) -> bytes:
        return frame(self.ID, self.fields)


(_BD_FIELDS,) = slot_setters(BoardDump)


@dataclass(frozen=True, slots=True)
class FieldUpdate:
    """One field changed: ``index`` is the board's field number (0 = a8), ``code`` the
    new raw piece code (0 = emptied)."""

    ID: ClassVar[int] = MessageId.FIELD_UPDATE
    index: int
    code: int

    @property
    def square(self) -> int:
        """python-chess square in the board's frame."""
        index = self.index
        return (7 - (index >> 3)) * 8 + (index & 7)

    def to_bytes(self) -> bytes:
        return frame(self.ID, bytes((self.index, self.code)))


@dataclass(frozen=True, slots=True)
class EEMoves:
    """The board's memory: a stream of piece changes, clock times and tags."""

    ID: ClassVar[int] = MessageId.EE_MOVES
    data: bytes

    @property
    def records(self) -> tuple[EERecord, ...]:
        return decode_ee_stream(self.data)

    @classmethod
    def from_records(cls, records: list[EERecord] | tuple[EERecord, ...]) -> EEMoves:
        return cls(encode_ee_stream(records))

    def to_bytes(self) -> bytes:
        return frame(self.ID, self.data)


@dataclass(frozen=True, slots=True)
class BusAddress:
    ID: ClassVar[int] = MessageId.BUSADRES
    address: int  # 14 bits

    def to_bytes(self) -> bytes:
        return frame(self.ID, bytes(((self.address >> 7) & 0x7F, self.address & 0x7F)))


@dataclass(frozen=True, slots=True)
class SerialNumber:
    ID: ClassVar[int] = MessageId.SERIALNR
    text: str
    """5 ASCII digits (H14); an old header revision says 9 characters ("01025 1.0"); one
    Pegasus implementation answers with 10 characters, as its long serial number: all three
    decode (:data:`SERIAL_SIZES`)."""

    def to_bytes(self) -> bytes:
        return frame(self.ID, self.text.encode("ascii"))


@dataclass(frozen=True, slots=True)
class Trademark:
    ID: ClassVar[int] = MessageId.TRADEMARK
    text: str

    def to_bytes(self) -> bytes:
        return frame(self.ID, self.text.encode("ascii"))


@dataclass(frozen=True, slots=True)
class Version:
    ID: ClassVar[int] = MessageId.VERSION
    major: int
    minor: int

    def __str__(self) -> str:
        return f"{self.major}.{self.minor:02d}"

    def to_bytes(self) -> bytes:
        return frame(self.ID, bytes((self.major, self.minor)))


@dataclass(frozen=True, slots=True)
class HardwareVersion:
    """Pegasus only (reply to 0x48)."""

    ID: ClassVar[int] = MessageId.HARDWARE_VERSION
    major: int
    minor: int

    def to_bytes(self) -> bytes:
        return frame(self.ID, bytes((self.major, self.minor)))


@dataclass(frozen=True, slots=True)
class LongSerialNumber:
    ID: ClassVar[int] = MessageId.LONG_SERIALNR
    text: str  # 10 ASCII characters; Revelation II puts its firmware first ("3.25...")

    def to_bytes(self) -> bytes:
        return frame(self.ID, self.text.encode("ascii"))


@dataclass(frozen=True, slots=True)
class BatteryStatus:
    """Bluetooth boards and the Pegasus.  ``percent`` is the raw first byte (the Pegasus
    may scale it differently: docs/protocol.md marks that as a conflict); 0x7F = not
    available in the time fields."""

    ID: ClassVar[int] = MessageId.BATTERY_STATUS
    percent: int
    time_left: tuple[int, int] = (0x7F, 0x7F)
    on_time: tuple[int, int] = (0, 0)
    standby: tuple[int, int, int] = (0, 0, 0)
    status: int = 0  # bit 0 charging, bit 1 discharging

    @property
    def charging(self) -> bool:
        return bool(self.status & 0x01)

    def to_bytes(self) -> bytes:
        return frame(
            self.ID,
            bytes((self.percent, *self.time_left, *self.on_time, *self.standby, self.status)),
        )


@dataclass(frozen=True, slots=True)
class StateByte:
    """Pegasus one-byte state replies (lock state 0xA4, developer-key state 0xA5)."""

    ID: int
    value: int

    def to_bytes(self) -> bytes:
        return frame(self.ID, bytes((self.value,)))


@dataclass(frozen=True, slots=True)
class Unknown:
    """A well-framed message whose id we do not know, or whose payload did not fit."""

    ID: int
    payload: bytes

    def to_bytes(self) -> bytes:
        return frame(self.ID, self.payload)


Message = (
    BoardDump
    | FieldUpdate
    | ClockTimes
    | ClockAck
    | EEMoves
    | BusAddress
    | SerialNumber
    | Trademark
    | Version
    | HardwareVersion
    | LongSerialNumber
    | BatteryStatus
    | StateByte
    | Unknown
)

SERIAL_SIZES = frozenset({8, 12, 13})
"""Total sizes a serial-number frame (91) is sent with: 5 digits (H14), 9 characters (the
1998 header: digits, a space and "1.0"), and 10 characters (one Pegasus implementation
answers the serial-number request with its long serial number; docs/protocol.md §3.2)."""

# Total sizes (header included) a known id may have.  ``None`` = any size.  Where sources
# disagree the set holds every reading (serial number 8, 12 or 13; battery 7+3 per the
# header constant, 12 as sent by real boards: every size from 7 to 12).
SIZES: dict[int, frozenset[int] | None] = {
    MessageId.BOARD_DUMP: frozenset({67}),
    MessageId.BWTIME: frozenset({10}),
    MessageId.FIELD_UPDATE: frozenset({5}),
    MessageId.EE_MOVES: None,
    MessageId.BUSADRES: frozenset({5}),
    MessageId.SERIALNR: SERIAL_SIZES,
    MessageId.TRADEMARK: None,
    MessageId.VERSION: frozenset({5}),
    MessageId.BOARD_DUMP_50B: frozenset({53}),
    MessageId.BOARD_DUMP_50W: frozenset({53}),
    MessageId.HARDWARE_VERSION: frozenset({5}),
    MessageId.BATTERY_STATUS: frozenset(range(7, 13)),
    MessageId.LONG_SERIALNR: frozenset({13}),
    MessageId.LOCK_STATE: frozenset({4}),
    MessageId.DEVKEY_STATE: frozenset({4}),
}
MAX_EE_MOVES_SIZE = 0x2000 - 0x100 + 3
MAX_TRADEMARK_SIZE = 256 + HEADER_SIZE
MAX_UNKNOWN_SIZE = 512
"""Largest frame accepted for an id we do not know (a bigger length is taken as garbage)."""


def size_allowed(msg_id: int, size: int) -> bool:
    """Whether a frame of this id can have this total size."""
    if size < HEADER_SIZE:
        return False
    allowed = SIZES.get(msg_id, ...)
    if allowed is ...:  # unknown id
        return size <= MAX_UNKNOWN_SIZE
    if allowed is None:
        limit = MAX_EE_MOVES_SIZE if msg_id == MessageId.EE_MOVES else MAX_TRADEMARK_SIZE
        return size <= limit
    return size in allowed


def decode_message(msg_id: int, payload: bytes) -> Message:
    """Decode one complete frame's payload.  Never raises."""
    n = len(payload)
    if msg_id == MessageId.FIELD_UPDATE and n == 2 and payload[0] < 64:
        return FieldUpdate(payload[0], payload[1])
    if msg_id == MessageId.BWTIME and n == 7:
        return decode_bwtime(payload)
    if msg_id == MessageId.BOARD_DUMP and n == 64:
        return BoardDump(bytes(payload))
    if msg_id == MessageId.EE_MOVES:
        return EEMoves(bytes(payload))
    if msg_id == MessageId.SERIALNR:
        return SerialNumber(_ascii(payload))
    if msg_id == MessageId.LONG_SERIALNR:
        return LongSerialNumber(_ascii(payload))
    if msg_id == MessageId.TRADEMARK:
        return Trademark(_ascii(payload))
    if msg_id == MessageId.VERSION and n == 2:
        return Version(payload[0], payload[1])
    if msg_id == MessageId.HARDWARE_VERSION and n == 2:
        return HardwareVersion(payload[0], payload[1])
    if msg_id == MessageId.BUSADRES and n == 2:
        return BusAddress((payload[0] << 7) | payload[1])
    if msg_id == MessageId.BATTERY_STATUS:
        p = bytes(payload).ljust(9, b"\x00")
        return BatteryStatus(p[0], (p[1], p[2]), (p[3], p[4]), (p[5], p[6], p[7]), p[8])
    if msg_id in (MessageId.LOCK_STATE, MessageId.DEVKEY_STATE) and n == 1:
        return StateByte(msg_id, payload[0])
    return Unknown(msg_id, bytes(payload))
