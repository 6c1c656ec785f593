"""Byte values of the DGT board protocol: commands, message ids, piece codes.

Ids and lengths live in separate tables (see ``messages.py``) so that equal byte values in
different tables never alias each other.  Facts: docs/protocol.md.
"""

from __future__ import annotations

from enum import IntEnum

MESSAGE_BIT = 0x80
"""The only byte of a board message with bit 7 set is its first (the id)."""

MAX_MESSAGE_SIZE = (1 << 14) - 1
"""The 14-bit length field counts the whole message, header included."""

HEADER_SIZE = 3


class Command(IntEnum):
    """Single-board commands from the host.  Most are one byte."""

    SEND_RESET = 0x40
    SEND_CLK = 0x41
    SEND_BRD = 0x42
    SEND_UPDATE = 0x43
    SEND_UPDATE_BRD = 0x44
    RETURN_SERIALNR = 0x45
    RETURN_BUSADRES = 0x46
    SEND_TRADEMARK = 0x47
    SEND_HARDWARE_VERSION = 0x48  # Pegasus
    SEND_EE_MOVES = 0x49
    TO_BUSMODE = 0x4A
    SEND_UPDATE_NICE = 0x4B
    SEND_BATTERY_STATUS = 0x4C
    SEND_VERSION = 0x4D
    STARTBOOTLOADER = 0x4E
    SEND_BRD_50B = 0x50
    SCAN_50B = 0x51
    SEND_BRD_50W = 0x52
    SCAN_50W = 0x53
    SCAN_100 = 0x54
    RETURN_LONG_SERIALNR = 0x55
    SEND_UNKNOWN_V = 0x56  # Pegasus, answered with 0xA3
    SEND_LOCK_STATE = 0x59  # Pegasus
    SEND_DEVKEY_STATE = 0x5A  # Pegasus
    SET_LEDS = 0x60  # multi-byte: Revelation II and Pegasus forms
    DEVELOPER_KEY = 0x63  # multi-byte, Pegasus
    SET_BOARD_NAME = 0x65  # multi-byte, Pegasus (uncertain)
    CLOCK_MESSAGE = 0x2B  # multi-byte


class MessageId(IntEnum):
    """Ids of single-board messages from the board (with MESSAGE_BIT set)."""

    BOARD_DUMP = 0x86
    BWTIME = 0x8D
    FIELD_UPDATE = 0x8E
    EE_MOVES = 0x8F
    BUSADRES = 0x90
    SERIALNR = 0x91
    TRADEMARK = 0x92
    VERSION = 0x93
    BOARD_DUMP_50B = 0x94
    BOARD_DUMP_50W = 0x95
    HARDWARE_VERSION = 0x96  # Pegasus
    BATTERY_STATUS = 0xA0
    LONG_SERIALNR = 0xA2
    PEGASUS_UNKNOWN_A3 = 0xA3
    LOCK_STATE = 0xA4  # Pegasus
    DEVKEY_STATE = 0xA5  # Pegasus


class BusCommand(IntEnum):
    """Addressed commands of bus mode: ``cmd, addr_hi, addr_lo, checksum``."""

    SEND_CLK = 0x81
    SEND_BRD = 0x82
    SEND_CHANGES = 0x83
    REPEAT_CHANGES = 0x84
    SET_START_GAME = 0x85
    SEND_FROM_START = 0x86
    PING = 0x87
    END_BUSMODE = 0x88
    RESET = 0x89
    IGNORE_NEXT_BUS_PING = 0x8A
    SEND_VERSION = 0x8B
    SEND_BRD_50B = 0x8C
    SEND_ALL_D = 0x8D


class BusMessageId(IntEnum):
    """Ids of addressed replies in bus mode."""

    BRD_DUMP = 0x83
    BWTIME = 0x84
    UPDATE = 0x85
    FROM_START = 0x86
    PING = 0x87
    START_GAME_WRITTEN = 0x88
    VERSION = 0x89
    BRD_DUMP_50B = 0x8A


class ClockCommand(IntEnum):
    """Sub-commands inside a CLOCK_MESSAGE (0x2B) frame; also ack1 of the reply."""

    DISPLAY = 0x01
    ICONS = 0x02
    END = 0x03
    BUTTON = 0x08
    VERSION = 0x09
    SETNRUN = 0x0A
    BEEP = 0x0B
    ASCII = 0x0C
    REV2_ASCII = 0x0D


CLOCK_START = 0x03
CLOCK_END = 0x00


