"""20-chess: chess in which every turn has its own extra rule.

Rules: the 20-chess rules (Johan Framhout, 2021); "rule N" below is their rule N.  A
*turn* is White's part followed by Black's part, both played under the same numbered rule
(rule 2: "2 moves for white, followed by 2 moves for black").  By default turn ``n`` is
played under rule ``n`` for the first twenty turns (the project's reading,
``docs/rules.md``) and under rule 1, orthodox chess, after that; :class:`TwentyChess` can
also take another schedule or have the rule of each turn *cast* (the footnote speaks of "a
cast": a die thrown at the table and entered as a :class:`~service.variants.base.Choice`).

What each rule makes of a side's part (every action is one :class:`LegalAction`):

====  ============================================================================
rule  the side's part
====  ============================================================================
1     one move, orthodox chess
2     two moves with two different pieces
3     a :class:`Swap` of two own pieces, then a move with another piece
4     if both sides hold captured pieces: a :class:`Drop` of one of them (no check, no
      pawn on the last row), then a move with another piece; else orthodox
5     as 4, but the opponent picks the piece (a ``Choice("piece", kind)``)
6     as 4, dropping as many pieces as the smaller of the two hands holds, then a move
7-10  one move with a pawn / knight / bishop / rook, or with the king
11    one move; bishops may also step one square orthogonally, rooks one diagonally
12-14 the extra piece is dropped (or, when on the board, may be re-dropped: a
      :class:`Move` from its square to any empty square) as a fool / elephant /
      mountain, then a move with another piece
15    one move; the king may also move as a knight; no castling
16    one move on a cylinder: files a and h are neighbours
17    one :class:`Tandem`: a move, and another own piece making the identical
      displacement onto an empty square
18    one move that goes backwards
19    a :class:`Remove`: an own piece is given to the opponent as a captured piece, then
      an orthodox move
20    one move; a knight, bishop or rook move is a :class:`Tandem` moving both pieces
      of that kind (when both are on the board)
====  ============================================================================

Captured pieces change colour and go to the capturer's hand, as in shogi ("drops ... as in
shogun"; rule 19 "give to his opponent as a captured piece").  The decisions on every point
the text leaves open are listed in ``docs/variants.md`` and in the docstrings below.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from functools import cache

import chess

from service.variants.base import (
    BLACK,
    EMPTY,
    WHITE,
    Action,
    Choice,
    Color,
    Drop,
    GameEnd,
    IllegalActionError,
    LegalAction,
    Move,
    NothingToUndoError,
    Remove,
    ScoreEvent,
    SquareMap,
    StartPosition,
    Swap,
    Tandem,
    Variant,
    VariantError,
    VariantGame,
    VariantOptionsError,
    result_string,
)
from service.variants.standard import CLASSICAL_FEN, squares_of

ORTHODOX = 1
RULES = range(1, 21)


class Step(StrEnum):
    """What the side to act does next in its part of a turn (the value is the panel's
    ``step`` text)."""

    MOVE = "move"
    MOVE2 = "move2"  # a move with another piece
    SWAP = "swap"
    DROP = "drop"
    CHOOSE = "choose"  # the opponent picks the piece to drop (rule 5)
    EXTRA = "extra"
    GIFT = "gift"
    CAST = "cast"  # the rule of the turn is cast at the table


class ExtraStatus(StrEnum):
    """Where a side's extra piece is: not in the game yet, on the board, or captured."""

    OUT = "out"
    BOARD = "board"
    CAPTURED = "captured"


class Subject(StrEnum):
    """What a decision the board cannot show is about (a :class:`Choice`'s ``what``)."""

    RULE = "rule"
    PIECE = "piece"


FOOL, ELEPHANT, MOUNTAIN = "f", "e", "m"
"""Kind letters of the extra piece in its three capacities (rules 12, 13, 14)."""
EXTRA_KINDS = frozenset((FOOL, ELEPHANT, MOUNTAIN))
EXTRA_BY_RULE: Mapping[int, str] = {12: FOOL, 13: ELEPHANT, 14: MOUNTAIN}

RESTRICTED: Mapping[int, frozenset[str]] = {
    7: frozenset("pk"),
    8: frozenset("nk"),
    9: frozenset("bk"),
    10: frozenset("rk"),
}
"""Rules 7-10: the real piece kinds that may move (a fool imitating a knight is no knight)."""
PAIRED_KINDS = frozenset("nbr")
"""Rule 20: moving one piece of these kinds moves both."""
PROMOTIONS = ("q", "r", "b", "n")

RULE_TEXTS: Mapping[int, str] = {
    1: "orthodox chess",
    2: "two moves, with two different pieces",
    3: "swap two of your own pieces, then move another piece",
    4: "drop one of your captured pieces (no check, no pawn on the last row), "
    "then move another piece",
    5: "drop the captured piece your opponent picks, then move another piece",
    6: "drop captured pieces until one side's hand is empty, then move another piece",
    7: "move a pawn or the king",
    8: "move a knight or the king",
    9: "move a bishop or the king",
    10: "move a rook or the king",
    11: "bishops may also step one square straight, rooks one square diagonally",
    12: "drop (or re-drop) the extra piece as a fool, which moves like the piece moved "
    "last, then move another piece",
    13: "drop (or re-drop) the extra piece as an elephant, one or two squares diagonally "
    "jumping, then move another piece",
    14: "drop (or re-drop) the extra piece as a mountain, which never moves and cannot be "
    "captured, then move another piece",
    15: "the king may also jump like a knight; no castling",
    16: "the board is a cylinder: files a and h are neighbours",
    17: "a move counts only with another own piece making the same step onto an empty square",
    18: "only backward moves",
    19: "give one of your pieces to the opponent's hand, then make an orthodox move",
    20: "moving a knight, bishop or rook moves both pieces of that kind",
}
"""Each rule in a line, in the project's words (the mirror, the record, rulings)."""
STEP_TEXTS: Mapping[Step, str] = {
    Step.MOVE: "a move",
    Step.MOVE2: "a move with another piece",
    Step.SWAP: "swap two own pieces",
    Step.DROP: "drop a captured piece",
    Step.CHOOSE: "the opponent picks the piece to drop",
    Step.EXTRA: "drop the extra piece (or move another piece)",
    Step.GIFT: "give a piece to the opponent",
    Step.CAST: "cast the rule of this turn",
}
EXTRA_NAMES: Mapping[str, str] = {FOOL: "fool", ELEPHANT: "elephant", MOUNTAIN: "mountain"}
SPECIAL_STAND_INS: Mapping[Color, str] = {WHITE: "W", BLACK: "X"}
"""The DGT special pieces as stand-ins: white-wins (0x0E) for White's extra piece,
black-wins (0x0F) for Black's."""


