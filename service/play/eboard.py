"""One board as the eboards API shows it: pure, no I/O, time comes in as an argument.

:class:`Eboard` is fed the driver's board events (:meth:`Eboard.feed`) and now and then the
time (:meth:`Eboard.tick`); it runs a :class:`~service.recognize.Recognizer` and keeps what
the ``eboardevent`` feed sends (:meth:`Eboard.feed_param`):

* ``board``: the FEN piece placement, White at the bottom whichever way round the board
  stands (``flipped`` says it is turned round).  A piece-identity board gives the pieces
  as they stand; a presence-only board (Pegasus) cannot, so it gives the position of the
  game as read;
* ``san``: the moves read since the last setup (or the last start position set up on the
  board), in SAN.  Only completed moves: a provisional move (still amendable: the rook of a
  castling set down, the king not yet) is never in the list, so a castling is sent once, as
  a castling, and a move is never sent while pieces are still in the air; a completed move
  that may be half a castling is held :data:`CASTLING_HOLD` seconds more.  A takeback
  shortens the list;
* ``clock``: the clock's times by colour and whether it runs, where there is a clock
  (``None`` otherwise).  The clock's left/right sides are matched to colours by the first
  lever press after a completed move (the player who moved presses); until then the left
  side is White's.

:meth:`Eboard.setup` restarts the reading from a FEN (standard or Chess960), as the sites
do for a game in progress.  :meth:`Eboard.led_squares` are the squares (board frame) a
board with LEDs lights after a setup: where the board differs from the position set up,
until it matches or a move is read.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import chess

from dgt.events import (
    BoardEvent,
    BoardSnapshot,
    ClockUpdate,
    LeverMoved,
    LinkLost,
    LinkRestored,
    Side,
    SquareChanged,
)
from dgt.protocol.constants import Piece
from service.recognize import (
    DEFAULT_SETTLE,
    GameRecord,
    MoveEvent,
    NewGame,
    Recognizer,
    RecognizerEvent,
    RecordedMove,
)
from service.table.views import placement_fen
from service.variants.base import STANDARD_ID, StartPosition
from service.variants.standard import squares_of

__all__ = ["Eboard", "EboardState", "SetupError"]

log = logging.getLogger(__name__)

EMPTY_PLACEMENT = "8/8/8/8/8/8/8/8"
CASTLING_HOLD = 1.5
"""Seconds a completed move that may be the first half of a castling (the rook set on its
castling square, or in Chess960 the king on its own) is held back from the list: a slow
hand may still be bringing the other piece, and the site must get the castling, never the
rook move.  Such a move is rare otherwise (a rook moved there while castling is still
legal)."""


class EboardState(StrEnum):
    """A board's state as LiveChess names it in the ``eboards`` answer."""

    ACTIVE = "ACTIVE"
    INACTIVE = "INACTIVE"
    NOTRESPONDING = "NOTRESPONDING"
    DELAYED = "DELAYED"


_FATAL_NAMES = (
    ("NO_WHITE_KING", chess.STATUS_NO_WHITE_KING),
    ("NO_BLACK_KING", chess.STATUS_NO_BLACK_KING),
    ("TOO_MANY_KINGS", chess.STATUS_TOO_MANY_KINGS),
    ("PAWNS_ON_BACKRANK", chess.STATUS_PAWNS_ON_BACKRANK),
    ("OPPOSITE_CHECK", chess.STATUS_OPPOSITE_CHECK),
    ("TOO_MANY_WHITE_PIECES", chess.STATUS_TOO_MANY_WHITE_PIECES),
    ("TOO_MANY_BLACK_PIECES", chess.STATUS_TOO_MANY_BLACK_PIECES),
)
_FATAL = 0
for _name, _bit in _FATAL_NAMES:
    _FATAL |= _bit


class SetupError(ValueError):
    """A ``setup`` the board cannot start from (a FEN that does not parse or is not a
    position of chess)."""


@dataclass(frozen=True, slots=True)
class ClockReading:
    white: float
    black: float
    run: bool

    def to_json(self) -> dict[str, Any]:
        return {"white": round(self.white), "black": round(self.black), "run": self.run}


def parse_setup_fen(fen: str) -> StartPosition:
    """The start position of a ``setup`` FEN: Chess960 when its castling rights name rooks
    a standard game cannot castle with (X-FEN or Shredder-FEN letters), else standard.
    Raises :class:`SetupError` with what is wrong."""
    if not isinstance(fen, str) or not fen.strip():
        raise SetupError("setup needs a FEN")
    text = fen.strip()
    try:
        board = chess.Board(text, chess960=True)
    except ValueError as exc:
        raise SetupError(f"not a FEN: {exc}") from None
    problems = board.status() & _FATAL
    if problems:
        names = ", ".join(
            name.lower().replace("_", " ") for name, bit in _FATAL_NAMES if problems & bit
        )
        raise SetupError(f"not a position of chess ({names}): {text}")
    standard = chess.Board(text)
    chess960 = board.castling_rights != standard.clean_castling_rights() or (
        board.has_chess960_castling_rights() and board.castling_rights != 0
    )
    if chess960:
        return StartPosition("chess960", board.fen(), squares_of(board))
    return StartPosition(STANDARD_ID, standard.fen(), squares_of(standard))


