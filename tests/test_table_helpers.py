"""Helpers for the table and arbiter tests: a pair of hands at a board with a clock, feeding
a :class:`service.table.Table` the physical events a player makes.  (No tests here.)"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import chess

from dgt.events import BoardSnapshot, ClockUpdate, LeverMoved, Side, SquareChanged
from dgt.protocol.constants import Piece
from service.table import Table, TableEvent, TableSettings
from service.variants.base import LegalAction, VariantGame
from service.variants.standard import to_chess_move

CODES = {
    "P": Piece.WPAWN, "R": Piece.WROOK, "N": Piece.WKNIGHT, "B": Piece.WBISHOP,
    "K": Piece.WKING, "Q": Piece.WQUEEN, "p": Piece.BPAWN, "r": Piece.BROOK,
    "n": Piece.BKNIGHT, "b": Piece.BBISHOP, "k": Piece.BKING, "q": Piece.BQUEEN,
}  # fmt: skip


@dataclass
class Hands:
    """A board (game frame = board frame), a clock with White on the left, and a table."""

    settings: TableSettings = field(default_factory=TableSettings)
    fen: str | None = None
    presence_only: bool = False
    clock: bool = True
    time: float = 0.0
    squares: dict[int, Piece] = field(default_factory=dict)
    out: list[TableEvent] = field(default_factory=list)
    table: Table = field(init=False)

    def __post_init__(self) -> None:
        self.table = Table("t1", self.settings)
        board = chess.Board(self.fen or chess.STARTING_FEN)
        for square, piece in board.piece_map().items():
            self.squares[square] = self.code(piece.symbol())
        if self.clock:
            self.feed(ClockUpdate(self.time, 300, 300, False, Side.LEFT))
        self.feed(BoardSnapshot(self.time, self._dump(), "connect"))
        if self.fen is not None:
            args: dict[str, Any] = {"start": self.fen}
            self.out += self.table.admin("start", args, self.time)

    def code(self, symbol: str) -> Piece:
        return Piece.OCCUPIED if self.presence_only else CODES[symbol]

    def _dump(self) -> tuple[Piece, ...]:
        return tuple(self.squares.get(s, Piece.EMPTY) for s in range(64))

    def feed(self, event: Any) -> list[TableEvent]:
        got = self.table.tick(event.time) + self.table.feed(event)
        self.out += got
        return got

    def lift(self, name: str, dt: float = 0.3) -> list[TableEvent]:
        self.time += dt
        square = chess.parse_square(name)
        previous = self.squares.pop(square, Piece.EMPTY)
        return self.feed(SquareChanged(self.time, square, Piece.EMPTY, previous))

    def put(self, name: str, symbol: str, dt: float = 0.3) -> list[TableEvent]:
        self.time += dt
        square = chess.parse_square(name)
        previous = self.squares.get(square, Piece.EMPTY)
        self.squares[square] = self.code(symbol)
        return self.feed(SquareChanged(self.time, square, self.squares[square], previous))

    def move(self, uci: str, symbol: str, dt: float = 0.3) -> list[TableEvent]:
        got = self.lift(uci[:2], dt)
        if chess.parse_square(uci[2:4]) in self.squares:
            got += self.lift(uci[2:4], 0.1)
        return got + self.put(uci[2:4], symbol, dt)

    def press(self, color: bool, dt: float = 0.2) -> list[TableEvent]:
        """The player of ``color`` presses: the opponent's side goes up."""
        self.time += dt
        high = Side.RIGHT if color else Side.LEFT
        return self.feed(LeverMoved(self.time, high))

    def play(self, uci: str, symbol: str, color: bool) -> list[TableEvent]:
        return self.move(uci, symbol) + (self.press(color) if self.clock else [])

    def wait(self, seconds: float) -> list[TableEvent]:
        self.time += seconds
        got = self.table.tick(self.time)
        self.out += got
        return got

    def admin(self, command: str, **args: Any) -> list[TableEvent]:
        got = self.table.admin(command, args, self.time)
        self.out += got
        return got


def of_type(events: list[TableEvent], kind: str) -> list[dict[str, Any]]:
    return [e.to_json() for e in events if e.type == kind]


def rulings(events: list[TableEvent], kind: str | None = None) -> list[dict[str, Any]]:
    return [r for r in of_type(events, "ruling") if kind is None or r["kind"] == kind]


def irregular(events: list[TableEvent]) -> list[str]:
    return [e["kind"] for e in of_type(events, "irregularity")]


def take_back_or_play(
    rng: random.Random,
    legal: Sequence[LegalAction],
    leader: VariantGame,
    follower: VariantGame,
    reference: chess.Board,
) -> None:
    """One random step of a game followed by another (and by python-chess's ``reference``):
    a takeback now and then once the follower has moved, else one of the ``legal`` actions."""
    if follower.ply and rng.random() < 0.15:
        leader.undo()
        follower.undo()
        reference.pop()
    else:
        action = rng.choice(legal).action
        leader.apply(action)
        follower.apply(action)
        reference.push(to_chess_move(action))
