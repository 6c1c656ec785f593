"""Reading ahead leaves no garbage for the collector: a recursive search made in a nested
function holds itself through its closure, a cycle that only a garbage collection would
free (and slow board events, which search most, would bring those collections on).  Run
with the collector off, a search frees all it made, whether it ends or its budget does."""

from __future__ import annotations

import gc
import types
from collections.abc import Callable, Iterator

import chess
import pytest

from service.recognize import ahead
from service.variants import StartPosition, get_variant

pytestmark = pytest.mark.skipif(
    not isinstance(ahead.search, types.FunctionType),
    reason="the compiled build makes its own objects for nested functions (plain Python's here)",
)


@pytest.fixture
def no_collector() -> Iterator[Callable[[], int]]:
    """The collector off, its garbage collected first; yields the count of objects a
    collection would now free."""
    gc.collect()
    gc.disable()
    try:
        yield gc.collect
    finally:
        gc.enable()


def test_reading_ahead_frees_its_search(no_collector: Callable[[], int]) -> None:
    board = chess.Board()
    game = get_variant("standard").new_game(
        StartPosition("standard", chess.STARTING_FEN, _squares(board))
    )
    for uci in ("e2e4", "e7e5", "g1f3", "b8c6"):
        board.push_uci(uci)
    occupied = ahead.occupied_mask(game.squares)
    after = sum(1 << sq for sq in chess.SQUARES if board.piece_at(sq) is not None)
    found = ahead.search(game, occupied, occupied ^ after, plies=4, budget=10_000)
    assert found  # (it went four plies deep)
    assert no_collector() == 0


def test_a_search_cut_short_by_its_budget_frees_itself_too(
    no_collector: Callable[[], int],
) -> None:
    game = get_variant("standard").new_game(
        StartPosition("standard", chess.STARTING_FEN, _squares(chess.Board()))
    )
    occupied = ahead.occupied_mask(game.squares)
    # both sides' pawns on e- and d-files gone from their squares: many sequences to try
    differ = sum(1 << sq for sq in (chess.D2, chess.E2, chess.D7, chess.E7))
    ahead.search(game, occupied, differ, plies=4, budget=3)
    assert no_collector() == 0


def _squares(board: chess.Board) -> tuple[str, ...]:
    return tuple(
        "" if (piece := board.piece_at(sq)) is None else piece.symbol() for sq in chess.SQUARES
    )
