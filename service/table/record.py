"""The record of a table's game: one :class:`MoveEntry` a move, and the small pure helpers
that read an action's text (its legal action now, its squares, how people write a move no
rule allows)."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import chess

from service.recognize.events import alternatives_json
from service.variants.base import Color, LegalAction, ScoreEvent, SquareMap, VariantGame

__all__ = [
    "MEMO_LIMIT",
    "MoveEntry",
    "legal_action",
    "long_algebraic",
    "move_squares",
    "scores_json",
    "side_name",
]  # fmt: skip

MEMO_LIMIT = 8192
"""Entries a memo of the table holds before it starts again (a bound on its memory)."""

_SQUARE_NAMES = frozenset(chess.SQUARE_NAMES)
_SQUARE_OF = {name: square for square, name in enumerate(chess.SQUARE_NAMES)}
"""A square's index by its name (``chess.parse_square`` searches the list of names)."""


@dataclass(slots=True, init=False)
class MoveEntry:
    """One move of the record."""

    ply: int
    number: int
    side: Color
    uci: str
    san: str
    final: bool = False
    clock: float | None = None
    scores: tuple[dict[str, Any], ...] = ()
    illegal: bool = False
    notes: list[str] = field(default_factory=list)
    fen_after: str | None = None
    """For an illegal move that stood: the position after it."""
    article: str = ""
    alternatives: tuple[tuple[str, str], ...] = ()
    """``(uci, san)`` of the other moves the board read the same (see
    :class:`~service.recognize.events.MoveEvent`): an arbiter may correct the move to one."""
    _json: dict[str, Any] | None = field(default=None, init=False, repr=False, compare=False)
    """:meth:`to_json` as last built; the methods that change a field drop it.  Change the
    fields of a move in the record through them only: an assignment keeps it (no
    ``__setattr__`` hook: the compiled build's callers would set the field past it)."""

    def __init__(
        self,
        ply: int,
        number: int,
        side: Color,
        uci: str,
        san: str,
        final: bool = False,
        clock: float | None = None,
        scores: tuple[dict[str, Any], ...] = (),
        illegal: bool = False,
        notes: list[str] | None = None,
        fen_after: str | None = None,
        article: str = "",
        alternatives: tuple[tuple[str, str], ...] = (),
    ) -> None:
        self.ply = ply
        self.number = number
        self.side = side
        self.uci = uci
        self.san = san
        self.final = final
        self.clock = clock
        self.scores = scores
        self.illegal = illegal
        self.notes = [] if notes is None else notes
        self.fen_after = fen_after
        self.article = article
        self.alternatives = alternatives
        self._json = None

    def __getnewargs__(self) -> tuple[int, int, Color, str, str]:
        """What unpickling passes to ``__new__`` (a read replica pickles the record): the
        compiled build's ``__new__`` runs ``__init__``, which takes these; the state pickled
        then sets every field.  Plain Python's ``__new__`` ignores them."""
        return self.ply, self.number, self.side, self.uci, self.san

    def finish(self, clock: float | None = None) -> None:
        """The move is completed (``clock``: the time it shows, if given): ``final``
        (and ``clock``) set in one step."""
        self.final = True
        if clock is not None:
            self.clock = clock
        self._json = None

    def set_clock(self, clock: float | None) -> None:
        """The time the clock showed after the move."""
        self.clock = clock
        self._json = None

    def set_alternatives(self, alternatives: tuple[tuple[str, str], ...]) -> None:
        """The other moves the board read the same."""
        self.alternatives = alternatives
        self._json = None

    def rewrite(self, uci: str, san: str) -> None:
        """The same action written anew (a drop's kind corrected, and the moves after it)."""
        self.uci, self.san = uci, san
        self._json = None

    def amend(
        self,
        uci: str,
        san: str,
        alternatives: tuple[tuple[str, str], ...],
        scores: tuple[dict[str, Any], ...],
    ) -> None:
        """The move read again as ``uci`` (``san``) before it was completed."""
        self.uci, self.san = uci, san
        self.alternatives = alternatives
        self.scores = scores
        self._json = None

    def to_json(self) -> dict[str, Any]:
        """The move as the web and the log show it.  Built once per change of the entry and
        shared afterwards: treat it as read-only."""
        cached = self._json
        if cached is None:
            cached = self._build_json()
            self._json = cached
        return cached

    def _build_json(self) -> dict[str, Any]:
        return {
            "ply": self.ply,
            "number": self.number,
            "side": "white" if self.side else "black",
            "san": self.san,
            "uci": self.uci,
            "final": self.final,
            "clock_seconds": self.clock,
            **({"scores": list(self.scores)} if self.scores else {}),
            **({"illegal": True} if self.illegal else {}),
            **alternatives_json(self.alternatives),
        }


def side_name(color: Color | None) -> str | None:
    return None if color is None else ("white" if color else "black")


def scores_json(scores: list[ScoreEvent]) -> tuple[dict[str, Any], ...]:
    """The score events of an action as the record keeps them."""
    if not scores:
        return ()  # the variants without scores: every action
    return tuple(
        {"side": side_name(s.side), "points": s.points, "reason": s.reason} for s in scores
    )


def legal_action(game: VariantGame, uci: str) -> LegalAction | None:
    """The legal action written ``uci`` now, or None.  Looked for first among the actions
    that change a square the text names (a move changes its from-square or, a castling
    whose king stays, its to-square), which the variant generates for one square far
    faster than all of them; then among all."""
    for i in range(len(uci) - 1):
        square = _SQUARE_OF.get(uci[i : i + 2])
        if square is not None:
            for action in game.actions_changing(square):
                if action.uci == uci:
                    return action
    return next((la for la in game.legal_actions() if la.uci == uci), None)


@functools.lru_cache(maxsize=MEMO_LIMIT)  # every update of a table shows its last move
def move_squares(uci: str) -> tuple[str | None, str | None]:
    """The from- and to-square names of an action's text: ``e2e4`` (the first move of a
    tandem ``e2e4&g1f3``), a drop ``N@e4`` (no from-square); None where there is none."""
    names = [uci[i : i + 2] for i in range(len(uci) - 1) if uci[i : i + 2] in _SQUARE_NAMES]
    if "@" in uci[:2]:
        return None, names[0] if names else None
    if len(names) >= 2 and uci[:4] == names[0] + names[1]:
        return names[0], names[1]
    return (names[0] if names else None), None


def long_algebraic(squares: SquareMap, uci: str) -> str:
    """A move no rule allows, as people write it: ``Ng1-g3``, ``e7xd6``, ``e7-e8=Q``."""
    origin, target = chess.parse_square(uci[:2]), chess.parse_square(uci[2:4])
    symbol = squares[origin] or ""
    letter = "" if symbol.lower() in ("p", "", "*", "?") else symbol.upper()
    sign = "x" if squares[target] else "-"
    promotion = f"={uci[4].upper()}" if len(uci) > 4 else ""
    return f"{letter}{uci[:2]}{sign}{uci[2:4]}{promotion}"
