"""A seeded model of how people physically make chess moves on an electronic board.

A chess move is one line of notation; on a sensor board it is a handful of square changes
spread over a second or so, in an order that depends on the person: the captured piece
taken off first or last (or knocked aside as the capturing piece lands, so its square never
shows empty), the king or the rook lifted first when castling, a bishop dragged across the
squares it passes, a piece touched and put back, a neighbour knocked over and set up
again, a reply started before the previous move has settled.  Real boards report exactly
such streams (``docs/protocol.md`` §3.3 and §8).

This module turns moves into those physical :class:`Step` sequences, with delays in
seconds.  It is pure: no I/O, no clock, no sleeping; all randomness comes from the
``random.Random`` passed in, so a seed gives the same stream every time.  The board
emulator replays games with it (and makes single moves such as ``move e2e4``); the
move-recognition tests use it to generate noisy event streams from real games.

Squares are python-chess numbers (0 = a1 ... 63 = h8) in standard orientation (White at
rank 1).  A square map (``dict[int, Piece]``) lists occupied squares only.  On
presence-only boards (``presence_only=True``) every piece is ``Piece.OCCUPIED``.

The invariant every function here keeps: applying a move's steps in order
(:func:`apply_steps`) to the square map of the position before the move gives exactly the
square map of the position after it, and no step leaves its square as it was.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace

import chess

from dgt.protocol.constants import Piece

__all__ = [
    "Handling",
    "Step",
    "apply_steps",
    "game_steps",
    "iter_game_steps",
    "move_steps",
    "piece_code",
    "setup_steps",
    "squares_of",
    "timeline",
]


@dataclass(frozen=True, slots=True)
class Step:
    """One physical change of one square, as the board's scan sees it."""

    delay: float
    """Seconds after the previous step (>= 0); for a move's first step, after the
    previous move's last step (thinking time included)."""
    square: int
    """python-chess square, 0 = a1 ... 63 = h8, standard orientation."""
    piece: Piece
    """What the square holds after the step; ``Piece.EMPTY`` = lifted."""


Span = tuple[float, float]
"""A range of seconds ``(low, high)``; a duration is drawn uniformly from it."""


