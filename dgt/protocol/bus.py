"""Bus mode: many boards on one serial line, each answering commands sent to its address.

Commands are ``cmd, addr_hi, addr_lo, checksum``; replies are ``id, len_hi, len_lo,
addr_hi, addr_lo, data..., checksum`` (the length counts the whole frame).  Checksums are
the sum of the preceding bytes with bit 7 cleared.  The data of a reply has the layout of
the matching single-board message.
"""

from __future__ import annotations

from dataclasses import dataclass

from dgt.protocol.clock_codec import ClockAck, ClockTimes, decode_bwtime
from dgt.protocol.constants import BusCommand, BusMessageId
from dgt.protocol.eeprom import EERecord, decode_ee_stream
from dgt.protocol.messages import BoardDump, Version

BUS_HEADER_SIZE = 5
BUS_BROADCAST = 0


def checksum(data: bytes | bytearray) -> int:
    return sum(data) & 0x7F


def encode_bus_command(command: BusCommand, address: int) -> bytes:
    """An addressed command; address 0 reaches every board on the line."""
    body = bytes((command, (address >> 7) & 0x7F, address & 0x7F))
    return body + bytes((checksum(body),))


@dataclass(frozen=True, slots=True)
class BusMessage:
    """An addressed reply from one board of a bus."""

    id: int
    address: int
    data: bytes

    def to_bytes(self) -> bytes:
        size = len(self.data) + BUS_HEADER_SIZE + 1
        body = (
            bytes(
                (
                    self.id,
                    (size >> 7) & 0x7F,
                    size & 0x7F,
                    (self.address >> 7) & 0x7F,
                    self.address & 0x7F,
                )
            )
            + self.data
        )
        return body + bytes((checksum(body),))

    def board_dump(self) -> BoardDump | None:
        if self.id == BusMessageId.BRD_DUMP and len(self.data) == 64:
            return BoardDump(self.data)
        return None

    def clock(self) -> ClockTimes | ClockAck | None:
        if self.id == BusMessageId.BWTIME and len(self.data) == 7:
            return decode_bwtime(self.data)
        return None

    def version(self) -> Version | None:
        if self.id == BusMessageId.VERSION and len(self.data) >= 2:
            return Version(self.data[0], self.data[1])
        return None

    def records(self) -> tuple[EERecord, ...]:
        if self.id in (BusMessageId.UPDATE, BusMessageId.FROM_START):
            return decode_ee_stream(self.data)
        return ()


# Total sizes (header and checksum included); None = variable.
BUS_SIZES: dict[int, frozenset[int] | None] = {
    BusMessageId.BRD_DUMP: frozenset({70}),
    BusMessageId.BWTIME: frozenset({13}),
    BusMessageId.UPDATE: None,
    BusMessageId.FROM_START: None,
    BusMessageId.PING: frozenset({6}),
    BusMessageId.START_GAME_WRITTEN: frozenset({6}),
    BusMessageId.VERSION: frozenset({6, 8}),  # 6 up to firmware 1.2
    BusMessageId.BRD_DUMP_50B: frozenset({56}),
}
MAX_BUS_SIZE = 0x2000 + BUS_HEADER_SIZE + 1


def bus_size_allowed(msg_id: int, size: int) -> bool:
    allowed = BUS_SIZES.get(msg_id, ...)
    if allowed is ...:
        return False
    if allowed is None:
        return BUS_HEADER_SIZE + 1 <= size <= MAX_BUS_SIZE
    return size in allowed
