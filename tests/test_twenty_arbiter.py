"""20-chess under the FIDE rule sets: touch-move (FIDE 4.3-4.8) in a part of several actions.

The decision (docs/variants.md, "At the table"): each action of a part is a move in the sense
of articles 4.3-4.7.  A piece touched obliges the action that follows the touch; a piece that
cannot make that action -- one that already acted in this part (rule 2: "two different
pieces"), or any piece while the step is a drop -- is touched without obligation (4.5), and
the touch is not carried into the next action.  Written as the physical lifts, places and
presses a player makes."""

from __future__ import annotations

from typing import Any

import chess
from test_table_helpers import Hands, irregular, of_type, rulings

from service.arbiter import Arbiter, get_rules
from service.table import Table, TableSettings

PREFIX = [
    ("e2e4", "P", True), ("d7d5", "p", False), ("e4d5", "P", True), ("d8d5", "q", False),
    ("b1c3", "N", True), ("d5a2", "q", False), ("a1a2", "R", True), ("e7e5", "p", False),
]  # fmt: skip
"""Four orthodox turns: White takes a pawn and a queen, Black two pawns."""


def table(schedule: str) -> Hands:
    return Hands(
        TableSettings(rules="fide-standard", variant="twenty-chess", options=f"schedule={schedule}")
    )


def claims(hands: Hands, status: str = "offered") -> list[dict[str, Any]]:
    return [c for c in of_type(hands.out, "claim") if c["status"] == status]


def sans(hands: Hands) -> list[str]:
    return [m["san"] for m in hands.table.moves()]


def test_rule_2_a_piece_touched_during_the_second_action_must_make_it() -> None:
    hands = table("2")
    hands.move("e2e4", "P")
    hands.lift("d2")
    hands.put("d2", "P")  # touched, put back
    hands.move("g1f3", "N")
    hands.press(True)
    assert sans(hands) == ["e2-e4", "Ng1-f3"]
    offered = claims(hands)
    assert [(c["kind"], c["article"], c["ply"], c["square"]) for c in offered] == [
        ("touch-move", "FIDE 4.3.1", 2, "d2")
    ]
    assert offered[0]["claimant"] == "black"
    hands.admin("rule", claim=offered[0]["id"], decision="accept")
    # only the second action is taken back; the piece touched must make it
    assert rulings(hands.out, "restore")[0]["restore_ply"] == 1
    assert rulings(hands.out, "must-move")[0]["square"] == "d2"
    assert hands.table.state()["obligations"] == {"white": "d2"}
    seen = len(hands.out)
    hands.move("f3g1", "N")
    hands.move("d2d4", "P")
    hands.press(True)
    assert sans(hands) == ["e2-e4", "d2-d4"]
    assert hands.table.state()["obligations"] == {}
    assert of_type(hands.out[seen:], "claim") == []
    assert irregular(hands.out[seen:]) == []


def test_rule_2_a_piece_that_already_acted_touched_again_is_no_obligation() -> None:
    hands = table("2")
    hands.move("e2e4", "P")
    hands.lift("e4")
    hands.put("e4", "P")  # the pawn that moved first, touched again: it cannot move twice
    hands.move("g1f3", "N")
    hands.press(True)
    assert sans(hands) == ["e2-e4", "Ng1-f3"]
    assert of_type(hands.out, "claim") == []
    assert irregular(hands.out) == []


def test_rule_3_a_swapped_piece_touched_again_is_no_obligation() -> None:
    hands = table("3")
    hands.lift("b1")
    hands.lift("c1")
    hands.put("b1", "B")
    hands.put("c1", "N")
    hands.lift("c1")
    hands.put("c1", "N")  # the knight just swapped, touched again
    hands.move("e2e4", "P")
    hands.press(True)
    assert sans(hands) == ["Nb1<>Bc1", "e2-e4"]
    assert of_type(hands.out, "claim") == []
    assert irregular(hands.out) == []


def test_a_piece_touched_before_the_first_action_must_make_that_action() -> None:
    """The knight is touched, a pawn moves first and the knight second: the knight had to
    make the first action.  Black's claim stays open through the rest of White's part and
    lapses when Black touches a piece (4.8)."""
    hands = table("2,2")
    hands.lift("g1")
    hands.put("g1", "N")
    hands.move("e2e4", "P")
    hands.move("g1f3", "N")
    offered = claims(hands)
    assert [(c["ply"], c["square"], c["article"]) for c in offered] == [(1, "g1", "FIDE 4.3.1")]
    hands.press(True)
    assert [c["id"] for c in claims(hands)] == [offered[0]["id"]]  # still open
    hands.lift("e7")
    assert [c["id"] for c in claims(hands, "lapsed")] == [offered[0]["id"]]


def test_a_piece_touched_while_the_step_is_a_drop_carries_no_obligation() -> None:
    hands = table("1,1,1,1,4")
    for uci, symbol, white in PREFIX:
        hands.play(uci, symbol, white)
    hands.lift("g1")
    hands.put("g1", "N")  # touched while a drop is due: no knight can drop
    hands.put("d3", "Q")
    hands.move("c3b5", "N")  # another piece than the one touched
    hands.press(True)
    assert sans(hands)[8:] == ["Q@d3", "Nc3-b5"]
    assert of_type(hands.out, "claim") == []
    assert irregular(hands.out) == []


def test_rule_4_the_touched_piece_must_make_the_move_after_the_drop() -> None:
    hands = table("1,1,1,1,4")
    for uci, symbol, white in PREFIX:
        hands.play(uci, symbol, white)
    hands.put("d3", "Q")
    hands.lift("g1")
    hands.put("g1", "N")  # touched during the move step
    hands.move("c3b5", "N")
    hands.press(True)
    assert [(c["ply"], c["square"]) for c in claims(hands)] == [(10, "g1")]


def test_an_amended_drop_or_swap_is_judged_without_from_and_to_squares() -> None:
    """FIDE 4.7 compares a move's from- and to-squares; a drop, a swap or a gift has none
    of that form, so an amendment of one is no released-piece case (and no error)."""
    arbiter = Arbiter(get_rules("fide-standard"), Table("t", TableSettings(variant="twenty-chess")))
    arbiter.on_place(1.0, chess.D3, "Q")
    assert arbiter.on_amend(5.0, 9, True, "Q@d3", "Q@d4") == []
    assert arbiter.on_amend(5.0, 1, True, "b1<>c1", "c1<>d1") == []
    assert arbiter.on_amend(5.0, 1, True, "-a2", "-b2") == []