@dataclass(frozen=True, slots=True)
class Handling:
    """The knobs of the noise model: how tidy the person at the board is.

    Probabilities are in [0, 1]; spans are ``(low, high)`` seconds.  The defaults are a
    tidy but realistic human (habits vary, no noise); :meth:`tidy` removes all variety and
    noise, :meth:`noisy` switches every kind of noise on.  The rates of :meth:`noisy` are
    estimates, not measurements.
    """

    # -- timing ----------------------------------------------------------------------
    think_time: Span = (1.0, 5.0)
    """Pause before a move (thinking, reaching out), after the previous move's last step."""
    move_time: Span = (0.3, 1.0)
    """From lifting a piece to setting it down on its new square."""
    handling_time: Span = (0.2, 0.8)
    """Between handling one piece and the next (captured piece off, then the mover)."""
    fetch_time: Span = (0.8, 2.5)
    """Fetching a piece from beside the board (a promotion piece, a piece for a set-up)."""
    hesitate_time: Span = (0.3, 1.5)
    """Holding a piece before putting it back, and the second thought after that."""
    knock_time: Span = (0.3, 1.5)
    """Until a knocked-over piece is set back on its square."""
    scan_gap: Span = (0.0, 0.02)
    """Between two changes the board reports from one scan (place before lift)."""
    bounce_time: Span = (0.02, 0.08)
    """Length of the flicker of a piece settling on its square."""
    quick_reply_time: Span = (0.0, 0.05)
    """First step of a quick reply, after the previous move's last step."""
    rest_time: Span = (0.3, 1.0)
    """How long a sliding piece rests on a square of its path (``slide_rest``)."""

    # -- habits (vary in a tidy human too) -------------------------------------------
    capture_first: float = 0.5
    """Capture: the captured piece is removed before the mover is lifted (else the mover
    is lifted first and the captured piece taken off just before it lands)."""
    replace_in_one_step: float = 0.2
    """Capture on a piece-identity board: the square changes from the captured piece to
    the mover without showing empty (also a promotion pawn swapped for its new piece).
    A presence-only board would see no change there at all, so it is never used there."""
    king_first_castling: float = 0.7
    """Castling: the king is lifted first (else the rook)."""
    castling_king_touch: float = 0.5
    """Chess960 castling where the king stays on its square: the king is lifted and put
    back first, the player's signal that the rook move is castling."""
    ep_captured_last: float = 0.5
    """En passant: the captured pawn is removed after the capturing pawn has landed (else
    before it is lifted, with probability ``capture_first``, or while it is held)."""
    promotion_on_square: float = 0.25
    """Promotion: the pawn is set down on the last rank first, then exchanged."""

    # -- noise -------------------------------------------------------------------------
    slide: float = 0.0
    """A piece moving along a line is dragged, and shows up on the empty squares between."""
    slide_square_seen: float = 0.8
    """During a slide: the board registers the piece on each empty square it passes."""
    slide_rest: float = 0.0
    """During a slide: the piece is set down for a moment (``rest_time``) on one empty square
    of its path, then moved on (fast hands resting the piece before a capture)."""
    hesitate: float = 0.0
    """The mover is lifted, put back on its square, then the move is made."""
    adjust: float = 0.0
    """Before the move, another piece of the mover's side is lifted and put back."""
    knock_over: float = 0.0
    """A piece next to the move's squares is knocked off its square and set back."""
    bounce: float = 0.0
    """A piece set down flickers (reported gone and back) as it settles."""
    place_before_lift: float = 0.0
    """The new square is reported occupied before the old one empty (one scan saw both)."""
    quick_reply: float = 0.0
    """In a game, a move starts within ``quick_reply_time`` of the previous move's end."""
    jitter: float = 0.0
    """Relative timing jitter: every delay is scaled by a factor in [1 - j, 1 + j]."""

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, tuple):
                low, high = value
                if not 0.0 <= low <= high:
                    raise ValueError(f"{f.name} must be a span 0 <= low <= high, got {value}")
            elif not 0.0 <= value <= 1.0:
                raise ValueError(f"{f.name} must be in [0, 1], got {value}")

    @classmethod
    def tidy(cls) -> Handling:
        """No noise and no variety: lift, place; a captured piece (en passant too) is
        removed first; castling king first; a promoted piece replaces the pawn directly."""
        return cls(
            capture_first=1.0,
            replace_in_one_step=0.0,
            king_first_castling=1.0,
            castling_king_touch=0.0,
            ep_captured_last=0.0,
            promotion_on_square=0.0,
        )

    @classmethod
    def noisy(cls) -> Handling:
        """Every kind of noise switched on at (estimated) realistic rates."""
        return cls(
            capture_first=0.5,
            replace_in_one_step=0.3,
            king_first_castling=0.6,
            castling_king_touch=0.5,
            ep_captured_last=0.5,
            promotion_on_square=0.4,
            slide=0.3,
            slide_square_seen=0.8,
            hesitate=0.08,
            adjust=0.04,
            knock_over=0.04,
            bounce=0.05,
            place_before_lift=0.15,
            quick_reply=0.1,
            jitter=0.3,
        )


# -- square maps -----------------------------------------------------------------------

_CODES: dict[tuple[chess.Color, chess.PieceType], Piece] = {
    (chess.WHITE, chess.PAWN): Piece.WPAWN,
    (chess.WHITE, chess.ROOK): Piece.WROOK,
    (chess.WHITE, chess.KNIGHT): Piece.WKNIGHT,
    (chess.WHITE, chess.BISHOP): Piece.WBISHOP,
    (chess.WHITE, chess.KING): Piece.WKING,
    (chess.WHITE, chess.QUEEN): Piece.WQUEEN,
    (chess.BLACK, chess.PAWN): Piece.BPAWN,
    (chess.BLACK, chess.ROOK): Piece.BROOK,
    (chess.BLACK, chess.KNIGHT): Piece.BKNIGHT,
    (chess.BLACK, chess.BISHOP): Piece.BBISHOP,
    (chess.BLACK, chess.KING): Piece.BKING,
    (chess.BLACK, chess.QUEEN): Piece.BQUEEN,
}


