"""The US Chess speed chess rules at a table, rule by rule."""

from __future__ import annotations

from test_table_helpers import Hands, irregular, of_type, rulings

from service.table import TableSettings

USCF = TableSettings(rules="uscf-speed")


def offered(hands: Hands, kind: str) -> list[dict[str, object]]:
    return [
        c for c in of_type(hands.out, "claim") if c["kind"] == kind and c["status"] == "offered"
    ]


def test_uscf_11_illegal_move_after_the_press_offers_the_opponent_a_claim() -> None:
    hands = Hands(USCF)
    hands.move("e1e3", "K")
    got = hands.press(True)
    assert irregular(got) == ["illegal-move"]
    claim = offered(hands, "illegal-move")[0]
    assert claim["claimant"] == "black"
    assert not rulings(got, "penalty-time")
    hands.admin("rule", claim=claim["id"], decision="accept")
    assert hands.table.result == "0-1"


def test_uscf_11_taking_the_king_left_in_check_is_a_claim() -> None:
    hands = Hands(USCF, fen="4k3/8/8/8/8/8/7r/4K3 w - - 0 1")
    hands.move("e1f2", "K")  # into the rook's line: illegal
    hands.press(True)
    assert offered(hands, "illegal-move")
    hands.lift("f2")  # Black takes the king with the rook
    hands.move("h2f2", "r")
    assert hands.table.result == "0-1"


def test_uscf_11_unclaimed_illegal_move_stands_when_the_position_is_legal() -> None:
    hands = Hands(USCF)
    hands.move("g1g3", "N")  # a knight moved like a rook
    hands.press(True)
    hands.play("e7e5", "p", False)  # Black replies without claiming
    assert [c["status"] for c in of_type(hands.out, "claim")][-1] == "lapsed"
    assert rulings(hands.out, "stand")
    hands.play("g3f5", "N", True)
    assert [m["uci"] for m in hands.table.moves()][-3:] == ["g1g3", "e7e5", "g3f5"]


def test_uscf_2d_flag_fall_is_only_offered_to_the_opponent() -> None:
    hands = Hands(TableSettings(rules="uscf-speed", time_control="60+0"), clock=False)
    hands.wait(61)
    assert hands.table.phase == "playing"
    claim = offered(hands, "flag")[0]
    assert claim["claimant"] == "black"
    hands.admin("rule", claim=claim["id"], decision="accept")
    assert hands.table.result == "0-1"


def test_uscf_2c_flag_claim_by_a_player_without_mating_material_draws() -> None:
    hands = Hands(
        TableSettings(rules="uscf-speed", time_control="60+0"),
        fen="4k3/8/8/8/8/8/3PP3/4K3 w - - 0 1",
        clock=False,
    )
    hands.wait(61)
    hands.admin("claim", side="black", kind="flag")
    assert hands.table.result == "1/2-1/2"


def test_uscf_13_michigan_count_draws_after_twenty_quiet_pairs() -> None:
    hands = Hands(USCF, fen="4k3/8/8/8/8/8/8/R3K2R w - - 0 1")  # K+2R v K: 20 pairs
    hands.admin("claim", side="black", kind="michigan")
    rook = ["a1a2", "a2a3", "a3a4", "a4a5", "a5a6", "a6a1"]
    king = ["e8d8", "d8e8"]
    for index in range(20):
        hands.play(rook[index % 6], "R", True)
        hands.play(king[index % 2], "k", False)
    assert hands.table.result == "1/2-1/2"
    assert hands.table.state()["reason"] == "Michigan twenty-move rule"


def test_uscf_10_queen_v_queen_claim_waits_for_the_arbiter() -> None:
    hands = Hands(USCF, fen="3qk3/8/8/8/8/8/8/3QK3 w - - 0 1")
    got = hands.admin("claim", side="white", kind="insufficient-losing-chances")
    claim = of_type(got, "claim")[0]
    assert claim["status"] == "made"
    hands.admin("rule", claim=claim["id"], decision="accept")
    assert hands.table.result == "1/2-1/2"


def test_uscf_8_knocked_over_piece_before_the_press() -> None:
    hands = Hands(USCF)
    hands.move("e2e4", "P")
    hands.lift("d2")
    got = hands.press(True)
    assert irregular(got) == ["displaced-pieces"]
    assert got[-1].type == "clock"
