"""Realtime chess from a physical board: lifts and places in, moves in virtual time out.

Pure: no I/O, no clock of its own.  :meth:`RealtimeRecognizer.feed` takes the driver's
board events (each with its time), :meth:`RealtimeRecognizer.tick` lets time pass; both
return events (below).  The game itself is :class:`service.variants.realtime.RealtimeGame`
(the Realtime standard two player chess rules, draft 0.5); this module only decides which
physical events make a move.

The turn-based recogniser waits for the board to settle between actions; here both sides
act at any time, so every lifted piece is followed on its own (:class:`_Hand`): any number
of pieces may be in the air at once, from both sides.  A place on square *d* is matched
with a piece in the air, in this order:

1. the piece lifted from *d* itself: put back, no move (a piece knocked over and set back
   reads the same).  On a presence-only board a capture (below) wins over a put-back when a
   piece of the other colour is also in the air;
2. a piece the model already has on *d* and no longer on the square it was lifted from:
   the players catch up with the game (the rook of a castling after its king, a piece set
   right after a correction), no move;
3. a piece lifted from a square where the model had it standing: the move from there to
   *d* starts at the *lift* (rule 6; :meth:`RealtimeGame.apply_at` with the lift time).
   A piece standing on *d* that was lifted before is the captured piece, whichever was
   lifted first.  On a pawn's last rank the move promotes to a queen (rule 2.2), whether
   the board reads the pawn or a queen.  Castling is the king's two-square move; the rook
   may go first (its rook move is then withdrawn and the castling starts at the earlier
   lift) or after.  The newest lift is tried first; when no lifted piece can make the
   move, the newest one's move is *refused* (the model says why) and the players are told
   to put it back (:class:`Corrections`);
4. any other lifted piece: set back or set right, no move.

The model is told ``note_lift`` at every lift of one of its standing pieces and
``advance`` at every event and tick.  Every time :meth:`RealtimeGame.set_right` changes,
a :class:`Corrections` event lists what to take off, put back or put on; pieces in a
player's hand are counted as still on their squares until they are placed, so a move in
progress is not a correction -- except the opponent's pieces lifted before a move that is
refused: they were lifted to be captured, and must go back.

Boards: piece-identity boards match a place with a lift of the same piece; presence-only
boards (the Pegasus) see occupancy only, and the model says which piece stood where.

Before a game (or after one) the board is watched for the start position (in either
orientation on an identity board): when it stands, a game starts (:class:`NewGame`).
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import chess

from dgt.events import BoardEvent, BoardSnapshot, SquareChanged
from dgt.protocol.constants import Piece
from service.recognize.events import Amend, Lift, NewGame, Place, Result, side_name
from service.variants.base import (
    EMPTY,
    Color,
    IllegalActionError,
    Move,
    SquareMap,
    StartPosition,
)
from service.variants.realtime import (
    CASTLINGS,
    DRAW_AFTER,
    STANDARD_TICK,
    Correction,
    EventKind,
    Realtime,
    RealtimeEvent,
    RealtimeGame,
    realtime_start,
)

__all__ = [
    "Collision",
    "Corrections",
    "RealtimeRecognizer",
    "RealtimeRecognizerEvent",
    "Refused",
    "StartedMove",
    "correction_json",
    "rule_of",
]

logger = logging.getLogger(__name__)

OCCUPIED = "*"
UNREADABLE = "?"
COLLISION_KINDS = frozenset(
    {EventKind.CAPTURE, EventKind.IN_MOVE, EventKind.DODGE, EventKind.EN_PASSANT}
)
"""Model events reported as :class:`Collision` (captures of every kind and dodges)."""


def rule_of(reason: str) -> str:
    """The rule number a model reason cites (``"rule 3.3: ..."`` -> ``"3.3"``), or ``""``."""
    found = re.search(r"rules? (\d[\d./]*)", reason)
    return found.group(1).rstrip(".") if found else ""


def _reason_of(exc: IllegalActionError) -> str:
    """The model's reason inside an :class:`IllegalActionError` message."""
    found = re.search(r" s \((.*)\): pick one", str(exc))
    return found.group(1) if found else str(exc)


def correction_json(item: Correction) -> dict[str, Any]:
    """A correction as JSON: kind (``move``/``remove``/``place``), square, piece, from."""
    data: dict[str, Any] = {
        "kind": item.kind,
        "square": chess.square_name(item.square),
        "piece": item.piece,
        "text": str(item),
    }
    if item.from_square is not None:
        data["from"] = chess.square_name(item.from_square)
    return data