def piece_code(piece: chess.Piece, presence_only: bool = False) -> Piece:
    """What a board reports for a python-chess piece standing on a square."""
    if presence_only:
        return Piece.OCCUPIED
    return _CODES[piece.color, piece.piece_type]


def squares_of(board: chess.BaseBoard, presence_only: bool = False) -> dict[int, Piece]:
    """The square map of a position: occupied squares only, as the board would report
    (listed by piece kind in ``_CODES`` order, each kind from h8 down)."""
    squares: dict[int, Piece] = {}
    # Worked out for every move a replay makes: the bitboards are read directly (what
    # ``pieces_mask`` and ``scan_reversed`` do, without a call and a generator per kind).
    kinds = (0, board.pawns, board.knights, board.bishops, board.rooks, board.queens,
             board.kings)  # fmt: skip
    occupied_co = board.occupied_co
    for (colour, kind), code in _CODES.items():
        if presence_only:
            code = Piece.OCCUPIED
        mask = kinds[kind] & occupied_co[colour]
        while mask:
            square = mask.bit_length() - 1
            squares[square] = code
            mask ^= 1 << square
    return squares


def apply_steps(squares: Mapping[int, Piece], steps: Iterable[Step]) -> dict[int, Piece]:
    """The square map after ``steps`` (a new dict; empty squares are left out)."""
    result: dict[int, Piece] = {
        square: piece for square, piece in squares.items() if piece is not Piece.EMPTY
    }
    for step in steps:
        if step.piece is Piece.EMPTY:
            result.pop(step.square, None)
        else:
            result[step.square] = step.piece
    return result


def timeline(steps: Iterable[Step], start: float = 0.0) -> list[tuple[float, Step]]:
    """Each step with its absolute time (``start`` plus the delays so far), for a player
    that schedules steps on a clock."""
    now = start
    result = []
    for step in steps:
        now += step.delay
        result.append((now, step))
    return result


# -- the hand ----------------------------------------------------------------------------


@dataclass(slots=True)
class _Op:
    """One planned change.  ``gap`` is the time before it; ``drag`` says that a piece held
    since square ``drag[0]`` arrives with this op (the gap is its travel time), so a slide
    may show ``drag[1]`` on the squares between."""

    square: int
    piece: Piece  # EMPTY = lift
    gap: float
    drag: tuple[int, Piece] | None = None


