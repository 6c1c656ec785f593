"""SAN of a checking move: a king that may step out of the check after it says "+" without
the move made (``standard._king_escapes``); every other check is made and python-chess tells
mate.  In seeded random games steered towards checks, the SAN of every legal move is
python-chess's, mates and both ways of telling a check among them."""

from __future__ import annotations

import random
import types

import chess
import pytest

from service.variants import StartPosition, get_variant, standard
from service.variants.standard import ChessGame, squares_of

FENS = (
    chess.STARTING_FEN,
    "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1",  # a back-rank mate, and checks that are none
    "r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5Q2/PPPP1PPP/RNB1K1NR w KQkq - 2 3",  # Qxf7#
    "4k3/8/3K4/8/8/8/8/7R w - - 0 1",  # a rook and king against a king
    "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3",  # in check, one way out
    "2r3k1/1q3ppp/8/8/8/8/1B3PPP/2R3K1 b - - 0 1",  # discovered lines, pins
    "k7/8/1K6/8/8/8/8/2Q5 w - - 0 1",  # queen mates and stalemates nearby
    "r3k2r/pPpp1ppp/2n2n2/3Pp3/1b6/5N2/P1PP1PPP/R3K2R w KQkq e6 0 1",  # ep, promotions
)


def _game(fen: str) -> ChessGame:
    start = StartPosition("standard", fen, squares_of(chess.Board(fen)))
    game = get_variant("standard").new_game(start)
    assert isinstance(game, ChessGame)
    return game


@pytest.mark.parametrize("seed", range(4))
def test_the_san_of_every_move_is_python_chess_s(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    told = {"escapes": 0, "made": 0}
    escapes = standard._king_escapes

    def counted(*args: object) -> bool:
        found = escapes(*args)  # type: ignore[arg-type]
        told["escapes" if found else "made"] += 1
        return found

    monkeypatch.setattr(standard, "_king_escapes", counted)
    rng = random.Random(seed)
    mates = 0
    for number in range(24):
        fen = FENS[number % len(FENS)]
        game = _game(fen)
        board = chess.Board(fen)
        for _ply in range(rng.randint(6, 50)):
            moves = list(board.legal_moves)
            if not moves or game.outcome() is not None:
                break  # (the game also ends by material, which python-chess plays on)
            for move in moves:
                action = game.legal_action(standard.from_chess_move(move))
                assert action is not None
                theirs = board.san(move)
                assert game.san(action.action) == theirs, (board.fen(), move.uci())
                mates += theirs.endswith("#")
            # steered towards checks: a checking move half the time when there is one
            checks = [m for m in moves if board.gives_check(m)]
            move = rng.choice(checks if checks and rng.random() < 0.5 else moves)
            game.apply(standard.from_chess_move(move))
            board.push(move)
    assert mates > 0
    if isinstance(escapes, types.FunctionType):  # both ways of telling a check were taken
        assert told["escapes"] > 100
        assert told["made"] > 10
    # (else the compiled build: its calls do not go through the module's attribute, so the
    # ways are counted in the plain build only; every SAN was compared all the same)
