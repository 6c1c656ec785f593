"""Helpers for the recogniser tests: a scripted hand on a virtual board, and replays of
whole games through the seeded human-handling model.  (No tests here.)"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import chess

from dgt.emulator.human import Handling, game_steps, squares_of
from dgt.events import BoardEvent, BoardSnapshot, LeverMoved, Side, SquareChanged
from dgt.protocol.constants import Piece
from service.recognize import MoveEvent, Recognizer, RecognizerEvent
from service.variants import StartPosition, get_variant
from service.variants.standard import squares_of as symbol_map

CODES = {
    "P": Piece.WPAWN,
    "R": Piece.WROOK,
    "N": Piece.WKNIGHT,
    "B": Piece.WBISHOP,
    "K": Piece.WKING,
    "Q": Piece.WQUEEN,
    "p": Piece.BPAWN,
    "r": Piece.BROOK,
    "n": Piece.BKNIGHT,
    "b": Piece.BBISHOP,
    "k": Piece.BKING,
    "q": Piece.BQUEEN,
    "=": Piece.DRAW,
    "W": Piece.WHITE_WINS,
    "X": Piece.BLACK_WINS,
}


def sq(name: str) -> int:
    return chess.parse_square(name)


@dataclass
class Desk:
    """A board with a hand: every call changes one square and feeds the event to the
    recogniser, collecting what it emits.  Squares are named in the game's frame; with
    ``rotated`` the board reports them turned round."""

    presence_only: bool = False
    rotated: bool = False
    fen: str = chess.STARTING_FEN
    clock: bool | None = None
    settle: float = 2.0
    time: float = 0.0
    squares: dict[int, Piece] = field(default_factory=dict)
    out: list[RecognizerEvent] = field(default_factory=list)
    recognizer: Recognizer = field(init=False)

    def __post_init__(self) -> None:
        self.recognizer = Recognizer(
            presence_only=self.presence_only, clock=self.clock, settle=self.settle
        )
        board = chess.Board(self.fen, chess960=True)
        self.squares = squares_of(board, self.presence_only)
        self.feed(BoardSnapshot(self.time, self._dump(), "connect"))
        game = self.recognizer.game
        if game is None or game.start.fen != board.fen():
            start = StartPosition("standard", self.fen, symbol_map(chess.Board(self.fen)))
            self.out += self.recognizer.start_game(self.time, start)

    def _raw(self, square: int) -> int:
        return 63 - square if self.rotated else square

    def _dump(self) -> tuple[Piece, ...]:
        return tuple(self.squares.get(self._raw(s), Piece.EMPTY) for s in range(64))

    def feed(self, event: BoardEvent) -> list[RecognizerEvent]:
        got = self.recognizer.tick(event.time) + self.recognizer.feed(event)
        self.out += got
        return got

    def code(self, symbol: str) -> Piece:
        if self.presence_only and symbol not in "=WX":
            return Piece.OCCUPIED
        return CODES[symbol]

    def lift(self, name: str, dt: float = 0.3) -> list[RecognizerEvent]:
        return self.set(name, Piece.EMPTY, dt)

    def put(self, name: str, symbol: str, dt: float = 0.3) -> list[RecognizerEvent]:
        return self.set(name, self.code(symbol), dt)

    def set(self, name: str, piece: Piece, dt: float) -> list[RecognizerEvent]:
        self.time += dt
        square = sq(name)
        previous = self.squares.get(square, Piece.EMPTY)
        if piece is Piece.EMPTY:
            self.squares.pop(square, None)
        else:
            self.squares[square] = piece
        return self.feed(SquareChanged(self.time, self._raw(square), piece, previous))

    def move(self, uci: str, symbol: str, dt: float = 0.3) -> list[RecognizerEvent]:
        """Lift the piece on the first square, set ``symbol`` on the second."""
        return self.lift(uci[:2], dt) + self.put(uci[2:4], symbol, dt)

    def press(self, side: Side, dt: float = 0.2) -> list[RecognizerEvent]:
        self.time += dt
        return self.feed(LeverMoved(self.time, side))

    def wait(self, seconds: float) -> list[RecognizerEvent]:
        self.time += seconds
        got = self.recognizer.tick(self.time)
        self.out += got
        return got

    def set_up(self, fen: str, dt: float = 0.05) -> list[RecognizerEvent]:
        """Put the position of ``fen`` on the board square by square (removals first)."""
        goal = squares_of(chess.Board(fen, chess960=True), self.presence_only)
        got: list[RecognizerEvent] = []
        for square in sorted(self.squares):
            if goal.get(square) is not self.squares[square]:
                got += self.set(chess.square_name(square), Piece.EMPTY, dt)
        for square, piece in sorted(goal.items()):
            if self.squares.get(square) is not piece:
                got += self.set(chess.square_name(square), piece, dt)
        return got

    # -- reading the output --------------------------------------------------------------

    def final_ucis(self) -> list[str]:
        record = self.recognizer.record()
        assert record is not None
        return [m.uci for m in record.final_moves]

    def all_ucis(self) -> list[str]:
        record = self.recognizer.record()
        assert record is not None
        return [m.uci for m in record.moves]


def of_type(events: Iterable[RecognizerEvent], kind: str) -> list[RecognizerEvent]:
    return [e for e in events if e.type == kind]


def moves_in(events: Iterable[RecognizerEvent], *, final: bool | None = None) -> list[str]:
    return [
        e.uci for e in events if isinstance(e, MoveEvent) and (final is None or e.final == final)
    ]


# -- replays ---------------------------------------------------------------------------------


@dataclass
class Replay:
    """What a replay of one game produced."""

    expected: list[str]
    got: list[str]
    events: list[RecognizerEvent]
    costs: list[float]


def replay(
    board: chess.Board,
    moves: Sequence[chess.Move],
    *,
    seed: int,
    handling: Handling,
    presence_only: bool,
    clock: bool,
    variant: str = "standard",
) -> Replay:
    """Play ``moves`` from ``board`` on a virtual board with a seeded human hand, feed every
    event to a fresh recogniser, and return the recognised game.  On presence-only boards
    the player tells the promotion piece before promoting (as on a screen)."""
    import time as _time

    rng = random.Random(seed)
    presence = presence_only
    recognizer = Recognizer(variant=variant, presence_only=presence)
    squares = squares_of(board, presence)
    now = 0.0
    out: list[RecognizerEvent] = []
    costs: list[float] = []

    def feed(event: BoardEvent) -> None:
        out.extend(recognizer.tick(event.time))
        started = _time.perf_counter()
        out.extend(recognizer.feed(event))
        costs.append(_time.perf_counter() - started)

    feed(BoardSnapshot(now, tuple(squares.get(s, Piece.EMPTY) for s in range(64)), "connect"))
    if recognizer.game is None or recognizer.game.start.fen != board.fen():
        # a presence-only board cannot tell one Chess960 start from another: say which
        start = next(
            (s for s in get_variant(variant).start_positions() if s.fen == board.fen()),
            None,
        ) or StartPosition(variant, board.fen(), symbol_map(board))
        out.extend(recognizer.start_game(now, start))
    position = board.copy()
    for index, steps in game_steps(board, moves, rng, handling, presence):
        move = moves[index]
        if presence and move.promotion:
            recognizer.set_promotion(chess.piece_symbol(move.promotion))
        for step in steps:
            now += step.delay
            previous = squares.get(step.square, Piece.EMPTY)
            if step.piece is Piece.EMPTY:
                squares.pop(step.square, None)
            else:
                squares[step.square] = step.piece
            feed(SquareChanged(now, step.square, step.piece, previous))
        if clock:
            now += rng.uniform(0.1, 0.6)
            feed(LeverMoved(now, Side.LEFT if position.turn else Side.RIGHT))
        position.push(move)
    now += 5.0
    out += recognizer.tick(now)
    out += recognizer.finish(now)
    record = recognizer.record()
    got = [] if record is None else [m.uci for m in record.final_moves]
    expected = []
    uci_board = board.copy()
    for move in moves:
        expected.append(uci_board.uci(move))
        uci_board.push(move)
    return Replay(expected, got, out, costs)
