"""The FEN a game began from, for the table page's diff stream: :class:`StartFens`.

The stream adds it to every state it diffs (``start``), so it is asked for at every update of
a table a page follows; python-chess works it out from the board's move stack
(``board.root().fen()``: a copy of the board and the FEN, legal en passant included), tens of
microseconds each time for a value that changes only with a new game.  The start of a board
with moves is fixed while its first move stays on its stack (a board set to another position
loses its stack; a move pushed anew is a new object), so it is kept per table with the board
and that move it was read from.  Pure: no I/O, no clock.
"""

from __future__ import annotations

import chess

__all__ = ["StartFens"]


class StartFens:
    """The start FEN of each table's python-chess board, read once per first move."""

    def __init__(self) -> None:
        self._kept: dict[str, tuple[chess.Board, chess.Move, str]] = {}
        """Per table: the board, its first move and the start read from them (the board and
        the move are held, so their identity cannot pass to new objects meanwhile)."""

    def start(self, table_id: str, board: chess.Board | None) -> str | None:
        """``board.root().fen()`` (None for no board)."""
        if board is None:
            self._kept.pop(table_id, None)
            return None
        stack = board.move_stack
        if not stack:  # the board is its own root: its position may change at any time
            self._kept.pop(table_id, None)
            return board.fen()
        first = stack[0]
        kept = self._kept.get(table_id)
        if kept is not None and kept[0] is board and kept[1] is first:
            return kept[2]
        fen = board.root().fen()
        self._kept[table_id] = (board, first, fen)
        return fen
