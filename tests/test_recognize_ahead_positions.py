"""Reading ahead steps through positions of chess on bit masks (no python-chess ``push``, no
position of the game made): in seeded random games, with castling, en passant, promotions
and checks, what it works out equals what the game and python-chess say -- each square's
actions (the same actions, in the same order), legality, and the position after a move."""

from __future__ import annotations

import random

import chess

from service.recognize.ahead import (
    _after,
    _bits,
    _entries,
    _expand,
    _root,
    after_move,
    chess_position,
    is_legal,
    legal_from,
    search,
)
from service.variants import StartPosition, get_variant

FENS = (
    chess.STARTING_FEN,
    "r3k2r/pPpp1ppp/8/3Pp3/8/8/P1PP1PPP/R3K2R w KQkq e6 0 1",  # castling, ep, promotion
    "4k3/1P6/8/8/8/8/6p1/4K2R b K - 0 1",
    "r3k2r/8/8/8/4q3/8/8/R3K2R w KQkq - 0 1",  # castling through and out of check
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",  # pins along a rank, en passant
    "4k3/8/8/3b4/8/8/8/4KBN1 w - - 0 1",  # material that may run out
)


def _squares(board: chess.Board) -> tuple[str, ...]:
    return tuple(
        "" if (piece := board.piece_at(sq)) is None else piece.symbol() for sq in chess.SQUARES
    )


def test_stepped_positions_read_as_the_game_does() -> None:
    rng = random.Random(19)
    variant = get_variant("standard")
    squares_checked = 0
    for number in range(36):
        fen = FENS[number % len(FENS)]
        game = variant.new_game(StartPosition("standard", fen, _squares(chess.Board(fen))))
        position = _root(game, 1)
        assert position is not None
        for _ in range(rng.randint(4, 40)):
            board = game.chess_board()
            assert board is not None
            if _root(game, 1) is None:
                break  # a repetition or the 75-move rule may end it: the game steps
            assert _root(game, 1) == position
            for square in chess.SQUARES:
                wanted = _entries(game.actions_changing(square))
                assert _expand(position, board.turn, square) == wanted
                squares_checked += 1
            actions = game.legal_actions()
            if not actions:
                break
            la = rng.choice(actions)
            _, filled, emptied, whites, _ = _bits(la)
            position = _after(position, la, filled, emptied, whites)
            game.apply(la.action)
    assert squares_checked > 10_000


def test_legality_and_moves_as_python_chess() -> None:
    rng = random.Random(7)
    for number in range(30):
        board = chess.Board(FENS[number % len(FENS)])
        for _ in range(rng.randint(1, 40)):
            position = chess_position(board)
            assert position is not None
            moves = list(board.legal_moves)
            if not moves:
                break
            tries = [*moves, *(chess.Move(rng.randrange(64), rng.randrange(64)) for _ in range(20))]
            tries += [chess.Move(chess.E1, chess.H1), chess.Move(chess.E8, chess.A8)]
            for move in tries:
                assert is_legal(position, board.turn, move) == board.is_legal(move), move
            theirs = board.occupied_co[not board.turn]
            for square in chess.scan_forward(board.occupied_co[board.turn]):
                mask = chess.BB_SQUARES[square]
                assert legal_from(position, board.turn, square) == list(
                    board.generate_legal_moves(mask, chess.BB_ALL)
                )
                assert [
                    m for m in legal_from(position, board.turn, square) if theirs >> m.to_square & 1
                ] == list(board.generate_legal_moves(mask, theirs))
            move = rng.choice(moves)
            stepped = after_move(position, move)
            board.push(move)
            assert stepped == chess_position(board.copy(stack=False))


def test_search_leaves_the_game_as_it_was_and_finds_what_the_game_steps_find() -> None:
    board = chess.Board()
    for uci in ("e2e4", "e7e5", "g1f3", "b8c6"):
        board.push_uci(uci)
    game = get_variant("standard").new_game(
        StartPosition("standard", chess.STARTING_FEN, _squares(chess.Board()))
    )
    start = game.squares
    # the occupancy after 1. e4 e5 2. Nf3 Nc6, from the start
    occupied = sum(1 << sq for sq, symbol in enumerate(start) if symbol)
    after = sum(1 << sq for sq in chess.SQUARES if board.piece_at(sq) is not None)
    found = search(game, occupied, occupied ^ after, plies=4, budget=10_000)
    assert game.ply == 0
    assert game.squares is start
    assert ("e2e4", "e7e5", "g1f3", "b8c6") in [
        tuple(la.uci for la in actions) for actions in found
    ]
