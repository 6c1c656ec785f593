"""The emulator's console: one command per line, to act on the virtual board by hand.

Commands (squares in the players' frame, as a person sees the board)::

    lift e2            take the piece off e2
    place e4 P         put a white pawn on e4 ('.' = something, for presence-only boards;
                       no letter = the piece last lifted)
    move e2e4          lift and place with human timing (castling, en passant and
                       promotion understood from the position: move e7e8q)
    lever              press the clock lever
    button N           press a clock button: 0..4 or back, minus, run, plus, ok
    unplug / plug      pull the cable / put it back
    garbage N          N random bytes on the line
    board N            (bus line) act on board N (1..count) from now on
    show               print the board
    help               this list

:func:`parse_command` turns a line into a :class:`ConsoleCommand` (or raises
:class:`ConsoleError` with a one-line message); :class:`Console` runs them against a
:class:`Line` (an :class:`~dgt.emulator.pty.EmulatorServer`, or a :class:`LocalLine` for
in-process use).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import chess

from dgt.emulator import human
from dgt.emulator.board import VirtualBoard
from dgt.emulator.bus import BusLine
from dgt.emulator.clock import BUTTON_ORDER, button_code
from dgt.protocol.constants import Piece

__all__ = [
    "Console",
    "ConsoleCommand",
    "ConsoleError",
    "Line",
    "LocalLine",
    "Player",
    "parse_command",
]

log = logging.getLogger(__name__)


class ConsoleError(ValueError):
    """A console line that cannot be run; the message is one line for the user."""


class Line(Protocol):
    """Where a board lives: an :class:`~dgt.emulator.pty.EmulatorServer` or a
    :class:`LocalLine`."""

    device: VirtualBoard | BusLine

    def now(self) -> float: ...

    def act(self, action: Callable[[float], bytes]) -> bytes: ...

    def garbage(self, count: int) -> bytes: ...

    def unplug(self) -> None: ...

    def plug(self) -> str: ...


class LocalLine:
    """A :class:`Line` without any OS device: what the board sends is collected in
    :attr:`output` (or handed to ``on_output``).  Time is ``clock()`` (default
    ``time.monotonic``) relative to the device's own time at construction."""

    def __init__(
        self,
        device: VirtualBoard | BusLine,
        *,
        clock: Callable[[], float] = time.monotonic,
        on_output: Callable[[bytes], None] | None = None,
        seed: int | None = None,
    ) -> None:
        self.device = device
        self._clock = clock
        self._epoch = clock() - device.last_now
        self.output = bytearray()
        self.on_output = on_output
        self.plugged = True
        self._rng = random.Random(seed)

    def now(self) -> float:
        return self._clock() - self._epoch

    def _emit(self, data: bytes) -> None:
        if not data or not self.plugged:
            return
        if self.on_output is not None:
            self.on_output(data)
        else:
            self.output += data

    def act(self, action: Callable[[float], bytes]) -> bytes:
        data = action(self.now())
        self._emit(data)
        return data

    def poll(self) -> bytes:
        """Let the device's time pass up to now; returns (and emits) what it sent."""
        return self.act(self.device.poll)

    def garbage(self, count: int) -> bytes:
        data = self._rng.randbytes(count)
        self._emit(data)
        return data

    def unplug(self) -> None:
        self.plugged = False

    def plug(self) -> str:
        if not self.plugged:
            self.plugged = True
            self.device.power_up(self.now())
        return "local"


@dataclass(frozen=True, slots=True)
class ConsoleCommand:
    """A parsed console line."""

    name: str
    square: int | None = None
    piece: Piece | None = None
    move: chess.Move | None = None
    number: int | None = None


_HELP = __doc__.split("::", 1)[1].split("\n\n:func:", 1)[0].strip("\n")
_NAMES = ("lift", "place", "move", "lever", "button", "unplug", "plug", "garbage", "board",
          "show", "help")  # fmt: skip
_BUTTON_NAMES = {code.name.lower(): i for i, code in enumerate(BUTTON_ORDER)} | {"play": 2}


def _square(text: str) -> int:
    try:
        return chess.parse_square(text.lower())
    except ValueError:
        raise ConsoleError(f"not a square: {text!r} (use a1..h8)") from None


