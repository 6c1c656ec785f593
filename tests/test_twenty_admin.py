"""20-chess at a table: the arbiter's ``drop_kind`` command, which corrects the kind of a
captured piece dropped on a presence-only board (the board sees a piece set down, not which
one; the model guesses the first legal kind in letter order)."""

from __future__ import annotations

import re

import pytest
from test_table_helpers import Hands, of_type

from service.table import TableError, TableSettings

PREFIX = [
    ("e2e4", "P", True), ("d7d5", "p", False), ("e4d5", "P", True), ("d8d5", "q", False),
    ("b1c3", "N", True), ("d5a2", "q", False), ("a1a2", "R", True), ("e7e5", "p", False),
]  # fmt: skip
"""Four orthodox turns: White takes a pawn and a queen, Black two pawns."""


def at_rule_4(*, presence_only: bool = True) -> Hands:
    """Turn 5 under rule 4, White has dropped a piece on d3 and moved Ng1-f3."""
    settings = TableSettings(
        rules="fide-standard", variant="twenty-chess", options="schedule=1,1,1,1,4"
    )
    hands = Hands(settings, presence_only=presence_only)
    for uci, symbol, white in PREFIX:
        hands.play(uci, symbol, white)
    hands.put("d3", "Q")
    hands.play("g1f3", "N", True)
    return hands


def sans(hands: Hands) -> list[str]:
    return [m["san"] for m in hands.table.moves()]


def test_a_guessed_drop_is_corrected_in_the_model_and_the_record() -> None:
    hands = at_rule_4()
    assert sans(hands)[8:] == ["P@d3", "Ng1-f3"]  # presence only: the pawn is the guess
    assert hands.table.state()["variant_panel"]["hands"]["white"] == "q"
    got = hands.admin("drop_kind", ply="last", kind="q")
    ruling = of_type(got, "ruling")[0]
    assert ruling["kind"] == "drop-kind"
    assert ruling["ply"] == 9
    assert "P@d3 is Q@d3" in ruling["message"]
    assert sans(hands)[8:] == ["Q@d3", "Ng1-f3"]
    assert hands.table.moves()[8]["uci"] == "Q@d3"
    panel = hands.table.state()["variant_panel"]
    assert panel["hands"]["white"] == "p"
    assert panel["placement"].split("/")[5] == "2NQ1N2"
    pgn = " ".join(hands.table.pgn().split())
    assert "5. Q@d3 {" in pgn
    assert "(drop corrected by the arbiter: was P@d3)} Ng1-f3" in pgn
    # the game goes on with a queen on d3, in the table's model and the recogniser's
    hands.put("a6", "p")
    hands.play("b8c6", "n", False)
    hands.play("d3h7", "Q", True)  # a queen's move: no pawn could make it
    assert sans(hands)[10:] == ["P@a6", "Nb8-c6", "Qd3xh7"]
    assert hands.table.state()["mismatch"] == []


def test_a_drop_is_corrected_by_its_ply_with_later_actions_made_again() -> None:
    hands = at_rule_4()
    hands.put("a6", "p")
    hands.play("b8c6", "n", False)
    hands.admin("drop_kind", ply=9, kind="q")
    assert sans(hands)[8:] == ["Q@d3", "Ng1-f3", "P@a6", "Nb8-c6"]
    with pytest.raises(TableError, match=r"ply 11 \(P@a6\) is already of kind p"):
        hands.admin("drop_kind", ply="last", kind="p")  # "last": Black's drop now
    assert sans(hands)[8:] == ["Q@d3", "Ng1-f3", "P@a6", "Nb8-c6"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"ply": 9, "kind": "n"}, "no n in the hand"),
        ({"ply": 10, "kind": "q"}, "is not a drop"),
        ({"ply": 9, "kind": "p"}, "already of kind p"),
        ({"ply": 30, "kind": "q"}, "no action at ply 30"),
        ({"ply": 9, "kind": "k"}, "kind (p, n, b, r or q)"),
        ({"ply": "first", "kind": "q"}, 'ply must be a number or "last"'),
    ],
)
def test_refusals_are_one_line_and_change_nothing(args: dict[str, object], message: str) -> None:
    hands = at_rule_4()
    before = (sans(hands), hands.table.fen())
    with pytest.raises(TableError, match=re.escape(message)) as caught:
        hands.admin("drop_kind", **args)
    assert "\n" not in str(caught.value)
    assert (sans(hands), hands.table.fen()) == before


def test_a_board_that_reads_pieces_is_set_right_on_the_board() -> None:
    hands = at_rule_4(presence_only=False)
    assert sans(hands)[8] == "Q@d3"  # read off the board
    with pytest.raises(TableError, match="reads each piece"):
        hands.admin("drop_kind", ply=9, kind="p")


def test_a_later_action_that_would_turn_illegal_refuses_the_correction() -> None:
    hands = at_rule_4()
    hands.admin("drop_kind", ply=9, kind="q")
    hands.put("a6", "p")
    hands.play("b8c6", "n", False)
    hands.play("d3h7", "Q", True)  # only a queen (not the guessed pawn) makes this move
    with pytest.raises(TableError, match=r"ply 9: the later action d3h7 would not be legal"):
        hands.admin("drop_kind", ply=9, kind="p")
    assert sans(hands)[8:] == ["Q@d3", "Ng1-f3", "P@a6", "Nb8-c6", "Qd3xh7"]


def test_other_variants_refuse_the_command() -> None:
    hands = Hands(TableSettings(), presence_only=True)
    with pytest.raises(TableError, match="20-chess"):
        hands.admin("drop_kind", ply="last", kind="q")
