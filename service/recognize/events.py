"""What the recogniser reports: one frozen dataclass per kind of event.

Every event has ``time`` (the time of the board event or ``tick`` that caused it, on the
caller's clock), a ``type`` string and :meth:`to_json` giving a plain dict for one JSON line.
Squares are python-chess numbers in the *game's* frame (a1 = White's queen-side corner,
whichever way round the board stands); JSON gives them as names (``"e4"``).  Pieces are
symbols: FEN letters, ``"*"`` for a piece a presence-only board cannot identify, ``"="``,
``"W"``, ``"X"`` for the DGT draw, white-wins and black-wins pieces.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import chess

from dgt.protocol.slots import slot_setters
from service.variants.base import Color, ScoreEvent


def side_name(side: Color) -> str:
    return "white" if side else "black"


def _squares(squares: tuple[int, ...]) -> list[str]:
    return [chess.square_name(square) for square in squares]


def alternatives_json(alternatives: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    """The ``alternatives`` member of an event's JSON (none when there are none)."""
    if not alternatives:
        return {}
    return {"alternatives": [{"uci": uci, "san": san} for uci, san in alternatives]}


@dataclass(frozen=True, slots=True)
class _OnSquare:
    """A piece event on one square (``piece``: what stands or stood there, as far as known)."""

    time: float
    square: int
    piece: str

    def __init__(self, time: float, square: int, piece: str) -> None:
        # the slots set straight (dgt.protocol.slots): one per change; Lift and Place take
        # this one (init=False: the dataclass writes none for them)
        _ON_TIME(self, time)
        _ON_SQUARE(self, square)
        _ON_PIECE(self, piece)

    @property
    def type(self) -> str:  # each kind names its own (not a ClassVar: mypyc#1122)
        raise NotImplementedError

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "time": self.time,
            "square": chess.square_name(self.square),
            "piece": self.piece,
        }


@dataclass(frozen=True, slots=True, init=False)
class Lift(_OnSquare):
    """A piece left a square (``piece`` is what stood there, as far as is known)."""

    @property
    def type(self) -> str:  # not a ClassVar: mypyc makes it a field (mypyc#1122)
        return "lift"


@dataclass(frozen=True, slots=True, init=False)
class Place(_OnSquare):
    """A piece was set on a square."""

    @property
    def type(self) -> str:  # not a ClassVar: mypyc makes it a field (mypyc#1122)
        return "place"


@dataclass(frozen=True, slots=True)
class MoveEvent:
    """An action was recognised (``final`` False: provisional, it may still be amended or
    taken back) or completed (``final`` True: the same action again, now settled).

    ``ply`` counts actions from the game's start (the first action is ply 1); ``number`` is
    the move number it is written under; ``scores`` are the variant's score events;
    ``alternatives`` are ``(uci, san)`` of the other actions the board read the same (a
    presence-only board cannot tell which of two pieces a capture took when a neighbour
    was knocked over and set back): the likeliest is read, the others are named so that a
    screen can offer them and an arbiter correct the move."""

    time: float
    ply: int
    number: int
    side: Color
    uci: str
    san: str
    final: bool
    scores: tuple[ScoreEvent, ...] = ()
    alternatives: tuple[tuple[str, str], ...] = ()

    def __init__(
        self,
        time: float,
        ply: int,
        number: int,
        side: Color,
        uci: str,
        san: str,
        final: bool,
        scores: tuple[ScoreEvent, ...] = (),
        alternatives: tuple[tuple[str, str], ...] = (),
    ) -> None:
        _MV_TIME(self, time)  # the slots set straight (dgt.protocol.slots): one per action
        _MV_PLY(self, ply)
        _MV_NUMBER(self, number)
        _MV_SIDE(self, side)
        _MV_UCI(self, uci)
        _MV_SAN(self, san)
        _MV_FINAL(self, final)
        _MV_SCORES(self, scores)
        _MV_ALTERNATIVES(self, alternatives)

    @property
    def type(self) -> str:  # not a ClassVar: mypyc makes it a field (mypyc#1122)
        return "move"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "type": self.type,
            "time": self.time,
            "ply": self.ply,
            "number": self.number,
            "side": side_name(self.side),
            "uci": self.uci,
            "san": self.san,
            "final": self.final,
        }
        if self.scores:
            data["scores"] = [
                {"side": side_name(s.side), "points": s.points, "reason": s.reason}
                for s in self.scores
            ]
        data.update(alternatives_json(self.alternatives))
        return data