@dataclass(slots=True)
class _Hand:
    """Carries out planned ops on a square map, adding the noise that happens on the way,
    and records the changes with absolute times."""

    squares: dict[int, Piece]
    rng: random.Random
    handling: Handling
    presence_only: bool
    time: float = 0.0
    events: list[tuple[float, int, Piece]] = field(default_factory=list)
    touched: set[int] = field(default_factory=set)

    def draw(self, span: Span) -> float:
        low, high = span
        return self.rng.uniform(low, high)

    def chance(self, probability: float) -> bool:
        return probability > 0.0 and self.rng.random() < probability

    def code(self, piece: chess.Piece) -> Piece:
        return piece_code(piece, self.presence_only)

    def emit(self, gap: float, square: int, piece: Piece) -> bool:
        """Change ``square`` to ``piece`` after ``gap``; a change to what the square already
        holds is no change a board could report, and is dropped."""
        self.time += gap
        if self.squares.get(square, Piece.EMPTY) is piece:
            return False
        self.events.append((self.time, square, piece))
        self.touched.add(square)
        if piece is Piece.EMPTY:
            del self.squares[square]
        else:
            self.squares[square] = piece
        return True

    def put(self, gap: float, square: int, piece: Piece) -> None:
        """Set a piece down (it may bounce as it settles)."""
        if self.emit(gap, square, piece) and self.chance(self.handling.bounce):
            self.emit(self.draw(self.handling.bounce_time), square, Piece.EMPTY)
            self.emit(self.draw(self.handling.bounce_time), square, piece)

    def slide(self, origin: int, target: int, piece: Piece, travel: float) -> float:
        """Drag ``piece`` from ``origin`` towards ``target`` over the empty squares between;
        returns what is left of the travel time when it reaches ``target``."""
        path = sorted(
            chess.SquareSet(chess.between(origin, target)),
            key=lambda square: chess.square_distance(origin, square),
        )
        start = self.time
        leg = travel / (len(path) + 1)
        free = [square for square in path if square not in self.squares]
        rest = self.rng.choice(free) if free and self.chance(self.handling.slide_rest) else None
        for number, square in enumerate(path, start=1):
            if square == rest:
                self.emit(start + leg * number - self.time, square, piece)
                held = self.draw(self.handling.rest_time)
                self.emit(held, square, Piece.EMPTY)
                start += held
                continue
            if square in self.squares or not self.chance(self.handling.slide_square_seen):
                continue
            self.emit(start + leg * number - self.time, square, piece)
            self.emit(leg * self.rng.uniform(0.3, 0.8), square, Piece.EMPTY)
        return start + travel - self.time

    def run(self, ops: Sequence[_Op]) -> None:
        """Carry out ``ops`` in order."""
        index = 0
        while index < len(ops):
            op = ops[index]
            after = ops[index + 1] if index + 1 < len(ops) else None
            if (
                op.piece is Piece.EMPTY
                and after is not None
                and after.piece is not Piece.EMPTY
                and after.drag is not None
                and after.drag[0] == op.square
                and after.square not in self.squares
                and self.chance(self.handling.place_before_lift)
            ):
                # the hand is faster than the scan: the new square shows first
                self.put(op.gap + after.gap, after.square, after.piece)
                self.emit(self.draw(self.handling.scan_gap), op.square, Piece.EMPTY)
                index += 2
                continue
            gap = op.gap
            if op.drag is not None and self.chance(self.handling.slide):
                gap = self.slide(op.drag[0], op.square, op.drag[1], gap * 1.5)
            if op.piece is Piece.EMPTY:
                self.emit(gap, op.square, Piece.EMPTY)
            else:
                self.put(gap, op.square, op.piece)
            index += 1

    def touch(self, square: int) -> list[_Op]:
        """Lift the piece on ``square`` and put it back."""
        return [
            _Op(square, Piece.EMPTY, 0.0),
            _Op(square, self.squares[square], self.draw(self.handling.hesitate_time)),
        ]

    def knock(self) -> None:
        """Knock over a piece next to the squares the move touched, and set it back."""
        near = sorted(
            square
            for square in self.squares
            if square not in self.touched
            and any(chess.square_distance(square, other) == 1 for other in self.touched)
        )
        if not near or not self.events:
            return
        square = self.rng.choice(near)
        piece = self.squares[square]
        first, last = self.events[0][0], self.events[-1][0]
        off = self.rng.uniform(first, last + 0.3)
        back = off + self.draw(self.handling.knock_time)
        self.events += [(off, square, Piece.EMPTY), (back, square, piece)]
        self.events.sort(key=lambda event: event[0])

    def steps(self, start: float = 0.0) -> list[Step]:
        """The recorded changes as steps (delays jittered), the first after ``start``."""
        jitter = self.handling.jitter
        result = []
        previous = start
        for time, square, piece in self.events:
            delay = max(0.0, time - previous)
            previous = time
            if jitter > 0.0:
                delay *= self.rng.uniform(1.0 - jitter, 1.0 + jitter)
            result.append(Step(round(delay, 4), square, piece))
        return result


# -- moves -------------------------------------------------------------------------------