class ChoiceError(VariantError, ValueError):
    """A decision entered when none is due, or with a value that is not an option."""


def _side_name(color: Color) -> str:
    return "white" if color == WHITE else "black"


DEFAULT_STAND_INS: Mapping[Color, str] = {WHITE: "q", BLACK: "Q"}
"""What a piece-identity board reads for each side's extra piece by default: the spare queen
of the other colour (DGT sets come with a spare queen of each colour), so that it never reads
like a piece of its owner's own army.  See :class:`TwentyChess`."""

KNIGHT_STEPS = ((1, 2), (2, 1), (-1, 2), (-2, 1), (1, -2), (2, -1), (-1, -2), (-2, -1))
ORTHOGONAL = ((1, 0), (-1, 0), (0, 1), (0, -1))
DIAGONAL = ((1, 1), (1, -1), (-1, 1), (-1, -1))
KING_STEPS = ORTHOGONAL + DIAGONAL
ELEPHANT_STEPS = (*DIAGONAL, (2, 2), (2, -2), (-2, 2), (-2, -2))

A1, E1, H1, A8, E8, H8 = chess.A1, chess.E1, chess.H1, chess.A8, chess.E8, chess.H8
CASTLING_ROOKS = (A1, H1, A8, H8)


# -- geometry and pieces --------------------------------------------------------------------


def _color(symbol: str) -> Color:
    return symbol.isupper()


def _symbol(kind: str, color: Color) -> str:
    return kind.upper() if color else kind


def _step(square: int, df: int, dr: int, wrap: bool) -> int | None:
    """The square ``df`` files and ``dr`` ranks away, None off the board; with ``wrap``
    the a- and h-files are neighbours (rule 16)."""
    file, rank = (square & 7) + df, (square >> 3) + dr
    if not 0 <= rank < 8:
        return None
    if wrap:
        file %= 8
    elif not 0 <= file < 8:
        return None
    return rank * 8 + file


def _forward(color: Color) -> int:
    return 1 if color == WHITE else -1


def _last_rank(color: Color) -> int:
    return 7 if color == WHITE else 0


@dataclass(frozen=True, slots=True)
class _Powers:
    """The movement powers in force for one action."""

    wrap: bool = False  # rule 16
    rule11: bool = False  # rule 11: bishop + one orthogonal step, rook + one diagonal step
    king_knight: bool = False  # rule 15
    castling: bool = True  # rule 15 forbids it


_ORTHODOX_POWERS = _Powers()


def _targets(
    cells: Sequence[str], square: int, kind: str, color: Color, powers: _Powers, *, fool: bool
) -> list[int]:
    """Squares a piece moving as ``kind`` reaches from ``square`` (captures included,
    blocked squares included, pawn pushes and castling excluded: a pawn's targets are the
    squares it attacks).  ``fool`` marks a fool imitating ``kind``: it has the kind's moves
    but never the king's knight jump of rule 15."""
    wrap = powers.wrap
    out: list[int] = []
    if kind == "p":
        for df in (-1, 1):
            target = _step(square, df, _forward(color), wrap)
            if target is not None:
                out.append(target)
        return out
    if kind in ("n", "k", ELEPHANT):
        steps: tuple[tuple[int, int], ...]
        if kind == "n":
            steps = KNIGHT_STEPS
        elif kind == "k":
            steps = KING_STEPS + (KNIGHT_STEPS if powers.king_knight and not fool else ())
        else:
            steps = ELEPHANT_STEPS
        for df, dr in steps:
            target = _step(square, df, dr, wrap)
            if target is not None and target != square:
                out.append(target)
        return out
    lines: tuple[tuple[int, int], ...] = ()
    if kind in ("b", "q"):
        lines += DIAGONAL
    if kind in ("r", "q"):
        lines += ORTHOGONAL
    for df, dr in lines:
        at: int | None = _step(square, df, dr, wrap)
        while at is not None and at != square:
            out.append(at)
            if cells[at]:
                break
            at = _step(at, df, dr, wrap)
    if powers.rule11 and kind in ("b", "r"):
        for df, dr in ORTHOGONAL if kind == "b" else DIAGONAL:
            target = _step(square, df, dr, wrap)
            if target is not None and target not in out:
                out.append(target)
    return out


def _capacity(symbol: str, last_moved: str | None) -> str | None:
    """The kind a piece moves as: its own, or for a fool the kind of the previously moved
    piece (rule 12); None for a mountain (rule 14) and for a fool before any move."""
    kind = symbol.lower()
    if kind == MOUNTAIN:
        return None
    if kind == FOOL:
        return last_moved
    return kind


def _attacked(cells: Sequence[str], square: int, by: Color, last_moved: str | None) -> bool:
    """Whether a piece of ``by`` attacks ``square`` with its permanent capacity (orthodox
    powers: the powers of a single turn never make a check, see docs/variants.md)."""
    for origin, symbol in enumerate(cells):
        if not symbol or _color(symbol) != by:
            continue
        kind = _capacity(symbol, last_moved)
        if kind is None:
            continue
        if square in _targets(
            cells, origin, kind, by, _ORTHODOX_POWERS, fool=symbol.lower() == FOOL
        ):
            return True
    return False


def _king_square(cells: Sequence[str], color: Color) -> int | None:
    king = _symbol("k", color)
    for square, symbol in enumerate(cells):
        if symbol == king:
            return square
    return None


def in_check(cells: Sequence[str], color: Color, last_moved: str | None) -> bool:
    """Whether ``color``'s king is attacked (orthodox capacities, fools as they imitate)."""
    king = _king_square(cells, color)
    return king is not None and _attacked(cells, king, not color, last_moved)


# -- state -----------------------------------------------------------------------------------


@dataclass(slots=True)
class _State:
    """Everything that changes during a game (copied before each action, for undo)."""

    cells: list[str]
    hands: dict[Color, list[str]]  # captured kinds each side may drop (rules 4-6)
    extra: dict[Color, ExtraStatus]
    castling: set[int]  # rook squares that keep their castling right
    ep: tuple[int, int, Color] | None  # (target square, pawn square, side that may take)
    last_moved: str | None  # capacity of the previously moved piece (for fools)
    turn: int
    rule: int | None  # None until cast (cast mode)
    side: Color  # the side whose part is under way
    steps: list[Step]  # the part's steps
    step: int  # index into steps
    used: set[int]  # squares of pieces that already acted in this part
    drops: int  # rule 6: drops each side makes this turn (0 = the rule is off)
    active: bool  # rules 4-6: both sides held captured pieces when the turn began
    choice: str | None  # rule 5: kind the opponent chose
    end: GameEnd | None = None
    moves_this_part: int = 0

    def copy(self) -> _State:
        return replace(
            self,
            cells=list(self.cells),
            hands={WHITE: list(self.hands[WHITE]), BLACK: list(self.hands[BLACK])},
            extra=dict(self.extra),
            castling=set(self.castling),
            steps=list(self.steps),
            used=set(self.used),
        )