_ON_TIME, _ON_SQUARE, _ON_PIECE = slot_setters(_OnSquare)
(
    _MV_TIME, _MV_PLY, _MV_NUMBER, _MV_SIDE, _MV_UCI, _MV_SAN, _MV_FINAL, _MV_SCORES,
    _MV_ALTERNATIVES,
) = slot_setters(MoveEvent)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Amend:
    """The provisional action of ``ply`` turned out to be another one (rook h1-f1 followed by
    the king to g1 is castling; a slid piece went further).  Still provisional.
    ``alternatives`` as for :class:`MoveEvent` (a capture amended to another by the same
    piece names the replaced one)."""

    time: float
    ply: int
    number: int
    side: Color
    old_uci: str
    old_san: str
    uci: str
    san: str
    scores: tuple[ScoreEvent, ...] = ()
    alternatives: tuple[tuple[str, str], ...] = ()

    @property
    def type(self) -> str:  # not a ClassVar: mypyc makes it a field (mypyc#1122)
        return "amend"

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "time": self.time,
            "ply": self.ply,
            "number": self.number,
            "side": side_name(self.side),
            "old_uci": self.old_uci,
            "old_san": self.old_san,
            "uci": self.uci,
            "san": self.san,
            **alternatives_json(self.alternatives),
        }


@dataclass(frozen=True, slots=True)
class Takeback:
    """Actions were taken back: the board shows the position after ``ply`` actions again.
    ``moves`` lists the UCI of the undone actions, last first; ``final`` tells for each
    whether it had been completed."""

    time: float
    ply: int
    moves: tuple[str, ...]
    final: tuple[bool, ...]

    @property
    def type(self) -> str:  # not a ClassVar: mypyc makes it a field (mypyc#1122)
        return "takeback"

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "time": self.time,
            "ply": self.ply,
            "moves": list(self.moves),
            "final": list(self.final),
        }


@dataclass(frozen=True, slots=True)
class NewGame:
    """A known start position stands on the board: a new game begins.  ``rotated`` is True
    when the board stands the other way round (its a1 is the game's h8)."""

    time: float
    variant: str
    fen: str
    number: int | None
    rotated: bool

    @property
    def type(self) -> str:  # not a ClassVar: mypyc makes it a field (mypyc#1122)
        return "new_game"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "type": self.type,
            "time": self.time,
            "variant": self.variant,
            "fen": self.fen,
            "rotated": self.rotated,
        }
        if self.number is not None:
            data["number"] = self.number
        return data


@dataclass(frozen=True, slots=True)
class Mismatch:
    """The board shows a position no action explains; ``squares`` (game frame) and
    ``board_squares`` (the board's own frame, for its LEDs) are the squares that differ from
    the nearest explainable position.  Empty tuples: the board is explained again."""

    time: float
    squares: tuple[int, ...]
    board_squares: tuple[int, ...]

    @property
    def type(self) -> str:  # not a ClassVar: mypyc makes it a field (mypyc#1122)
        return "mismatch"

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "time": self.time,
            "squares": _squares(self.squares),
            "board_squares": _squares(self.board_squares),
        }


@dataclass(frozen=True, slots=True)
class Result:
    """The game ended: by a result gesture (``reason`` ``"kings"``, ``"draw piece"``,
    ``"white-wins piece"``, ``"black-wins piece"``) or by the variant's rules (``"checkmate"``,
    ``"twenty moves"``, ...).  Never a move."""

    time: float
    result: str
    reason: str

    @property
    def type(self) -> str:  # not a ClassVar: mypyc makes it a field (mypyc#1122)
        return "result"

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "time": self.time, "result": self.result, "reason": self.reason}


RecognizerEvent = Lift | Place | MoveEvent | Amend | Takeback | NewGame | Mismatch | Result
