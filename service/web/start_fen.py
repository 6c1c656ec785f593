"""The FEN a game began from, for the table page's diff stream: :class:`StartFens`.

The stream adds it to every state it diffs (``start``), so it is asked for at every update of
a table a page follows; python-chess works it out from the board's move stack
(``board.root().fen()``: a copy of the board and the FEN, legal en passant included), tens of
microseconds each time for a value that changes only with a new game.  The start of a board
with moves is fixed while its first move stays on its stack (a board set to another position
loses its stack; a move pushed anew is a new object), so it is kept per table with the board
and that move it was read from.  A board without moves (a game waiting for its first move)
is its own start, and its position may change in place (set anew): its FEN is kept with what
it is written from (the piece masks, the side to move, the castling rights, the en passant
square and the move counters), read off the board at each ask for far less than writing it.
Pure: no I/O, no clock.
"""

from __future__ import annotations

import chess

__all__ = ["StartFens"]

_Position = tuple[int | bool | None, ...]


def _position(board: chess.Board) -> _Position | None:
    """What a plain python-chess board's FEN is written from (None: a board of a variant's
    class, whose FEN may show more)."""
    if type(board) is not chess.Board:
        return None
    white, black = board.occupied_co
    return (
        board.pawns,
        board.knights,
        board.bishops,
        board.rooks,
        board.queens,
        board.kings,
        white,
        black,
        board.promoted,
        board.turn,
        board.castling_rights,
        board.ep_square,
        board.halfmove_clock,
        board.fullmove_number,
        board.chess960,
    )


class StartFens:
    """The start FEN of each table's python-chess board, read once per first move."""

    def __init__(self) -> None:
        self._kept: dict[str, tuple[chess.Board, chess.Move, str]] = {}
        """Per table: the board, its first move and the start read from them (the board and
        the move are held, so their identity cannot pass to new objects meanwhile)."""
        self._unmoved: dict[str, tuple[chess.Board, _Position, str]] = {}
        """Per table whose board has no move: the board, what its FEN was written from and
        the FEN."""

    def start(self, table_id: str, board: chess.Board | None) -> str | None:
        """``board.root().fen()`` (None for no board)."""
        if board is None:
            self._kept.pop(table_id, None)
            self._unmoved.pop(table_id, None)
            return None
        stack = board.move_stack
        if not stack:  # the board is its own root: its position may change at any time
            self._kept.pop(table_id, None)
            return self._unmoved_fen(table_id, board)
        self._unmoved.pop(table_id, None)
        first = stack[0]
        kept = self._kept.get(table_id)
        if kept is not None and kept[0] is board and kept[1] is first:
            return kept[2]
        fen = board.root().fen()
        self._kept[table_id] = (board, first, fen)
        return fen

    def _unmoved_fen(self, table_id: str, board: chess.Board) -> str:
        """The FEN of a board without moves, written again only when its position changed."""
        position = _position(board)
        if position is None:
            self._unmoved.pop(table_id, None)
            return board.fen()
        kept = self._unmoved.get(table_id)
        if kept is not None and kept[0] is board and kept[1] == position:
            return kept[2]
        fen = board.fen()
        self._unmoved[table_id] = (board, position, fen)
        return fen