def _castling(board: chess.Board, move: chess.Move) -> tuple[int, int, int, int] | None:
    """King from, rook from, king to, rook to, if ``move`` castles (either encoding)."""
    king = board.piece_at(move.from_square)
    if king is None or king.piece_type != chess.KING:
        return None
    rank = chess.square_rank(move.from_square)
    to_file = chess.square_file(move.to_square)
    rook_square = move.to_square
    # python-chess reads e1g1 / e1c1 (and e8g8 / e8c8) as castling with the corner rook
    if (
        move.from_square in (chess.E1, chess.E8)
        and to_file in (6, 2)
        and chess.square_rank(move.to_square) == rank
        and board.piece_type_at(move.to_square) != chess.ROOK
    ):
        rook_square = chess.square(7 if to_file == 6 else 0, rank)
    rook = board.piece_at(rook_square)
    if rook is None or rook.piece_type != chess.ROOK or rook.color != king.color:
        return None
    if chess.square_rank(rook_square) != rank:
        return None
    kingside = chess.square_file(rook_square) > chess.square_file(move.from_square)
    king_to = chess.square(6 if kingside else 2, rank)
    rook_to = chess.square(5 if kingside else 3, rank)
    return move.from_square, rook_square, king_to, rook_to


def _plan_castling(hand: _Hand, squares: tuple[int, int, int, int]) -> list[_Op]:
    """The ops of a castling, standard or Chess960 (where the king or the rook may stay,
    or stand on the other's destination)."""
    king_from, rook_from, king_to, rook_to = squares
    h = hand.handling
    king = hand.squares[king_from]
    rook = hand.squares[rook_from]
    if king_from == king_to:
        ops = hand.touch(king_from) if hand.chance(h.castling_king_touch) else []
        return [
            *ops,
            _Op(rook_from, Piece.EMPTY, hand.draw(h.handling_time) if ops else 0.0),
            _Op(rook_to, rook, hand.draw(h.move_time), (rook_from, rook)),
        ]
    if rook_from == rook_to:
        return [
            _Op(king_from, Piece.EMPTY, 0.0),
            _Op(king_to, king, hand.draw(h.move_time), (king_from, king)),
        ]
    first = (king_from, king_to, king)
    second = (rook_from, rook_to, rook)
    if not hand.chance(h.king_first_castling):
        first, second = second, first
    if first[1] != second[0]:
        # the first piece's new square is free: set it down, then move the other one
        return [
            _Op(first[0], Piece.EMPTY, 0.0),
            _Op(first[1], first[2], hand.draw(h.move_time), (first[0], first[2])),
            _Op(second[0], Piece.EMPTY, hand.draw(h.handling_time)),
            _Op(second[1], second[2], hand.draw(h.move_time), (second[0], second[2])),
        ]
    # the first piece goes where the second stands: lift both, then set both down
    ops = [
        _Op(first[0], Piece.EMPTY, 0.0),
        _Op(second[0], Piece.EMPTY, hand.draw(h.handling_time)),
    ]
    landing = [first, second] if hand.rng.random() < 0.5 else [second, first]
    for origin, target, piece in landing:
        ops.append(_Op(target, piece, hand.draw(h.move_time), (origin, piece)))
    return ops