# -- events ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StartedMove:
    """A move was recognised when its piece was placed (``time``).  ``start`` and
    ``arrives`` are virtual seconds from the start of the game: the lift and the arrival
    (rule 6).  ``ply`` counts recognised moves (1 = the first), in the order recognised."""

    time: float
    ply: int
    side: Color
    uci: str
    san: str
    start: float
    arrives: float

    @property
    def type(self) -> str:  # not a ClassVar: mypyc makes it a field (mypyc#1122)
        return "move"

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "time": self.time,
            "ply": self.ply,
            "side": side_name(self.side),
            "uci": self.uci,
            "san": self.san,
            "start": self.start,
            "arrives": self.arrives,
        }


@dataclass(frozen=True, slots=True)
class Refused:
    """A move the rules did not allow when it started: refused as the piece was placed
    (``ply`` None), or a move recognised before (``ply``) that an earlier lift made
    illegal.  ``rule`` is the rule number the model cites (``"3.1"``, ``"3.3"``...)."""

    time: float
    side: Color | None
    uci: str
    reason: str
    rule: str
    ply: int | None = None

    @property
    def type(self) -> str:  # not a ClassVar: mypyc makes it a field (mypyc#1122)
        return "refused"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "type": self.type,
            "time": self.time,
            "side": side_name(self.side) if self.side is not None else None,
            "uci": self.uci,
            "reason": self.reason,
            "rule": self.rule,
        }
        if self.ply is not None:
            data["ply"] = self.ply
        return data


@dataclass(frozen=True, slots=True)
class Collision:
    """Something rule 4 (or en passant, rule 3.6) did in virtual time ``time`` (absolute
    seconds): ``kind`` ``capture`` (rule ``4.1`` on arrival, ``4.3`` passing through),
    ``in-move`` (``4.2``: a moving piece removed), ``dodge`` (``4.4``), ``en-passant``;
    ``piece`` the piece removed (dodge: one of the two), ``by`` the other one."""

    time: float
    kind: EventKind
    rule: str
    square: int
    piece: str
    by: str

    @property
    def type(self) -> str:  # not a ClassVar: mypyc makes it a field (mypyc#1122)
        return "collision"

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "time": self.time,
            "kind": self.kind,
            "rule": self.rule,
            "square": chess.square_name(self.square),
            "piece": self.piece,
            "by": self.by,
        }


@dataclass(frozen=True, slots=True)
class Corrections:
    """What the players must set right now, in the order to do it (empty: nothing)."""

    time: float
    items: tuple[Correction, ...]

    @property
    def type(self) -> str:  # not a ClassVar: mypyc makes it a field (mypyc#1122)
        return "corrections"

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "time": self.time,
            "items": [correction_json(item) for item in self.items],
        }


RealtimeRecognizerEvent = (
    Lift | Place | NewGame | StartedMove | Amend | Refused | Collision | Corrections | Result
)


# -- state -------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Hand:
    """A piece in a player's hand: lifted from ``square`` at ``time``.  ``piece``: what
    the board read; ``known``: the model's symbol there at the lift (``""`` when the model
    had no such piece there: a piece being set right, a captured piece); ``mover``: its
    move starts at this lift."""

    square: int
    piece: str
    time: float
    known: str
    mover: bool
    held: bool = True
    """Counted as still on its square (not a correction) while in the hand; cleared when a
    move that would have captured it is refused, so the players are asked to put it back."""


@dataclass(slots=True)
class RecognizedMove:
    """A move the recogniser gave the model: ``lifted`` is the absolute lift time."""

    ply: int
    move: Move
    side: Color
    lifted: float
    uci: str
    san: str
    refused: str | None = None


def _is_white(symbol: str) -> bool:
    return symbol.isupper()


def _ticks(symbol: str, move: Move) -> int:
    """Rule 6 and "Duration of moves": ticks a move takes."""
    df = abs((move.to_square & 7) - (move.from_square & 7))
    dr = abs((move.to_square >> 3) - (move.from_square >> 3))
    if symbol.lower() == "n" or (symbol.lower() == "k" and df == 2 and dr == 0):
        return 2
    return max(df, dr)


