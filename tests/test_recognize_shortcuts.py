"""The recogniser's cheap common path reads exactly as the long way round: a square's reading
from a table, the reference of a move read from the top position made without comparing the
board again, and an earlier position of the game found by comparing the positions with as
many pieces as the board (no index of every position)."""

from __future__ import annotations

import pytest
from test_recognize_helpers import Desk, moves_in, of_type

from dgt.events import Side
from dgt.protocol.constants import Piece
from service.recognize.recognizer import _READINGS, _reading

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
