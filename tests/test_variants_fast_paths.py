"""The chess game's short cuts answer as python-chess does: a legal move found without its
full generation (:func:`has_free_move`), the moves of a piece that cannot be pinned
(:func:`free_piece_moves`), and moves made on the python-chess board only when it is read
(a game sharing its positions with another)."""

from __future__ import annotations

import random

import chess
import chess.pgn

from service.variants import get_variant
from service.variants.base import Action
from service.variants.standard import ChessGame, free_piece_moves, has_free_move
from tests.games import LICHESS


def _positions() -> list[chess.Board]:
    """Positions of the lichess games (every 4th ply of 15 games) and of random Chess960
    games (checks, pins, promotions, castling and en passant among them)."""
    boards = []
    with LICHESS.open(encoding="utf-8") as handle:
        for _ in range(15):
            game = chess.pgn.read_game(handle)
            assert game is not None
            board = game.board()
            for ply, move in enumerate(game.mainline_moves()):
                board.push(move)
                if ply % 4 == 0:
                    boards.append(board.copy(stack=False))
    rng = random.Random("fast-paths")
    for _ in range(25):
        board = chess.Board.from_chess960_pos(rng.randrange(960))
        for _ply in range(rng.randrange(20, 160)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
            boards.append(board.copy(stack=False))
    return boards


def test_free_moves_agree_with_python_chess() -> None:
    answered = free = 0
    for board in _positions():
        legal = any(board.generate_legal_moves())
        if has_free_move(board):
            answered += 1
            assert legal, board.fen()
        for square in chess.SQUARES:
            moves = free_piece_moves(board, square)
            if moves is not None:
                free += 1
                want = list(board.generate_legal_moves(chess.BB_SQUARES[square], chess.BB_ALL))
                assert moves == want, (board.fen(), chess.square_name(square))
    # the short cuts are taken, not only refused
    assert answered > 500
    assert free > 500


def test_free_moves_refuse_a_king_in_check_a_pinned_piece_and_en_passant() -> None:
    checked = chess.Board("4k3/8/8/8/8/8/3PPP2/r3K1N1 w - - 0 1")
    assert not has_free_move(checked)
    assert free_piece_moves(checked, chess.G1) is None
    pinned = chess.Board("4k3/8/8/b7/8/8/3N4/4K3 w - - 0 1")  # the knight on d2 is pinned
    assert free_piece_moves(pinned, chess.D2) is None
    assert free_piece_moves(pinned, chess.E1) is None  # the king: python-chess decides
    passing = chess.Board("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2")
    assert free_piece_moves(passing, chess.E5) is None
    assert free_piece_moves(passing, chess.D5) is None  # not the side to move's piece


def test_a_game_following_shared_positions_reads_as_one_that_made_every_move() -> None:
    """The follower (a table's game) makes its moves on its python-chess board only when
    the board is read; whatever is read, and in whatever order, it reads as a game that
    made them at once."""
    variant = get_variant("standard")
    rng = random.Random("lazy-board")
    for _game in range(8):
        leader = variant.new_game()
        follower = variant.new_game()
        follower.share_positions(leader)
        assert isinstance(follower, ChessGame)
        for ply in range(rng.randrange(10, 80)):
            actions = leader.legal_actions()
            if not actions:
                break
            chosen = rng.choice(actions)
            leader.apply(chosen.action)
            follower.apply(chosen.action)
            if rng.random() < 0.2:
                follower.undo()
                leader.undo()
                leader.apply(chosen.action)
                follower.apply(chosen.action)
            assert follower.ply == leader.ply == ply + 1
            assert follower.sides_to_act() == leader.sides_to_act()
            assert follower.squares == leader.squares
            if rng.random() < 0.3:  # read it now and then: the waiting moves are made
                assert follower.fen() == leader.fen()
                assert follower.chess_board().move_stack == leader.chess_board().move_stack
        assert follower.fen() == leader.fen()
        assert follower.outcome() == leader.outcome()
        while follower.ply:
            follower.undo()
        assert follower.fen() == chess.STARTING_FEN


def _replayed(actions: list[Action]) -> ChessGame:
    game = get_variant("standard").new_game()
    assert isinstance(game, ChessGame)
    for action in actions:
        game.apply(action)
    return game


def test_a_takeback_past_the_forgotten_positions_works_them_out_again() -> None:
    """Positions more than two actions behind keep only the way on (their legal actions,
    by square and SAN are dropped); a takeback to one of them answers every question as a
    game that never left it."""
    rng = random.Random("forgotten")
    for _game in range(6):
        game = get_variant("standard").new_game()
        assert isinstance(game, ChessGame)
        played: list[Action] = []
        for _ply in range(rng.randrange(12, 60)):
            actions = game.legal_actions()
            if not actions:
                break
            for square in rng.sample(range(64), 4):
                game.actions_changing(square)
            chosen = rng.choice(actions)
            game.san(chosen.action)
            game.apply(chosen.action)
            played.append(chosen.action)
        far = game._line[: len(game._line) - 3]
        assert all(p.known is None and p.by_square is None and p.san is None for p in far)
        assert all(len(p.children) == 1 for p in far)
        back = rng.randrange(3, len(played) + 1)
        for _ in range(back):
            game.undo()
        fresh = _replayed(played[: len(played) - back])
        assert game.squares == fresh.squares
        assert game.fen() == fresh.fen()
        assert game.outcome() == fresh.outcome()
        for square in range(64):
            assert game.actions_changing(square) == fresh.actions_changing(square)
        assert game.legal_actions() == fresh.legal_actions()
        assert [game.san(a.action) for a in game.legal_actions()] == [
            fresh.san(a.action) for a in fresh.legal_actions()
        ]
        for action in played[len(played) - back :]:  # and forward again the same way
            game.apply(action)
        assert game.fen() == _replayed(played).fen()


def test_a_follower_behind_the_forgotten_positions_still_shares_them() -> None:
    """A table's game lagging several actions behind its recogniser's finds the positions
    the recogniser made (their squares are the same objects), though the recogniser has
    forgotten what it worked out there."""
    variant = get_variant("standard")
    leader = variant.new_game()
    follower = variant.new_game()
    follower.share_positions(leader)
    assert isinstance(leader, ChessGame)
    assert isinstance(follower, ChessGame)
    rng = random.Random("lagging")
    played: list[Action] = []
    for _ply in range(30):
        chosen = rng.choice(leader.legal_actions())
        leader.apply(chosen.action)
        played.append(chosen.action)
    for action in played:
        follower.apply(action)
    assert follower.squares is leader.squares
    assert all(a is b for a, b in zip(follower._line, leader._line, strict=True))
    assert follower.fen() == leader.fen()


def test_keep_current_keeps_positions_a_try_returns_to() -> None:
    """Once a caller says when to forget (``keep_current``), actions tried three or more
    deep and taken back leave the current position (and its children) as worked out; the
    next ``keep_current`` forgets every position more than two actions back, as making the
    actions one by one does without it."""
    rng = random.Random("kept")
    game = get_variant("standard").new_game()
    assert isinstance(game, ChessGame)
    game.keep_current()
    for _ply in range(20):
        here = game._line[-1]
        actions = list(game.legal_actions())
        for _try in range(3):  # a try four actions deep, taken back
            depth = 0
            for _ in range(4):
                tried = game.legal_actions()
                if not tried:
                    break
                game.apply(rng.choice(tried).action)
                depth += 1
            for _ in range(depth):
                game.undo()
            assert game._line[-1] is here
            assert here.actions is actions or here.actions == actions
            assert here.known is not None
        chosen = rng.choice(actions)
        game.apply(chosen.action)
        game.keep_current()
        far = game._line[: max(0, len(game._line) - 3)]
        assert all(p.known is None and p.by_square is None and p.san is None for p in far)
        assert all(len(p.children) == 1 for p in far)
