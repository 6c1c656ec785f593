"""The legal action the recogniser reads a move as (:func:`standard._legal_move`, worked out
from the pieces on the move's two squares alone) changes exactly the squares python-chess's
``push`` changes, whatever the move: a piece's plain move or capture, a pawn's step, double
step, capture, en passant capture and promotion, a king's step and castling (standard and
Chess960)."""

from __future__ import annotations

import random

import chess

from service.variants.standard import _legal_move, from_chess_move, squares_of


def _positions(seed: int, games: int, chess960: bool) -> list[chess.Board]:
    """Every position of ``games`` random games (seeded), from the standard start or random
    Chess960 starts."""
    rng = random.Random(seed)
    boards = []
    for _ in range(games):
        board = chess.Board.from_chess960_pos(rng.randrange(960)) if chess960 else chess.Board()
        for _ply in range(rng.randrange(40, 160)):
            moves = list(board.legal_moves)
            if not moves:
                break
            boards.append(board.copy(stack=False))
            # captures and promotions first now and then: more of them than random play makes
            captures = [m for m in moves if board.is_capture(m) or m.promotion]
            board.push(rng.choice(captures if captures and rng.random() < 0.5 else moves))
    return boards


def _assert_read_as_pushed(board: chess.Board) -> int:
    before = squares_of(board)
    count = 0
    for move in board.legal_moves:
        origin, target = move.from_square, move.to_square
        # (uncached: the function itself, not an entry kept from another position)
        legal = _legal_move.__wrapped__(
            origin, target, move.promotion, before[origin], before[target]
        )
        board.push(move)
        after = squares_of(board)
        board.pop()
        expected = {sq: after[sq] for sq in range(64) if after[sq] != before[sq]}
        assert dict(legal.changes) == expected, (board.fen(), move.uci())
        assert len(legal.changes) == len(expected), (board.fen(), move.uci())
        assert legal.uci == move.uci()
        assert legal.side == board.turn
        assert legal.action == from_chess_move(move)
        count += 1
    return count


def test_every_legal_move_of_standard_games_changes_what_python_chess_changes() -> None:
    assert sum(_assert_read_as_pushed(board) for board in _positions(7, 6, False)) > 10_000


def test_every_legal_move_of_chess960_games_changes_what_python_chess_changes() -> None:
    boards = _positions(11, 6, True)
    assert sum(_assert_read_as_pushed(board) for board in boards) > 10_000
    castlings = sum(1 for board in boards for move in board.legal_moves if board.is_castling(move))
    assert castlings > 0  # (the test saw some)


def test_promotions_en_passant_and_castling_are_read_as_pushed() -> None:
    for fen in (
        "r3k2r/1P6/8/3pP3/8/8/6p1/R3K2R w KQkq d6 0 1",  # promotions, en passant, castling
        "r3k2r/1P6/8/8/3Pp3/8/6p1/R3K2R b KQkq d3 0 1",  # the same for black
        "1r2k1r1/8/8/8/8/8/8/1R2K1R1 w GBgb - 0 1",  # Chess960 castling rights
    ):
        board = chess.Board(fen, chess960="GB" in fen)
        assert _assert_read_as_pushed(board) > 10