class RealtimeRecognizer:
    """Follows a physical board through a game of realtime chess (module docstring).

    ``tick``: seconds per tick (0.1 to 1, rule 6; a :class:`ValueError` otherwise);
    ``presence_only``: the board family (None: learned from the first piece read);
    ``draw_after``: seconds without a capture that draw the game (rule 5.4);
    ``rotated``: the board stands the other way round (learned from the start position
    on identity boards); ``start``: another start position (problems, tests)."""

    def __init__(
        self,
        tick: float = STANDARD_TICK,
        *,
        presence_only: bool | None = None,
        draw_after: float = DRAW_AFTER,
        rotated: bool = False,
        start: StartPosition | None = None,
    ) -> None:
        self.variant = Realtime(tick, draw_after=draw_after)
        self.start = start or realtime_start()
        """The position a game starts from (the classical one, rule 1.1, unless given)."""
        self.presence_only = presence_only
        self.rotated = rotated
        self.game: RealtimeGame | None = None
        self.origin = 0.0
        """The time the game began (virtual times are seconds from it)."""
        self.moves: list[RecognizedMove] = []
        """Moves given to the model, in the order recognised (castling amends replace)."""
        self.corrections: tuple[Correction, ...] = ()
        self._board: list[str] = [EMPTY] * 64  # the board's own frame
        self._air: list[_Hand] = []
        self._seen: Counter[tuple[float, str, int | None, str, str]] = Counter()
        self._plies = 0
        self._ended = False

    # -- state -------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        """A game is on (started and not over)."""
        return self.game is not None and self.game.outcome() is None

    def board(self) -> SquareMap:
        """What the physical board shows, in the game's frame."""
        cells = self._board[::-1] if self.rotated else self._board
        return tuple(cells)

    def in_hand(self) -> list[tuple[int, str, float]]:
        """The pieces lifted and not placed yet: (square, piece, lift time)."""
        return [(h.square, h.known or h.piece, h.time) for h in self._air]

    # -- inputs ------------------------------------------------------------------------------

    def start_game(self, now: float, *, rotated: bool | None = None) -> list[Any]:
        """Start a game at ``now`` (the board should show the start position; what differs
        is reported as corrections)."""
        if rotated is not None and rotated != self.rotated:
            self.rotated = rotated
        self.game = self.variant.new_game(self.start)
        self.game.start_clock(now)
        self.origin = now
        self.moves = []
        self.corrections = ()
        self._air = []
        self._seen = Counter()
        self._plies = 0
        self._ended = False
        start = self.start
        out: list[Any] = [NewGame(now, self.variant.id, start.fen, None, self.rotated)]
        return out + self._after(now)

    def stop(self) -> None:
        """The game was ended from outside (an arbiter's result): no more moves; the
        board is watched for the start position again."""
        self._ended = True
        self._air = []
        self.corrections = ()

    def feed(self, event: BoardEvent) -> list[Any]:
        """One driver event (square changes and board snapshots; others are ignored)."""
        if isinstance(event, SquareChanged):
            return self._changed(event.time, [(event.square, event.piece)])
        if isinstance(event, BoardSnapshot):
            changes = [(sq, piece) for sq, piece in enumerate(event.squares)]
            return self._changed(event.time, changes)
        return []

    def tick(self, now: float) -> list[Any]:
        """Time passes: pieces travel, collide, arrive; the game may end."""
        if self.game is None or self._ended:
            return []
        self.game.advance(now)
        return self._after(now)

    # -- board changes -----------------------------------------------------------------------

    def _reading(self, piece: Piece) -> str:
        if piece is Piece.EMPTY:
            return EMPTY
        if piece is Piece.UNKNOWN:
            return UNREADABLE
        if self.presence_only is None:
            self.presence_only = piece is Piece.OCCUPIED
        return OCCUPIED if self.presence_only else piece.symbol

    def _changed(self, t: float, changes: Sequence[tuple[int, Piece]]) -> list[Any]:
        readings = [(raw, self._reading(piece)) for raw, piece in changes]
        readings = [(raw, new) for raw, new in readings if self._board[raw] != new]
        if not readings:
            return self.tick(t)
        if self.game is not None and not self._ended:
            self.game.advance(t)
        out: list[Any] = []
        # lifts first, then places (a snapshot may hold both)
        for raw, _new in readings:
            if self._board[raw]:
                out += self._lift(t, raw)
        for raw, new in readings:
            if new:
                out += self._place(t, raw, new)
        if self.game is not None and not self._ended:
            out += self._after(t)
        if self._ended or self.game is None:
            out += self._look_for_start(t)
        return out

    def _square(self, raw: int) -> int:
        return 63 - raw if self.rotated else raw

    def _lift(self, t: float, raw: int) -> list[Any]:
        piece = self._board[raw]
        self._board[raw] = EMPTY
        square = self._square(raw)
        out: list[Any] = [Lift(t, square, piece)]
        game = self.game
        if game is None or not self.running:
            return out
        known = game.squares[square]
        mover = bool(known) and _same(known, piece)
        if mover:
            game.note_lift(square, t)
        self._air.append(_Hand(square, piece, t, known if mover else "", mover))
        return out

    def _place(self, t: float, raw: int, symbol: str) -> list[Any]:
        self._board[raw] = symbol
        square = self._square(raw)
        out: list[Any] = [Place(t, square, symbol)]
        if self.running:
            out += self._resolve(t, square, symbol)
        return out

    def _resolve(self, t: float, square: int, symbol: str) -> list[Any]:
        """Which lifted piece was placed on ``square`` (module docstring, steps 1-4)."""
        game = self.game
        assert game is not None
        hands = [h for h in self._air if _fits(h, square, symbol)]
        if not hands:
            return []  # a piece from outside the game (a spare, a stray): corrections tell
        expected = game.squares
        movers = [h for h in reversed(hands) if h.square != square and h.mover]
        back = [h for h in hands if h.square == square]
        if back:
            mine = back[-1]
            capture = self.presence_only and any(
                m.known and mine.known and _is_white(m.known) != _is_white(mine.known)
                for m in movers
            )
            if not capture:
                self._air.remove(mine)
                return []
        want = expected[square]
        if want and _same(want, symbol):
            for hand in reversed(hands):
                if hand.square != square and not _same(expected[hand.square], hand.piece):
                    self._air.remove(hand)
                    return []
        failures: list[tuple[_Hand, Move, str]] = []
        for hand in movers:
            move = _move_for(hand, square)
            try:
                made = self._make(hand, move)
            except IllegalActionError as exc:
                failures.append((hand, move, _reason_of(exc)))
                continue
            self._air.remove(hand)
            self._air = [h for h in self._air if h.square != square]  # the captured piece
            return made
        if failures:
            hand, move, reason = failures[0]
            self._air.remove(hand)
            side = _is_white(hand.known)
            for other in self._air:  # pieces lifted as if captured: to be put back now
                if other.known and _is_white(other.known) != side:
                    other.held = False
            logger.info("refused %s at %.3f: %s", move, hand.time, reason)
            return [Refused(t, side, str(move), reason, rule_of(reason))]
        others = [h for h in hands if not h.mover]
        if others:
            self._air.remove(others[-1])
        return []

    def _make(self, hand: _Hand, move: Move) -> list[Any]:
        """Give ``move`` to the model, started at ``hand``'s lift (castling: see the module
        docstring).  Raises :class:`IllegalActionError` when the rules refuse it."""
        game = self.game
        assert game is not None
        symbol = hand.known
        side = _is_white(symbol)
        rook = self._castling_rook(hand, move)
        if rook is None:
            start = hand.time
            if symbol.lower() == "k" and move.to_square - move.from_square in (2, -2):
                rook_from = _castling_rook_square(move)
                start = min(
                    [start] + [h.time for h in self._air if h.mover and h.square == rook_from]
                )
            return [self._give(move, side, symbol, start)]
        start = min(hand.time, rook.lifted)
        later = self._withdraw(rook)
        try:
            made = self._give(move, side, symbol, start, ply=rook.ply)
        except IllegalActionError:
            self._reapply([rook, *later])
            raise
        self._reapply(later)
        return [Amend(made.time, rook.ply, rook.ply, side, rook.uci, rook.san, made.uci, made.san)]

    def _give(
        self, move: Move, side: Color, symbol: str, start: float, *, ply: int | None = None
    ) -> StartedMove:
        game = self.game
        assert game is not None
        try:
            san = game.san(move)
        except IllegalActionError:
            san = str(move)
        game.apply_at(move, start)
        if ply is None:
            self._plies += 1
            ply = self._plies
        entry = RecognizedMove(ply, move, side, start, str(move), san)
        self.moves.append(entry)
        begin = round(start - self.origin, 3)
        arrives = round(begin + _ticks(symbol, move) * self.variant.tick, 3)
        return StartedMove(game.now, ply, side, str(move), san, begin, arrives)

    def _castling_rook(self, hand: _Hand, move: Move) -> RecognizedMove | None:
        """The rook move just recognised that is the first half of the castling ``move``
        of the king in ``hand`` (the rook went first), if any."""
        if hand.known.lower() != "k" or move.to_square - move.from_square not in (2, -2):
            return None
        rook_from = _castling_rook_square(move)
        if rook_from is None:
            return None
        _, _, _, rook_to = CASTLINGS[rook_from]
        side = _is_white(hand.known)
        for entry in reversed(self.moves):
            if entry.side != side or entry.refused is not None:
                continue
            if entry.move == Move(rook_from, rook_to):
                return entry
            if rook_from in (entry.move.from_square, entry.move.to_square):
                return None
        return None

    def _withdraw(self, entry: RecognizedMove) -> list[RecognizedMove]:
        """Take ``entry`` out of the model; returns the moves given after it (also taken
        out, to be given again)."""
        game = self.game
        assert game is not None
        later: list[RecognizedMove] = []
        while self.moves:
            game.undo()
            last = self.moves.pop()
            if last is entry:
                break
            later.append(last)
        later.reverse()
        return later

    def _reapply(self, entries: Sequence[RecognizedMove]) -> None:
        game = self.game
        assert game is not None
        for entry in entries:
            try:
                game.apply_at(entry.move, entry.lifted)
            except IllegalActionError as exc:
                entry.refused = _reason_of(exc)
                logger.info("move %s no longer stands: %s", entry.uci, entry.refused)
                continue
            self.moves.append(entry)

    # -- after every change --------------------------------------------------------------------

    def _after(self, t: float) -> list[Any]:
        """What the model's news mean: collisions, later refusals, the end, corrections."""
        game = self.game
        if game is None or self._ended:
            return []
        out: list[Any] = []
        log = game.events()
        counts = Counter(_key(e) for e in log)
        new = counts - self._seen
        self._seen = counts
        for event in log:
            key = _key(event)
            if new[key] <= 0:
                continue
            new[key] -= 1
            if event.kind in COLLISION_KINDS and event.square is not None:
                rule, _, by = event.detail.partition(" ")
                by = by.partition(" ")[2]
                if event.kind is EventKind.EN_PASSANT:
                    rule = "3.6"
                out.append(Collision(event.time, event.kind, rule, event.square, event.piece, by))
        refused = game.refused()
        for entry in self.moves:
            reason = refused.get(entry.move)
            if entry.refused is None and reason is not None:
                entry.refused = reason
                out.append(Refused(t, entry.side, entry.uci, reason, rule_of(reason), entry.ply))
        end = game.outcome()
        if end is not None:
            self._ended = True
            self._air = []
            out.append(Result(max(t, game.now), end.result, end.reason))
            if self.corrections:
                self.corrections = ()
                out.append(Corrections(t, ()))
            return out
        items = tuple(game.set_right(self._imagined(), presence_only=bool(self.presence_only)))
        if items != self.corrections:
            self.corrections = items
            out.append(Corrections(t, items))
        return out

    def _imagined(self) -> SquareMap:
        """The board with the pieces in the players' hands back on their squares, while the
        model still has them there (a move in progress is no correction)."""
        game = self.game
        assert game is not None
        cells = list(self.board())
        expected = game.squares
        for hand in self._air:
            square = hand.square
            if (
                hand.mover
                and hand.held
                and not cells[square]
                and _same(expected[square], hand.piece)
            ):
                cells[square] = hand.piece
        return tuple(cells)

    def _look_for_start(self, t: float) -> list[Any]:
        """A new game when the start position stands (identity boards: either way round)."""
        start = self.start.squares
        board = tuple(self._board)
        if self.presence_only:
            if tuple(bool(s) for s in board) == tuple(bool(s) for s in start):
                return self.start_game(t)
            return []
        if board == start:
            return self.start_game(t, rotated=False)
        if board == start[::-1]:
            return self.start_game(t, rotated=True)
        return []