@dataclass(frozen=True, slots=True)
class _Effect:
    """An action worked out on a copy of the state: the state after it."""

    after: _State
    captured: tuple[str, ...] = field(default=())


# -- the game --------------------------------------------------------------------------------


class TwentyChessGame(VariantGame):
    """One game of 20-chess.  See the module docstring for the turn structure."""

    def __init__(self, variant: TwentyChess, start: StartPosition) -> None:
        self.variant = variant
        self.start = start
        self._variant = variant
        board = chess.Board(start.fen)
        cells = list(squares_of(board))
        castling = {sq for sq in CASTLING_ROOKS if board.castling_rights & chess.BB_SQUARES[sq]}
        self._state = _State(
            cells=cells,
            hands={WHITE: [], BLACK: []},
            extra={WHITE: ExtraStatus.OUT, BLACK: ExtraStatus.OUT},
            castling=castling,
            ep=None,
            last_moved=None,
            turn=1,
            rule=None,
            side=WHITE,
            steps=[],
            step=0,
            used=set(),
            drops=0,
            active=False,
            choice=None,
        )
        self._history: list[tuple[Action, _State]] = []
        self._flagged: GameEnd | None = None
        self._cache: tuple[int, list[LegalAction], dict[Action, _Effect]] | None = None
        self._pending: tuple[_State, dict[Action, _Effect]] | None = None
        self._decisions: dict[tuple[int, Color | None, str], str] = {}
        self._begin_turn(self._state)

    # -- the interface -----------------------------------------------------------------------

    @property
    def squares(self) -> SquareMap:
        return tuple(self._state.cells)

    @property
    def ply(self) -> int:
        return len(self._history)

    def move_number(self) -> int:
        return self._state.turn

    @property
    def turn(self) -> int:
        """The turn under way (1-based)."""
        return self._state.turn

    @property
    def rule(self) -> int | None:
        """The rule of the turn under way; None while the rule is still to be cast."""
        return self._state.rule

    @property
    def step(self) -> Step | None:
        """What the side to act does next: ``"move"``, ``"move2"``, ``"swap"``, ``"drop"``,
        ``"choose"``, ``"extra"``, ``"gift"`` or ``"cast"``; None when the game is over."""
        state = self._state
        if self.outcome() is not None or state.step >= len(state.steps):
            return None
        return state.steps[state.step]

    def hand(self, side: Color) -> tuple[str, ...]:
        """The captured pieces ``side`` may drop (kind letters, as in its own colour)."""
        return tuple(sorted(self._state.hands[side]))

    def extra_status(self, side: Color) -> ExtraStatus:
        """Where ``side``'s extra piece is: ``"out"`` (not in the game yet), ``"board"`` or
        ``"captured"``."""
        return self._state.extra[side]

    @property
    def last_moved(self) -> str | None:
        """The capacity a fool has now: the kind of the previously moved piece."""
        return self._state.last_moved

    def sides_to_act(self) -> frozenset[Color]:
        if self.outcome() is not None:
            return frozenset()
        return frozenset((self._state.side,))

    def legal_actions(self) -> Sequence[LegalAction]:
        return self._generate()[0]

    def san(self, action: Action) -> str:
        effects = self._generate()[1]
        effect = effects.get(action)
        if effect is None:
            raise IllegalActionError(action, self._where())
        state = self._state
        text = self._notation(state, action)
        after = effect.after
        if not isinstance(action, Choice) and in_check(
            after.cells, not state.side, after.last_moved
        ):
            text += "+"
        return text

    def apply(self, action: Action) -> list[ScoreEvent]:
        _, effects = self._generate()
        effect = effects.get(action)
        if effect is None:
            raise IllegalActionError(action, self._where())
        before = self._state
        after = effect.after.copy()
        self._advance(after, action)
        self._history.append((action, before))
        self._state = after
        self._cache = None
        return []

    def undo(self) -> Action:
        if not self._history:
            raise NothingToUndoError()
        action, before = self._history.pop()
        self._state = before
        self._flagged = None
        self._cache = None
        return action

    def outcome(self) -> GameEnd | None:
        return self._flagged or self._state.end

    def flag(self, side: Color) -> GameEnd:
        """The side out of time loses (20-chess has no rule of its own on time)."""
        end = GameEnd(result_string(not side), "time-out", not side)
        self._flagged = end
        self._cache = None
        return end

    def fen(self) -> str:
        """FEN extended for 20-chess: extra pieces as F/E/M (f/e/m), the hands in brackets
        after the placement (as crazyhouse writes them), then side, castling, en passant,
        and ``turn:rule:step``."""
        state = self._state
        rows = []
        for rank in range(7, -1, -1):
            row, gap = "", 0
            for file in range(8):
                symbol = state.cells[rank * 8 + file]
                if not symbol:
                    gap += 1
                    continue
                if gap:
                    row, gap = row + str(gap), 0
                row += symbol
            rows.append(row + (str(gap) if gap else ""))
        hands = "".join(k.upper() for k in sorted(state.hands[WHITE])) + "".join(
            sorted(state.hands[BLACK])
        )
        castling = (
            "".join(
                letter
                for square, letter in ((H1, "K"), (A1, "Q"), (H8, "k"), (A8, "q"))
                if square in state.castling
            )
            or "-"
        )
        ep = chess.square_name(state.ep[0]) if state.ep else "-"
        side = "w" if state.side == WHITE else "b"
        step = self.step or "-"
        return (
            f"{'/'.join(rows)}[{hands}] {side} {castling} {ep} "
            f"{state.turn}:{state.rule or '?'}:{step}"
        )

    def board_symbol(self, symbol: str) -> str:
        if symbol and symbol.lower() in EXTRA_KINDS:
            return self._variant.stand_ins[_color(symbol)]
        return symbol

    def pgn_tags(self) -> dict[str, str]:
        tags = super().pgn_tags()
        tags["Variant"] = self._variant.pgn_name
        return tags

    def setup(
        self,
        placement: str,
        *,
        turn: int = 1,
        side: Color = WHITE,
        hands: Mapping[Color, str] | None = None,
        castling: str = "-",
        last_moved: str | None = None,
    ) -> None:
        """Start over from a set-up position (for the admin API and for tests).

        ``placement``: the board part of a FEN, extra pieces as F/E/M (f/e/m); ``hands``:
        the captured pieces each side may drop, as kind letters; ``castling``: FEN castling
        letters; ``last_moved``: the kind a fool imitates.  The part of ``side`` in turn
        ``turn`` begins (in cast mode, the rule is cast first)."""
        cells = [EMPTY] * 64
        for rank_index, row in enumerate(placement.split("/")):
            file = 0
            for char in row:
                if char.isdigit():
                    file += int(char)
                else:
                    cells[(7 - rank_index) * 8 + file] = char
                    file += 1
        letters = {"K": H1, "Q": A1, "k": H8, "q": A8}
        extra = {
            color: ExtraStatus.BOARD
            if any(s and s.lower() in EXTRA_KINDS and _color(s) == color for s in cells)
            else ExtraStatus.OUT
            for color in (WHITE, BLACK)
        }
        hands = hands or {}
        state = _State(
            cells=cells,
            hands={WHITE: list(hands.get(WHITE, "")), BLACK: list(hands.get(BLACK, ""))},
            extra=extra,
            castling={letters[c] for c in castling if c in letters},
            ep=None,
            last_moved=last_moved,
            turn=turn,
            rule=None,
            side=WHITE,
            steps=[],
            step=0,
            used=set(),
            drops=0,
            active=False,
            choice=None,
        )
        self._history = []
        self._flagged = None
        self._cache = None
        self._pending = None
        self._decisions = {}
        self._state = state
        self._begin_turn(state)
        if side == BLACK and state.rule is not None and state.end is None:
            state.side = BLACK
            self._begin_part(state)
        self._cache = None

    # -- decisions and the table's view -------------------------------------------------------

    def pending_choice(self) -> tuple[str, Color, tuple[str, ...]] | None:
        """The decision the game waits for, as ``(what, by, options)``: ``("rule", WHITE,
        ("1", ..., "20"))`` while the rule of a turn is to be cast, ``("piece", opponent,
        kinds)`` while the opponent picks the piece to drop under rule 5; else None."""
        step = self.step
        if step not in (Step.CAST, Step.CHOOSE):
            return None
        state = self._state
        if step is Step.CAST:
            return Subject.RULE, WHITE, tuple(str(rule) for rule in RULES)
        return Subject.PIECE, not state.side, tuple(sorted(set(state.hands[state.side])))

    def decide(self, choice: Choice) -> None:
        """Enter a decision the board cannot show (the admin API, the table screen): the rule
        cast for the turn, or the piece the opponent picks under rule 5.  Unlike
        ``apply(choice)`` it is no action of the record: it is kept with the turn, so that it
        still holds when the action before it is taken back and made again.  Raises
        :class:`ChoiceError` when no such decision is due or the value is not one of the
        options."""
        pending = self.pending_choice()
        if pending is None:
            raise ChoiceError(f"no decision is due now (turn {self.turn}, step {self.step})")
        what, _, options = pending
        if choice.what != what or choice.value not in options:
            raise ChoiceError(f"the decision due is the {what}: choose one of {', '.join(options)}")
        state = self._state
        key = (state.turn, None if what == Subject.RULE else state.side, what)
        self._decisions[key] = choice.value
        if what == Subject.RULE:
            state.rule = int(choice.value)
            self._start_rule(state)
        else:
            state.choice = choice.value
            state.step += 1
            self._skip_impossible(state)
        self._cache = None

    def forbidden_drop(self, symbol: str, square: int) -> str | None:
        """Why dropping ``symbol`` (a captured piece of the side to act) on the empty
        ``square`` breaks the rule of the turn: a pawn on its last row or a checking drop
        (rule 4-6), another kind than the opponent picked (rule 5), a drop leaving the own
        king in check.  None when the drop is legal, no drop is due, or ``symbol`` is no
        kind in the side's hand (then it is no drop)."""
        state = self._state
        if self.outcome() is not None or state.step >= len(state.steps):
            return None
        step = state.steps[state.step]
        side = state.side
        kind = symbol.lower()
        if (
            step not in (Step.DROP, Step.CHOOSE)
            or not symbol.isalpha()
            or _color(symbol) != side
            or kind not in state.hands[side]
            or not 0 <= square < 64
            or state.cells[square]
        ):
            return None
        if Drop(symbol, square) in self._generate()[1]:
            return None
        rule = f"rule {state.rule}"
        if state.rule == 5 and step == Step.DROP and state.choice not in (None, kind):
            return f"{rule}: drop the piece the opponent picked ({state.choice})"
        if kind == "p" and square >> 3 == _last_rank(side):
            return f"{rule}: no pawn on the last row"
        enemy_king = _king_square(state.cells, not side)
        if enemy_king is not None and enemy_king in _targets(
            state.cells, square, kind, side, _ORTHODOX_POWERS, fool=False
        ):
            return f"{rule}: a drop may not give check"
        return "it leaves the own king in check"

    def rule_text(self, rule: int | None = None) -> str:
        """What rule ``rule`` (default: the rule of the turn under way) asks of a player."""
        rule = self._state.rule if rule is None else rule
        return RULE_TEXTS.get(rule or 0, "the rule of this turn is to be cast")

    def rule_hint(self) -> str:
        """One line for a ruling: the turn, its rule and what the side to act does now."""
        state = self._state
        side = "White" if state.side == WHITE else "Black"
        step = STEP_TEXTS.get(self.step, "nothing") if self.step else "nothing"
        return f"turn {state.turn}, rule {state.rule or '?'}: {self.rule_text()}; {side}: {step}"

    def clock_text(self) -> str:
        """At most 8 characters for the clock display: ``RULE 12`` (``CAST?`` while the
        rule is to be cast, ``R5 PICK`` while the opponent's pick is awaited)."""
        step = self.step
        if step is Step.CAST:
            return "CAST?"
        if step is Step.CHOOSE:
            return f"R{self._state.rule} PICK"
        return f"RULE {self._state.rule}"

    def record_note(self) -> str | None:
        """The comment for the record before the first action of a turn: its rule."""
        state = self._state
        if state.side != WHITE or state.moves_this_part or state.rule is None:
            return None
        return f"rule {state.rule}: {self.rule_text()}"

    def panel(self) -> dict[str, object]:
        """What the mirror shows of the game besides the board (JSON-able)."""
        state = self._state
        pending = self.pending_choice()
        extra: dict[str, object] = {}
        for color in (WHITE, BLACK):
            square = next(
                (
                    sq
                    for sq, s in enumerate(state.cells)
                    if s and s.lower() in EXTRA_KINDS and _color(s) == color
                ),
                None,
            )
            kind = state.cells[square].lower() if square is not None else None
            extra[_side_name(color)] = {
                "status": state.extra[color],
                "kind": EXTRA_NAMES.get(kind or ""),
                "square": chess.square_name(square) if square is not None else None,
                "stand_in": self._variant.stand_ins[color],
            }
        step = self.step
        return {
            "variant": self._variant.id,
            "turn": state.turn,
            "rule": state.rule,
            "rule_text": self.rule_text(),
            "side": _side_name(state.side),
            "step": step,
            "step_text": STEP_TEXTS.get(step, "") if step else "",
            "steps": list(state.steps),
            "step_index": state.step,
            "hands": {_side_name(c): "".join(self.hand(c)) for c in (WHITE, BLACK)},
            "extra": extra,
            "fool_moves_as": state.last_moved,
            "pending_choice": None
            if pending is None
            else {"what": pending[0], "by": _side_name(pending[1]), "options": list(pending[2])},
            "placement": self.fen().split("[", 1)[0],
        }

    # -- turn structure ------------------------------------------------------------------------

    def _where(self) -> str:
        return f"turn {self._state.turn} (rule {self._state.rule}, step {self.step}): {self.fen()}"

    @staticmethod
    def _actor(state: _State) -> Color:
        step = state.steps[state.step] if state.step < len(state.steps) else Step.MOVE
        return (not state.side) if step == Step.CHOOSE else state.side

    def _begin_turn(self, state: _State) -> None:
        state.side = WHITE
        if self._variant.cast:
            cast = self._decisions.get((state.turn, None, Subject.RULE))
            state.rule = int(cast) if cast is not None else None
        else:
            state.rule = self._variant.rule_of(state.turn)
        state.choice = None
        state.drops = 0
        if state.rule is None:
            state.steps, state.step, state.used = [Step.CAST], 0, set()
            return
        self._start_rule(state)

    def _start_rule(self, state: _State) -> None:
        """The turn's rule is known: rules 4-6 apply only if both sides hold captured
        pieces now, at the start of the turn (rule 4: "if not, just orthodox chess")."""
        state.active = bool(state.hands[WHITE]) and bool(state.hands[BLACK])
        state.drops = 0
        if state.rule == 6 and state.active:
            state.drops = min(len(state.hands[WHITE]), len(state.hands[BLACK]))
        self._begin_part(state)

    def _begin_part(self, state: _State) -> None:
        """Set up the steps of the part of ``state.side`` and skip the impossible ones."""
        rule = state.rule
        side = state.side
        used: set[int] = set()
        steps: list[Step]
        if rule == 2:
            steps = [Step.MOVE, Step.MOVE2]
        elif rule == 3:
            steps = [Step.SWAP, Step.MOVE]
        elif rule == 4 and state.active:
            steps = [Step.DROP, Step.MOVE]
        elif rule == 5 and state.active:
            steps = [Step.CHOOSE, Step.DROP, Step.MOVE]
            kinds = set(state.hands[side])
            state.choice = next(iter(kinds)) if len(kinds) == 1 else None
            decided = self._decisions.get((state.turn, side, Subject.PIECE))
            if state.choice is None and decided in kinds:
                state.choice = decided  # entered before (kept through takebacks)
            if state.choice is not None:  # nothing to choose from, or chosen already
                steps = [Step.DROP, Step.MOVE]
        elif rule == 6 and state.drops:
            steps = [Step.DROP] * state.drops + [Step.MOVE]
        elif rule is not None and rule in EXTRA_BY_RULE:
            steps = [Step.EXTRA, Step.MOVE]
            kind = EXTRA_BY_RULE[rule]
            for square, symbol in enumerate(state.cells):
                if symbol and symbol.lower() in EXTRA_KINDS and _color(symbol) == side:
                    state.cells[square] = _symbol(kind, side)  # the footnote: it changes
                    used.add(square)  # "followed by a move with another chessman"
        elif rule == 19:
            steps = [Step.GIFT, Step.MOVE]
        else:
            steps = [Step.MOVE]
        state.steps, state.step, state.used = steps, 0, used
        state.moves_this_part = 0
        self._skip_impossible(state)

    def _skip_impossible(self, state: _State) -> None:
        """Skip steps no action can fill; end the part when none is left; end the game when
        a side can make no action at all in its part."""
        while state.step < len(state.steps):
            if state.steps[state.step] in (Step.CAST, Step.CHOOSE):
                return
            effects = self._step_effects(state)
            if effects:
                self._pending = (state, effects)
                return
            state.step += 1
        if state.moves_this_part == 0:
            # the side can make no action in its whole part: mate or stalemate
            if in_check(state.cells, state.side, state.last_moved):
                state.end = GameEnd(result_string(not state.side), "checkmate", not state.side)
            else:
                state.end = GameEnd("1/2-1/2", "stalemate", None)
            return
        self._end_part(state)

    def _end_part(self, state: _State) -> None:
        if state.ep is not None and state.ep[2] == state.side:
            state.ep = None  # the en passant right lasts the opponent's next part only
        state.choice = None
        if state.side == WHITE:
            state.side = BLACK
            self._begin_part(state)
        else:
            state.turn += 1
            self._begin_turn(state)

    def _advance(self, state: _State, action: Action) -> None:
        """Move ``state`` (already showing the action's effect) to the next step."""
        if isinstance(action, Choice):
            if action.what == Subject.RULE:
                state.rule = int(action.value)
                self._start_rule(state)
                return
            state.choice = action.value
            state.step += 1
            self._skip_impossible(state)
            return
        state.moves_this_part += 1
        step = state.steps[state.step]
        if step == Step.EXTRA and not self._is_redrop(action):
            state.step += 2  # the move with another piece was made instead of a re-drop
        else:
            state.step += 1
        self._skip_impossible(state)

    def _is_redrop(self, action: Action) -> bool:
        """In the extra step, a drop, or a move of the extra piece (which cannot make its
        ordinary moves in that step, so such a move is a re-drop)."""
        if isinstance(action, Drop):
            return True
        if isinstance(action, Move):
            symbol = self._state.cells[action.from_square]
            return symbol.lower() in EXTRA_KINDS
        return False

    # -- generation ---------------------------------------------------------------------------

    def _generate(self) -> tuple[list[LegalAction], dict[Action, _Effect]]:
        if self._cache is not None and self._cache[0] == len(self._history):
            return self._cache[1], self._cache[2]
        state = self._state
        effects: dict[Action, _Effect] = {}
        if self.outcome() is None:
            step = state.steps[state.step]
            if step == Step.CAST:
                for rule in RULES:
                    effects[Choice(Subject.RULE, str(rule))] = _Effect(state.copy())
            elif step == Step.CHOOSE:
                for kind in sorted(set(state.hands[state.side])):
                    effects[Choice(Subject.PIECE, kind)] = _Effect(state.copy())
                effects.update(self._chosen_drops(state))
            elif self._pending is not None and self._pending[0] is state:
                effects = dict(self._pending[1])
            else:
                effects = self._step_effects(state)
        legal = []
        seen: set[frozenset[tuple[int, str]]] = set()
        for action, effect in list(effects.items()):
            changes = tuple(
                (sq, effect.after.cells[sq])
                for sq in range(64)
                if effect.after.cells[sq] != state.cells[sq]
            )
            if changes:
                key = frozenset(changes)
                if key in seen:  # two tandems with the same result: keep one
                    del effects[action]
                    continue
                seen.add(key)
            actor = self._actor(state) if isinstance(action, Choice) else state.side
            legal.append(LegalAction(action, actor, changes, str(action)))
        self._cache = (len(self._history), legal, effects)
        return legal, effects

    def _chosen_drops(self, state: _State) -> dict[Action, _Effect]:
        """Rule 5 before the opponent's pick is entered: the drop of any kind in the hand,
        the pick read off the piece the player actually drops (the opponent hands it over)."""
        out: dict[Action, _Effect] = {}
        for kind in sorted(set(state.hands[state.side])):
            picked = state.copy()
            picked.choice = kind
            picked.step += 1
            out.update(self._step_effects(picked))
        return out

    def _step_effects(self, state: _State) -> dict[Action, _Effect]:
        """The legal actions of the step under way, each with the state after it."""
        step = state.steps[state.step]
        side = state.side
        out: dict[Action, _Effect] = {}
        if step == Step.SWAP:
            self._swaps(state, out)
        elif step == Step.DROP:
            self._drops(state, out)
        elif step == Step.GIFT:
            self._gifts(state, out)
        elif step == Step.EXTRA:
            self._extra(state, out)
            if state.extra[side] == ExtraStatus.BOARD:  # re-dropping is optional, dropping is not
                out.update(self._moves(state))
        else:
            out = self._moves(state)
        return {
            a: e for a, e in out.items() if not in_check(e.after.cells, side, e.after.last_moved)
        }

    def _powers(self, rule: int | None) -> _Powers:
        return _Powers(
            wrap=rule == 16,
            rule11=rule == 11,
            king_knight=rule == 15,
            castling=rule not in (15, 17, 18),
        )

    def _moves(self, state: _State) -> dict[Action, _Effect]:
        """The move step, with the turn's restriction; orthodox moves when the restriction
        leaves none (docs/variants.md, "rules that cannot be obeyed")."""
        rule = state.rule
        side = state.side
        moves = self._restricted_moves(state, rule)
        safe = {
            a: e for a, e in moves.items() if not in_check(e.after.cells, side, e.after.last_moved)
        }
        if safe or rule == ORTHODOX:
            return safe
        return self._restricted_moves(state, ORTHODOX)

    def _restricted_moves(self, state: _State, rule: int | None) -> dict[Action, _Effect]:
        side = state.side
        powers = self._powers(rule)
        out: dict[Action, _Effect] = {}
        allowed = RESTRICTED.get(rule or 0)
        for origin, symbol in enumerate(state.cells):
            if not symbol or _color(symbol) != side or origin in state.used:
                continue
            kind = symbol.lower()
            if allowed is not None and kind not in allowed:
                continue
            for mv in self._piece_moves(state, origin, powers):
                if rule == 18 and not mv.backwards(side):
                    continue
                out[mv.action] = self._effect_of_moves(state, (mv,))
        if rule == 17:
            return self._identical_moves(state, out)
        if rule == 20:
            return self._paired_moves(state, out, powers)
        return out

    def _identical_moves(
        self, state: _State, single: dict[Action, _Effect]
    ) -> dict[Action, _Effect]:
        """Rule 17: a move is allowed only with another own piece making the identical
        displacement onto an empty square, whatever that piece's capacity (decisions: no
        castling; the second piece jumps, cannot capture, is never the mountain, and a
        pawn does not land on its last row)."""
        side = state.side
        out: dict[Action, _Effect] = {}
        for action, effect in single.items():
            assert isinstance(action, Move)
            if self._is_castling(state, action):
                continue
            df = (action.to_square & 7) - (action.from_square & 7)
            dr = (action.to_square >> 3) - (action.from_square >> 3)
            cells = effect.after.cells
            for other, symbol in enumerate(cells):
                if (
                    not symbol
                    or _color(symbol) != side
                    or other == action.to_square
                    or symbol.lower() == MOUNTAIN
                    or other in state.used
                ):
                    continue
                target = _step(other, df, dr, False)
                if target is None or cells[target]:
                    continue
                if symbol.lower() == "p" and (target >> 3) == _last_rank(side):
                    continue
                after = effect.after.copy()
                after.cells[target], after.cells[other] = symbol, EMPTY
                self._lose_castling(after, (other, target))
                after.used.add(target)
                tandem = Tandem((action, Move(other, target)))
                out[tandem] = _Effect(after, effect.captured)
        return out

    def _paired_moves(
        self, state: _State, single: dict[Action, _Effect], powers: _Powers
    ) -> dict[Action, _Effect]:
        """Rule 20: moving a knight, bishop or rook moves both of that kind (each move by
        the piece's own capacity, the second from the position after the first); with one
        such piece left it moves alone."""
        out: dict[Action, _Effect] = {}
        for action, effect in single.items():
            assert isinstance(action, Move)
            symbol = state.cells[action.from_square]
            kind = symbol.lower()
            if kind not in PAIRED_KINDS or self._is_castling(state, action):
                out[action] = effect
                continue
            partners = [
                sq
                for sq, s in enumerate(effect.after.cells)
                if s == symbol and sq != action.to_square
            ]
            if not partners:
                out[action] = effect
                continue
            for partner in partners:
                for mv in self._piece_moves(effect.after, partner, powers):
                    second = self._effect_of_moves(effect.after, (mv,))
                    assert isinstance(mv.action, Move)
                    merged = _Effect(second.after, effect.captured + second.captured)
                    out[Tandem((action, mv.action))] = merged
        return out

    @staticmethod
    def _is_castling(state: _State, action: Move) -> bool:
        symbol = state.cells[action.from_square]
        return symbol.lower() == "k" and abs((action.from_square & 7) - (action.to_square & 7)) == 2

    def _piece_moves(self, state: _State, origin: int, powers: _Powers) -> list[_Mv]:
        cells = state.cells
        symbol = cells[origin]
        side = _color(symbol)
        real = symbol.lower()
        kind = _capacity(symbol, state.last_moved)
        if kind is None:
            return []
        fool = real == FOOL
        out: list[_Mv] = []
        if kind == "p":
            ahead = _step(origin, 0, _forward(side), False)
            promote = not fool
            if ahead is not None and not cells[ahead]:
                out.extend(_pawn_arrivals(origin, ahead, side, promote))
                home = 1 if side == WHITE else 6
                two = _step(ahead, 0, _forward(side), False)
                if not fool and origin >> 3 == home and two is not None and not cells[two]:
                    out.append(_Mv(origin, two, double=True))
            for target in _targets(cells, origin, "p", side, powers, fool=fool):
                victim = cells[target]
                if victim and _color(victim) != side and _capturable(victim):
                    out.extend(_pawn_arrivals(origin, target, side, promote))
                elif (
                    not victim
                    and not fool
                    and state.ep is not None
                    and state.ep[0] == target
                    and state.ep[2] == side
                    and cells[state.ep[1]] == _symbol("p", not side)
                ):
                    out.append(_Mv(origin, target, ep=state.ep[1]))
            return out
        for target in _targets(cells, origin, kind, side, powers, fool=fool):
            victim = cells[target]
            if not victim or (_color(victim) != side and _capturable(victim)):
                out.append(_Mv(origin, target))
        if real == "k" and powers.castling:
            out.extend(self._castlings(state, origin, side))
        return out

    def _castlings(self, state: _State, origin: int, side: Color) -> list[_Mv]:
        cells = state.cells
        home = E1 if side == WHITE else E8
        if origin != home or in_check(cells, side, state.last_moved):
            return []
        out = []
        rook = _symbol("r", side)
        for rook_sq in CASTLING_ROOKS:
            if rook_sq not in state.castling or (rook_sq >> 3) != (home >> 3):
                continue
            if cells[rook_sq] != rook:
                continue
            step = 1 if rook_sq > home else -1
            between = range(home + step, rook_sq, step)
            if any(cells[sq] for sq in between):
                continue
            king_to = home + 2 * step
            if any(
                _attacked(cells, sq, not side, state.last_moved) for sq in (home + step, king_to)
            ):
                continue
            out.append(_Mv(home, king_to, rook=(rook_sq, home + step)))
        return out

    def _effect_of_moves(self, state: _State, moves: Iterable[_Mv]) -> _Effect:
        after = state.copy()
        captured: list[str] = []
        for mv in moves:
            cells = after.cells
            symbol = cells[mv.origin]
            side = _color(symbol)
            victim = cells[mv.target]
            changed = [mv.origin, mv.target]
            if victim:
                captured.append(victim)
                self._capture(after, victim, side)
            if mv.ep is not None:
                captured.append(cells[mv.ep])
                self._capture(after, cells[mv.ep], side)
                cells[mv.ep] = EMPTY
                changed.append(mv.ep)
            cells[mv.origin] = EMPTY
            cells[mv.target] = _symbol(mv.promotion, side) if mv.promotion else symbol
            if mv.rook is not None:
                rook_from, rook_to = mv.rook
                cells[rook_to], cells[rook_from] = cells[rook_from], EMPTY
                changed += [rook_from, rook_to]
                after.used.add(rook_to)
            after.used.add(mv.target)
            real = symbol.lower()
            if real != FOOL:  # a fool keeps imitating what it imitated
                after.last_moved = real
            if mv.double:
                after.ep = ((mv.origin + mv.target) // 2, mv.target, not side)
            self._lose_castling(after, changed)
        return _Effect(after, tuple(captured))

    @staticmethod
    def _capture(state: _State, victim: str, taker: Color) -> None:
        kind = victim.lower()
        if kind in EXTRA_KINDS:
            state.extra[not taker] = (
                ExtraStatus.CAPTURED
            )  # not part of the captured pieces (footnote)
        else:
            state.hands[taker].append(kind)

    @staticmethod
    def _lose_castling(state: _State, squares: Iterable[int]) -> None:
        for square in squares:
            if square == E1:
                state.castling -= {A1, H1}
            elif square == E8:
                state.castling -= {A8, H8}
            else:
                state.castling.discard(square)

    def _swaps(self, state: _State, out: dict[Action, _Effect]) -> None:
        """Rule 3: two own pieces of different kinds exchange squares (decisions: two pieces
        of one kind would change nothing on the board; the mountain does not move; no pawn
        lands on its last row)."""
        side = state.side
        cells = state.cells
        own = [
            sq for sq, s in enumerate(cells) if s and _color(s) == side and s.lower() != MOUNTAIN
        ]
        last = _last_rank(side)
        for i, first in enumerate(own):
            for second in own[i + 1 :]:
                a, b = cells[first], cells[second]
                if a == b:
                    continue
                if (a.lower() == "p" and second >> 3 == last) or (
                    b.lower() == "p" and first >> 3 == last
                ):
                    continue
                after = state.copy()
                after.cells[first], after.cells[second] = b, a
                after.used |= {first, second}
                self._lose_castling(after, (first, second))
                out[Swap(first, second)] = _Effect(after)

    def _drops(self, state: _State, out: dict[Action, _Effect]) -> None:
        """Rules 4-6: a captured piece onto an empty square; it may not give check, and a
        pawn may not go on the last row (rule 4)."""
        side = state.side
        kinds = set(state.hands[side])
        if state.rule == 5:
            kinds = {state.choice} if state.choice in kinds else set()
        last = _last_rank(side)
        enemy_king = _king_square(state.cells, not side)
        for kind in sorted(kinds):
            symbol = _symbol(kind, side)
            for square in range(64):
                if state.cells[square] or (kind == "p" and square >> 3 == last):
                    continue
                if enemy_king is not None and enemy_king in _targets(
                    state.cells, square, kind, side, _ORTHODOX_POWERS, fool=False
                ):
                    continue
                after = state.copy()
                after.cells[square] = symbol
                after.hands[side].remove(kind)
                after.used.add(square)
                out[Drop(symbol, square)] = _Effect(after)

    def _extra(self, state: _State, out: dict[Action, _Effect]) -> None:
        """Rules 12-14 and the footnote: the extra piece is dropped in its new capacity on
        any empty square (also when it was captured: it comes back); if it stands on the
        board it has taken the new capacity already and may be re-dropped."""
        side = state.side
        symbol = _symbol(EXTRA_BY_RULE[state.rule or 0], side)
        here = next(
            (sq for sq, s in enumerate(state.cells) if s == symbol),
            None,
        )
        for square in range(64):
            if state.cells[square]:
                continue
            after = state.copy()
            after.cells[square] = symbol
            after.extra[side] = ExtraStatus.BOARD
            after.used.add(square)
            if here is None:
                out[Drop(symbol, square)] = _Effect(after)
            else:
                after.cells[here] = EMPTY
                out[Move(here, square)] = _Effect(after)

    def _gifts(self, state: _State, out: dict[Action, _Effect]) -> None:
        """Rule 19: an own piece (never the king, never the mountain, which cannot be
        captured) goes to the opponent's hand."""
        side = state.side
        for square, symbol in enumerate(state.cells):
            if not symbol or _color(symbol) != side or symbol.lower() in ("k", MOUNTAIN):
                continue
            after = state.copy()
            after.cells[square] = EMPTY
            self._capture(after, symbol, not side)
            self._lose_castling(after, (square,))
            out[Remove(square)] = _Effect(after)

    # -- notation ------------------------------------------------------------------------------

    def _notation(self, state: _State, action: Action) -> str:
        cells = state.cells
        if isinstance(action, Choice):
            return f"{{{action.what} {action.value}}}"
        if isinstance(action, Drop):
            return f"{action.piece.upper()}@{chess.square_name(action.square)}"
        if isinstance(action, Swap):
            a, b = cells[action.first], cells[action.second]
            return (
                f"{a.upper()}{chess.square_name(action.first)}<>"
                f"{b.upper()}{chess.square_name(action.second)}"
            )
        if isinstance(action, Remove):
            return f"{cells[action.square].upper()}{chess.square_name(action.square)}>>"
        if isinstance(action, Tandem):
            first, second = action.moves
            between = self._effect_of_moves(state, (_Mv(first.from_square, first.to_square),))
            return f"{self._move_text(cells, first)}&{self._move_text(between.after.cells, second)}"
        return self._move_text(cells, action)

    def _move_text(self, cells: Sequence[str], move: Move) -> str:
        symbol = cells[move.from_square]
        kind = symbol.lower()
        if kind == "k" and abs((move.from_square & 7) - (move.to_square & 7)) == 2:
            return "O-O" if move.to_square > move.from_square else "O-O-O"
        capture = "x" if cells[move.to_square] else "-"
        piece = "" if kind == "p" else symbol.upper()
        promo = f"={move.promotion.upper()}" if move.promotion else ""
        return (
            f"{piece}{chess.square_name(move.from_square)}{capture}"
            f"{chess.square_name(move.to_square)}{promo}"
        )


@dataclass(frozen=True, slots=True)
class _Mv:
    """A move worked out by the generator."""

    origin: int
    target: int
    promotion: str | None = None
    ep: int | None = None  # square of the pawn taken en passant
    rook: tuple[int, int] | None = None  # castling: rook from, rook to
    double: bool = False

    @property
    def action(self) -> Move:
        return Move(self.origin, self.target, self.promotion)

    def backwards(self, side: Color) -> bool:
        """Rule 18: the move ends on a rank nearer the mover's own side."""
        dr = (self.target >> 3) - (self.origin >> 3)
        return self.rook is None and dr * _forward(side) < 0


def _pawn_arrivals(origin: int, target: int, side: Color, promote: bool) -> list[_Mv]:
    if promote and target >> 3 == _last_rank(side):
        return [_Mv(origin, target, promotion=kind) for kind in PROMOTIONS]
    return [_Mv(origin, target)]


def _capturable(symbol: str) -> bool:
    """Kings are never captured; the mountain cannot be (rule 14)."""
    return symbol.lower() not in ("k", MOUNTAIN)


@cache
def twenty_chess_start() -> StartPosition:
    return StartPosition(
        "twenty-chess", CLASSICAL_FEN, squares_of(chess.Board()), number=518, classical=True
    )


class TwentyChess(Variant):
    """20-chess.

    ``schedule``: the rule of each turn, turn 1 first (default: rule ``n`` in turn ``n``
    for turns 1-20); turns after the schedule are orthodox chess (rule 1).  ``cast``: the
    rule of each turn is cast at the table instead and entered as ``Choice("rule", "n")``
    before White's part.  ``stand_ins``: what a piece-identity board reads for each side's
    extra piece (default :data:`DEFAULT_STAND_INS`; the DGT special pieces read ``"W"``
    (white wins, 0x0E) and ``"X"`` (black wins, 0x0F), if a table has them)."""

    id = "twenty-chess"
    name = "20-chess"
    pgn_name = "20-chess"
    plays_classical_start = True
    accepts_start_fen = False
    moves_correctable = False
    drops_from_hand = True

    def __init__(
        self,
        schedule: Sequence[int] | None = None,
        *,
        cast: bool = False,
        stand_ins: Mapping[Color, str] | None = None,
    ) -> None:
        schedule = tuple(RULES) if schedule is None else tuple(schedule)
        bad = [rule for rule in schedule if rule not in RULES]
        if bad:
            raise VariantOptionsError(f"20-chess rules are numbered 1-20, got {bad}")
        self.schedule = schedule
        self.cast = cast
        self.stand_ins = dict(DEFAULT_STAND_INS if stand_ins is None else stand_ins)

    @classmethod
    def from_options(cls, text: str | None) -> TwentyChess:
        """A 20-chess variant from a table's option text, words separated by spaces:
        ``schedule=12,13,14`` (the rules of turns 1, 2, 3; orthodox after), ``cast`` (the rule
        of each turn is cast and entered), ``stand-ins=queens`` (default: the spare queen of
        the other colour), ``stand-ins=special`` (the DGT white-wins / black-wins pieces) or
        ``stand-ins=Xy`` (two piece letters, White's extra piece first).  Raises
        :class:`VariantOptionsError` (a ``ValueError``) with a one-line message for anything
        else."""
        schedule: list[int] | None = None
        cast = False
        stand_ins: Mapping[Color, str] | None = None
        for word in (text or "").split():
            key, _, value = word.partition("=")
            if key == "cast" and not value:
                cast = True
            elif key == "schedule" and value:
                try:
                    schedule = [int(part) for part in value.split(",")]
                except ValueError:
                    raise VariantOptionsError(
                        f"schedule takes rule numbers 1-20, got {value!r}"
                    ) from None
            elif key == "stand-ins" and value == "queens":
                stand_ins = DEFAULT_STAND_INS
            elif key == "stand-ins" and value == "special":
                stand_ins = SPECIAL_STAND_INS
            elif key == "stand-ins" and len(value) == 2 and value.isalpha():
                stand_ins = {WHITE: value[0], BLACK: value[1]}
            else:
                raise VariantOptionsError(
                    f"unknown 20-chess option {word!r}: use schedule=1,2,..., cast, "
                    "stand-ins=queens, stand-ins=special or stand-ins=<two letters>"
                )
        return cls(schedule, cast=cast, stand_ins=stand_ins)

    def rule_of(self, turn: int) -> int:
        """The rule of turn ``turn`` (1-based) by the schedule."""
        return self.schedule[turn - 1] if turn <= len(self.schedule) else ORTHODOX

    def start_positions(self) -> Sequence[StartPosition]:
        return (twenty_chess_start(),)

    def new_game(self, start: StartPosition | None = None) -> TwentyChessGame:
        return TwentyChessGame(self, self._check_start(start))
