"""A virtual DGT electronic chessboard: a pure state machine that answers host bytes the way a
real board does.

No I/O and no clock of its own: every call takes ``now`` (seconds, float, monotonic, any
origin).  Host bytes go in through :meth:`VirtualBoard.receive`, which returns the board's
answer bytes; time passes through :meth:`VirtualBoard.poll` (clock messages, delayed
replies) at the moment :meth:`VirtualBoard.next_deadline` names; physical actions
(:meth:`lift`, :meth:`place`, :meth:`press_lever`, :meth:`press_button`) return what the
board sends because of them.

Squares in this API are python-chess numbers (0 = a1 ... 63 = h8) in the *players'* frame
(White at rank 1).  A board turned round (``reversed=True``) has its connector on White's
right: it numbers its fields from the other corner, so it reports square ``s`` as
``63 - s`` (H14: the board never rotates its numbering).

Personalities: a classic e-Board (USB/serial; ``bluetooth=True`` adds the battery
command), a Revelation II (``revelation=True``: Rev II LED frames, battery), and a
Pegasus (``pegasus=True``: presence only, developer key, Pegasus-only commands, no clock,
no bus mode, no board memory).  ``quirks`` make it a board that is not quite DGT
(:class:`Quirk`): one that answers the serial-number request with 10 characters, one that
crashes and drops the link on the board-memory request.

Facts: docs/protocol.md (section numbers in comments) and the official
header (H14).  Where the sources leave a gap the comment says "choice".
"""

from __future__ import annotations

import functools
import heapq
import itertools
import logging
import operator
import random
from collections.abc import Iterable, Mapping
from enum import StrEnum
from types import EllipsisType

import chess

from dgt.emulator.clock import Ack, VirtualClock
from dgt.protocol.bus import BusMessage
from dgt.protocol.clock_codec import ACK_OK, Button, ClockAck, ClockTimes
from dgt.protocol.constants import (
    HEADER_SIZE,
    BusCommand,
    BusMessageId,
    Command,
    MessageId,
    Piece,
    square_to_index,
)
from dgt.protocol.eeprom import EEClockTime, EEPieceChange, EETag, encode_ee_stream
from dgt.protocol.messages import (
    BatteryStatus,
    BoardDump,
    BusAddress,
    FieldUpdate,
    HardwareVersion,
    LongSerialNumber,
    SerialNumber,
    StateByte,
    Trademark,
    Version,
    frame,
)
from dgt.protocol.parser import CommandParser, HostCommand

__all__ = ["EE_CAPACITY", "BoardMode", "Quirk", "VirtualBoard", "start_squares"]

log = logging.getLogger(__name__)

EE_CAPACITY = 0x1F00
"""Bytes in the board's cyclic memory; an EE_MOVES message carries at most this many
(oldest first, ending with EE_EOF): total message size 0x1F00 + 3 (H14)."""

BUS_RESET_TIME = 2.0
"""A bus RESET runs the power-up procedure, which "takes some seconds" (H14); choice: 2 s,
during which the board reads nothing."""

PING_SPREAD = 1.1
"""Replies to a broadcast ping are spread at random over about 1100 ms (H14)."""

START_GAME_DELAY = 0.07
"""START_GAME_WRITTEN comes about 70 ms after SET_START_GAME (H14)."""

QUICK_CHANGE = 0.25
"""A memory piece record gets its 'r' bit when written less than ~250 ms after the
previous one (H14)."""


class BoardMode(StrEnum):
    """What the board sends on its own in single-board mode (H14 §modes)."""

    IDLE = "idle"
    UPDATE = "update"  # field updates + clock times at least every second
    UPDATE_BOARD = "update_board"  # field updates only, no clock data, no clock acks
    UPDATE_NICE = "update_nice"  # field updates + clock times when they changed


class Quirk(StrEnum):
    """How a clone differs from a DGT board (issue 19: third-party implementations of the
    board side run against the driver; docs/protocol.md §8)."""

    TEN_CHARACTER_SERIAL = "ten-character-serial"
    """The serial-number request (45) is answered with 10 characters (its long serial
    number) under the serial-number id: a 13-byte frame, as one Pegasus implementation
    does."""
    DROPS_ON_MEMORY_REQUEST = "drops-on-memory-request"
    """The board-memory request (49) crashes the board: it drops the link and stays silent
    until switched on again, as a Centaur running a classic-board emulation does."""


_UPDATE_MODES = frozenset({BoardMode.UPDATE, BoardMode.UPDATE_BOARD, BoardMode.UPDATE_NICE})
_CLOCK_MODES = frozenset({BoardMode.UPDATE, BoardMode.UPDATE_NICE})

