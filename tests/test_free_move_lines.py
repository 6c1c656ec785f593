""":func:`service.variants.standard.has_free_move` (the end of game's test of a legal move
without python-chess's generation) answers as its definition read with python-chess: the side
to move has one king, not in check, and a legal move (en passant aside) of a piece or pawn off
every line through that king.  Checked on the lichess games, random games from random
Chess960 starts and random placements (pawns on every file and rank, pins, checks)."""

from __future__ import annotations

import random

import chess

from service.variants.standard import has_free_move
from tests.games import sample_positions


def _defined(board: chess.Board) -> bool:
    """What :func:`has_free_move` answers, by its definition, with python-chess."""
    own = board.occupied_co[board.turn]
    kings = board.kings & own
    if chess.popcount(kings) != 1 or board.is_variant_end() or board.is_check():
        return False
    king = chess.msb(kings)
    return any(
        move.from_square != king
        and not chess.BB_RAYS[king][move.from_square]
        and not board.is_en_passant(move)
        for move in board.generate_legal_moves()
    )


def _placements(count: int) -> list[chess.Board]:
    """Random legal-looking placements: both kings, a few pieces and pawns anywhere on ranks
    2 to 7, either side to move (positions where the side not to move is in check dropped)."""
    rng = random.Random("placements")
    kinds = [chess.PAWN] * 6 + [chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN]
    boards = []
    while len(boards) < count:
        board = chess.Board(None)
        squares = rng.sample(chess.SQUARES, 2 + rng.randrange(2, 14))
        board.set_piece_at(squares[0], chess.Piece(chess.KING, chess.WHITE))
        board.set_piece_at(squares[1], chess.Piece(chess.KING, chess.BLACK))
        for square in squares[2:]:
            kind = rng.choice(kinds)
            if kind == chess.PAWN and square >> 3 in (0, 7):
                continue
            board.set_piece_at(square, chess.Piece(kind, rng.random() < 0.5))
        board.turn = rng.random() < 0.5
        if board.was_into_check():
            continue
        boards.append(board)
    return boards


def test_a_free_move_is_found_as_its_definition_reads() -> None:
    found = 0
    boards = sample_positions(30, 1, "free moves", 40, 200) + _placements(6000)
    for board in boards:
        answer = has_free_move(board)
        assert answer == _defined(board), board.fen()
        found += answer
    # both answers are given, many times
    assert 1000 < found < len(boards) - 1000


def test_pawns_on_the_edge_files_capture_onto_the_board_only() -> None:
    # each side's one pawn off its king's lines is blocked, and an opposing piece stands
    # where its capture would land wrapped round to the other edge of the board
    white = chess.Board("8/8/8/8/5k2/r7/P6n/2K5 w - - 0 1")
    black = chess.Board("5k2/N6p/7R/8/8/8/8/2K5 b - - 0 1")
    for board in (white, black):
        assert not board.is_check()
        assert not has_free_move(board)
        assert not _defined(board)
