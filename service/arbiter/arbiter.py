"""The arbiter: applies a :class:`~service.arbiter.base.RuleSet` to one game.

It is fed, by :class:`service.table.Table`, what the recogniser reports (lifts, places,
actions made and completed, amendments, takebacks), the clock presses and flag falls, and
the players' claims; it answers with :mod:`.rulings` items.  It is pure: no I/O, no clock,
no randomness; the game and the physical board are read through an :class:`ArbiterView`.

It never assumes two alternating sides beyond what the variant says: the side that must
act is read from ``game.sides_to_act()``; the rules that are defined for "the player having
the move" (touch-move, illegal moves, the clock press) apply when exactly one side may act.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import chess

from service.arbiter import draws
from service.arbiter.base import DisplacedPolicy, FlagPolicy, IllegalMovePolicy, RuleSet
from service.arbiter.claims import ClaimBook, ClaimError, Decision, Lapse
from service.arbiter.physical import OCCUPIED, Reading, ReadingKind, read_difference
from service.arbiter.rulings import (
    ArbiterEvent,
    Claim,
    ClaimKind,
    ClaimStatus,
    Irregularity,
    IrregularityKind,
    Ruling,
    RulingKind,
)
from service.variants.base import EMPTY, Color, LegalAction, Move, SquareMap, VariantGame

RELEASE_TIME = 0.5
"""Seconds a piece must stand on a square to count as released there (FIDE 4.7); shorter
stays are a piece slid over the square."""
FLICKER = 0.15
"""A lift followed by a place on the same square within this time is no touch (a sensor
flicker or a piece settling)."""

__all__ = ["RELEASE_TIME", "Arbiter", "ArbiterError", "ArbiterView"]


class ArbiterError(ValueError):
    """A bad claim or decision (unknown claim id, a claim the rule set does not know)."""


class ArbiterView(Protocol):
    """What the arbiter reads from the table."""

    @property
    def game(self) -> VariantGame | None:
        """The game as played so far, a provisional last action included."""

    @property
    def presence_only(self) -> bool: ...

    def physical(self) -> SquareMap:
        """The board as the sensors read it, in the game's frame (``"*"``: a piece a
        presence-only board cannot name)."""

    def history(self) -> chess.Board | None:
        """The game on a python-chess board with its whole history (None if not chess)."""


@dataclass(slots=True)
class _Touch:
    time: float
    square: int
    symbol: str
    own: bool
    back: float | None = None  # when a piece was set on the same square again


_NO_DISPLACED = DisplacedPolicy.NONE
"""(Read on every press that completes a move: an enum member off its class is read
through the enum's metaclass, about 0.1 us in Python 3.11.)"""


def _name(square: int | None) -> str:
    return "" if square is None else chess.square_name(square)


def _expected(game: VariantGame) -> SquareMap:
    """The game's position as a piece-identity board reads it (a variant's new kinds stand
    on the board as stand-in pieces: :meth:`VariantGame.board_symbol`)."""
    squares = game.squares
    if type(game).board_symbol is VariantGame.board_symbol:
        return squares
    return tuple(game.board_symbol(symbol) if symbol else symbol for symbol in squares)


def _hint(game: VariantGame | None) -> str:
    """The variant's word on what the rules of the moment allow (20-chess: the turn's
    rule and the step), to add to a ruling's message; empty for the others."""
    hint = game.rule_hint() if game is not None else None
    return "" if hint is None else f" ({hint})"


def _colour(symbol: str) -> Color | None:
    if not symbol or symbol in (OCCUPIED, "?") or not symbol.isalpha():
        return None
    return symbol.isupper()


class Arbiter:
    """One game's arbiter under ``rules``."""

    def __init__(self, rules: RuleSet, view: ArbiterView) -> None:
        self.rules = rules
        self.view = view
        self.claims = ClaimBook()
        self.reset()

    def __getnewargs__(self) -> tuple[RuleSet, ArbiterView]:
        """What unpickling passes to ``__new__`` (a read replica pickles the tables and their
        arbiters): the compiled build's ``__new__`` runs ``__init__``, which takes these;
        the state pickled then sets every attribute.  Plain Python's ``__new__`` ignores
        them."""
        return self.rules, self.view

    def reset(self) -> None:
        """A new game: forget everything but the claim counter."""
        self.claims.reset()
        self._touches: dict[Color, list[_Touch]] = {}
        self._placed: list[tuple[float, int]] = []
        self._violations: dict[int, tuple[Irregularity, dict[str, Any]]] = {}
        self._provisional: tuple[Color, int] | None = None
        self._illegal_count: dict[Color, int] = {}
        self._must_move: dict[Color, int] = {}
        self._restore_to: int | None = None
        self._flags: set[Color] = set()
        self._michigan: dict[str, Any] | None = None
        self._finished = False
        self._place_times: dict[int, float] = {}
        self._king_lifted: dict[int, float] = {}
        self._during: dict[Color, list[_Touch]] = {}
        self._move_touches: dict[int, list[_Touch]] = {}
        # the side whose completed move left pieces displaced (FIDE 7.4.1, US speed 8):
        # until it presses again, the opponent's press is the lever put back (or pressed
        # back to enforce the replacement), no press of the opponent's own
        self._displaced_by: Color | None = None

    @property
    def finished(self) -> bool:
        return self._finished

    def finish(self) -> list[Claim]:
        """The game ended: every open claim closes."""
        self._finished = True
        self._michigan = None
        return self.claims.close_all(self._last_time)

    def resume(self) -> None:
        """A game that ended on the board goes on (its last move was taken back where the
        rule set allows takebacks): the arbiter rules on it again."""
        self._finished = False

    _last_time: float = 0.0

    def open_claims(self) -> list[Claim]:
        return self.claims.open_claims()

    def open_count(self) -> int:
        """How many claims are open."""
        return self.claims.open_count()

    def obligations(self) -> dict[str, str]:
        """Squares whose piece a side must move (FIDE 4.3, 7.5.1)."""
        return {("white" if c else "black"): _name(sq) for c, sq in self._must_move.items()}

    @property
    def restoring(self) -> int | None:
        """The ply the board must be set back to, while a ruling waits for it."""
        return self._restore_to

    # -- helpers ---------------------------------------------------------------------------

    def _a(self, article: str) -> str:
        return self.rules.cite(article)

    def _mover(self) -> Color | None:
        game = self.view.game
        if game is None:
            return None
        sides = game.sides_to_act()
        return next(iter(sides)) if len(sides) == 1 else None

    def _win_or_draw(self, winner: Color, time: float, article: str, reason: str) -> Ruling:
        """``winner`` wins, unless ``winner`` cannot checkmate by any series of legal moves:
        then a draw (FIDE 6.9, 7.5.5; US speed 2c, 11)."""
        board = self.view.history()
        if board is not None and draws.cannot_mate(board, winner):
            return Ruling(
                time, RulingKind.RESULT, article, f"{reason}; the opponent cannot checkmate: draw",
                result="1/2-1/2", reason=f"{reason} (opponent cannot mate)",
            )  # fmt: skip
        result = "1-0" if winner else "0-1"
        return Ruling(
            time, RulingKind.RESULT, article, reason, side=winner, result=result, reason=reason
        )

    # -- lifts and places --------------------------------------------------------------------

    def on_lift(self, time: float, square: int, symbol: str) -> list[ArbiterEvent]:
        self._last_time = time
        game = self.view.game
        out: list[ArbiterEvent] = []
        if game is None or self._finished:
            return out
        current = game.squares[square] or symbol
        if current == "K" or current == "k":
            self._king_lifted[square] = time
        claims = self.claims
        any_open = claims.any_open()
        if any_open and any(
            e.context.get("king") == square for e in claims.of_kind(ClaimKind.ILLEGAL_MOVE)
        ):
            self._king_lifted[square] = time  # the king the illegal move left there (US 11)
        if not (any_open or self.rules.touch_move):
            return out  # a touch is noted for touch-move only, and a claim lapses by it
        colour = _colour(current)
        if colour is None:
            return out
        sides = game.sides_to_act()  # self._mover(), the game read once
        if len(sides) != 1:
            return out
        mover = next(iter(sides))
        if self._provisional is not None and self._provisional[0] == colour:
            # the last mover's own piece: part of its move (an amendment), or knocked over
            self._during.setdefault(colour, []).append(_Touch(time, square, current, True))
            return out
        # FIDE 4.8: touching a piece ends the right to claim a touch-move violation
        if any_open:
            for claim, _ in claims.lapse(time, mover, Lapse.TOUCH):
                out.append(claim)
        self._touches.setdefault(mover, []).append(_Touch(time, square, current, colour == mover))
        return out

    def on_place(self, time: float, square: int, symbol: str) -> list[ArbiterEvent]:
        self._last_time = time
        self._placed.append((time, square))
        self._place_times[square] = time
        for touches in self._touches.values():
            for touch in touches:
                if touch.square == square and touch.back is None:
                    touch.back = time
        out: list[ArbiterEvent] = []
        lifted = self._king_lifted.pop(square, None)
        if lifted is not None:
            out += self._king_taken(time, square, symbol)
        return out

    def _king_taken(self, time: float, square: int, symbol: str) -> list[ArbiterEvent]:
        """US speed 11: taking the king left in check is a claim of the illegal move."""
        for entry in self.claims.of_kind(ClaimKind.ILLEGAL_MOVE):
            if entry.context.get("king") != square:
                continue
            claimant = entry.claim.claimant
            colour = _colour(symbol)
            if colour is not None and colour != claimant:
                continue
            if colour is None and _occupied(self.view.physical()) >= entry.context["occupied"]:
                continue  # presence only: the king set back, nothing captured
            return self.decide(time, entry.claim.id, Decision.ACCEPT, gesture="king taken")
        return []

    # -- actions -----------------------------------------------------------------------------

    def before_action(
        self, time: float, ply: int, action: LegalAction,
        legal: Callable[[], Sequence[LegalAction]], before: SquareMap,
    ) -> None:  # fmt: skip
        """An action of ``action.side`` is about to be played as ply ``ply`` from the
        position ``before`` where ``legal()`` gives the legal actions (asked for only when
        a touched piece or an obligation needs them): check touch-move (FIDE 4.3, 4.4,
        4.5; US speed 2a) and the obligations of earlier rulings."""
        side = action.side
        if self._restore_to is not None and ply - 1 <= self._restore_to:
            self._restore_to = None  # the position was reinstated; this is the new move
        if not self.rules.touch_move:  # the touches are of no use (and none was noted)
            self._touches.pop(side, None)
            self._during.pop(side, None)
            self._placed = []
            self._must_move.pop(side, None)
            return
        touches = [
            *self._move_touches.get(ply, []),
            *self._touches.pop(side, []),
            *self._during.pop(side, []),
        ]
        self._move_touches[ply] = touches
        self._placed = []
        if not self.rules.touch_move or self._finished:
            self._must_move.pop(side, None)
            return
        touches = [t for t in touches if t.back is None or t.back - t.time > FLICKER]
        found = _touch_violation(touches, action, legal, before, self._must_move.pop(side, None))
        if found is None:
            self._violations.pop(ply, None)
            return
        kind, article, message, square = found
        irregularity = Irregularity(
            time, kind, side, self._a(article), message, (_name(square),),
            {"ply": ply, "uci": action.uci},
        )  # fmt: skip
        self._violations[ply] = (irregularity, {"square": square, "ply": ply})

    def on_action(self, time: float, ply: int, side: Color, final: bool) -> list[ArbiterEvent]:
        """Ply ``ply`` of ``side`` was made (provisional) or completed (``final``)."""
        self._last_time = time
        out: list[ArbiterEvent] = []
        if not final:
            self._provisional = (side, ply)
            return out
        if self._provisional is not None and self._provisional[1] == ply:
            self._provisional = None
        if self._restore_to is not None and ply > self._restore_to:
            return out
        violation = self._violations.pop(ply, None)
        if violation is not None and not self._finished:
            irregularity, context = violation
            out.append(irregularity)
            out.append(
                self.claims.offer(
                    time, ClaimKind(irregularity.kind), not side, side, irregularity.article,
                    f"{irregularity.message}: the opponent may claim it",
                    lapses_on=Lapse.TOUCH, context=context,
                    detail={"ply": ply, "square": irregularity.squares[0]},
                )
            )  # fmt: skip
        if self._michigan is not None:  # (US speed 13 only)
            out += self._michigan_step(time)
        return out

    def on_amend(
        self, time: float, ply: int, side: Color, old_uci: str, new_uci: str
    ) -> list[ArbiterEvent]:
        """A provisional action turned into another: FIDE 4.7, a piece released on a square
        stays there (a piece that stood there for :data:`RELEASE_TIME`)."""
        self._last_time = time
        if not self.rules.released_piece:
            return []
        old_squares, new_squares = _move_squares(old_uci), _move_squares(new_uci)
        if old_squares is None or new_squares is None:
            return []  # a variant's action (a drop, a swap, a gift): no from- and to-square
        (old_from, old_to), (new_from, new_to) = old_squares, new_squares
        if old_from != new_from or old_to == new_to:
            return []
        placed = self._place_times.get(old_to)
        if placed is None or time - placed < RELEASE_TIME:
            return []
        irregularity = Irregularity(
            time, IrregularityKind.RELEASED_PIECE, side, self._a("4.7"),
            f"the piece was released on {_name(old_to)} and then moved on to {_name(new_to)}",
            (_name(old_to),), {"ply": ply, "uci": new_uci, "released_on": _name(old_to)},
        )  # fmt: skip
        self._violations[ply] = (irregularity, {"square": old_to, "ply": ply})
        return []

    def on_takeback(self, time: float, ply: int, finals: Sequence[bool]) -> list[ArbiterEvent]:
        """Actions were taken back to ``ply``.  Completed actions stand under every rule set
        but ``casual``; a takeback a ruling asked for is expected."""
        self._last_time = time
        self._provisional = None
        for stale in [p for p in self._violations if p > ply]:
            del self._violations[stale]
        if self._restore_to is not None:
            if ply <= self._restore_to:
                self._restore_to = None
            return []
        if self.rules.takebacks or not any(finals) or self._finished:
            return []
        count = sum(finals)
        return [
            Irregularity(
                time, IrregularityKind.TAKEBACK, None, self._a("4.7"),
                f"{count} completed move(s) taken back on the board: they stand; set them up again",
                (), {"ply": ply},
            )
        ]  # fmt: skip

    # -- the clock -------------------------------------------------------------------------

    def on_press(
        self,
        time: float,
        presser: Color,
        completed: bool,
        sides: frozenset[Color] | None = None,
    ) -> list[ArbiterEvent]:
        """``presser`` pressed the clock; ``completed``: the press completed an action of
        theirs (``sides``: the game's sides to act now, if the caller has them read).
        FIDE 6.2, 7.4.1, 7.5.1-7.5.5; US speed 8, 11."""
        self._last_time = time
        out: list[ArbiterEvent] = []
        game = self.view.game
        if game is None or self._finished:
            return out
        displaced_by = self._displaced_by
        if displaced_by is not None and not completed:
            if presser != displaced_by:
                # FIDE 7.4.1: the lever put back after the clock was set running for the
                # offender again; US speed 8: the opponent presses back to enforce it
                return out
            self._displaced_by = None
            return out + self._still_displaced(time, presser, _expected(game))
        self._displaced_by = None
        if self.claims.any_open():
            for claim, entry in self.claims.lapse(time, presser, Lapse.PRESS):
                out.append(claim)
                out += self._illegal_unclaimed(time, entry.context)
        if self._restore_to is not None:
            return out
        if completed:
            if sides is None:
                sides = game.sides_to_act()
            if len(sides) == 1 and presser in sides:  # self._mover() == presser
                return out + self._part_incomplete(time, presser, game)
            if self.rules.displaced_pieces is _NO_DISPLACED:
                return out  # (_still_displaced: nothing to look for)
            return out + self._still_displaced(time, presser, _expected(game))
        mover = self._mover()
        if mover is None or mover != presser:
            return out
        dropped = self._forbidden_drop(game, presser)
        if dropped is not None:  # the drop broke the rule, whatever came after it
            return out + self._illegal(time, presser, *dropped)
        reading = read_difference(
            _expected(game), self.view.physical(), presser,
            presence_only=self.view.presence_only, placed=[sq for _, sq in self._placed],
        )  # fmt: skip
        if reading.kind is ReadingKind.NONE:
            return out + self._press_without_move(time, presser)
        if reading.kind is ReadingKind.MOVE:
            legal = _legal_for(reading, game.legal_actions())
            if legal is not None and reading.extra:
                return out + self._displaced(time, presser, reading)
            if legal is None:
                promoted = _unpromoted(reading, game.legal_actions(), presser)
                if promoted is not None:
                    return out + self._unpromoted(time, presser, reading, promoted)
                return out + self._illegal(time, presser, reading)
        return out + self._displaced(time, presser, reading)

    def _part_incomplete(self, time: float, side: Color, game: VariantGame) -> list[ArbiterEvent]:
        """A press completed an action but the side's part goes on (20-chess: a turn of two
        moves, a drop and a move): the clock goes back to the side, which makes the rest of
        its part and presses again.  Never happens where a part is one action."""
        article = game.variant.pgn_name  # the variant's own turn rules
        return [
            Irregularity(
                time, IrregularityKind.PART_INCOMPLETE, side, article,
                f"the clock was pressed before the part was complete{_hint(game)}: "
                "the clock goes back", (),
            ),
            Ruling(time, RulingKind.CLOCK, article, "the clock runs again for the player to finish "
                   "the part", side=side, run=side),
        ]  # fmt: skip

    def _still_displaced(
        self, time: float, presser: Color, position: SquareMap
    ) -> list[ArbiterEvent]:
        """The press completed ``presser``'s move (or came after a ruling that pieces be
        restored): pieces the board shows away from the game's ``position`` are displaced
        (FIDE 7.4.1, US speed 8), and the presser's next press is awaited."""
        if self.rules.displaced_pieces is DisplacedPolicy.NONE:
            return []
        physical = self.view.physical()
        presence = self.view.presence_only
        if not presence and physical == position:
            return []  # the board shows the game (most presses)
        extra = tuple(
            sq for sq, symbol in enumerate(position)
            if ((OCCUPIED if presence and symbol else symbol) != physical[sq])
        )  # fmt: skip
        if not extra:
            return []
        self._displaced_by = presser
        return self._displaced(
            time, presser, Reading(ReadingKind.UNKNOWN, extra=extra, squares=extra)
        )

    def _press_without_move(self, time: float, side: Color) -> list[ArbiterEvent]:
        if self.rules.press_without_move_is_illegal:
            irregularity = Irregularity(
                time, IrregularityKind.PRESS_WITHOUT_MOVE, side, self._a("7.5.3"),
                "the clock was pressed without a move: penalised as an illegal move",
            )  # fmt: skip
            return [irregularity, *self._penalise(time, side, "7.5.3", restore=False)]
        return [
            Irregularity(
                time,
                IrregularityKind.PRESS_WITHOUT_MOVE,
                side,
                self._a("6.2"),
                "the clock was pressed without a move: the clock goes back",
            ),
            Ruling(
                time,
                RulingKind.CLOCK,
                self._a("6.2"),
                "the clock runs again for the player to move",
                side=side,
                run=side,
            ),
        ]

    def _displaced(self, time: float, side: Color, reading: Reading) -> list[ArbiterEvent]:
        squares = tuple(_name(sq) for sq in (reading.extra or reading.squares))
        if self.rules.displaced_pieces is DisplacedPolicy.RESTORE:
            return [
                Irregularity(
                    time,
                    IrregularityKind.DISPLACED_PIECES,
                    side,
                    self._a("7.4.1"),
                    "pieces displaced: the player restores them on his own time",
                    squares,
                ),
                Ruling(
                    time,
                    RulingKind.CLOCK,
                    self._a("7.4.1"),
                    "the clock runs again for the player",
                    side=side,
                    run=side,
                ),
            ]
        if self.rules.displaced_pieces is DisplacedPolicy.OPPONENT_PRESSES:
            return [
                Irregularity(
                    time, IrregularityKind.DISPLACED_PIECES, side, self._a("8"),
                    "a knocked-over piece must be replaced before pressing the clock; the "
                    "opponent may press the clock back to enforce it", squares,
                )
            ]  # fmt: skip
        return [
            Irregularity(
                time, IrregularityKind.DISPLACED_PIECES, side, self._a("board"),
                f"the board does not show a legal move{_hint(self.view.game)}: set right "
                f"{' '.join(squares) or 'the board'}", squares,
            )
        ]  # fmt: skip

    def _forbidden_drop(self, game: VariantGame, side: Color) -> tuple[Reading, str] | None:
        """A piece of ``side``'s hand the board shows set down where the rule of the moment
        forbids it (20-chess: a pawn on the last row, a checking drop, another piece than
        the one picked), as a reading of its square and the words naming the action: the
        drop is ruled on, not a legal action made after it in the same part.  Only a
        piece-identity board tells which piece was set down."""
        if self.view.presence_only or not game.variant.drops_from_hand:
            return None
        expected = _expected(game)
        physical = self.view.physical()
        own_now = sum(1 for symbol in physical if _colour(symbol) == side)
        if own_now <= sum(1 for symbol in expected if _colour(symbol) == side):
            return None  # no piece came from the hand (a move, a promotion, a capture)
        diff = [sq for sq in range(64) if expected[sq] != physical[sq]]
        for square in diff:
            symbol = physical[square]
            if expected[square] != EMPTY or _colour(symbol) != side:
                continue
            surplus = sum(1 for sq in diff if physical[sq] == symbol) - sum(
                1 for sq in diff if expected[sq] == symbol
            )
            if surplus <= 0:  # as many of its kind left a square: a piece moved there
                continue
            why = game.forbidden_drop(symbol, square)
            if why is not None:
                reading = Reading(ReadingKind.UNKNOWN, to_square=square, piece=symbol,
                                  extra=(square,), squares=(square,))  # fmt: skip
                return reading, f"drop {symbol.upper()}@{_name(square)} ({why})"
        return None

    def _illegal(
        self, time: float, side: Color, reading: Reading, what: str | None = None
    ) -> list[ArbiterEvent]:
        """An illegal action completed by the clock press: ``reading`` a move, or ``what``
        names another action (a drop) on the squares of ``reading``."""
        squares: tuple[str, ...]
        if what is None:
            squares = (_name(reading.from_square), _name(reading.to_square))
            detail = {"uci": reading.uci, "move": reading.describe()}
            action = f"move {reading.describe()}"
            shown = f"move ({reading.describe()})"
        else:
            squares = tuple(_name(sq) for sq in reading.squares)
            detail = {"uci": None, "move": what}
            action = shown = what
        policy = self.rules.illegal_move
        if policy is IllegalMovePolicy.PENALTY:
            irregularity = Irregularity(
                time, IrregularityKind.ILLEGAL_MOVE, side, self._a("7.5.1"),
                f"illegal {action} completed by the clock press"
                f"{_hint(self.view.game)}", squares, detail,
            )  # fmt: skip
            out: list[ArbiterEvent] = [irregularity]
            out += self._penalise(time, side, "7.5.1", restore=True)
            if not self._finished and reading.from_square is not None:
                self._must_move[side] = reading.from_square
                out.append(
                    Ruling(
                        time, RulingKind.MUST_MOVE, self._a("7.5.1"),
                        f"the replacing move must be made with the piece from "
                        f"{_name(reading.from_square)} if it can move (4.3)",
                        side=side, square=_name(reading.from_square),
                    )
                )  # fmt: skip
            return out
        if policy is IllegalMovePolicy.CLAIM:
            irregularity = Irregularity(
                time, IrregularityKind.ILLEGAL_MOVE, side, self._a("11"),
                f"illegal {action} completed by the clock press", squares, detail,
            )  # fmt: skip
            king = _king_after(self.view.game.squares if self.view.game else (), reading, side)
            claim = self.claims.offer(
                time, ClaimKind.ILLEGAL_MOVE, not side, side, self._a("11"),
                "the opponent may claim the win (a draw when lacking mating material), or take "
                "the king left in check, until making a move",
                lapses_on=Lapse.PRESS,
                context={"reading": reading, "ply": self.view.game.ply if self.view.game else 0,
                         "king": king, "offender": side,
                         "occupied": _occupied(self.view.physical())},
                detail={**detail, "king": _name(king) if king is not None else None},
            )  # fmt: skip
            return [irregularity, claim]
        return [
            Irregularity(
                time, IrregularityKind.ILLEGAL_MOVE, side, self._a("board"),
                f"the board shows an illegal {shown}{_hint(self.view.game)}: "
                "the clock goes back", squares, detail,
            ),
            Ruling(time, RulingKind.CLOCK, self._a("board"), "the clock runs again for the player",
                   side=side, run=side),
        ]  # fmt: skip

    def _unpromoted(
        self, time: float, side: Color, reading: Reading, promoted: LegalAction
    ) -> list[ArbiterEvent]:
        """FIDE 7.5.2: a pawn left on the last rank at the press is an illegal move; the pawn
        is replaced by a queen.  Elsewhere: the pawn must be replaced."""
        squares = (_name(reading.to_square),)
        article = "7.5.2" if self.rules.illegal_move is IllegalMovePolicy.PENALTY else "11"
        irregularity = Irregularity(
            time, IrregularityKind.PAWN_NOT_PROMOTED, side, self._a(article),
            f"pawn on {_name(reading.to_square)} left unpromoted at the clock press", squares,
            {"uci": promoted.uci},
        )  # fmt: skip
        if self.rules.illegal_move is IllegalMovePolicy.CLAIM:
            return self._illegal(time, side, reading)
        out: list[ArbiterEvent] = [irregularity]
        if self.rules.illegal_move is IllegalMovePolicy.PENALTY:
            out += self._penalise(time, side, "7.5.2", restore=False, run_offender=False)
        if not self._finished:
            out.append(
                Ruling(
                    time, RulingKind.PROMOTE, self._a(article),
                    f"the pawn on {_name(reading.to_square)} is replaced by a queen",
                    side=side, square=_name(reading.to_square), uci=promoted.uci,
                )
            )  # fmt: skip
        return out

    def _penalise(
        self, time: float, side: Color, article: str, *, restore: bool, run_offender: bool = True
    ) -> list[ArbiterEvent]:
        """FIDE 7.5.5 (A.4.2, B.3): the first completed illegal move gives the opponent extra
        time; the ``illegal_moves_to_lose``-th loses (a draw if the opponent cannot mate)."""
        count = self._illegal_count.get(side, 0) + 1
        self._illegal_count[side] = count
        out: list[ArbiterEvent] = []
        limit = self.rules.illegal_moves_to_lose
        if limit is not None and count >= limit:
            out.append(
                self._win_or_draw(
                    not side, time, self._a("7.5.5"), f"illegal move number {count}: game lost"
                )
            )
            return out
        game = self.view.game
        if restore and game is not None:
            out.append(
                Ruling(
                    time, RulingKind.RESTORE, self._a(article),
                    "the position before the irregularity is reinstated", side=side,
                    restore_ply=game.ply,
                )
            )  # fmt: skip
        if self.rules.illegal_extra_time:
            seconds = self.rules.illegal_extra_time
            out.append(
                Ruling(
                    time, RulingKind.PENALTY_TIME, self._a("7.5.5"),
                    f"{int(seconds)} seconds added to the opponent's clock", side=side,
                    add_time={not side: seconds},
                )
            )  # fmt: skip
        if run_offender:
            out.append(
                Ruling(
                    time,
                    RulingKind.CLOCK,
                    self._a(article),
                    "the clock runs again for the offender",
                    side=side,
                    run=side,
                )
            )
        return out

    def _illegal_unclaimed(self, time: float, context: dict[str, Any]) -> list[ArbiterEvent]:
        """US speed 11: the opponent replied without claiming.  Play continues if the position
        after the illegal move is legal, else it backs up to the infraction."""
        reading: Reading = context["reading"]
        board = self.view.history()
        offender: Color = context["offender"]
        if board is None or reading.from_square is None or reading.to_square is None:
            return []
        after = board.copy(stack=False)
        piece = after.piece_at(reading.from_square)
        promotion = None
        if (
            piece is not None
            and piece.piece_type == chess.PAWN
            and reading.to_square // 8 in (0, 7)
        ):
            promotion = chess.QUEEN
        after.push(chess.Move(reading.from_square, reading.to_square, promotion))
        legal = after.is_valid()  # the offender's king not left in check, pieces possible
        if legal:
            return [
                Ruling(
                    time, RulingKind.STAND, self._a("11"),
                    f"no claim before the reply: the illegal move {reading.describe()} stands",
                    side=offender, uci=after.peek().uci(), fen=after.fen(),
                )
            ]  # fmt: skip
        return [
            Ruling(
                time, RulingKind.RESTORE, self._a("11"),
                "no claim, but the position is illegal: play backs up to the infraction",
                side=offender, restore_ply=context["ply"],
            ),
            Ruling(time, RulingKind.CLOCK, self._a("11"), "the clock runs again for the offender",
                   side=offender, run=offender),
        ]  # fmt: skip

    def on_flag(self, time: float, side: Color) -> list[ArbiterEvent]:
        """``side``'s time ran out.  FIDE 6.9 (and 5.1.1, 5.2.1: mate and stalemate made
        before stand); US speed 2b, 2c, 2d, 12; a variant's own time-out rule
        (:attr:`Variant.time_out`, Chess T20) under every rule set."""
        self._last_time = time
        game = self.view.game
        if game is None or self._finished or side in self._flags:
            return []
        self._flags.add(side)
        end = game.outcome()
        if end is not None and end.reason in ("checkmate", "stalemate"):
            # made before the flag fell: it takes precedence.  A mating (stalemating) move
            # the press completed has ended the game already; one on the board but not yet
            # pressed ends it now (FIDE 5.1.1, 5.2.1: "immediately ends the game")
            article = self._a(
                self.rules.checkmate_before_flag_article
                if end.reason == "checkmate"
                else self.rules.stalemate_before_flag_article
            )
            return [
                Ruling(time, RulingKind.RESULT, article, f"{end.reason} made before the flag fell: "
                       "it stands", side=end.winner, result=end.result, reason=end.reason)
            ]  # fmt: skip
        out: list[ArbiterEvent] = [
            Irregularity(
                time, IrregularityKind.FLAG, side, self._a(self.rules.flag_article), "flag fall"
            )
        ]  # fmt: skip
        own_rule = game.variant.time_out
        if own_rule is not None:  # the variant's time-out rule, under every rule set
            ended = game.flag(side)
            out.append(
                Ruling(
                    time,
                    RulingKind.RESULT,
                    own_rule.article,
                    own_rule.message,
                    side=ended.winner,
                    result=ended.result,
                    reason="time-out",
                )
            )
            return out
        if self.rules.flag is FlagPolicy.CLAIM:
            if len(self._flags) == 2:
                for entry in self.claims.of_kind(ClaimKind.FLAG):
                    out.append(self.claims.close(entry.claim.id, time, ClaimStatus.LAPSED))
                out.append(
                    Ruling(
                        time,
                        RulingKind.RESULT,
                        self._a("12"),
                        "both flags down before a claim: draw",
                        result="1/2-1/2",
                        reason="both flags fell",
                    )
                )
                return out
            out.append(
                self.claims.offer(
                    time, ClaimKind.FLAG, not side, side, self._a("2d"),
                    "the opponent's flag fell: only the opponent may claim it",
                )
            )  # fmt: skip
            return out
        article = self._a(self.rules.flag_article)
        out.append(self._win_or_draw(not side, time, article, "time-out"))
        return out

    # -- claims ----------------------------------------------------------------------------

    def claim(
        self, time: float, side: Color, kind: str, uci: str | None = None
    ) -> list[ArbiterEvent]:
        """A player's own claim: ``threefold``, ``fifty-moves`` (FIDE 9.2, 9.3),
        ``michigan`` (US speed 13), ``insufficient-losing-chances`` (US speed 10), ``flag``."""
        self._last_time = time
        if self._finished:
            raise ArbiterError("the game is over: no claims")
        if kind == ClaimKind.FLAG:
            entries = [e for e in self.claims.of_kind(ClaimKind.FLAG) if e.claim.claimant == side]
            if not entries:
                raise ArbiterError("no flag has fallen that this player may claim")
            return self.decide(time, entries[0].claim.id, Decision.ACCEPT)
        if kind not in self.rules.draw_claims:
            known = ", ".join(sorted(self.rules.draw_claims)) or "none"
            raise ArbiterError(f"{self.rules.id} has no {kind!r} claim (claims: {known})")
        board = self.view.history()
        if board is None:
            raise ArbiterError("draw claims need a chess game in progress")
        move = None
        if uci is not None:
            try:
                move = chess.Move.from_uci(uci)
            except ValueError:
                raise ArbiterError(f"not a move: {uci!r}") from None
            if move not in board.legal_moves:
                raise ArbiterError(f"{uci} is not legal in the position")
        if kind in (ClaimKind.THREEFOLD, ClaimKind.FIFTY_MOVES):
            return self._draw_claim(time, side, kind, board, move)
        if kind == ClaimKind.MICHIGAN:
            claim = self.claims.offer(
                time, ClaimKind.MICHIGAN, side, not side, self._a("13"),
                "counting started: a draw offer the opponent may accept during the count",
                context={"plies": 0},
            )  # fmt: skip
            self._michigan = {"claim": claim.id, "plies": 0}
            return [claim]
        ending = draws.queen_or_rook_ending(board)
        if ending is None:
            return [
                Ruling(time, RulingKind.REJECT, self._a("10"),
                       "only a queen v queen or rook v rook ending may be claimed", side=side)
            ]  # fmt: skip
        return [
            self.claims.offer(
                time, ClaimKind.INSUFFICIENT_LOSING_CHANCES, side, not side, self._a("10"),
                f"draw claimed in a {ending} ending: the arbiter rules (the opponent may "
                "show a forced win)", status=ClaimStatus.MADE,
            )
        ]  # fmt: skip

    def _draw_claim(
        self, time: float, side: Color, kind: str, board: chess.Board, move: chess.Move | None
    ) -> list[ArbiterEvent]:
        threefold = kind == ClaimKind.THREEFOLD
        article = "9.2" if threefold else "9.3"
        check = draws.can_claim_threefold if threefold else draws.can_claim_fifty
        article = self._a(article)
        if check(board, move):
            reason = "threefold repetition" if threefold else "fifty moves"
            return [
                Ruling(time, RulingKind.RESULT, article, f"correct claim: {reason}", side=side,
                       result="1/2-1/2", reason=reason)
            ]  # fmt: skip
        out: list[ArbiterEvent] = [
            Ruling(time, RulingKind.REJECT, article, "incorrect claim: the game goes on", side=side)
        ]
        if self.rules.wrong_claim_extra_time:
            seconds = self.rules.wrong_claim_extra_time
            out.append(
                Ruling(time, RulingKind.PENALTY_TIME, self._a("9.5.3"),
                       f"{int(seconds)} seconds added to the opponent's clock", side=side,
                       add_time={not side: seconds})
            )  # fmt: skip
        return out

    def _michigan_step(self, time: float) -> list[ArbiterEvent]:
        """US speed 13: count move pairs without a capture or pawn move; 20 (40 in the listed
        endings) draws."""
        if self._michigan is None:
            return []
        board = self.view.history()
        if board is None or not board.move_stack:
            return []
        last = board.pop()
        reset = draws.resets_michigan(board, last)
        board.push(last)
        self._michigan["plies"] = 0 if reset else self._michigan["plies"] + 1
        pairs = self._michigan["plies"] // 2
        if pairs >= draws.michigan_limit(board):
            claim = self.claims.close(self._michigan["claim"], time, ClaimStatus.ACCEPTED)
            self._michigan = None
            return [
                claim,
                Ruling(
                    time,
                    RulingKind.RESULT,
                    self._a("13b"),
                    f"Michigan count reached {pairs}: draw",
                    result="1/2-1/2",
                    reason="Michigan twenty-move rule",
                ),
            ]
        return []

    def decide(
        self, time: float, claim_id: str, decision: str, *, gesture: str | None = None
    ) -> list[ArbiterEvent]:
        """A decision on claim ``claim_id``: ``accept`` (the claimant claims / the arbiter
        upholds it) or ``reject`` (the claimant declines / the arbiter does not uphold it)."""
        self._last_time = time
        if decision not in (Decision.ACCEPT, Decision.REJECT):
            raise ArbiterError(f"decision must be accept or reject, got {decision!r}")
        try:
            entry = self.claims.get(claim_id)
        except ClaimError as exc:
            raise ArbiterError(str(exc)) from None
        claim = entry.claim
        if decision == Decision.REJECT:
            out: list[ArbiterEvent] = [self.claims.close(claim_id, time, ClaimStatus.REJECTED)]
            if claim.kind is ClaimKind.MICHIGAN:
                self._michigan = None
            return out
        out = [self.claims.close(claim_id, time, ClaimStatus.ACCEPTED)]
        how = f" ({gesture})" if gesture else ""
        kind = claim.kind
        claimant = claim.claimant
        offender = claim.against
        assert claimant is not None
        assert offender is not None
        if kind in (ClaimKind.TOUCH_MOVE, ClaimKind.CASTLING_AFTER_ROOK, ClaimKind.RELEASED_PIECE):
            ply = int(entry.context["ply"])
            square = int(entry.context["square"])
            self._restore_to = ply - 1
            self._must_move[offender] = square
            out += [
                Ruling(
                    time,
                    RulingKind.RESTORE,
                    claim.article,
                    "the move is taken back",
                    side=offender,
                    claim=claim_id,
                    restore_ply=ply - 1,
                ),
                Ruling(
                    time,
                    RulingKind.MUST_MOVE,
                    claim.article,
                    f"the piece on {_name(square)} must be moved (or captured)",
                    side=offender,
                    claim=claim_id,
                    square=_name(square),
                ),
                Ruling(
                    time,
                    RulingKind.CLOCK,
                    claim.article,
                    "the clock runs again for the offender",
                    side=offender,
                    run=offender,
                ),
            ]
        elif kind is ClaimKind.ILLEGAL_MOVE:
            out.append(
                self._win_or_draw(claimant, time, claim.article, f"illegal move claimed{how}")
            )
        elif kind is ClaimKind.FLAG:
            out.append(self._win_or_draw(claimant, time, claim.article, "time-out claimed"))
        elif kind is ClaimKind.MICHIGAN:
            self._michigan = None
            out.append(
                Ruling(
                    time,
                    RulingKind.RESULT,
                    self._a("13c"),
                    "the counting player's draw offer accepted during the count",
                    claim=claim_id,
                    result="1/2-1/2",
                    reason="Michigan twenty-move rule: draw offer accepted",
                )
            )
        elif kind is ClaimKind.INSUFFICIENT_LOSING_CHANCES:
            out.append(
                Ruling(time, RulingKind.RESULT, claim.article, "draw claim upheld", claim=claim_id,
                       result="1/2-1/2", reason="insufficient losing chances")
            )  # fmt: skip
        return out


# -- pure checks ----------------------------------------------------------------------------


def _move_squares(uci: str) -> tuple[int, int] | None:
    """The from- and to-square of a move's text (``e2e4``, ``e7e8q``, the first move of a
    20-chess tandem ``g1f3&b1a3``); None for other actions (``N@e4``, ``b1<>c1``, ``-a2``)."""
    try:
        return chess.parse_square(uci[:2]), chess.parse_square(uci[2:4])
    except ValueError:
        return None


def _origins(action: LegalAction, before: SquareMap) -> set[int]:
    """Squares whose piece of the acting side the action moves (king and rook of castling)."""
    return {sq for sq, _ in action.changes if before[sq] and _colour(before[sq]) == action.side}


def _captures(action: LegalAction, before: SquareMap) -> set[int]:
    return {
        sq for sq, _ in action.changes
        if before[sq] and _colour(before[sq]) not in (None, action.side)
    }  # fmt: skip


def _is_castling(action: LegalAction, before: SquareMap) -> bool:
    kinds = {before[sq].lower() for sq in _origins(action, before)}
    return kinds == {"k", "r"}


def _touch_violation(
    touches: Sequence[_Touch],
    action: LegalAction,
    legal_actions: Callable[[], Sequence[LegalAction]],
    before: SquareMap,
    must_move: int | None,
) -> tuple[IrregularityKind, str, str, int] | None:
    """The touch-move rule the action breaks, as ``(kind, article, message, square)``.

    FIDE 4.3.1 own piece touched: move the first one that can move; 4.3.2 opponent's piece:
    capture the first that can be captured; 4.3.3 one of each: capture it with the own
    piece, or if illegal move/capture the first touched that can be; 4.4.2 rook then king:
    no castling on that side (4.3.1 governs); 4.5 nothing touched can move: any move.
    ``must_move``: a square an earlier ruling obliges the side to move (7.5.1 with 4.3)."""
    if must_move is None and not touches:
        return None
    legal = legal_actions()
    if must_move is not None:
        movable = [a for a in legal if must_move in _origins(a, before)]
        if movable and must_move not in _origins(action, before):
            return (
                IrregularityKind.TOUCH_MOVE,
                "4.3.1",
                f"the piece on {_name(must_move)} had to be moved",
                must_move,
            )
    if not touches:
        return None
    own = [t for t in touches if t.own]
    opp = [t for t in touches if not t.own]
    moved = _origins(action, before)
    taken = _captures(action, before)
    castling = _is_castling(action, before)
    if own and castling:
        first = own[0]
        rook_first = first.symbol.lower() == "r" and first.square in moved
        king_later = any(t.symbol.lower() == "k" for t in own[1:])
        if rook_first and king_later:
            return (IrregularityKind.CASTLING_AFTER_ROOK, "4.4.2",
                    "the rook was touched before the king: castling on that side is not allowed",
                    first.square)  # fmt: skip
    movable_own = [t for t in own if any(t.square in _origins(a, before) for a in legal)]
    capturable = [t for t in opp if any(t.square in _captures(a, before) for a in legal)]
    if own and opp:
        pairs = [
            a for a in legal
            if any(t.square in _origins(a, before) for t in own)
            and any(t.square in _captures(a, before) for t in opp)
        ]  # fmt: skip
        if pairs:
            if action in pairs:
                return None
            return (IrregularityKind.TOUCH_MOVE, "4.3.3",
                    "an own and an opponent's piece were touched: the own piece had to "
                    "capture the touched one", own[0].square)  # fmt: skip
        candidates = sorted([*movable_own, *capturable], key=lambda t: t.time)
        if not candidates:
            return None
        first = candidates[0]
        ok = first.square in (moved if first.own else taken)
        if ok:
            return None
        return (
            IrregularityKind.TOUCH_MOVE,
            "4.3.3",
            f"the first touched piece ({_name(first.square)}) "
            "that could be moved or captured had to be",
            first.square,
        )
    if movable_own:
        first = movable_own[0]
        if first.square in moved:
            return None
        return (
            IrregularityKind.TOUCH_MOVE,
            "4.3.1",
            f"the touched piece on {_name(first.square)} had to be moved",
            first.square,
        )
    if capturable:
        first = capturable[0]
        if first.square in taken:
            return None
        return (
            IrregularityKind.TOUCH_MOVE,
            "4.3.2",
            f"the touched piece on {_name(first.square)} had to be captured",
            first.square,
        )
    return None  # 4.5: no touched piece can be moved or captured


def _legal_for(reading: Reading, legal: Sequence[LegalAction]) -> LegalAction | None:
    """The legal action whose from/to squares the reading shows (castling by the king)."""
    for action in legal:
        move = action.action
        if not isinstance(move, Move):
            continue
        if move.from_square != reading.from_square:
            continue
        changed = dict(action.changes)
        if reading.to_square in changed and changed[reading.to_square] != EMPTY:
            if move.promotion is None or reading.piece.lower() == move.promotion:
                return action
            if reading.piece == OCCUPIED and move.promotion == "q":
                return action
    return None


def _unpromoted(reading: Reading, legal: Sequence[LegalAction], side: Color) -> LegalAction | None:
    """FIDE 7.5.2: a pawn stands on the last rank: the queen promotion it would have been."""
    if reading.piece.lower() != "p" or reading.to_square is None:
        return None
    if chess.square_rank(reading.to_square) != (7 if side else 0):
        return None
    for action in legal:
        move = action.action
        if (
            isinstance(move, Move)
            and move.from_square == reading.from_square
            and move.to_square == reading.to_square
            and move.promotion == "q"
        ):
            return action
    return None


def _occupied(squares: SquareMap) -> int:
    return sum(1 for symbol in squares if symbol)


def _king_after(position: SquareMap, reading: Reading, side: Color) -> int | None:
    """Where ``side``'s king stands after the illegal move ``reading`` (US speed 11: the
    king that may be taken).  Read from the game's position and the move, not from the
    sensors: a presence-only board cannot name the piece on a square."""
    if reading.moved.lower() == "k" and reading.to_square is not None:
        return reading.to_square
    king = "K" if side else "k"
    for square, symbol in enumerate(position):
        if symbol == king and square != reading.from_square:
            return square
    return None