_PEGASUS_ONLY = frozenset(
    {
        Command.SEND_HARDWARE_VERSION,
        Command.SEND_UNKNOWN_V,
        Command.SEND_LOCK_STATE,
        Command.SEND_DEVKEY_STATE,
        Command.DEVELOPER_KEY,
        Command.SET_BOARD_NAME,
    }
)
_NOT_PEGASUS = frozenset(
    {
        Command.TO_BUSMODE,
        Command.STARTBOOTLOADER,
        Command.SEND_BRD_50B,
        Command.SCAN_50B,
        Command.SEND_BRD_50W,
        Command.SCAN_50W,
        Command.SCAN_100,
    }
)

_CHESS_TO_PIECE = {
    chess.PAWN: (Piece.WPAWN, Piece.BPAWN),
    chess.ROOK: (Piece.WROOK, Piece.BROOK),
    chess.KNIGHT: (Piece.WKNIGHT, Piece.BKNIGHT),
    chess.BISHOP: (Piece.WBISHOP, Piece.BBISHOP),
    chess.QUEEN: (Piece.WQUEEN, Piece.BQUEEN),
    chess.KING: (Piece.WKING, Piece.BKING),
}


def start_squares(board: chess.BaseBoard | None = None) -> tuple[Piece, ...]:
    """The 64 square contents (python-chess order) of a position; default the start."""
    board = board if board is not None else chess.BaseBoard()
    out = [Piece.EMPTY] * 64
    for square, piece in board.piece_map().items():
        out[square] = _CHESS_TO_PIECE[piece.piece_type][0 if piece.color else 1]
    return tuple(out)


_START = start_squares()
_EMPTY_FRAME = (Piece.EMPTY,) * 64
_START_ROTATED = tuple(reversed(_START))

_FIELD_OF = tuple(square_to_index(square) for square in range(64))
"""The board's field number of each board-frame square."""
_FIELD_OF_REVERSED = tuple(square_to_index(63 - square) for square in range(64))
"""The board's field number of each players'-frame square on a board turned round."""
_NO_CLOCK_FRAME = ClockTimes.build(0, 0, no_clock=True)
"""The times frame of a board with no clock plugged in."""
_FIELD_UPDATE_HEADER = FieldUpdate(0, 0).to_bytes()[:HEADER_SIZE]
"""The header of every field update (its size is fixed): a move's changes are built from
it directly, without a message object per change."""


