"""Draw rules and mating material, on python-chess boards with their full move history.

- FIDE 9.2 threefold repetition (claim), 9.3 fifty moves (claim), 9.6.1 fivefold repetition
  and 9.6.2 seventy-five moves (automatic), 5.2.2 dead position (automatic; recognised as
  python-chess's insufficient material: K v K, K+minor v K, K+B v K+B with bishops on one
  colour);
- FIDE 6.9 / 7.5.5 and US speed 2c / 11: whether a side can still mate by any series of
  legal moves;
- US speed 13, the Michigan twenty-move count (40 for K+Q v K+R, K+B+N v K, K+B+B v K and
  K+R v K), and US speed 10, queen v queen and rook v rook.
"""

from __future__ import annotations

import chess

from service.variants.base import Color

MICHIGAN_PAIRS = 20
MICHIGAN_LONG_PAIRS = 40


def can_claim_threefold(board: chess.Board, move: chess.Move | None = None) -> bool:
    """FIDE 9.2.1: the position stands (or, after ``move``, will stand) for the third time."""
    if move is None:
        return board.is_repetition(3)
    board.push(move)
    try:
        return board.is_repetition(3)
    finally:
        board.pop()


def can_claim_fifty(board: chess.Board, move: chess.Move | None = None) -> bool:
    """FIDE 9.3: the last fifty moves of each side (or with ``move``) had no pawn move and no
    capture."""
    if move is None:
        return board.halfmove_clock >= 100
    board.push(move)
    try:
        return board.halfmove_clock >= 100
    finally:
        board.pop()


def automatic_draw(board: chess.Board) -> str | None:
    """The automatic draws of FIDE 9.6 and 5.2.2 (checkmate takes precedence, 9.6.2):
    ``"fivefold repetition"``, ``"seventy-five moves"``, ``"dead position"`` or None."""
    if board.is_checkmate():
        return None
    if board.is_fivefold_repetition():
        return "fivefold repetition"
    if board.is_seventyfive_moves():
        return "seventy-five moves"
    if board.is_insufficient_material():
        return "dead position"
    return None


def cannot_mate(board: chess.Board, side: Color) -> bool:
    """True if ``side`` cannot checkmate by any possible series of legal moves (FIDE 6.9,
    7.5.5; US speed 2c "insufficient mating material")."""
    return board.has_insufficient_material(side)


def michigan_limit(board: chess.Board) -> int:
    """Move pairs the Michigan count must reach (US speed 13b): 40 in the listed endings
    (K+Q v K+R, K+B+N v K, K+B+B v K, K+R v K), else 20."""
    return MICHIGAN_LONG_PAIRS if _long_ending(board) else MICHIGAN_PAIRS


def _material(board: chess.Board, side: Color) -> str:
    """The side's pieces besides the king, as letters in the order q r b n p."""
    kinds = (chess.QUEEN, chess.ROOK, chess.BISHOP, chess.KNIGHT, chess.PAWN)
    return "".join(chess.piece_symbol(kind) * len(board.pieces(kind, side)) for kind in kinds)


def material_pair(board: chess.Board) -> frozenset[str]:
    """Both sides' material besides the king, e.g. ``{"q", "r"}`` for K+Q v K+R."""
    return frozenset((_material(board, chess.WHITE), _material(board, chess.BLACK)))


def _long_ending(board: chess.Board) -> bool:
    white = _material(board, chess.WHITE)
    black = _material(board, chess.BLACK)
    pair = {white, black}
    return pair in ({"q", "r"}, {"bn", ""}, {"bb", ""}, {"r", ""})


def queen_or_rook_ending(board: chess.Board) -> str | None:
    """US speed 10: ``"queen v queen"`` or ``"rook v rook"`` when each side has exactly a king
    and a queen (a rook), nothing else; else None."""
    white = _material(board, chess.WHITE)
    black = _material(board, chess.BLACK)
    if white == black == "q":
        return "queen v queen"
    if white == black == "r":
        return "rook v rook"
    return None


def resets_michigan(board: chess.Board, move: chess.Move) -> bool:
    """A capture or a pawn move restarts the Michigan count (US speed 13a)."""
    return board.is_capture(move) or board.piece_type_at(move.from_square) == chess.PAWN
