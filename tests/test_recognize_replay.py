"""Whole games through the recogniser: real games and generated ones, made on a virtual board
by the seeded human-handling model (tidy and noisy), on piece-identity and presence-only
boards, with and without a clock.  The recognised game must equal the game played: no
phantom move, no missed move."""

from __future__ import annotations

import random
from functools import cache
from pathlib import Path

import chess
import chess.pgn
import pytest
from test_recognize_helpers import random_game, replay

from dgt.emulator.human import Handling

GAMES = Path(__file__).resolve().parents[2] / "shared" / "data" / "games"
LICHESS = GAMES / "lichess-2012-12-31-100.pgn"


@cache
def lichess_games() -> tuple[tuple[chess.Board, tuple[chess.Move, ...]], ...]:
    games = []
    with LICHESS.open() as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            games.append((game.board(), tuple(game.mainline_moves())))
    return tuple(games)


CONFIGS = [
    # (handling, presence_only, clock)
    ("tidy", False, False),
    ("noisy", False, True),
    ("tidy", True, True),
    ("noisy", True, False),
]


def handling_of(name: str) -> Handling:
    return Handling.tidy() if name == "tidy" else Handling.noisy()


@pytest.mark.skipif(not LICHESS.exists(), reason="shared game data not present")
@pytest.mark.parametrize(("handling", "presence_only", "clock"), CONFIGS)
def test_real_games_are_recognised_exactly(handling: str, presence_only: bool, clock: bool) -> None:
    wrong = []
    for index, (board, moves) in enumerate(lichess_games()):
        result = replay(
            board,
            moves,
            seed=index,
            handling=handling_of(handling),
            presence_only=presence_only,
            clock=clock,
        )
        if result.got != result.expected:
            wrong.append(index)
    assert wrong == [], f"games recognised wrong: {wrong}"


@pytest.mark.parametrize("presence_only", [False, True])
@pytest.mark.parametrize("handling", ["tidy", "noisy"])
def test_generated_chess960_games_with_castling_en_passant_and_promotions(
    handling: str, presence_only: bool
) -> None:
    rng = random.Random(960)
    wrong = []
    castlings = 0
    for index in range(24):
        number = rng.randrange(960)
        board = chess.Board.from_chess960_pos(number)
        moves = random_game(rng, board, 80)
        position = board.copy()
        for move in moves:
            castlings += position.is_castling(move)
            position.push(move)
        result = replay(
            board,
            moves,
            seed=index,
            handling=handling_of(handling),
            presence_only=presence_only,
            clock=index % 2 == 0,
            variant="chess960",
        )
        if result.got != result.expected:
            wrong.append((number, index))
    assert castlings >= 24
    assert wrong == []


@pytest.mark.parametrize("presence_only", [False, True])
def test_generated_standard_games_with_promotions_and_under_promotions(
    presence_only: bool,
) -> None:
    rng = random.Random(7)
    wrong = []
    promotions = set()
    for index in range(20):
        board = chess.Board()
        moves = random_game(rng, board, 120)
        promotions |= {m.promotion for m in moves if m.promotion}
        result = replay(
            board,
            moves,
            seed=100 + index,
            handling=Handling.noisy(),
            presence_only=presence_only,
            clock=index % 2 == 1,
        )
        if result.got != result.expected:
            wrong.append(index)
    assert promotions == {chess.QUEEN, chess.ROOK, chess.BISHOP, chess.KNIGHT}
    assert wrong == []