def _plan(hand: _Hand, board: chess.Board, move: chess.Move) -> list[_Op]:
    """The ops of one move, before noise; the first op has gap 0 (thinking covers it)."""
    h = hand.handling
    to = move.to_square
    if move.drop:
        placed = hand.code(chess.Piece(move.drop, board.turn))
        ops = [_Op(to, Piece.EMPTY, 0.0)] if to in hand.squares else []
        return [*ops, _Op(to, placed, hand.draw(h.fetch_time) if ops else 0.0)]
    castling = _castling(board, move)
    if castling is not None:
        return _plan_castling(hand, castling)
    src = move.from_square
    mover = board.piece_at(src)
    if mover is None:
        raise ValueError(f"no piece on {chess.square_name(src)} for {move.uci()}")
    if src == to:
        raise ValueError(f"{move.uci()} does not move")
    moving = hand.code(mover)
    promoted = hand.code(chess.Piece(move.promotion, mover.color)) if move.promotion else moving
    pawn_first = move.promotion is not None and hand.chance(h.promotion_on_square)
    arriving = moving if pawn_first else promoted
    travel = hand.draw(h.move_time)
    if move.promotion is not None and not pawn_first:
        travel += hand.draw(h.fetch_time)  # the pawn is put aside, the new piece fetched
    drag = (src, arriving)

    if board.is_en_passant(move):
        captured = chess.square(chess.square_file(to), chess.square_rank(src))
        if hand.chance(h.ep_captured_last):
            ops = [
                _Op(src, Piece.EMPTY, 0.0),
                _Op(to, arriving, travel, drag),
                _Op(captured, Piece.EMPTY, hand.draw(h.handling_time)),
            ]
        elif hand.chance(h.capture_first):
            ops = [
                _Op(captured, Piece.EMPTY, 0.0),
                _Op(src, Piece.EMPTY, hand.draw(h.handling_time)),
                _Op(to, arriving, travel, drag),
            ]
        else:
            ops = [
                _Op(src, Piece.EMPTY, 0.0),
                _Op(captured, Piece.EMPTY, hand.draw(h.handling_time)),
                _Op(to, arriving, travel, drag),
            ]
    elif to not in hand.squares:
        ops = [_Op(src, Piece.EMPTY, 0.0), _Op(to, arriving, travel, drag)]
    elif not hand.presence_only and hand.chance(h.replace_in_one_step):
        # the captured piece is swept off as the mover lands: the square never shows empty
        ops = [_Op(src, Piece.EMPTY, 0.0), _Op(to, arriving, travel, drag)]
    elif hand.chance(h.capture_first):
        ops = [
            _Op(to, Piece.EMPTY, 0.0),
            _Op(src, Piece.EMPTY, hand.draw(h.handling_time)),
            _Op(to, arriving, travel, drag),
        ]
    else:
        # the mover is held while the captured piece is taken off
        ops = [
            _Op(src, Piece.EMPTY, 0.0),
            _Op(to, Piece.EMPTY, travel, drag),
            _Op(to, arriving, hand.draw(h.handling_time)),
        ]

    if pawn_first:
        fetch = hand.draw(h.fetch_time)
        if not hand.presence_only and hand.chance(h.replace_in_one_step):
            ops.append(_Op(to, promoted, fetch))
        else:
            ops += [_Op(to, Piece.EMPTY, hand.draw(h.handling_time)), _Op(to, promoted, fetch)]
    return ops


def move_steps(
    board: chess.Board,
    move: chess.Move,
    rng: random.Random,
    handling: Handling,
    presence_only: bool = False,
) -> list[Step]:
    """The physical steps of ``move`` made on ``board`` (which is not changed).

    Covers quiet moves, captures, castling (standard and Chess960, in either
    python-chess encoding), en passant, promotion and under-promotion, and drops.  The
    move need not be legal (an emulator may play an illegal move on purpose), but its
    from-square must hold a piece.  The first step's delay includes the thinking time; a
    null move has no steps.
    """
    if not move:
        return []
    hand = _Hand(squares_of(board, presence_only), rng, handling, presence_only)
    hand.time = hand.draw(handling.think_time)
    ops = _plan(hand, board, move)
    prelude: list[_Op] = []
    if hand.chance(handling.adjust):
        involved = {op.square for op in ops}
        others = sorted(_own_squares(board, move) - involved)
        if others:
            prelude += hand.touch(hand.rng.choice(others))
    if hand.chance(handling.hesitate):
        ours = _own_squares(board, move)
        lifted = [op.square for op in ops if op.piece is Piece.EMPTY and op.square in ours]
        if lifted:
            prelude += hand.touch(lifted[0])
    if prelude:
        for op in prelude[2::2]:
            op.gap = hand.draw(handling.hesitate_time)
        ops[0].gap += hand.draw(handling.hesitate_time)  # the second thought
    hand.run(prelude + ops)
    if hand.chance(handling.knock_over):
        hand.knock()
    return hand.steps()


def _own_squares(board: chess.Board, move: chess.Move) -> set[int]:
    """The squares of the mover's pieces (only the noise that touches them needs them)."""
    colour = board.turn if move.drop else board.color_at(move.from_square)
    return set(chess.scan_reversed(board.occupied_co[colour])) if colour is not None else set()


