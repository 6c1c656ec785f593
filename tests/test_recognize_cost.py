"""The recogniser's shortcuts on the common path read exactly as the long way round: the
board's view of a legal action made once and shared (by every recogniser of a process), and
only the last two positions keeping what was worked out for them."""

from __future__ import annotations

import pytest
from test_recognize_helpers import Desk, moves_in, of_type

from dgt.events import Side
from service.recognize import recognizer as recognizer_module
from service.recognize.recognizer import _candidate, _seen
from service.variants import get_variant
from service.variants.standard import ChessGame

FAMILIES = [False, True]
family = pytest.mark.parametrize("presence_only", FAMILIES, ids=["identity", "presence"])

# an opening with captures by the same piece on either side, a recapture and castling
PLAY = [
    ("e2e4", "P"), ("d7d5", "p"), ("e4d5", "P"), ("d8d5", "q"), ("b1c3", "N"), ("d5a5", "q"),
    ("g1f3", "N"), ("c8g4", "b"), ("f1e2", "B"), ("b8c6", "n"), ("e1g1", "K"),
]  # fmt: skip


def _play(presence_only: bool) -> list[object]:
    desk = Desk(presence_only=presence_only, clock=True)
    side = Side.RIGHT
    for uci, symbol in PLAY:
        if uci == "e1g1":
            desk.lift("e1")
            desk.lift("h1")
            desk.put("g1", "K")
            desk.put("f1", "R")
        else:
            if desk.squares.get(int(_square(uci[2:4]))) is not None:
                desk.lift(uci[2:4])  # the captured piece first
            desk.move(uci, symbol)
        desk.press(side)
        side = Side.LEFT if side is Side.RIGHT else Side.RIGHT
    return list(desk.out)


def _square(name: str) -> int:
    return (ord(name[0]) - ord("a")) + 8 * (int(name[1]) - 1)


@family
def test_shared_views_of_actions_read_as_fresh_ones(presence_only: bool) -> None:
    recognizer_module._SEEN[presence_only].clear()
    cold = _play(presence_only)
    warm = _play(presence_only)  # every action's view now comes from the shared table
    assert warm == cold
    assert moves_in(cold, final=True) == [uci for uci, _ in PLAY]


@family
def test_a_shared_view_is_made_again_for_other_readings_before_the_action(
    presence_only: bool,
) -> None:
    game = get_variant("standard").new_game()
    (push,) = [la for la in game.actions_changing(_square("e2")) if la.uci == "e2e4"]
    view = game.squares if not presence_only else tuple("*" if s else s for s in game.squares)
    assert _seen(push, view, presence_only) == _candidate(push, view, presence_only)
    other = list(view)
    # the same action object, its square already reading what the action sets down
    other[_square("e4")] = "*" if presence_only else "P"
    changed = tuple(other)
    got = _seen(push, changed, presence_only)
    assert got == _candidate(push, changed, presence_only)
    assert got.key == frozenset([_square("e2")])


@family
def test_a_takeback_to_an_old_position_reads_its_actions_again(presence_only: bool) -> None:
    desk = Desk(presence_only=presence_only)
    for uci, symbol in [("e2e4", "P"), ("e7e5", "p"), ("g1f3", "N"), ("b8c6", "n")]:
        desk.move(uci, symbol)
        desk.wait(3)
    # the position after 1.e4 is three actions back: what was worked out for it is gone
    assert not desk.recognizer._nodes[1].candidates
    game = desk.recognizer.game
    assert isinstance(game, ChessGame)
    assert game._line[1].known is None  # the game's position forgot its actions too
    desk.move("c6b8", "n")
    desk.move("f3g1", "N")
    desk.move("e5e7", "p")
    desk.wait(3)
    assert desk.final_ucis() == ["e2e4"]
    got = desk.move("d7d5", "p")
    assert moves_in(got) == ["d7d5"]
    assert not of_type(got, "mismatch")
