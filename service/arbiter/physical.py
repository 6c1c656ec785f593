"""Reading the physical board as an action the recogniser cannot explain.

The recogniser explains the board with legal actions only; an illegal move, a pawn left on
the last rank or a knocked-over piece only shows as a mismatch.  :func:`read_difference`
compares the board (in the game's frame) with the game's position and reads the difference
as "one piece went from a to b", whatever the rules say about it, plus the squares that
still differ besides (displaced pieces).  Pure: no state, no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import chess

from service.variants.base import EMPTY, Color, SquareMap

OCCUPIED = "*"


class ReadingKind(StrEnum):
    """How the board differs from the game: not at all, by one piece's move, or otherwise."""

    NONE = "none"
    MOVE = "move"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class Reading:
    """What the board shows relative to the game: ``kind`` ``"none"`` (nothing differs),
    ``"move"`` (a piece went from ``from_square`` to ``to_square``; ``piece`` is what stands
    there now, ``moved`` what left the from-square; ``captured`` the opponent's squares it
    emptied or took; ``extra`` squares that still differ besides) or ``"unknown"`` (``extra``
    lists every differing square)."""

    kind: ReadingKind
    from_square: int | None = None
    to_square: int | None = None
    piece: str = EMPTY
    moved: str = EMPTY
    captured: tuple[int, ...] = ()
    extra: tuple[int, ...] = ()
    squares: tuple[int, ...] = ()

    @property
    def uci(self) -> str | None:
        if self.from_square is None or self.to_square is None:
            return None
        return chess.square_name(self.from_square) + chess.square_name(self.to_square)

    def describe(self) -> str:
        """``"Ke1-e3"`` for a move, else the differing squares."""
        if self.kind is ReadingKind.MOVE and self.uci is not None:
            letter = self.moved.upper() if self.moved not in (EMPTY, OCCUPIED) else ""
            letter = "" if letter == "P" else letter
            return f"{letter}{self.uci[:2]}-{self.uci[2:]}"
        return " ".join(chess.square_name(sq) for sq in self.squares) or "nothing"


def _own(symbol: str, side: Color) -> bool:
    return bool(symbol) and symbol not in (OCCUPIED, "?") and symbol.isupper() == side


def read_difference(
    expected: SquareMap,
    physical: Sequence[str],
    side: Color,
    *,
    presence_only: bool = False,
    placed: Sequence[int] = (),
) -> Reading:
    """Read the board ``physical`` against the game position ``expected`` as a move of
    ``side``.  ``presence_only``: the board reads ``"*"`` for any piece, so a capture leaves
    the target occupied; ``placed`` (squares set down since the turn began, in order) then
    tells where the piece went."""

    def view(symbol: str) -> str:
        return OCCUPIED if presence_only and symbol else symbol

    diff = [sq for sq in range(64) if view(expected[sq]) != physical[sq]]
    if not diff:
        return Reading(ReadingKind.NONE)
    emptied = [sq for sq in diff if physical[sq] == EMPTY and _own(expected[sq], side)]
    if presence_only:
        filled = [sq for sq in diff if physical[sq] != EMPTY]
        if not filled:
            filled = [
                sq
                for sq in reversed(placed)
                if physical[sq] != EMPTY and expected[sq] and not _own(expected[sq], side)
            ][:1]
    else:
        filled = [sq for sq in diff if _own(physical[sq], side)]
    pair = _pair(expected, physical, emptied, filled, side, presence_only)
    if pair is None:
        return Reading(ReadingKind.UNKNOWN, extra=tuple(diff), squares=tuple(diff))
    origin, target = pair
    used = {origin, target}
    king = expected[origin].lower() == "k"
    if king:  # a castling-shaped move: the rook's squares belong to it
        for rook_from in emptied:
            if expected[rook_from].lower() == "r":
                for rook_to in filled:
                    if rook_to not in used and (presence_only or physical[rook_to].lower() == "r"):
                        used |= {rook_from, rook_to}
                        break
                break
    captured = [sq for sq in diff if expected[sq] and not _own(expected[sq], side)]
    captured = [sq for sq in captured if physical[sq] == EMPTY or sq == target]
    used |= set(captured)
    extra = tuple(sq for sq in diff if sq not in used)
    piece = expected[origin] if presence_only else physical[target]
    return Reading(
        ReadingKind.MOVE,
        origin,
        target,
        piece,
        expected[origin],
        tuple(captured),
        extra,
        tuple(diff),
    )


def _pair(
    expected: SquareMap,
    physical: Sequence[str],
    emptied: list[int],
    filled: list[int],
    side: Color,
    presence_only: bool,
) -> tuple[int, int] | None:
    pairs = []
    for origin in emptied:
        for target in filled:
            if target == origin:
                continue
            moved = expected[origin]
            if presence_only:
                same = True
            else:
                now = physical[target]
                last_rank = chess.square_rank(target) == (7 if side else 0)
                same = now == moved or (moved.lower() == "p" and last_rank and _own(now, side))
            if same:
                pairs.append((origin, target))
    if not pairs:
        return None
    kings = [p for p in pairs if expected[p[0]].lower() == "k"]
    return kings[0] if kings and len(emptied) >= 2 else pairs[0]
