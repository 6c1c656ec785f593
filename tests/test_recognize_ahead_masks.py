"""Reading ahead's bit masks of an action and of a square map (kept per object) say what
the actions' changes and the squares say, in positions with captures, castling, en passant
and promotions."""

from __future__ import annotations

import chess

from service.recognize.ahead import _BITS, _bits, _white, occupied_mask
from service.variants import StartPosition, get_variant

FENS = (
    chess.STARTING_FEN,
    "r3k2r/pPpp1ppp/8/3Pp3/8/8/P1PP1PPP/R3K2R w KQkq e6 0 1",  # castling, ep, promotion
    "4k3/1P6/8/8/8/8/6p1/4K2R b K - 0 1",
)


def test_action_masks_match_its_changes() -> None:
    variant = get_variant("standard")
    for fen in FENS:
        game = variant.new_game(StartPosition("standard", fen, _squares(fen)))
        squares = game.squares
        occupied = occupied_mask(squares)
        for la in game.legal_actions():
            same, filled, emptied, whites, empties = _bits(la)
            assert same is la
            assert _bits(la) == _bits(la)
            assert _BITS[id(la)][0] is la  # worked out once per action, then kept
            # (not `_bits(la) is _bits(la)`: a compiled build hands out a new tuple each call)
            flips = 0
            for square, symbol in la.changes:
                assert bool(filled >> square & 1) == bool(symbol)
                assert bool(emptied >> square & 1) == (not symbol)
                assert bool(whites >> square & 1) == (bool(symbol) and symbol.isupper())
                if bool(symbol) != bool(occupied >> square & 1):
                    flips |= 1 << square
            assert (filled & ~occupied) | (emptied & occupied) == flips
            assert empties == tuple(sq for sq, symbol in la.changes if not symbol)


def test_square_map_masks() -> None:
    squares = _squares("4k3/1P6/8/8/8/8/6p1/4K2R b K - 0 1")
    occupied, white = occupied_mask(squares), _white(squares)
    assert occupied == sum(1 << sq for sq, symbol in enumerate(squares) if symbol)
    assert white == sum(1 << sq for sq, symbol in enumerate(squares) if symbol.isupper())
    assert (occupied_mask(squares), _white(squares)) == (occupied, white)  # kept, the same
    listed = list(squares)
    assert (occupied_mask(listed), _white(listed)) == (occupied, white)
    listed[4] = ""  # a list may change under the same id: never kept
    assert (occupied_mask(listed), _white(listed)) == (occupied & ~(1 << 4), white & ~(1 << 4))
    # a view (occupancy only) and the squares it reads: each asked once, then kept
    view = tuple("*" if symbol else "" for symbol in squares)
    assert occupied_mask(view) == occupied
    assert _white(view) == 0
    assert (occupied_mask(view), _white(view)) == (occupied, 0)


def _squares(fen: str) -> tuple[str, ...]:
    board = chess.Board(fen)
    return tuple(
        "" if (piece := board.piece_at(sq)) is None else piece.symbol() for sq in chess.SQUARES
    )