def _castling_half(record: GameRecord, moves: list[RecordedMove]) -> bool:
    """Whether the last of ``moves`` moved a rook or the king just where a castling legal
    before it puts that piece (the first half of a castling made one piece at a time)."""
    chess960 = record.variant == "chess960"
    try:
        board = chess.Board(record.start.fen, chess960=chess960)
        for move in moves[:-1]:
            board.push_uci(move.uci)
        last = board.parse_uci(moves[-1].uci)
    except ValueError:
        return False
    piece = board.piece_at(last.from_square)
    if piece is None or piece.piece_type not in (chess.ROOK, chess.KING):
        return False
    if board.is_castling(last):
        return False
    for castling in board.generate_castling_moves():
        king = castling.from_square
        rank = chess.square_rank(king)
        if board.chess960:
            rook = castling.to_square
            short = chess.square_file(rook) > chess.square_file(king)
        else:
            short = castling.to_square > castling.from_square
            rook = chess.square(7 if short else 0, rank)
        king_to = chess.square(6 if short else 2, rank)
        rook_to = chess.square(5 if short else 3, rank)
        if (last.from_square, last.to_square) in ((rook, rook_to), (king, king_to)):
            return True
    return False


class Eboard:
    """The feed state of one board (see the module's docstring).

    ``serialnr``: the serial number the API names the board by; ``source``: where it is
    connected (its port); ``presence_only``: the board family (None: read it off the
    board); ``settle``: seconds the board must stand still before a move is complete when
    no clock completes it (the recogniser's ``settle``)."""

    def __init__(
        self,
        serialnr: str,
        source: str = "",
        *,
        presence_only: bool | None = None,
        settle: float = DEFAULT_SETTLE,
    ) -> None:
        self.serialnr = serialnr
        self.source = source
        self.presence_only = presence_only
        self.settle = settle
        self.state = EboardState.ACTIVE
        self.recognizer = self._new_recognizer(STANDARD_ID, rotated=False)
        self._raw: list[Piece] = [Piece.EMPTY] * 64
        self._seen = False
        self._clock: ClockReading | None = None
        self._left_white = True
        self._sides_known = False
        self._setup: StartPosition | None = None
        self._led_target: tuple[str, ...] | None = None
        self._now = float("-inf")
        self._final_at: dict[int, float] = {}

    # -- input -----------------------------------------------------------------------------

    def feed(self, event: BoardEvent) -> list[RecognizerEvent]:
        """One board event; returns what the recogniser made of it."""
        self._now = max(self._now, event.time)
        if isinstance(event, BoardSnapshot):
            self._raw = list(event.squares)
            self._seen = True
            self._family(event.squares)
        elif isinstance(event, SquareChanged):
            self._raw[event.square] = event.piece
            self._family((event.piece,))
        elif isinstance(event, ClockUpdate):
            self._on_clock(event)
        elif isinstance(event, LinkLost):
            self.state = EboardState.NOTRESPONDING
        elif isinstance(event, LinkRestored):
            self.state = EboardState.ACTIVE
        out = self.recognizer.feed(event)
        if isinstance(event, LeverMoved):
            self._learn_sides(event.high)
        self._note(out)
        return out

    def tick(self, now: float) -> list[RecognizerEvent]:
        self._now = max(self._now, now)
        out = self.recognizer.tick(now)
        self._note(out)
        return out

    def setup(self, fen: str, now: float) -> list[RecognizerEvent]:
        """Restart the reading from ``fen`` (the moves listed start again from none); the
        board as it stands is read at once (a move already made on it is recognised).
        Raises :class:`SetupError` for a FEN that is no position."""
        start = parse_setup_fen(fen)
        self._now = max(self._now, now)
        rotated = self.recognizer.rotated
        self.recognizer = self._new_recognizer(start.variant, rotated=rotated)
        out = self.recognizer.start_game(now, start, rotated=rotated)
        self._setup = start
        self._led_target = start.squares
        self._note(out)
        if self._seen:
            # the recogniser reads a snapshot only where it changes its board: an empty
            # board first, then the board as it stands
            self.recognizer.feed(BoardSnapshot(now, (Piece.EMPTY,) * 64, "resync"))
            read = self.recognizer.feed(BoardSnapshot(now, tuple(self._raw), "resync"))
            self._note(read)
            out += read
        log.info("%s: set up from %s", self.serialnr, start.fen)
        return out

    # -- output ----------------------------------------------------------------------------

    @property
    def flipped(self) -> bool:
        return self.recognizer.rotated

    def san(self) -> list[str]:
        """The completed moves since the last setup or new game, in SAN; a move that may
        be the first half of a castling is held back (see :data:`CASTLING_HOLD`)."""
        record = self.recognizer.record()
        if record is None:
            return []
        moves: list[RecordedMove] = []
        for move in record.moves:
            if not move.final:
                break
            moves.append(move)
        if (
            moves
            and len(moves) == len(record.moves)
            and self._now - self._final_at.get(len(moves), self._now) < CASTLING_HOLD
            and _castling_half(record, moves)
        ):
            moves.pop()
        return [move.san for move in moves]

    def placement(self) -> str:
        """The board's FEN piece placement, game frame (see the module's docstring)."""
        if self.presence_only:
            game = self.recognizer.game
            if game is None:
                return EMPTY_PLACEMENT
            return placement_fen(game.squares)
        cells = [self._raw[63 - s if self.flipped else s] for s in range(64)]
        return placement_fen(tuple(p.symbol if p.is_chessman else "" for p in cells))

    def feed_param(self) -> dict[str, Any]:
        """The ``param`` of an ``eboardevent`` feed message."""
        return {
            "serialnr": self.serialnr,
            "flipped": self.flipped,
            "board": self.placement(),
            "clock": None if self._clock is None else self._clock.to_json(),
            "san": self.san(),
        }

    def describe(self) -> dict[str, Any]:
        """The board's entry in the ``eboards`` answer."""
        return {
            "serialnr": self.serialnr,
            "source": self.source,
            "state": str(self.state),
            "battery": None,
            "comment": None,
            "board": self.placement(),
            "flipped": self.flipped,
            "clock": None if self._clock is None else self._clock.to_json(),
        }

    def led_squares(self) -> frozenset[int]:
        """Squares (board frame) to light: after a setup, where the board differs from the
        position set up, until it matches or a move was read.  Empty otherwise."""
        target = self._led_target
        if target is None or not self._seen:
            return frozenset()
        out = set()
        for square in range(64):
            raw = self._raw[63 - square if self.flipped else square]
            want = target[square]
            if raw is Piece.OCCUPIED:
                same = bool(want)
            elif raw is Piece.EMPTY:
                same = not want
            else:
                same = raw.symbol == want
            if not same:
                out.add(63 - square if self.flipped else square)
        return frozenset(out)

    # -- inside ----------------------------------------------------------------------------

    def _new_recognizer(self, variant: str, *, rotated: bool) -> Recognizer:
        return Recognizer(
            variant=variant,
            presence_only=self.presence_only,
            settle=self.settle,
            rotated=rotated,
        )

    def _family(self, pieces: tuple[Piece, ...]) -> None:
        if self.presence_only is None:
            for piece in pieces:
                if piece is Piece.OCCUPIED:
                    self.presence_only = True
                    return
                if piece.is_chessman:
                    self.presence_only = False
                    return

    def _note(self, events: list[RecognizerEvent]) -> None:
        for event in events:
            if isinstance(event, NewGame):
                setup = self._setup
                if self._led_target is not None and setup is not None and event.fen != setup.fen:
                    # a start position on the board before it ever showed the position set
                    # up: the reading stays on the setup (the board's orientation is kept)
                    self.recognizer.start_game(event.time, setup, rotated=event.rotated)
                    log.debug("%s: start position ignored until the setup stands", self.serialnr)
                    continue
                if setup is None or event.fen != setup.fen:
                    self._led_target = None
                    self._setup = None
            elif isinstance(event, MoveEvent) and event.final:
                self._final_at[event.ply] = event.time
                self._led_target = None
        if self._led_target is not None and self._seen and not self.led_squares():
            self._led_target = None  # the board shows the setup: nothing more to show

    def _on_clock(self, event: ClockUpdate) -> None:
        left, right = event.left, event.right
        white, black = (left, right) if self._left_white else (right, left)
        self._clock = ClockReading(white, black, event.running)

    def _learn_sides(self, high: Side) -> None:
        """The first lever press after a completed move: the side now up runs, so the
        presser is the other one, and the presser is the player who moved."""
        if self._sides_known:
            return
        record = self.recognizer.record()
        if record is None or not record.moves or not record.moves[-1].final:
            return
        mover = record.moves[-1].side
        pressed_left = high is Side.RIGHT
        self._left_white = pressed_left == bool(mover)
        self._sides_known = True
