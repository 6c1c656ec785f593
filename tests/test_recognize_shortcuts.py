"""The recogniser's cheap common path reads exactly as the long way round: a square's reading
from a table, the reference of a move read from the top position made without comparing the
board again, and an earlier position of the game found by comparing the positions with as
many pieces as the board (no index of every position)."""

from __future__ import annotations

import random

import chess
import pytest
from test_recognize_helpers import Desk, moves_in, of_type

from dgt.events import Side
from dgt.protocol.constants import Piece
from service.recognize.recognizer import _READINGS, EMPTY, OCCUPIED, _reading, presence_after
from service.variants import get_variant

FAMILIES = [False, True]
family = pytest.mark.parametrize("presence_only", FAMILIES, ids=["identity", "presence"])

OPENING = [
    ("e2e4", "P"), ("e7e5", "p"), ("g1f3", "N"), ("b8c6", "n"), ("f1c4", "B"), ("g8f6", "n"),
    ("d2d3", "P"), ("f8c5", "b"), ("c2c3", "P"), ("d7d6", "p"),
]  # fmt: skip


@family
def test_every_piece_reads_as_the_table_says(presence_only: bool) -> None:
    for piece in Piece:
        assert _READINGS[presence_only][piece] == _reading(piece, presence_only)


@family
def test_after_a_move_is_read_the_board_shows_the_new_position_exactly(
    presence_only: bool,
) -> None:
    desk = Desk(presence_only=presence_only, clock=True)
    side = Side.RIGHT
    for uci, symbol in OPENING:
        got = desk.move(uci, symbol)
        assert moves_in(got) == [uci]
        recognizer = desk.recognizer
        top = recognizer._top
        assert top is not None
        assert not top.diff
        assert tuple(recognizer._board) == top.node.view
        desk.press(side)
        side = Side.LEFT if side is Side.RIGHT else Side.RIGHT
    assert desk.final_ucis() == [uci for uci, _ in OPENING]


def _presence(squares: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(OCCUPIED if symbol else EMPTY for symbol in squares)


@pytest.mark.parametrize("variant_id", ["standard", "chess960"])
def test_a_presence_view_made_from_the_one_before_reads_as_the_position(variant_id: str) -> None:
    """What a presence-only board reads after an action, made from what it read before and
    the action's changes, is what it reads for the position after it (castlings, en passant
    captures and promotions among the actions of random games)."""
    rng = random.Random(variant_id)
    variant = get_variant(variant_id)
    kinds = set()
    for _game in range(12):
        starts = variant.start_positions()
        game = variant.new_game(starts[rng.randrange(len(starts))])
        for _ply in range(rng.randrange(40, 160)):
            actions = game.legal_actions()
            if not actions:
                break
            view = _presence(game.squares)
            for la in actions:
                game.apply(la.action)
                assert presence_after(view, la.changes) == _presence(game.squares)
                game.undo()
                kinds.add(len(la.changes))
            game.apply(rng.choice(actions).action)
    assert kinds >= {2, 3, 4}  # moves and captures, en passant, castlings


def test_a_presence_only_recogniser_reads_each_position_as_its_squares() -> None:
    """Each position of a presence-only game, a move replaced among them, reads as its
    squares do."""
    desk = Desk(presence_only=True, clock=True)
    side = Side.RIGHT
    for uci, symbol in OPENING:
        desk.move(uci, symbol)
        desk.press(side)
        side = Side.LEFT if side is Side.RIGHT else Side.RIGHT
        for node in desk.recognizer._nodes:
            assert node.view == _presence(node.squares)
    assert desk.final_ucis() == [uci for uci, _ in OPENING]


def test_whether_pieces_attack_squares_reads_as_their_attackers() -> None:
    """The re-reading's test of a reading's squares against the squares handled (whether a
    piece on one attacks one) answers as the attackers python-chess finds for them."""
    rng = random.Random("attacks")
    desk = Desk(presence_only=True)
    recognizer = desk.recognizer
    game = recognizer.game
    assert game is not None
    answers = set()
    for _ply in range(120):
        board = game.chess_board()
        assert board is not None
        for _ in range(20):
            squares, targets = rng.getrandbits(64) & rng.getrandbits(64), 0
            for _ in range(rng.randrange(1, 6)):
                targets |= 1 << rng.randrange(64)
            attackers = 0
            for target in chess.scan_forward(targets):
                attackers |= board.attackers_mask(chess.WHITE, target)
                attackers |= board.attackers_mask(chess.BLACK, target)
            expected = bool(squares & attackers)
            assert recognizer._attacks(squares, targets) == expected
            answers.add(expected)
        actions = game.legal_actions()
        if not actions:
            break
        game.apply(rng.choice(actions).action)
    assert answers == {False, True}


def test_a_takeback_to_a_position_seen_twice_goes_back_to_the_later_one() -> None:
    desk = Desk(clock=False)
    dance = [
        ("e2e4", "P"), ("e7e5", "p"), ("g1f3", "N"), ("b8c6", "n"), ("f3g1", "N"),
        ("c6b8", "n"), ("g1f3", "N"), ("b8c6", "n"), ("f3g1", "N"),
    ]  # fmt: skip
    for uci, symbol in dance:
        desk.move(uci, symbol)
        desk.wait(3)
    assert desk.final_ucis() == [uci for uci, _ in dance]
    # back two actions at once, to the position after 4.Nf3 (ply 7, as after ply 3): the
    # later one
    desk.lift("g1")
    desk.lift("c6")
    desk.put("b8", "n")
    got = desk.put("f3", "N")
    assert [t.moves for t in of_type(got, "takeback")] == [("f3g1", "b8c6")]
    assert [t.ply for t in of_type(got, "takeback")] == [7]
    assert desk.all_ucis() == [uci for uci, _ in dance[:7]]