def _key(event: RealtimeEvent) -> tuple[float, str, int | None, str, str]:
    return (event.time, event.kind, event.square, event.piece, event.detail)


def _same(expected: str, reading: str) -> bool:
    """A board reading is the model's piece (``*`` and ``?`` match any piece)."""
    if reading in (OCCUPIED, UNREADABLE):
        return bool(expected)
    return expected == reading


def _fits(hand: _Hand, square: int, symbol: str) -> bool:
    """The piece placed (``symbol`` on ``square``) may be the one in ``hand``: the same
    reading, any reading on a presence-only board, or a queen for a pawn on its last rank."""
    if symbol in (OCCUPIED, UNREADABLE) or hand.piece in (OCCUPIED, UNREADABLE):
        return True
    if symbol == hand.piece:
        return True
    return (
        hand.piece in ("P", "p")
        and symbol == ("Q" if hand.piece == "P" else "q")
        and (square >> 3) in (0, 7)
    )


def _move_for(hand: _Hand, square: int) -> Move:
    promotion = "q" if hand.known.lower() == "p" and (square >> 3) in (0, 7) else None
    return Move(hand.square, square, promotion)


def _castling_rook_square(move: Move) -> int | None:
    for rook_sq, (king_from, king_to, _, _) in CASTLINGS.items():
        if (king_from, king_to) == (move.from_square, move.to_square):
            return rook_sq
    return None