def game_steps(
    board: chess.Board,
    moves: Iterable[chess.Move],
    rng: random.Random,
    handling: Handling,
    presence_only: bool = False,
) -> list[tuple[int, list[Step]]]:
    """The steps of each move of a game played from ``board`` (pushed on a copy): a list
    of ``(index, steps)`` where ``index`` counts the moves given, from 0.  Adds quick
    replies: a move that starts right after the previous one ended."""
    return list(iter_game_steps(board, moves, rng, handling, presence_only))


def iter_game_steps(
    board: chess.Board,
    moves: Iterable[chess.Move],
    rng: random.Random,
    handling: Handling,
    presence_only: bool = False,
) -> Iterator[tuple[int, list[Step]]]:
    """:func:`game_steps` one move at a time, each worked out when it is asked for (a
    player replaying a game spreads the work over the game instead of doing it all at
    its start); ``rng`` must serve nothing else meanwhile for the same steps."""
    position = board.copy(stack=False)
    for index, move in enumerate(moves):
        steps = move_steps(position, move, rng, handling, presence_only)
        if index > 0 and steps and rng.random() < handling.quick_reply:
            delay = rng.uniform(*handling.quick_reply_time)
            steps[0] = replace(steps[0], delay=round(delay, 4))
        yield index, steps
        position.push(move)


def setup_steps(
    from_squares: Mapping[int, Piece],
    to_squares: Mapping[int, Piece],
    rng: random.Random,
    handling: Handling,
) -> list[Step]:
    """Steps that turn the square map ``from_squares`` into ``to_squares`` by hand, as a
    person sets up a position, clears the board or takes moves back.

    Pieces already in place stay.  A piece that must go is moved to a square that needs
    the same piece (the nearest) if there is one, else taken off the board; a square
    still needing a piece gets one from beside the board.  Pieces that block each other
    (a swap) are held in the hand meanwhile.  Presence-only maps work the same way.
    """
    start = {square: piece for square, piece in from_squares.items() if piece is not Piece.EMPTY}
    goal = {square: piece for square, piece in to_squares.items() if piece is not Piece.EMPTY}
    lifts = sorted(square for square, piece in start.items() if goal.get(square) is not piece)
    places = sorted(square for square, piece in goal.items() if start.get(square) is not piece)
    rng.shuffle(lifts)
    transfers: list[tuple[int, int]] = []
    removals: list[int] = []
    for square in lifts:
        matching = [target for target in places if goal[target] is start[square]]
        if matching:
            target = min(matching, key=lambda other: chess.square_distance(square, other))
            places.remove(target)
            transfers.append((square, target))
        else:
            removals.append(square)
    additions = places

    hand = _Hand(dict(start), rng, handling, presence_only=False)
    held: list[tuple[int, int]] = []  # transfers whose piece is in the hand
    gap = hand.draw(handling.handling_time)
    while transfers or removals or additions or held:
        free = [
            *(("remove", square, square) for square in removals),
            *(("transfer", *pair) for pair in transfers if pair[1] not in hand.squares),
            *(("set", *pair) for pair in held if pair[1] not in hand.squares),
            *(("add", square, square) for square in additions if square not in hand.squares),
        ]
        if not free:
            # every target is blocked by a piece still to be moved: pick one up first
            pair = transfers.pop(hand.rng.randrange(len(transfers)))
            hand.run([_Op(pair[0], Piece.EMPTY, gap)])
            held.append(pair)
        else:
            kind, origin, target = hand.rng.choice(free)
            if kind == "remove":
                removals.remove(origin)
                ops = [_Op(origin, Piece.EMPTY, gap)]
            elif kind == "transfer":
                transfers.remove((origin, target))
                piece = start[origin]
                ops = [
                    _Op(origin, Piece.EMPTY, gap),
                    _Op(target, piece, hand.draw(handling.move_time), (origin, piece)),
                ]
            elif kind == "set":
                held.remove((origin, target))
                ops = [_Op(target, start[origin], gap)]
            else:
                additions.remove(target)
                ops = [_Op(target, goal[target], gap + hand.draw(handling.fetch_time))]
            hand.run(ops)
        gap = hand.draw(handling.handling_time)
    return hand.steps()
