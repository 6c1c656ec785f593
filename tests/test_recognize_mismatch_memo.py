"""A board left in a mismatch (pieces moved about after a game, a knocked-over piece not set
back) is asked at every tick which squares are wrong; the recogniser keeps the answer while
the board and the positions it compares with stay the same, and works it out again once
either changes."""

from __future__ import annotations

import pytest
from test_recognize_helpers import Desk, of_type

from service.recognize.events import Mismatch


@pytest.mark.parametrize("presence_only", [False, True], ids=["identity", "presence"])
def test_a_lasting_mismatch_keeps_its_answer_until_the_board_changes(
    presence_only: bool,
) -> None:
    desk = Desk(presence_only=presence_only, fen="4k3/8/8/8/4P3/8/8/4K3 w - - 0 1")
    desk.lift("e4")
    desk.lift("e1", 0.5)
    desk.put("e3", "K", 0.5)  # two squares from e1: no king move
    first = of_type(desk.wait(2.5), "mismatch")
    assert first
    recognizer = desk.recognizer
    kept = recognizer._nearest
    assert kept is not None
    key, squares = kept
    assert squares == first[-1].squares  # type: ignore[attr-defined]

    # (no method patched to count the searches: a compiled recogniser's calls do not go
    # through the class; a wrong answer planted in the memo tells whether it was used)
    planted = (63,)
    recognizer._nearest = (key, planted)
    again = desk.wait(0.5)
    assert [m.squares for m in again if isinstance(m, Mismatch)] == [planted]

    desk.lift("e3", 0.3)  # the board changes: worked out again, not the planted answer
    desk.put("e2", "K", 0.3)
    later = of_type(desk.wait(2.5), "mismatch")
    assert later
    assert all(m.squares != planted for m in later)  # type: ignore[attr-defined]
    assert recognizer._nearest is not None
    assert recognizer._nearest[1] != planted
