"""The start FEN the table page's diff stream sends, kept per table (service.web.start_fen)."""

from __future__ import annotations

import chess

from service.web.start_fen import StartFens

OTHER = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"


def test_the_start_is_the_roots_fen_whatever_the_moves() -> None:
    starts = StartFens()
    board = chess.Board(OTHER)
    assert starts.start("1", board) == OTHER
    for uci in ("e7e5", "g1f3", "b8c6"):
        board.push_uci(uci)
        assert starts.start("1", board) == OTHER == board.root().fen()
    while board.move_stack:
        board.pop()
        assert starts.start("1", board) == OTHER


def test_a_new_board_or_a_new_first_move_is_read_again() -> None:
    starts = StartFens()
    board = chess.Board()
    board.push_uci("e2e4")
    assert starts.start("1", board) == chess.STARTING_FEN
    board.set_fen(OTHER)  # a board set anew loses its moves: its own position is the start
    assert starts.start("1", board) == OTHER
    board.push_uci("e7e5")
    assert starts.start("1", board) == OTHER
    board.pop()
    board.push(chess.Move.from_uci("d7d5"))
    assert starts.start("1", board) == OTHER
    other = chess.Board()
    other.push_uci("d2d4")
    assert starts.start("1", other) == chess.STARTING_FEN
    assert starts.start("2", None) is None
