"""Whole games through the recogniser: real games and generated ones, made on a virtual board
by the seeded human-handling model (tidy and noisy), on piece-identity and presence-only
boards, with and without a clock.  The recognised game must equal the game played: no
phantom move, no missed move."""

from __future__ import annotations

import random
from collections import Counter
from functools import cache

import chess
import chess.pgn
import games
import pytest
from games import random_game
from test_recognize_helpers import replay

from dgt.emulator.human import Handling


@cache
def lichess_games() -> tuple[tuple[chess.Board, tuple[chess.Move, ...]], ...]:
    """The lichess games of tests/data (a missing file fails the test, with what to do)."""
    return tuple((game.board(), game.moves) for game in games.lichess_games())


CONFIGS = [
    # (handling, presence_only, clock)
    ("tidy", False, False),
    ("noisy", False, True),
    ("tidy", True, True),
    ("noisy", True, False),
]


def handling_of(name: str) -> Handling:
    return Handling.tidy() if name == "tidy" else Handling.noisy()


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
@pytest.mark.parametrize("presence_only", [False, True])
def test_sdist_games_fetched_by_name_are_recognised_exactly(presence_only: bool) -> None:
    """The standard and Chess960 games of the ``chess`` 1.11.2 sdist (downloaded with pip on
    first use, cached under .cache/games/; a failed download fails here)."""
    found = games.sdist_games()
    assert len(found) >= 12
    assert sum(game.variant == "chess960" for game in found) == 4
    wrong = []
    for index, game in enumerate(found):
        item = games.stream(
            game,
            seed=index,
            handling=Handling.noisy(),
            presence_only=presence_only,
            clock=index % 2 == 0,
            sweep=0.0,  # fast hands have a test of their own
            rest=0.0,
        )
        if games.recognise(item).ucis != game.ucis():
            wrong.append(game.name)
    assert wrong == []


@cache
def every_start() -> list[games.Game]:
    return games.castling_games(both_wings=False)


@pytest.mark.slow
def test_generated_games_cover_every_start_and_every_castling() -> None:
    kinds: Counter[tuple[str, bool, bool]] = Counter()
    starts = set()
    for game in every_start():
        board = game.board()
        starts.add(board.fen())
        for move in game.moves:
            kind = games.castling_kind(board, move)
            if kind is not None:
                kinds[kind, board.turn, board.is_kingside_castling(move)] += 1
            board.push(move)
    assert len(starts) == 960
    shapes = ("plain", "king-only", "rook-only", "swap", "king-onto-rook", "rook-onto-king")
    missing = [
        (shape, colour, wing)
        for shape in shapes
        for colour in (True, False)
        for wing in (True, False)
        if not kinds[shape, colour, wing]
    ]
    assert missing == []


@pytest.mark.slow
@pytest.mark.parametrize(
    ("presence_only", "handling"), [(False, "noisy"), (True, "tidy")], ids=["identity", "presence"]
)
def test_games_from_all_960_starts_with_every_castling(presence_only: bool, handling: str) -> None:
    wrong = []
    for index, game in enumerate(every_start()):
        item = games.stream(
            game,
            seed=index,
            handling=handling_of(handling),
            presence_only=presence_only,
            clock=index % 2 == 0,
            sweep=0.0,  # fast hands have a test of their own
            rest=0.0,
        )
        if games.recognise(item).ucis != game.ucis():
            wrong.append(game.name)
    assert wrong == []


def test_generated_games_take_en_passant_and_promote_to_every_kind() -> None:
    kinds = set()
    en_passant = 0
    for game in games.special_games():
        board = game.board()
        for move in game.moves:
            en_passant += board.is_en_passant(move)
            if move.promotion:
                kinds.add((board.turn, move.promotion))
            board.push(move)
    assert en_passant >= 5
    assert len(kinds) == 8
