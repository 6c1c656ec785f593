"""Chess960 (Fischer random chess): the FIDE moves from any of the 960 start positions.

Castling follows the Chess960 rule: the king and rook end on the squares of classical
castling (g and f files h-side, c and d files a-side), whichever squares they came from, so
a castling may move only the king, only the rook, or swap the two.  In the notation the
king "takes" its own rook (``e1h1``), as python-chess and UCI engines write it.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import chess

from service.variants.base import StartPosition, Variant
from service.variants.standard import ChessGame, squares_of

CLASSICAL_NUMBER = 518
"""The Scharnagl number of the classical start."""


@cache
def chess960_starts() -> tuple[StartPosition, ...]:
    """All 960 start positions, by Scharnagl number (index = number)."""
    starts = []
    for number in range(960):
        board = chess.Board.from_chess960_pos(number)
        starts.append(
            StartPosition(
                "chess960",
                board.fen(),
                squares_of(board),
                number=number,
                classical=number == CLASSICAL_NUMBER,
            )
        )
    return tuple(starts)


class Chess960(Variant):
    """Chess960; the default start is the classical one (number 518)."""

    id = "chess960"
    name = "Chess960"
    pgn_name = "Chess960"
    plays_classical_start = True
    chess960 = True

    def start_positions(self) -> Sequence[StartPosition]:
        starts = chess960_starts()
        classical = CLASSICAL_NUMBER
        return (starts[classical], *starts[:classical], *starts[classical + 1 :])

    def start(self, number: int) -> StartPosition:
        """The start position with Scharnagl number ``number`` (0-959)."""
        if not 0 <= number < 960:
            raise ValueError(f"Chess960 start numbers run from 0 to 959, got {number}")
        return chess960_starts()[number]

    def new_game(self, start: StartPosition | None = None) -> ChessGame:
        return ChessGame(self, self._check_start(start), chess960=True)
