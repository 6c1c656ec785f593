"""Realtime chess: no turns; pieces travel one square per tick and rest after arriving.

Rules: the Realtime standard two player chess rules, draft 0.5 ("rule N" below).  The model
keeps the game in *virtual time*: every move starts when its piece was lifted (the time is
an argument, never read from a clock), travels along its path one field per tick (a knight
and a castling take two ticks, rule 6 / "Duration of moves"), and the piece then has a
delay of ten ticks (rule 6.3).  A piece's pivot is in the next field from half a tick on
("Timing and precision": moved at 0 ms, it is in the next field from 501 ms).

Time is kept in integer milliseconds.  :meth:`RealtimeGame.apply_at` starts a move at the
time its piece was lifted; :meth:`RealtimeGame.advance` lets virtual time run.  A move whose
lift lies in the past is slotted into the game where it belongs and the game is worked out
again from just before it, so the order in which the moves become known does not matter.

What the physical board should show (:attr:`RealtimeGame.squares`) is every standing piece
on its square and every moving piece on its destination (the player has already put it
there).  :meth:`RealtimeGame.set_right` compares that with the board and says what to take
off, put back or put on; :meth:`RealtimeGame.delays` gives each piece's remaining delay for
the mirror.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from functools import cache

import chess

from service.variants.base import (
    BLACK,
    EMPTY,
    WHITE,
    Action,
    Color,
    GameEnd,
    IllegalActionError,
    LegalAction,
    Move,
    NothingToUndoError,
    ScoreEvent,
    SquareMap,
    StartPosition,
    Variant,
    VariantGame,
    result_string,
)
from service.variants.standard import CLASSICAL_FEN, squares_of

STANDARD_TICK = 1.0
"""Seconds per tick in standard realtime chess (rule 6)."""
FASTEST_TICK = 0.1
"""The shortest tick the text allows ("as low as 100 milliseconds")."""
DELAY_TICKS = 10
"""Rule 6.3: the delay after arrival, in ticks."""
DRAW_AFTER = 300.0
"""Rule 5.4: seconds without a capture after which the game is drawn."""

KNIGHT_STEPS = ((1, 2), (2, 1), (-1, 2), (-2, 1), (1, -2), (2, -1), (-1, -2), (-2, -1))
ORTHOGONAL = ((1, 0), (-1, 0), (0, 1), (0, -1))
DIAGONAL = ((1, 1), (1, -1), (-1, 1), (-1, -1))
CASTLINGS: Mapping[int, tuple[int, int, int, int]] = {
    # rook square: king from, king to, rook from, rook to
    chess.H1: (chess.E1, chess.G1, chess.H1, chess.F1),
    chess.A1: (chess.E1, chess.C1, chess.A1, chess.D1),
    chess.H8: (chess.E8, chess.G8, chess.H8, chess.F8),
    chess.A8: (chess.E8, chess.C8, chess.A8, chess.D8),
}


def _ms(seconds: float) -> int:
    return round(seconds * 1000)


def _color(symbol: str) -> Color:
    return symbol.isupper()


def _step(square: int, df: int, dr: int) -> int | None:
    file, rank = (square & 7) + df, (square >> 3) + dr
    if 0 <= file < 8 and 0 <= rank < 8:
        return rank * 8 + file
    return None


def _line(origin: int, target: int) -> tuple[int, ...]:
    """The fields from ``origin`` to ``target`` along a straight or diagonal line."""
    df = (target & 7) - (origin & 7)
    dr = (target >> 3) - (origin >> 3)
    n = max(abs(df), abs(dr))
    sf, sr = (df > 0) - (df < 0), (dr > 0) - (dr < 0)
    return tuple(origin + i * (sr * 8 + sf) for i in range(n + 1))


# -- events and reports ------------------------------------------------------------------------


class EventKind(StrEnum):
    """What happened in virtual time (see :class:`RealtimeEvent`)."""

    START = "start"
    ARRIVE = "arrive"
    CAPTURE = "capture"
    IN_MOVE = "in-move"
    DODGE = "dodge"
    EN_PASSANT = "en-passant"
    PROMOTION = "promotion"
    REFUSED = "refused"
    END = "end"


class CorrectionKind(StrEnum):
    """What the players must do to set the board right (see :class:`Correction`)."""

    REMOVE = "remove"
    PLACE = "place"
    MOVE = "move"


@dataclass(frozen=True, slots=True)
class RealtimeEvent:
    """Something that happened in virtual time (``time`` in seconds).

    ``kind``: ``"start"`` (a move began), ``"arrive"``, ``"capture"`` (rule 4.1 or 4.3: a
    standing piece was removed), ``"in-move"`` (rule 4.2: a moving piece was removed),
    ``"dodge"`` (rule 4.4), ``"en-passant"``, ``"promotion"``, ``"refused"`` (a move the
    rules did not allow when it started), ``"end"``.  ``square`` is where it happened,
    ``piece`` the piece concerned; ``detail`` for collisions starts with the rule number
    (``"4.1 by R"``, ``"4.3 by Q"``, ``"4.2 by B"``, ``"4.4 with n"``)."""

    time: float
    kind: EventKind
    square: int | None
    piece: str
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Correction:
    """One thing the players must set right on the board.

    ``kind``: ``"remove"`` (take ``piece`` off ``square``: it was captured in the virtual
    game, e.g. by a collision), ``"place"`` (put ``piece`` on ``square``), ``"move"`` (move
    ``piece`` from ``from_square`` back to ``square``: a refused move)."""

    kind: CorrectionKind
    square: int
    piece: str
    from_square: int | None = None

    def __str__(self) -> str:
        name = chess.square_name
        if self.kind is CorrectionKind.MOVE and self.from_square is not None:
            return f"move {self.piece} from {name(self.from_square)} to {name(self.square)}"
        if self.kind is CorrectionKind.REMOVE:
            return f"take {self.piece or 'the piece'} off {name(self.square)}"
        return f"put {self.piece} on {name(self.square)}"


@dataclass(frozen=True, slots=True)
class Travel:
    """A piece under way, as the mirror shows it."""

    piece: str
    origin: int
    target: int
    field: int | None  # where its pivot is now (None: a knight in the air)
    started: float
    arrives: float


# -- the simulation ----------------------------------------------------------------------------


@dataclass(slots=True)
class _Order:
    """A move as the players made it: started at ``start`` ms (the lift)."""

    seq: int
    move: Move
    start: int


@dataclass(slots=True)
class _Leg:
    """One piece's journey (a castling has two)."""

    seq: int
    piece: str
    path: tuple[int | None, ...]  # fields from origin to target; None: knight in the air
    start: int
    duration: int
    ep_victim: int | None = None
    double: bool = False
    took_on_entry: bool = False

    @property
    def origin(self) -> int:
        origin = self.path[0]
        assert origin is not None
        return origin

    @property
    def target(self) -> int:
        target = self.path[-1]
        assert target is not None
        return target

    @property
    def arrival(self) -> int:
        return self.start + self.duration

    def index(self, t: int) -> int:
        """Rule 6 and "Timing and precision": how many fields the pivot has gone at ``t``:
        the next field is reached half a step after the previous one."""
        m = len(self.path) - 1
        e = t - self.start
        if 2 * m * e <= self.duration:
            return 0
        return min(m, -(-(2 * m * e - self.duration) // (2 * self.duration)))

    def field(self, t: int) -> int | None:
        return self.path[self.index(t)]

    def changes_after(self, t: int) -> int | None:
        """The first instant after ``t`` at which the pivot changes field or arrives."""
        m = len(self.path) - 1
        for j in range(1, m + 1):
            when = self.start + (self.duration * (2 * j - 1)) // (2 * m) + 1
            if when > t:
                return when
        return self.arrival if self.arrival > t else None


@dataclass(slots=True)
class _World:
    standing: dict[int, str]
    ready: dict[int, int]  # square -> ms from which its piece may move again
    doubled: set[int]  # pawns standing after a double step
    castling: set[int]  # rook squares keeping their castling right
    legs: list[_Leg]
    done: int  # the last instant worked out
    next_order: int  # index of the first order not yet started
    last_capture: int
    end: GameEnd | None = None
    refused: dict[int, str] = field(default_factory=dict)
    log: list[RealtimeEvent] = field(default_factory=list)

    def over(self) -> bool:
        """Whether the game has ended (asked again after each step: mypy takes ``end`` read
        twice in a function for the same, and the compiled build trusts it)."""
        return self.end is not None

    def copy(self) -> _World:
        return replace(
            self,
            standing=dict(self.standing),
            ready=dict(self.ready),
            doubled=set(self.doubled),
            castling=set(self.castling),
            legs=[replace(leg) for leg in self.legs],
            refused=dict(self.refused),
            log=list(self.log),
        )


class RealtimeGame(VariantGame):
    """One game of realtime chess in virtual time (see the module docstring)."""

    def __init__(self, variant: Realtime, start: StartPosition) -> None:
        self.variant = variant
        self.start = start
        self._variant = variant
        self.tick = _ms(variant.tick)
        self.delay = DELAY_TICKS * self.tick
        self.draw_after = _ms(variant.draw_after)
        board = chess.Board(start.fen)
        self._initial = squares_of(board)
        self._rights = {sq for sq in CASTLINGS if board.castling_rights & chess.BB_SQUARES[sq]}
        self._origin: int | None = None
        self._now: int | None = None
        self._orders: list[_Order] = []  # sorted by (start, seq)
        self._added: list[int] = []  # seqs in the order they were applied (for undo)
        self._seq = 0
        self._lifts: dict[int, int] = {}
        self._world: _World | None = None
        self._checkpoints: list[tuple[int, _World]] = []
        self._flagged: GameEnd | None = None
        self._cache: tuple[object, list[LegalAction]] | None = None
        self._version = 0

    # -- virtual time ------------------------------------------------------------------------

    def start_clock(self, time: float) -> None:
        """Start the game's virtual time at ``time`` (seconds); otherwise the first time
        the game is given (a lift, a move, :meth:`advance`) starts it."""
        if self._origin is None:
            self._origin = self._now = _ms(time)
            self._world = self._fresh_world()

    @property
    def now(self) -> float:
        """The virtual time the game has been worked out to, in seconds."""
        return (self._now or 0) / 1000

    def advance(self, time: float) -> list[ScoreEvent]:
        self.start_clock(time)
        t = _ms(time)
        assert self._now is not None
        if t > self._now:
            self._now = t
            self._run(self._now)
        return []

    def note_lift(self, square: int, time: float) -> None:
        """A piece was lifted from ``square`` at ``time``: a move of it made with
        :meth:`apply` (without a time) starts then (rule 6: a move starts at the lift)."""
        self.start_clock(time)
        self._lifts[square] = _ms(time)

    def apply_at(self, action: Action, time: float) -> list[ScoreEvent]:
        """Start ``action`` (a :class:`Move`) at ``time``, the time its piece was lifted.
        Raises :class:`IllegalActionError` when the rules did not allow that move then."""
        if not isinstance(action, Move):
            raise IllegalActionError(action, "realtime chess (only moves exist there)")
        self.start_clock(time)
        t = _ms(time)
        self._lifts.pop(action.from_square, None)
        order = _Order(self._seq, action, t)
        self._seq += 1
        self._insert(order)
        world = self._world
        assert world is not None
        reason = world.refused.get(order.seq)
        if reason is not None:
            self._remove(order.seq)
            raise IllegalActionError(action, f"realtime chess at {t / 1000:.3f} s ({reason})")
        self._added.append(order.seq)
        return []

    def apply(self, action: Action) -> list[ScoreEvent]:
        """Start ``action`` at the time its piece was lifted (:meth:`note_lift`), else now."""
        if isinstance(action, Move) and action.from_square in self._lifts:
            return self.apply_at(action, self._lifts[action.from_square] / 1000)
        return self.apply_at(action, self.now)

    def undo(self) -> Action:
        if not self._added:
            raise NothingToUndoError()
        seq = self._added.pop()
        order = next(o for o in self._orders if o.seq == seq)
        self._remove(seq)
        return order.move

    # -- the interface -----------------------------------------------------------------------

    @property
    def squares(self) -> SquareMap:
        """What the physical board should show now: standing pieces on their squares,
        moving pieces on their destinations."""
        world = self._world
        if world is None:
            return self._initial
        cells = [EMPTY] * 64
        for square, symbol in world.standing.items():
            cells[square] = symbol
        for leg in world.legs:
            cells[leg.target] = self._arriving(leg)
        return tuple(cells)

    def virtual_squares(self) -> SquareMap:
        """Where every piece's pivot is now (a knight in the air is nowhere)."""
        world = self._world
        if world is None:
            return self._initial
        cells = [EMPTY] * 64
        for square, symbol in world.standing.items():
            cells[square] = symbol
        for leg in world.legs:
            f = leg.field(world.done)
            if f is not None:
                cells[f] = leg.piece
        return tuple(cells)

    def delays(self) -> dict[int, float]:
        """Rule 6.3: seconds of delay each standing piece still has, by square (pieces
        without delay are left out)."""
        world = self._world
        if world is None or self._now is None:
            return {}
        now = self._now
        return {sq: (ready - now) / 1000 for sq, ready in world.ready.items() if ready > now}

    def travels(self) -> list[Travel]:
        """The pieces under way."""
        world = self._world
        if world is None:
            return []
        return [
            Travel(
                leg.piece,
                leg.origin,
                leg.target,
                leg.field(world.done),
                leg.start / 1000,
                leg.arrival / 1000,
            )
            for leg in world.legs
        ]

    def events(self) -> list[RealtimeEvent]:
        """Everything that happened so far, in order."""
        return list(self._world.log) if self._world else []

    def refused(self) -> dict[Move, str]:
        """Moves that were accepted when made but turned out not allowed once an earlier
        lift became known (e.g. an earlier move to the same destination), with the reason."""
        world = self._world
        if world is None:
            return {}
        moves = {o.seq: o.move for o in self._orders}
        return {moves[seq]: reason for seq, reason in world.refused.items()}

    def set_right(self, board: Sequence[str], *, presence_only: bool = False) -> list[Correction]:
        """What the players must do so that the physical ``board`` (a 64-square map; any
        non-empty string for an occupied square on a presence-only board) shows the game:
        pieces to move back (a refused move), to take off (captured in the virtual game,
        e.g. by a collision) and to put on, in the order to do them."""
        expected = self.squares
        extra: dict[int, str] = {}
        missing: dict[int, str] = {}
        for square in range(64):
            have, want = board[square], expected[square]
            if presence_only:
                if bool(have) == bool(want):
                    continue
            elif have == want:
                continue
            if have:
                extra[square] = have
            if want:
                missing[square] = want
        moves: list[Correction] = []
        places: list[Correction] = []
        for square, want in sorted(missing.items()):
            source = next(
                (sq for sq, have in sorted(extra.items()) if presence_only or have == want),
                None,
            )
            if source is not None:
                del extra[source]
                moves.append(Correction(CorrectionKind.MOVE, square, want, source))
            else:
                places.append(Correction(CorrectionKind.PLACE, square, want))
        removes = [
            Correction(CorrectionKind.REMOVE, sq, have) for sq, have in sorted(extra.items())
        ]
        return moves + removes + places  # clear a square before something is put on it

    def sides_to_act(self) -> frozenset[Color]:
        if self.outcome() is not None:
            return frozenset()
        return frozenset((WHITE, BLACK))

    def legal_actions(self) -> Sequence[LegalAction]:
        """The moves that may start now (rules 1.2 and 3): pieces standing without delay,
        by the chess moves on the standing pieces, minus the blocked ones."""
        world = self._world or self._fresh_world()
        key = (self._version, world.done)
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        out: list[LegalAction] = []
        if self.outcome() is None:
            now = world.done
            before = self.squares
            for square, symbol in sorted(world.standing.items()):
                for legs in self._candidates(world, square, now):
                    after = list(before)
                    for leg in legs:
                        if after[leg.origin] == leg.piece:
                            after[leg.origin] = EMPTY
                        if leg.ep_victim is not None:
                            after[leg.ep_victim] = EMPTY
                    for leg in legs:
                        after[leg.target] = self._arriving(leg)
                    changes = tuple((sq, after[sq]) for sq in range(64) if after[sq] != before[sq])
                    move = self._move_of(legs)
                    out.append(LegalAction(move, _color(symbol), changes, str(move)))
        self._cache = (key, out)
        return out

    def san(self, action: Action) -> str:
        if not isinstance(action, Move):
            raise IllegalActionError(action, "realtime chess (only moves exist there)")
        cells = self.squares
        symbol = cells[action.from_square]
        if not symbol:
            raise IllegalActionError(action, "realtime chess (no piece there)")
        if symbol.lower() == "k" and abs(action.from_square - action.to_square) == 2:
            return "O-O" if action.to_square > action.from_square else "O-O-O"
        piece = "" if symbol.lower() == "p" else symbol.upper()
        sep = "x" if cells[action.to_square] else "-"
        promo = "=Q" if action.promotion else ""
        name = chess.square_name
        return f"{piece}{name(action.from_square)}{sep}{name(action.to_square)}{promo}"

    def outcome(self) -> GameEnd | None:
        if self._flagged is not None:
            return self._flagged
        return self._world.end if self._world else None

    def flag(self, side: Color) -> GameEnd:
        """A side out of time (if the table runs a clock at all) loses."""
        self._flagged = GameEnd(result_string(not side), "time-out", not side)
        self._cache = None
        return self._flagged

    @property
    def ply(self) -> int:
        return len(self._added)

    def move_number(self) -> int:
        return len(self._added) + 1

    def fen(self) -> str:
        """The board as it should stand (see :attr:`squares`), no side to move, the
        castling rights, and the virtual time in milliseconds."""
        board = chess.BaseBoard.empty()
        for square, symbol in enumerate(self.squares):
            if symbol:
                board.set_piece_at(square, chess.Piece.from_symbol(symbol))
        world = self._world
        rights = world.castling if world else self._rights
        castling = (
            "".join(
                letter
                for square, letter in (
                    (chess.H1, "K"),
                    (chess.A1, "Q"),
                    (chess.H8, "k"),
                    (chess.A8, "q"),
                )
                if square in rights
            )
            or "-"
        )
        t = 0 if self._now is None or self._origin is None else self._now - self._origin
        return f"{board.board_fen()} - {castling} - t={t}"

    # -- working the game out ------------------------------------------------------------------

    def _fresh_world(self) -> _World:
        origin = self._origin or 0
        standing = {sq: s for sq, s in enumerate(self._initial) if s}
        return _World(
            standing=standing,
            ready={},
            doubled=set(),
            castling=set(self._rights),
            legs=[],
            done=origin - 1,
            next_order=0,
            last_capture=origin,
        )

    def _insert(self, order: _Order) -> None:
        self._orders.append(order)
        self._orders.sort(key=lambda o: (o.start, o.seq))
        self._rewind(order.start)

    def _remove(self, seq: int) -> None:
        order = next(o for o in self._orders if o.seq == seq)
        self._orders.remove(order)
        self._rewind(order.start)

    def _rewind(self, start: int) -> None:
        """Work the game out again from just before ``start`` up to now."""
        while self._checkpoints and self._checkpoints[-1][0] >= start:
            self._checkpoints.pop()
        if self._checkpoints:
            self._world = self._checkpoints[-1][1].copy()
        else:
            self._world = self._fresh_world()
        # the checkpoint's order index counts orders before its time: still right
        assert self._now is not None
        self._now = max(self._now, start)
        self._run(self._now)
        self._cache = None

    def _run(self, until: int) -> None:
        world = self._world
        assert world is not None
        orders = self._orders
        while not world.over():
            candidates = [leg.changes_after(world.done) for leg in world.legs]
            instants = [c for c in candidates if c is not None]
            if world.next_order < len(orders):
                instants.append(max(orders[world.next_order].start, world.done + 1))
            instants.append(world.last_capture + self.draw_after)
            t = min(instants)
            if t > until:
                break
            due = world.next_order < len(orders) and orders[world.next_order].start <= t
            if due:
                self._checkpoints.append((t, world.copy()))
            self._motion(world, t)
            while (
                not world.over()
                and world.next_order < len(orders)
                and orders[world.next_order].start <= t
            ):
                self._start(world, orders[world.next_order], t)
                world.next_order += 1
            if not world.over() and t >= world.last_capture + self.draw_after:
                self._finish(world, t, GameEnd("1/2-1/2", "five minutes without capture", None))
            world.done = t
        if world.over():
            while world.next_order < len(orders):
                order = orders[world.next_order]
                world.refused[order.seq] = "the game is over"
                world.next_order += 1
        world.done = max(world.done, until)
        self._version += 1
        self._cache = None

    def _finish(self, world: _World, t: int, end: GameEnd) -> None:
        world.end = end
        world.log.append(
            RealtimeEvent(t / 1000, EventKind.END, None, "", f"{end.result} {end.reason}")
        )

    def _take(self, world: _World, square: int, t: int, kind: EventKind, detail: str = "") -> str:
        symbol = world.standing.pop(square)
        world.ready.pop(square, None)
        world.doubled.discard(square)
        world.castling.discard(square)
        world.last_capture = t
        world.log.append(RealtimeEvent(t / 1000, kind, square, symbol, detail))
        return symbol

    def _motion(self, world: _World, t: int) -> None:
        """Rule 4: collisions at instant ``t``, then arrivals."""
        kings: list[str] = []
        for leg in sorted(world.legs, key=lambda leg: (leg.start, leg.seq)):
            f = leg.field(t)
            if f is None:
                continue
            victim = world.standing.get(f)
            if victim and _color(victim) != _color(leg.piece):
                rule = "4.1" if f == leg.target else "4.3"  # on arrival / passing through
                self._take(world, f, t, EventKind.CAPTURE, f"{rule} by {leg.piece}")
                if f == leg.target:
                    leg.took_on_entry = True
                if victim.lower() == "k":
                    kings.append(victim)
        removed: set[int] = set()
        legs = world.legs
        for i, a in enumerate(legs):
            for b in legs[i + 1 :]:
                if id(a) in removed or id(b) in removed or _color(a.piece) == _color(b.piece):
                    continue
                fa = a.field(t)
                if fa is None or fa != b.field(t):
                    continue
                if a.start == b.start:  # 4.4 double dodge, logged once per meeting
                    dodge = RealtimeEvent(
                        t / 1000, EventKind.DODGE, fa, a.piece, f"4.4 with {b.piece}"
                    )
                    since = a.start / 1000
                    if not any(
                        replace(e, time=dodge.time) == dodge
                        for e in world.log
                        if e.kind is EventKind.DODGE and e.time >= since
                    ):
                        world.log.append(dodge)
                    continue
                loser = b if (b.start, b.seq) > (a.start, a.seq) else a  # 4.2 in-move
                removed.add(id(loser))
                world.last_capture = t
                winner = a if loser is b else b
                world.log.append(
                    RealtimeEvent(
                        t / 1000, EventKind.IN_MOVE, fa, loser.piece, f"4.2 by {winner.piece}"
                    )
                )
                if loser.piece.lower() == "k":
                    kings.append(loser.piece)
        world.legs = [leg for leg in legs if id(leg) not in removed]
        arrived = [leg for leg in world.legs if leg.arrival <= t]
        world.legs = [leg for leg in world.legs if leg.arrival > t]
        for leg in arrived:
            self._arrive(world, leg, t)
        if kings:
            if len({_color(k) for k in kings}) == 2:
                self._finish(world, t, GameEnd("1/2-1/2", "both kings taken", None))
            else:
                loser_side = _color(kings[0])
                end = GameEnd(result_string(not loser_side), "king taken", not loser_side)
                self._finish(world, t, end)

    def _arrive(self, world: _World, leg: _Leg, t: int) -> None:
        target = leg.target
        symbol = self._arriving(leg)
        world.standing[target] = symbol
        world.ready[target] = leg.arrival + self.delay  # 6.3
        if leg.double:
            world.doubled.add(target)
        world.log.append(RealtimeEvent(t / 1000, EventKind.ARRIVE, target, symbol))
        if symbol != leg.piece:
            world.log.append(RealtimeEvent(t / 1000, EventKind.PROMOTION, target, symbol))  # 2.2
        victim_sq = leg.ep_victim
        if victim_sq is not None and not leg.took_on_entry:  # 3.7
            victim = world.standing.get(victim_sq)
            if victim == ("p" if _color(leg.piece) else "P"):
                self._take(world, victim_sq, t, EventKind.EN_PASSANT)

    def _arriving(self, leg: _Leg) -> str:
        """The piece as it stands at its destination: a pawn on the last rank is a queen
        (rule 2.2)."""
        if leg.piece in ("P", "p") and (leg.target >> 3) in (0, 7):
            return "Q" if leg.piece == "P" else "q"
        return leg.piece

    def _start(self, world: _World, order: _Order, t: int) -> None:
        move = order.move
        legs = next(
            (
                legs
                for legs in self._candidates(world, move.from_square, t, seq=order.seq)
                if self._move_of(legs) == move
            ),
            None,
        )
        symbol = world.standing.get(move.from_square, "")
        if legs is None:
            reason = self._why_not(world, move, t)
            world.refused[order.seq] = reason
            world.log.append(
                RealtimeEvent(t / 1000, EventKind.REFUSED, move.from_square, symbol, reason)
            )
            return
        for leg in legs:
            leg.start = order.start
            world.standing.pop(leg.origin)
            world.ready.pop(leg.origin, None)
            world.doubled.discard(leg.origin)
            world.castling.discard(leg.origin)
            if leg.piece in ("K", "k"):  # the king moved: no castling any more
                world.castling -= {sq for sq in CASTLINGS if (sq < 8) == (leg.piece == "K")}
            world.legs.append(leg)
        world.log.append(
            RealtimeEvent(order.start / 1000, EventKind.START, move.from_square, symbol, str(move))
        )

    def _why_not(self, world: _World, move: Move, t: int) -> str:
        symbol = world.standing.get(move.from_square)
        if symbol is None:
            return "no piece stands there"
        if world.ready.get(move.from_square, 0) > t:
            return "rule 3.1: the piece has a delay"
        if any(leg.target == move.to_square for leg in world.legs):
            return "rule 3.3: another piece is moving to that square"
        free = self._candidates(world, move.from_square, t, blocking=False)
        if any(self._move_of(legs) == move for legs in free):
            return "rule 3.4/3.5: the path goes through a square another piece is moving to"
        return "not a move of that piece (rules 1.2, 3.6)"

    @staticmethod
    def _move_of(legs: Sequence[_Leg]) -> Move:
        first = legs[0]
        promo = "q" if first.piece in ("P", "p") and (first.target >> 3) in (0, 7) else None
        return Move(first.origin, first.target, promo)

    def _candidates(
        self, world: _World, origin: int, t: int, *, seq: int = -1, blocking: bool = True
    ) -> list[list[_Leg]]:
        """The moves the piece on ``origin`` may start at ``t``, each as its legs."""
        symbol = world.standing.get(origin)
        if symbol is None or world.ready.get(origin, t) > t:  # 3.1
            return []
        side = _color(symbol)
        kind = symbol.lower()
        cells = world.standing
        tick = self.tick
        out: list[list[_Leg]] = []

        def enemy(sq: int) -> bool:
            return sq in cells and _color(cells[sq]) != side

        if kind == "n":
            for df, dr in KNIGHT_STEPS:
                target = _step(origin, df, dr)
                if target is not None and (target not in cells or enemy(target)):
                    out.append([_Leg(seq, symbol, (origin, None, target), t, 2 * tick)])
        elif kind == "p":
            ahead = 8 if side else -8
            one = origin + ahead
            if 0 <= one < 64 and one not in cells:
                out.append([_Leg(seq, symbol, (origin, one), t, tick)])
                two = one + ahead
                if (origin >> 3) == (1 if side else 6) and two not in cells:
                    out.append([_Leg(seq, symbol, (origin, one, two), t, 2 * tick, double=True)])
            for df in (-1, 1):
                target = _step(origin, df, 1 if side else -1)
                if target is None:
                    continue
                if enemy(target):
                    out.append([_Leg(seq, symbol, (origin, target), t, tick)])
                elif target not in cells:
                    beside = (origin & ~7) | (target & 7)
                    if (
                        cells.get(beside) == ("p" if side else "P")
                        and beside in world.doubled
                        and world.ready.get(beside, 0) > t  # 3.6
                    ):
                        leg = _Leg(seq, symbol, (origin, target), t, tick, ep_victim=beside)
                        out.append([leg])
        else:
            lines: tuple[tuple[int, int], ...] = ()
            if kind in ("b", "q", "k"):
                lines += DIAGONAL
            if kind in ("r", "q", "k"):
                lines += ORTHOGONAL
            for df, dr in lines:
                square = origin
                while True:
                    nxt = _step(square, df, dr)
                    if nxt is None or (nxt in cells and not enemy(nxt)):
                        break
                    path = _line(origin, nxt)
                    out.append([_Leg(seq, symbol, path, t, tick * (len(path) - 1))])
                    if nxt in cells or kind == "k":
                        break
                    square = nxt
            if kind == "k":
                out.extend(self._castlings(world, origin, symbol, t, seq))
        if not blocking:
            return out
        return [legs for legs in out if self._unblocked(world, legs, t)]

    def _castlings(
        self, world: _World, origin: int, king: str, t: int, seq: int
    ) -> list[list[_Leg]]:
        """Castling without the check rule (2.3); it takes two ticks (duration 1)."""
        out = []
        cells = world.standing
        rook = "R" if king == "K" else "r"
        for rook_sq, (king_from, king_to, rook_from, rook_to) in CASTLINGS.items():
            if origin != king_from or rook_sq not in world.castling or cells.get(rook_sq) != rook:
                continue
            if world.ready.get(rook_sq, t) > t:
                continue
            lo, hi = sorted((king_from, rook_from))
            if any(sq in cells for sq in range(lo + 1, hi)):
                continue
            out.append(
                [
                    _Leg(seq, king, _line(king_from, king_to), t, 2 * self.tick),
                    _Leg(seq, rook, _line(rook_from, rook_to), t, 2 * self.tick),
                ]
            )
        return out

    @staticmethod
    def _unblocked(world: _World, legs: Sequence[_Leg], t: int) -> bool:
        """Rules 3.3-3.5: no piece may be moving to a destination of the move, and (but for
        a knight) its path may not go through a square a piece is moving to -- an opponent
        piece that started before (3.4), or an own moving piece (3.5)."""
        targets = {leg.target: leg for leg in world.legs}
        for leg in legs:
            if leg.target in targets:
                return False
            if leg.path[1] is None:  # a knight jumps
                continue
            for square in leg.path[1:-1]:
                other = targets.get(square)  # type: ignore[arg-type]
                if other is None:
                    continue
                if _color(other.piece) == _color(leg.piece) or other.start < t:
                    return False
        return True


@cache
def realtime_start() -> StartPosition:
    return StartPosition(
        "realtime", CLASSICAL_FEN, squares_of(chess.Board()), number=518, classical=True
    )


class Realtime(Variant):
    """Realtime chess.  ``tick``: seconds per tick (1 standard, down to 0.1);
    ``draw_after``: seconds without a capture that draw the game (rule 5.4)."""

    id = "realtime"
    name = "Realtime chess"
    pgn_name = "Realtime"

    def __init__(self, tick: float = STANDARD_TICK, *, draw_after: float = DRAW_AFTER) -> None:
        if not FASTEST_TICK <= tick <= STANDARD_TICK:
            raise ValueError(
                f"a tick lasts {FASTEST_TICK} to {STANDARD_TICK} seconds (rule 6), got {tick}"
            )
        self.tick = tick
        self.draw_after = draw_after

    def start_positions(self) -> Sequence[StartPosition]:
        return (realtime_start(),)

    def new_game(self, start: StartPosition | None = None) -> RealtimeGame:
        return RealtimeGame(self, self._check_start(start))