class VirtualBoard:
    """One DGT board (with an optional DGT 3000 clock on its clock port).

    Construct it, feed it host bytes with :meth:`receive`, call :meth:`poll` at
    :meth:`next_deadline`, and move its pieces with :meth:`lift` and :meth:`place`.
    ``clock=...`` (the default) gives a classic board a DGT 3000 and a Pegasus none;
    ``clock=None`` is a board with no clock plugged in.
    """

    def __init__(
        self,
        *,
        pegasus: bool = False,
        reversed: bool = False,
        serial: str = "12345",
        version: tuple[int, int] | None = None,
        clock: VirtualClock | EllipsisType | None = ...,
        squares: Mapping[int, Piece] | None = None,
        ee_moves: bool = False,
        bus_address: int | None = None,
        now: float = 0.0,
        revelation: bool = False,
        bluetooth: bool = False,
        long_serial: str | None = None,
        battery: int = 80,
        seed: int | None = None,
        quirks: Iterable[Quirk | str] = (),
    ) -> None:
        if len(serial) != 5 or not serial.isdigit():
            raise ValueError(f"serial number must be 5 digits, got {serial!r}")
        if pegasus and revelation:
            raise ValueError("a board is either a Pegasus or a Revelation II, not both")
        self.pegasus = pegasus
        self.revelation = revelation
        names = [str(quirk) for quirk in quirks]
        known = {quirk.value for quirk in Quirk}
        unknown = sorted(name for name in names if name not in known)
        if unknown:
            raise ValueError(f"unknown quirk {unknown[0]!r} (known: {', '.join(sorted(known))})")
        self.quirks = frozenset(Quirk(name) for name in names)
        self.crashed = False
        """A quirk crashed the board: it reads nothing until :meth:`power_up`."""
        self._link_dropped = False
        self.bluetooth = bluetooth or revelation
        self.reversed = reversed
        self.serial = serial
        self.version: tuple[int, int] = version or (
            (1, 0) if pegasus else (3, 25) if revelation else (3, 10)
        )
        self.hardware_version = (1, 0)  # Pegasus 0x96 reply; choice: the value is not known
        self.long_serial = long_serial or (
            f"3.25{serial.rjust(6, '0')}" if revelation else serial.rjust(10, "0")
        )
        if len(self.long_serial) != 10:
            raise ValueError(f"long serial number must be 10 characters: {self.long_serial!r}")
        # The bus address is the serial number read as a 14-bit integer (H14: "01025" ->
        # 08 01).  Choice: serial numbers above 16383 keep their low 14 bits.
        self.bus_address = bus_address if bus_address is not None else int(serial) & 0x3FFF
        if not 0 < self.bus_address < 0x4000:
            raise ValueError(f"bus address must be 1..16383, got {self.bus_address}")
        self.battery = battery
        self.charging = False
        if clock is ...:
            clock = None if pegasus else VirtualClock(now=now)
        self.clock: VirtualClock | None = clock
        self._squares: list[Piece] = [Piece.EMPTY] * 64
        if squares is None:
            self._squares = list(_START)
        else:
            for square, piece in squares.items():
                self._squares[square] = Piece(piece)
        # Field number of each players'-frame square, and the wire codes by field number (a
        # dump's payload), kept up to date by every change: a host asks for a dump after
        # every move, and the image saves building one from the 64 squares each time.
        # (``reversed`` and ``pegasus`` describe the hardware: fixed once built.)
        self._field_of = _FIELD_OF_REVERSED if reversed else _FIELD_OF
        self._fields = bytearray(64)
        for square, piece in enumerate(self._squares):
            self._fields[self._field_of[square]] = piece.to_wire()
        sized = {Command.CLOCK_MESSAGE}
        if pegasus or revelation:
            sized.add(Command.SET_LEDS)
        if pegasus:
            sized |= {Command.DEVELOPER_KEY, Command.SET_BOARD_NAME}
        self._reader = CommandParser(frozenset(sized))
        self._rng = random.Random(self.bus_address if seed is None else seed)
        self._outbox: list[tuple[float, int, bytes]] = []
        self._seq = itertools.count()
        self._last_now = now
        # memory (EE): a byte log; absolute offsets count every byte ever written
        self._ee = bytearray()
        self._ee_base = 0  # absolute offset of self._ee[0]
        self._ee_last_piece_at: int | None = None  # offset of the last piece record
        self._ee_last_change = -1e9
        self._tagged: tuple[Piece, ...] | None = None
        self._tag_armed = True
        self._changes_from = 0  # bus SEND_CHANGES: first offset not yet sent
        self._last_changes = b""
        self._start_tag_at: int | None = None
        self.leds: frozenset[int] = frozenset()
        """Lit squares, players' frame (what a person sees lit on the board)."""
        self.led_settings: dict[str, int] = {}
        """Parameters of the last LED frame (Pegasus: speed, repeat, intensity; Rev II:
        pattern), and Rev II settings (auto_leds, auto_reverse)."""
        self.board_name: str | None = None
        self.trademark = self._default_trademark()
        if ee_moves and not pegasus:
            self._write_previous_session()
        self.power_up(now)

    # -- identity and state ------------------------------------------------------------

    def _default_trademark(self) -> str:
        major, minor = self.version
        if self.pegasus:
            # Pegasus: four CRLF-separated lines (maker, copyright 2021, software version
            # and build, hardware version and serial "P" + 9 characters) (CW, UE).
            return "\r\n".join(
                (
                    "Digital Game Technology",
                    "Copyright (c) 2021 DGT",
                    f"software version: {major}.{minor:02d}, build: 210101",
                    f"hardware version: 1.00, serial no: P{self.serial.rjust(9, '0')}",
                )
            )
        kind = "Revelation II" if self.revelation else "e-Board"
        return (
            f"Digital Game Technology\nCopyright (c) DGT Projects. DGT is a registered "
            f"trade mark.\nDGT {kind} software version {major}.{minor:02d} "
            f"serial nr. {self.serial}"
        )

    @property
    def squares(self) -> tuple[Piece, ...]:
        """All 64 squares in the players' frame (index = python-chess square)."""
        return tuple(self._squares)

    def board_frame(self) -> tuple[Piece, ...]:
        """What a dump of this board reports, as python-chess squares in the board's own
        frame: rotated 180 degrees when the board is turned round; OCCUPIED/EMPTY on a
        Pegasus (UNKNOWN everywhere until the developer key was sent)."""
        squares = self._squares[::-1] if self.reversed else self._squares
        if not self.pegasus:
            return tuple(squares)
        return tuple([self._report(piece) for piece in squares])

    def _physical(self, board_square: int) -> int:
        """Players'-frame square of a board-frame square (the mapping is its own inverse)."""
        return 63 - board_square if self.reversed else board_square

    def _report(self, piece: Piece) -> Piece:
        if not self.pegasus:
            return piece
        if not self.key_sent:
            return Piece.UNKNOWN
        return Piece.EMPTY if piece is Piece.EMPTY else Piece.OCCUPIED

    @property
    def last_now(self) -> float:
        """The latest time this board was told about."""
        return self._last_now

    @property
    def memory(self) -> bytes:
        """The board's memory as an EE_MOVES message would carry it, without the EOF."""
        return bytes(self._ee)

    def set_squares(self, squares: Mapping[int, Piece] | None, now: float) -> bytes:
        """Change many squares at once (None: the start position), as if they changed
        within one scan; returns the field updates the board sends."""
        target = list(_START) if squares is None else [Piece.EMPTY] * 64
        if squares is not None:
            for square, piece in squares.items():
                target[square] = Piece(piece)
        out = bytearray()
        for square in range(64):
            out += self._change(square, target[square], now)
        return bytes(out)

    # -- power --------------------------------------------------------------------------

    def power_up(self, now: float) -> None:
        """Switch the board on (again): bus mode and IDLE (H14: bus mode is the default
        power-up mode), a fresh command buffer, power-up records in memory (3 x NOP,
        POWERUP, one record per piece found), Pegasus key forgotten, LEDs off."""
        self._touch(now)
        self.mode = BoardMode.IDLE
        self.bus_mode = not self.pegasus  # choice: a Pegasus (BLE only) has no bus mode
        self.key_sent = False
        self.leds = frozenset()
        self.bootloader = False
        self.crashed = False
        self._busy_until = now
        self._ignore_next_ping = False
        self._reader.reset()
        self._outbox.clear()
        self._seen_clock = self._clock_frame(now)
        self._clock_due = now + 1.0
        if not self.pegasus:
            self._ee_write(bytes((EETag.NOP, EETag.NOP, EETag.NOP, EETag.POWERUP)))
            self._ee_last_piece_at = None
            for board_square in range(64):
                code = self._squares[self._physical(board_square)].to_wire()
                if code:
                    self._ee_write(
                        encode_ee_stream([EEPieceChange(square_to_index(board_square), code)])
                    )
            self._tagged = None
            self._tag_armed = True
            self._check_tags()

    def _write_previous_session(self) -> None:
        """Memory left by a game played while no host listened (``ee_moves=True``): a
        power-up with the start position, four moves with the clock time at each press,
        and the final position taken off the board."""
        squares = list(_START)

        def change(square: int, piece: Piece, quick: bool = False) -> None:
            squares[square] = piece
            board_square = self._physical(square)
            record = EEPieceChange(square_to_index(board_square), piece.to_wire(), quick)
            self._ee_write(encode_ee_stream([record]))

        self._ee_write(bytes((EETag.NOP, EETag.NOP, EETag.NOP, EETag.POWERUP)))
        for board_square in range(64):
            code = squares[self._physical(board_square)].to_wire()
            if code:
                record = EEPieceChange(square_to_index(board_square), code)
                self._ee_write(encode_ee_stream([record]))
        self._ee_write(bytes((EETag.BEGINPOS_ROT if self.reversed else EETag.BEGINPOS,)))
        clock_left = 300
        for n, uci in enumerate(("e2e4", "e7e5", "g1f3", "b8c6")):
            move = chess.Move.from_uci(uci)
            piece = squares[move.from_square]
            change(move.from_square, Piece.EMPTY)
            change(move.to_square, piece)
            clock_left -= 3 + n
            self._ee_write(encode_ee_stream([EEClockTime(left=n % 2 == 0, seconds=clock_left)]))
        for square in range(64):
            if squares[square] is not Piece.EMPTY:
                change(square, Piece.EMPTY, quick=True)
        self._ee_write(bytes((EETag.EMPTYBOARD,)))

    # -- time ---------------------------------------------------------------------------

    def _touch(self, now: float) -> None:
        if now > self._last_now:
            self._last_now = now

    def _clock_frame(self, now: float) -> ClockTimes:
        if self.clock is None:
            return _NO_CLOCK_FRAME
        return self.clock.frame(now)

    def _clock_reports(self) -> bool:
        """Whether the board streams clock data on its own right now."""
        return not self.pegasus and not self.bus_mode and self.mode in _CLOCK_MODES

    def poll(self, now: float) -> bytes:
        """Let time pass up to ``now``: delayed replies fall due, the clock ticks, clock
        times go out in UPDATE mode (at least every second, and on change) and in
        UPDATE_NICE mode (on change)."""
        self._touch(now)
        if self.clock is not None:
            self.clock.advance(now)
        if not self._outbox or self._outbox[0][0] > now:
            return self._clock_news(now, periodic=True)  # the usual poll: the clock's tick
        out = bytearray()
        while self._outbox and self._outbox[0][0] <= now:
            out += heapq.heappop(self._outbox)[2]
        out += self._clock_news(now, periodic=True)
        return bytes(out)

    def _clock_news(self, now: float, periodic: bool = False) -> bytes:
        """Clock times if they changed since the board last looked (and, in UPDATE mode,
        when a second has passed since the last times sent)."""
        current = self._clock_frame(now)
        changed = current != self._seen_clock
        self._seen_clock = current
        if not self._clock_reports():
            return b""
        due = periodic and self.mode is BoardMode.UPDATE and now >= self._clock_due - 1e-9
        if changed or due:
            self._clock_due = now + 1.0
            return current.to_bytes()
        return b""

    def next_deadline(self) -> float | None:
        """When :meth:`poll` must be called next (None: nothing scheduled)."""
        deadline = self._outbox[0][0] if self._outbox else None
        if not self._clock_reports():
            return deadline
        now = self._last_now
        if self._clock_frame(now) != self._seen_clock:
            clock_deadline: float | None = now  # the clock's times changed unseen: now
        elif self.clock is not None:
            clock_deadline = self.clock.next_change(now)
        else:
            clock_deadline = None
        if self.mode is BoardMode.UPDATE and (
            clock_deadline is None or self._clock_due < clock_deadline
        ):
            clock_deadline = self._clock_due
        if deadline is None or (clock_deadline is not None and clock_deadline < deadline):
            return clock_deadline
        return deadline

    def _later(self, due: float, data: bytes) -> None:
        heapq.heappush(self._outbox, (due, next(self._seq), data))

    # -- physical actions ---------------------------------------------------------------

    def lift(self, square: int, now: float) -> bytes:
        """A piece is taken off ``square`` (players' frame)."""
        return self._change(square, Piece.EMPTY, now)

    def place(self, square: int, piece: Piece, now: float) -> bytes:
        """``piece`` is put on ``square`` (replacing whatever stood there: a capture made
        in one movement shows no empty square, §10)."""
        if piece is Piece.UNKNOWN:
            raise ValueError("cannot place an unknown piece")
        return self._change(square, Piece(piece), now)

    def _change(self, square: int, piece: Piece, now: float) -> bytes:
        if not 0 <= square < 64:
            raise ValueError(f"no square {square}")
        self._touch(now)
        old = self._squares[square]
        if old is piece:
            return b""
        self._squares[square] = piece
        new_code = self._report_code(piece)
        if self._report_code(old) == new_code:  # a Pegasus cannot see one piece replaced
            return b""
        index = self._field_of[square]
        if not self.pegasus:
            self._fields[index] = new_code
            self._ee_piece(index, new_code, now)
            self._check_tags()
        if self.bus_mode or self.mode not in _UPDATE_MODES or self.bootloader:
            return b""
        if self.pegasus and not self.key_sent:
            return b""  # choice: a locked Pegasus reports nothing (its dump is all 0x7F)
        return _FIELD_UPDATE_HEADER + bytes((index, new_code))

    def _report_code(self, piece: Piece) -> int:
        if self.pegasus:
            return 0 if piece is Piece.EMPTY else 1
        return piece.to_wire()

    def press_lever(self, now: float) -> bytes:
        """Press the clock lever (the high side goes down).  The board writes the halted
        time into its memory; in UPDATE and UPDATE_NICE mode the new times go out."""
        self._touch(now)
        if self.clock is None:
            return b""
        halted = self.clock.press_lever(now)
        if halted is not None and not self.pegasus:
            side, seconds = halted
            # "when the board is swapped, the clock data are not swapped" (H14)
            self._ee_write(encode_ee_stream([EEClockTime(side.value == "left", int(seconds))]))
        return self._clock_news(now)

    def press_button(self, button: int | Button, now: float) -> bytes:
        """Press a DGT 3000 button (0..4 = back, minus, run, plus, ok, or a Button): the
        clock sends a spontaneous ack, which the board passes on in UPDATE / UPDATE_NICE
        mode only (clock acks are never sent in IDLE or UPDATE_BRD, H14)."""
        self._touch(now)
        if self.clock is None:
            return b""
        return self._ack(self.clock.press_button(button))

    def _ack(self, ack: Ack | None) -> bytes:
        if ack is None or not self._clock_reports():
            return b""
        return ClockAck(*ack).to_bytes()

    def attach_clock(self, clock: VirtualClock, now: float) -> bytes:
        """Plug a clock into the board: it announces itself with a spontaneous 'ready'
        ack (ack1 0x81), passed on in UPDATE / UPDATE_NICE mode, followed by its times."""
        self._touch(now)
        self.clock = clock
        clock.advance(now)
        return self._ack((ACK_OK, 0x81, 0, 0)) + self._clock_news(now)

    def detach_clock(self, now: float) -> bytes:
        """Unplug the clock: the times frame says 'no clock' from now on."""
        self._touch(now)
        self.clock = None
        return self._clock_news(now)

    # -- memory ---------------------------------------------------------------------------

    def _ee_write(self, data: bytes) -> None:
        self._ee += data
        excess = len(self._ee) - (EE_CAPACITY - 1)  # room for the EOF the dump appends
        if excess > 0:
            del self._ee[:excess]
            self._ee_base += excess

    @property
    def _ee_end(self) -> int:
        return self._ee_base + len(self._ee)

    def _ee_piece(self, index: int, code: int, now: float) -> None:
        quick = now - self._ee_last_change < QUICK_CHANGE
        self._ee_last_change = now
        record = _piece_record(index, code, quick)
        last = self._ee_last_piece_at
        # "when one piece only is changing, the new value overwrites the piece update"
        # (H14): the last record, same field, not yet sent over the bus.
        if (
            last is not None
            and last == self._ee_end - 2
            and last >= self._changes_from
            and last >= self._ee_base
            and self._ee[last - self._ee_base + 1] == index
        ):
            self._ee[last - self._ee_base] = record[0]
            return
        self._ee_last_piece_at = self._ee_end
        self._ee_write(record)

    def _ee_tag(self, tag: int) -> None:
        self._ee_write(bytes((tag,)))
        self._ee_last_piece_at = None

    def _check_tags(self) -> None:
        """Begin-position and empty-board tags, with the header's hysteresis: after a tag,
        a new one is written only once more than two squares left the tagged state."""
        frame = tuple(self._squares[::-1] if self.reversed else self._squares)
        if not self._tag_armed:
            assert self._tagged is not None
            if sum(map(operator.is_not, frame, self._tagged)) > 2:
                self._tag_armed = True
            else:
                return
        tag: int | None = None
        if frame == _START:
            tag = EETag.BEGINPOS
        elif frame == _START_ROTATED:
            tag = EETag.BEGINPOS_ROT
        elif frame == _EMPTY_FRAME:
            tag = EETag.EMPTYBOARD
        elif _four_rows(frame):
            tag = EETag.FOURROWS
        if tag is not None:
            self._ee_tag(tag)
            self._tagged = frame
            self._tag_armed = False

    # -- host bytes -------------------------------------------------------------------------

    def receive(self, data: bytes, now: float) -> bytes:
        """Bytes from the host; returns the board's immediate answer (possibly empty)."""
        self._touch(now)
        if self.bootloader or self.crashed or now < self._busy_until:
            log.debug("board %s: busy, %d bytes lost", self.serial, len(data))
            return b""
        out = bytearray()
        for command in self._reader.feed(data):
            out += self._command(command, now)
            if self.crashed:  # the commands after the one that crashed it are lost
                self._reader.reset()
                break
        return bytes(out)

    def take_link_drop(self) -> bool:
        """Whether the board dropped its link since the last call (a crash by a quirk): the
        server or transport serving it closes the link then."""
        dropped, self._link_dropped = self._link_dropped, False
        return dropped

    def _command(self, cmd: HostCommand, now: float) -> bytes:
        if cmd.address is not None:
            if self.pegasus:
                return b""
            if not self.bus_mode:
                # A bus command switches a single board to bus mode and is not processed
                # (H14).
                self.bus_mode = True
                self.mode = BoardMode.IDLE
                return b""
            return self._bus_command(cmd, now)
        code = cmd.code
        if not self._knows(code):
            log.debug("board %s: command %#04x ignored", self.serial, code)
            return b""
        if self.bus_mode:
            # Any single-board command switches to single-board mode, IDLE, and is
            # processed (H14, bus section).
            self.bus_mode = False
            self.mode = BoardMode.IDLE
        return self._single_command(cmd, now)

    def _knows(self, code: int) -> bool:
        if code in _PEGASUS_ONLY:
            return self.pegasus
        if code == Command.SET_LEDS:
            return self.pegasus or self.revelation
        if code == Command.SEND_BATTERY_STATUS:
            return self.bluetooth or self.pegasus
        if code in _NOT_PEGASUS:
            return not self.pegasus
        return code in Command._value2member_map_

    def _set_mode(self, mode: BoardMode, now: float) -> None:
        self.mode = mode
        # The board keeps watching the clock in every mode; entering an update mode sends
        # nothing by itself (choice): NICE sends on the next change, UPDATE within 1 s.
        self._seen_clock = self._clock_frame(now)
        self._clock_due = now + 1.0

    def _single_command(self, cmd: HostCommand, now: float) -> bytes:
        code = cmd.code
        if code == Command.SEND_RESET:
            # Choice: no reply on a Pegasus either (UE; an older emulator sent battery).
            self._set_mode(BoardMode.IDLE, now)
            return b""
        if code == Command.SEND_UPDATE:
            self._set_mode(BoardMode.UPDATE, now)
            return b""
        if code == Command.SEND_UPDATE_BRD:
            self._set_mode(BoardMode.UPDATE_BOARD, now)
            return b""
        if code == Command.SEND_UPDATE_NICE:
            self._set_mode(BoardMode.UPDATE_NICE, now)
            return b""
        if code == Command.SEND_CLK:
            if self.pegasus:
                return b""  # choice: a Pegasus has no clock port
            times = self._clock_frame(now)
            self._seen_clock = times
            return times.to_bytes()
        if code == Command.SEND_BRD:
            return frame(MessageId.BOARD_DUMP, self._dump_fields())
        if code == Command.RETURN_SERIALNR:
            if Quirk.TEN_CHARACTER_SERIAL in self.quirks:
                return SerialNumber(self.long_serial).to_bytes()
            return SerialNumber(self.serial).to_bytes()
        if code == Command.RETURN_LONG_SERIALNR:
            return LongSerialNumber(self.long_serial).to_bytes()
        if code == Command.RETURN_BUSADRES:
            return BusAddress(self.bus_address).to_bytes()
        if code == Command.SEND_TRADEMARK:
            return Trademark(self.trademark).to_bytes()
        if code == Command.SEND_VERSION:
            return Version(*self.version).to_bytes()
        if code == Command.SEND_EE_MOVES:
            if Quirk.DROPS_ON_MEMORY_REQUEST in self.quirks:
                log.info("board %s: crashed on the board-memory request; link dropped",
                         self.serial)  # fmt: skip
                self.crashed = True
                self._link_dropped = True
                self.mode = BoardMode.IDLE  # silent: no updates, no clock data
                self._outbox.clear()
                return b""
            return self._ee_moves()
        if code == Command.SEND_BATTERY_STATUS:
            status = 0x01 if self.charging else 0x02
            return BatteryStatus(self.battery, status=status).to_bytes()
        if code == Command.TO_BUSMODE:
            self.bus_mode = True
            self.mode = BoardMode.IDLE
            return b""
        if code == Command.STARTBOOTLOADER:
            # The board jumps to its boot loader and stays silent until switched off.
            log.warning("board %s: boot loader started; the board is silent until power-up",
                        self.serial)  # fmt: skip
            self.bootloader = True
            return b""
        if code == Command.CLOCK_MESSAGE:
            if self.clock is None or self.pegasus:
                return b""
            # Times changed by the command go out with the next poll (UPDATE / NICE).
            return self._ack(self.clock.command(cmd.data, now))
        if code == Command.SET_LEDS:
            self._leds(cmd.data)
            return b""
        if code == Command.SEND_HARDWARE_VERSION:
            return HardwareVersion(*self.hardware_version).to_bytes()
        if code == Command.SEND_UNKNOWN_V:
            return frame(MessageId.PEGASUS_UNKNOWN_A3, b"\x00")  # choice: content unknown
        if code == Command.SEND_LOCK_STATE:
            return StateByte(MessageId.LOCK_STATE, 0).to_bytes()
        if code == Command.SEND_DEVKEY_STATE:
            return StateByte(MessageId.DEVKEY_STATE, int(self.key_sent)).to_bytes()
        if code == Command.DEVELOPER_KEY:
            # 63 07 <6 key bytes> 00; any key opens the board (two keys are seen in use);
            # no reply (DD; an emulator's A5 01 reply is not followed).
            if len(cmd.data) >= 2 and cmd.data[-1] == 0:
                self.key_sent = True
            return b""
        if code == Command.SET_BOARD_NAME:
            if cmd.data and cmd.data[-1] == 0:
                self.board_name = cmd.data[:-1].decode("ascii", "replace")
            return b""
        # Draughts commands (50-square dumps, scan modes): choice, a chess board answers
        # nothing (it has no 10x10 field); hosts must not wait for a draughts dump.
        return b""

    def _ee_moves(self) -> bytes:
        if self.pegasus:
            return frame(MessageId.EE_MOVES, b"")  # empty on a Pegasus (CW)
        data = bytes(self._ee) + bytes((EETag.EOF,))
        self._ee_tag(EETag.DOWNLOADED)  # written after the download (H14)
        return frame(MessageId.EE_MOVES, data)

    def _leds(self, data: bytes) -> None:
        if self.pegasus:
            if not self.key_sent:
                return  # without the key the LEDs do nothing (CW)
            if len(data) >= 2 and data[0] == 0x00:  # 60 02 00 00: all off
                self.leds = frozenset()
                return
            if len(data) >= 5 and data[0] == 0x05 and data[-1] == 0x00:
                fields = data[4:-1]
                self.led_settings = {"speed": data[1], "repeat": data[2], "intensity": data[3]}
                self.leds = frozenset(self._physical(_field_square(f)) for f in fields if f < 64)
            return
        # Revelation II: 60 04 <pattern> <from> <to> 00 (H14).  Choice: "from" and "to" are
        # the two squares of a move (not a range); pattern 1 replaces what was lit.
        if len(data) != 4 or data[3] != 0x00:
            return
        pattern, first, second = data[0], data[1], data[2]
        if pattern == 0:
            if first == 0x40:
                self.leds = frozenset()
            else:
                off = {self._physical(_field_square(f)) for f in (first, second) if f < 64}
                self.leds = self.leds - off
        elif pattern == 1:
            self.leds = frozenset(
                self._physical(_field_square(f)) for f in (first, second) if f < 64
            )
            self.led_settings = {"pattern": 1}
        elif pattern == 2:
            name = {1: "auto_leds", 2: "auto_reverse"}.get(first)
            if name is not None:
                self.led_settings[name] = second

    # -- bus mode -------------------------------------------------------------------------

    def _reply(self, msg_id: int, data: bytes = b"") -> bytes:
        return BusMessage(msg_id, self.bus_address, data).to_bytes()

    def _bus_command(self, cmd: HostCommand, now: float) -> bytes:
        address = cmd.address
        code = cmd.code
        if address == 0:
            # Broadcast: ping, END_BUSMODE and RESET reach every board (H14).
            if code == BusCommand.PING:
                if self._ignore_next_ping:
                    self._ignore_next_ping = False
                    return b""
                delay = self._rng.uniform(0.0, PING_SPREAD)
                self._later(now + delay, self._reply(BusMessageId.PING))
                return b""
            if code not in (BusCommand.END_BUSMODE, BusCommand.RESET):
                return b""
        elif address != self.bus_address:
            return b""
        if code == BusCommand.PING:
            return self._reply(BusMessageId.PING)
        if code == BusCommand.IGNORE_NEXT_BUS_PING:
            self._ignore_next_ping = True
            return self._reply(BusMessageId.PING)
        if code == BusCommand.SEND_CLK:
            return self._reply(BusMessageId.BWTIME, self._clock_frame(now).raw)
        if code == BusCommand.SEND_BRD:
            return self._reply(BusMessageId.BRD_DUMP, self._dump_fields())
        if code == BusCommand.SEND_CHANGES:
            return self._reply(BusMessageId.UPDATE, self._take_changes())
        if code == BusCommand.REPEAT_CHANGES:
            return self._reply(BusMessageId.UPDATE, self._last_changes)
        if code == BusCommand.SET_START_GAME:
            self._ee_tag(EETag.START_TAG)
            self._start_tag_at = self._ee_end - 1
            # "After this EE_START_TAG the positions of the pieces are all logged" (H14)
            for board_square in range(64):
                piece_code = self._squares[self._physical(board_square)].to_wire()
                if piece_code:
                    self._ee_write(
                        encode_ee_stream([EEPieceChange(square_to_index(board_square), piece_code)])
                    )
            self._ee_last_piece_at = None
            self._later(now + START_GAME_DELAY, self._reply(BusMessageId.START_GAME_WRITTEN))
            return b""
        if code == BusCommand.SEND_FROM_START:
            start = self._start_tag_at if self._start_tag_at is not None else self._ee_base
            start = max(start, self._ee_base)
            end = max(self._changes_from, start)
            return self._reply(BusMessageId.FROM_START, self._ee_slice(start, end))
        if code == BusCommand.SEND_VERSION:
            return self._reply(BusMessageId.VERSION, bytes(self.version))
        if code == BusCommand.END_BUSMODE:
            self.bus_mode = False
            self.mode = BoardMode.IDLE
            return b""
        if code == BusCommand.RESET:
            self.power_up(now)
            self._busy_until = now + BUS_RESET_TIME
            return b""
        if code == BusCommand.SEND_ALL_D:
            # changes, clock, board, one after the other (H14)
            return (
                self._reply(BusMessageId.UPDATE, self._take_changes())
                + self._reply(BusMessageId.BWTIME, self._clock_frame(now).raw)
                + self._reply(BusMessageId.BRD_DUMP, self._dump_fields())
            )
        # SEND_BRD_50B: a chess board has no draughts dump (choice, as single-board mode).
        return b""

    def _dump_fields(self) -> bytes:
        """A dump's 64 field codes (field 0 = a8 of the board's own frame)."""
        if self.pegasus:  # what a Pegasus reports depends on the developer key
            return BoardDump.from_pieces(self.board_frame()).fields
        return bytes(self._fields)

    def _ee_slice(self, start: int, end: int) -> bytes:
        start = max(start, self._ee_base)
        return bytes(self._ee[start - self._ee_base : max(end - self._ee_base, 0)])

    def _take_changes(self) -> bytes:
        """Memory records written since the last SEND_CHANGES (choice: no EOF appended)."""
        data = self._ee_slice(self._changes_from, self._ee_end)
        self._changes_from = self._ee_end
        self._last_changes = data
        return data

    def __repr__(self) -> str:
        kind = "Pegasus" if self.pegasus else "Revelation II" if self.revelation else "board"
        where = "bus" if self.bus_mode else self.mode.value
        return f"<VirtualBoard {kind} {self.serial} {where}>"


@functools.cache
def _piece_record(index: int, code: int, quick: bool) -> bytes:
    """A memory piece record, as written on every square change (memoized: there are only
    64 x 16 x 2 of them)."""
    return encode_ee_stream([EEPieceChange(index, code, quick)])


def _field_square(index: int) -> int:
    """Board field number (0 = a8) to python-chess square in the board's frame."""
    return (7 - (index >> 3)) * 8 + (index & 7)


def _four_rows(frame: tuple[Piece, ...]) -> bool:
    """32 chessmen, all on ranks 1, 2, 7 and 8 (H14 EE_FOURROWS: e.g. a Chess960 start):
    those 32 squares full and the 32 between them empty (checked after every change, so
    by slices rather than square by square)."""
    return (
        frame[16:48] == _EMPTY_FRAME[16:48]
        and Piece.EMPTY not in frame[:16]
        and Piece.EMPTY not in frame[48:]
    )