def _count(text: str, what: str, low: int, high: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ConsoleError(f"{what} must be a number, got {text!r}") from None
    if not low <= value <= high:
        raise ConsoleError(f"{what} must be {low}..{high}, got {value}")
    return value


def parse_command(line: str) -> ConsoleCommand | None:
    """Parse one console line; None for a blank line or a comment (``#``).  Raises
    :class:`ConsoleError` with a one-line message for anything else it cannot read."""
    words = line.split("#", 1)[0].split()
    if not words:
        return None
    name, args = words[0].lower(), words[1:]
    if name not in _NAMES:
        raise ConsoleError(f"unknown command {words[0]!r} (try 'help')")

    def want(low: int, high: int, usage: str) -> None:
        if not low <= len(args) <= high:
            raise ConsoleError(f"usage: {usage}")

    if name in ("lever", "unplug", "plug", "show", "help"):
        want(0, 0, name)
        return ConsoleCommand(name)
    if name == "lift":
        want(1, 1, "lift SQUARE (e.g. lift e2)")
        return ConsoleCommand(name, square=_square(args[0]))
    if name == "place":
        want(1, 2, "place SQUARE [PIECE] (e.g. place e4 P; '.' = presence only)")
        piece = None
        if len(args) == 2:
            if args[1] == ".":
                piece = Piece.OCCUPIED
            else:
                try:
                    piece = Piece.from_symbol(args[1])
                except ValueError:
                    raise ConsoleError(
                        f"not a piece: {args[1]!r} (use PRNBQK / prnbqk, '.' for presence only)"
                    ) from None
                if piece in (Piece.EMPTY, Piece.UNKNOWN):
                    raise ConsoleError(f"cannot place {args[1]!r}: use 'lift' to empty a square")
        return ConsoleCommand(name, square=_square(args[0]), piece=piece)
    if name == "move":
        want(1, 1, "move FROMTO[PROMOTION] (e.g. move e2e4, move e7e8q)")
        try:
            move = chess.Move.from_uci(args[0].lower())
        except ValueError:
            raise ConsoleError(f"not a move: {args[0]!r} (use e2e4, e7e8q)") from None
        if not move or move.drop:
            raise ConsoleError(f"not a move: {args[0]!r} (use e2e4, e7e8q)")
        return ConsoleCommand(name, move=move)
    if name == "button":
        want(1, 1, "button N (0..4 or back, minus, run, plus, ok)")
        key = args[0].lower()
        if key in _BUTTON_NAMES:
            return ConsoleCommand(name, number=_BUTTON_NAMES[key])
        return ConsoleCommand(name, number=_count(key, "button", 0, 4))
    if name == "garbage":
        want(1, 1, "garbage N (number of random bytes)")
        return ConsoleCommand(name, number=_count(args[0], "byte count", 1, 1 << 16))
    want(1, 1, "board N")
    return ConsoleCommand(name, number=_count(args[0], "board", 1, 1 << 14))


def _chess_piece(piece: Piece) -> chess.Piece | None:
    if not piece.is_chessman:
        return None
    return chess.Piece.from_symbol(piece.symbol)


def position_of(board: VirtualBoard, turn: chess.Color) -> chess.Board:
    """A python-chess position from the physical squares (castling rights where king and
    rook stand at home; no en passant), ``turn`` to move."""
    position = chess.Board(None)
    for square, piece in enumerate(board.squares):
        cp = _chess_piece(piece)
        if cp is not None:
            position.set_piece_at(square, cp)
    position.turn = turn
    position.set_castling_fen("KQkq")
    position.castling_rights = position.clean_castling_rights()
    return position


class Player:
    """Makes moves on one board with human timing, keeping the game position when the
    moves come one after another (so castling rights and en passant are known)."""

    def __init__(
        self,
        line: Line,
        board: VirtualBoard,
        *,
        rng: random.Random | None = None,
        handling: human.Handling | None = None,
        speed: float = 1.0,
    ) -> None:
        if speed <= 0:
            raise ValueError("speed must be positive")
        self.line = line
        self.board = board
        self.rng = rng or random.Random()
        self.handling = handling or human.Handling()
        self.speed = speed
        self.game: chess.Board | None = None
        """The position the last move left, when moves were made through this player."""

    async def play_steps(self, steps: list[human.Step]) -> None:
        for step in steps:
            if step.delay > 0:
                await asyncio.sleep(step.delay / self.speed)
            self.line.act(functools.partial(self._apply, step))

    def _apply(self, step: human.Step, now: float) -> bytes:
        if step.piece is Piece.EMPTY:
            return self.board.lift(step.square, now)
        return self.board.place(step.square, step.piece, now)

    def position_for(self, move: chess.Move) -> chess.Board:
        """The position a move is made in: the game's, if the board still shows it."""
        if self.game is not None and human.squares_of(self.game) == _occupied(self.board):
            return self.game
        piece = self.board.squares[move.from_square]
        turn = piece.symbol.isupper() if piece.is_chessman else chess.WHITE
        return position_of(self.board, turn)

    def plan(self, move: chess.Move) -> tuple[chess.Board, chess.Move]:
        """Where the move is made and the move as python-chess reads it there (a
        promotion to a queen is assumed when a pawn reaches the last rank unasked)."""
        if not self.board.squares[move.from_square].is_chessman:
            raise ConsoleError(f"no piece on {chess.square_name(move.from_square)}")
        position = self.position_for(move)
        piece = position.piece_at(move.from_square)
        if (
            piece is not None
            and piece.piece_type == chess.PAWN
            and move.promotion is None
            and chess.square_rank(move.to_square) in (0, 7)
        ):
            move = chess.Move(move.from_square, move.to_square, chess.QUEEN)
        if position.is_valid() and move not in position.legal_moves:
            log.info("move %s is not legal here: made as asked", move.uci())
        return position, move

    async def move(self, move: chess.Move, *, first_delay: float | None = None) -> chess.Board:
        """Make ``move`` with human timing; returns the position after it."""
        position, move = self.plan(move)
        steps = human.move_steps(position, move, self.rng, self.handling)
        if first_delay is not None and steps:
            steps[0] = human.Step(first_delay, steps[0].square, steps[0].piece)
        await self.play_steps(steps)
        after = position.copy(stack=False)
        if after.is_valid() and move in after.legal_moves:
            after.push(move)
            self.game = after
        else:
            self.game = None
        return after


def _occupied(board: VirtualBoard) -> dict[int, Piece]:
    return {s: p for s, p in enumerate(board.squares) if p is not Piece.EMPTY}


def render(board: VirtualBoard) -> str:
    """The board as eight lines of text, rank 8 first, players' frame."""
    rows = []
    for rank in range(7, -1, -1):
        cells = " ".join(board.squares[rank * 8 + file].symbol for file in range(8))
        rows.append(f"{rank + 1} {cells}")
    rows.append("  a b c d e f g h")
    return "\n".join(rows)


class Console:
    """Runs console commands on a :class:`Line`.  :meth:`execute` never raises for bad
    input: it returns the reply text (an error is one line starting with ``error:``)."""

    def __init__(
        self,
        line: Line,
        *,
        rng: random.Random | None = None,
        handling: human.Handling | None = None,
        speed: float = 1.0,
    ) -> None:
        self.line = line
        self.rng = rng or random.Random()
        self.handling = handling or human.Handling()
        self.speed = speed
        device = line.device
        self.boards: tuple[VirtualBoard, ...] = (
            device.boards if isinstance(device, BusLine) else (device,)
        )
        self._players = [
            Player(line, b, rng=self.rng, handling=self.handling, speed=speed) for b in self.boards
        ]
        self.selected = 0
        self._hand: list[Piece] = []

    @property
    def board(self) -> VirtualBoard:
        """The board commands act on."""
        return self.boards[self.selected]

    async def execute(self, text: str) -> str:
        """Run one console line; returns the reply ('' when there is nothing to say)."""
        try:
            command = parse_command(text)
            if command is None:
                return ""
            return await self._run(command)
        except ConsoleError as exc:
            return f"error: {exc}"
        except (ValueError, OSError, RuntimeError) as exc:
            log.debug("console command %r failed", text, exc_info=True)
            return f"error: {exc}"

    async def _run(self, cmd: ConsoleCommand) -> str:
        board = self.board
        line = self.line
        if cmd.name == "help":
            return _HELP
        if cmd.name == "show":
            extra = f"\n{board.clock.describe(line.now())}" if board.clock is not None else ""
            return f"{render(board)}\n{board!r}{extra}"
        if cmd.name == "lift":
            square = cmd.square
            assert square is not None
            piece = board.squares[square]
            if piece is Piece.EMPTY:
                raise ConsoleError(f"{chess.square_name(square)} is empty")
            self._hand.append(piece)
            line.act(lambda now: board.lift(square, now))
            return ""
        if cmd.name == "place":
            target = cmd.square
            assert target is not None
            held = cmd.piece
            if held is None:
                if not self._hand:
                    raise ConsoleError("no piece in hand: say which (e.g. place e4 P)")
                held = self._hand.pop()
            elif held in self._hand:
                self._hand.remove(held)
            line.act(lambda now: board.place(target, held, now))
            return ""
        if cmd.name == "move":
            assert cmd.move is not None
            await self._players[self.selected].move(cmd.move)
            return ""
        if cmd.name == "lever":
            if board.clock is None:
                raise ConsoleError("no clock on this board")
            line.act(board.press_lever)
            return ""
        if cmd.name == "button":
            assert cmd.number is not None
            if board.clock is None:
                raise ConsoleError("no clock on this board")
            code = button_code(cmd.number)
            line.act(lambda now: board.press_button(code, now))
            return ""
        if cmd.name == "unplug":
            line.unplug()
            return "unplugged"
        if cmd.name == "plug":
            return f"plugged in: {line.plug()}"
        if cmd.name == "garbage":
            assert cmd.number is not None
            line.garbage(cmd.number)
            return ""
        # board N
        assert cmd.number is not None
        if cmd.number > len(self.boards):
            raise ConsoleError(f"there are {len(self.boards)} boards on this line")
        self.selected = cmd.number - 1
        return f"acting on board {cmd.number} (bus address {self.board.bus_address})"