class Piece(IntEnum):
    """What a square holds.

    Values 0x00-0x0F are the wire codes of piece-identity boards (note: king 5 before
    queen 6).  ``OCCUPIED`` is not a wire code: presence-only boards (Pegasus) send 1 for
    "something stands here", which the driver turns into ``OCCUPIED`` so that it never
    reads as a white pawn.  ``UNKNOWN`` stands for a square the board cannot read (a
    Pegasus without its developer key reports 0x7F everywhere).
    """

    EMPTY = 0x00
    WPAWN = 0x01
    WROOK = 0x02
    WKNIGHT = 0x03
    WBISHOP = 0x04
    WKING = 0x05
    WQUEEN = 0x06
    BPAWN = 0x07
    BROOK = 0x08
    BKNIGHT = 0x09
    BBISHOP = 0x0A
    BKING = 0x0B
    BQUEEN = 0x0C
    DRAW = 0x0D  # "magic piece": draw
    WHITE_WINS = 0x0E  # magic piece: white wins
    BLACK_WINS = 0x0F  # magic piece: black wins
    OCCUPIED = 0x40  # presence-only boards; not a wire code
    UNKNOWN = 0x7F

    @property
    def symbol(self) -> str:
        """One character: FEN letter, ``.`` empty, ``*`` occupied, ``?`` unknown,
        ``=`` draw, ``W``/``X`` for the white-wins and black-wins pieces."""
        return _SYMBOLS[self]

    @property
    def is_chessman(self) -> bool:
        return Piece.WPAWN <= self <= Piece.BQUEEN

    @classmethod
    def from_symbol(cls, symbol: str) -> Piece:
        try:
            return _FROM_SYMBOL[symbol]
        except KeyError:
            raise ValueError(f"unknown piece symbol {symbol!r}") from None

    @classmethod
    def from_wire(cls, code: int, presence_only: bool = False) -> Piece:
        """Decode a square byte; never raises (undefined codes read as UNKNOWN)."""
        try:
            return (_FROM_PRESENCE if presence_only else _FROM_IDENTITY)[code]
        except IndexError:
            return Piece.UNKNOWN

    def to_wire(self) -> int:
        """The byte a board sends for this square content."""
        return _TO_WIRE[self]


_SYMBOLS: dict[Piece, str] = {
    Piece.EMPTY: ".",
    Piece.WPAWN: "P",
    Piece.WROOK: "R",
    Piece.WKNIGHT: "N",
    Piece.WBISHOP: "B",
    Piece.WKING: "K",
    Piece.WQUEEN: "Q",
    Piece.BPAWN: "p",
    Piece.BROOK: "r",
    Piece.BKNIGHT: "n",
    Piece.BBISHOP: "b",
    Piece.BKING: "k",
    Piece.BQUEEN: "q",
    Piece.DRAW: "=",
    Piece.WHITE_WINS: "W",
    Piece.BLACK_WINS: "X",
    Piece.OCCUPIED: "*",
    Piece.UNKNOWN: "?",
}
_FROM_SYMBOL: dict[str, Piece] = {s: p for p, s in _SYMBOLS.items()}

# Square bytes decoded once (a dump is 64 of them): by code, for each board family.
_FROM_IDENTITY: tuple[Piece, ...] = tuple(
    Piece(code) if code <= 0x0F else Piece.UNKNOWN for code in range(256)
)
_FROM_PRESENCE: tuple[Piece, ...] = tuple(
    Piece.EMPTY if code == 0 else Piece.UNKNOWN if code == 0x7F else Piece.OCCUPIED
    for code in range(256)
)


def wire_pieces(presence_only: bool = False) -> tuple[Piece, ...]:
    """The piece of each square byte 0..255 for a board family (``Piece.from_wire`` as a
    table, for callers that decode one byte after another: a byte beyond reads as
    ``Piece.UNKNOWN``)."""
    return _FROM_PRESENCE if presence_only else _FROM_IDENTITY


_TO_WIRE: dict[Piece, int] = {piece: int(piece) for piece in Piece} | {Piece.OCCUPIED: 0x01}


def index_to_square(index: int) -> int:
    """Board field index (0 = a8 ... 63 = h1, as the board numbers them) to a square in
    python-chess numbering (0 = a1 ... 63 = h8), in the board's own frame."""
    return (7 - (index >> 3)) * 8 + (index & 7)


def square_to_index(square: int) -> int:
    """Inverse of :func:`index_to_square` (the mapping is its own inverse)."""
    return (7 - (square >> 3)) * 8 + (square & 7)


def rotate_square(square: int) -> int:
    """The same field seen from the other side of the board (board turned round)."""
    return 63 - square
