"""The start FEN the table page's diff stream sends, kept per table (service.web.start_fen)."""

from __future__ import annotations

import chess
import chess.variant

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


def test_a_board_without_moves_is_read_again_only_when_its_position_changed() -> None:
    starts = StartFens()
    board = chess.Board()
    assert starts.start("1", board) == chess.STARTING_FEN
    written = starts.start("1", board)
    assert starts.start("1", board) is written  # kept, not written again
    board.set_fen(OTHER)  # set anew in place: the same object, another position
    assert starts.start("1", board) == OTHER
    board.remove_piece_at(chess.E4)
    assert starts.start("1", board) == board.fen()
    board.turn = chess.WHITE
    board.castling_rights = chess.BB_A1 | chess.BB_H1
    assert (
        starts.start("1", board)
        == board.fen()
        == "rnbqkbnr/pppppppp/8/8/8/8/PPPP1PPP/RNBQKBNR w KQ - 0 1"
    )
    board.fullmove_number = 7
    assert starts.start("1", board) == board.fen()
    board.push_uci("d2d4")  # a first move: the position before it is the start
    assert starts.start("1", board) == board.root().fen()
    board.pop()
    assert starts.start("1", board) == board.fen()
    again = chess.Board()  # another board in the same position: read from it
    assert starts.start("1", again) == chess.STARTING_FEN


def test_a_variants_board_without_moves_is_read_every_time() -> None:
    starts = StartFens()
    board = chess.variant.CrazyhouseBoard()
    assert starts.start("1", board) == board.fen()
    board.pockets[chess.WHITE].add(chess.PAWN)  # not in a plain board's position
    assert starts.start("1", board) == board.fen()
    assert "[P]" in board.fen()


def test_an_en_passant_square_shown_only_where_a_capture_is_legal() -> None:
    starts = StartFens()
    board = chess.Board("rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 3")
    assert starts.start("1", board) == board.fen()
    assert " e3 " in board.fen()
    board.set_fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1")
    assert starts.start("1", board) == board.fen()
    assert " - " in board.fen()
