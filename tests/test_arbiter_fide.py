"""The FIDE Laws of Chess (2023) at a table: one scenario per article, written as the
physical lifts, places and clock presses a player makes."""

from __future__ import annotations

import pytest
from test_table_helpers import Hands, irregular, of_type, rulings

from service.table import TableSettings

FIDE = TableSettings(rules="fide-standard")
CASTLE_FEN = "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1"


def claims(hands: Hands, status: str = "offered") -> list[dict[str, object]]:
    return [c for c in of_type(hands.out, "claim") if c["status"] == status]


def test_fide_4_3_1_touched_own_piece_must_be_moved() -> None:
    hands = Hands(FIDE)
    hands.lift("d2")
    hands.put("d2", "P")  # touched, put back
    hands.play("e2e4", "P", True)
    offered = claims(hands)
    assert [c["kind"] for c in offered] == ["touch-move"]
    assert offered[0]["claimant"] == "black"
    assert offered[0]["article"] == "FIDE 4.3.1"
    hands.admin("rule", claim=offered[0]["id"], decision="accept")
    assert rulings(hands.out, "must-move")[0]["square"] == "d2"
    assert rulings(hands.out, "restore")[0]["restore_ply"] == 0


def test_fide_4_8_touch_move_claim_lapses_when_the_opponent_touches_a_piece() -> None:
    hands = Hands(FIDE)
    hands.lift("d2")
    hands.put("d2", "P")
    hands.play("e2e4", "P", True)
    hands.lift("e7")
    assert [c["kind"] for c in claims(hands, "lapsed")] == ["touch-move"]


def test_fide_4_3_2_touched_opponent_piece_must_be_captured() -> None:
    hands = Hands(FIDE, fen="rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2")
    hands.lift("d5")
    hands.put("d5", "p")
    hands.play("g1f3", "N", True)
    assert [c["kind"] for c in claims(hands)] == ["touch-move"]  # 4.3.2 with 4.3.3


def test_fide_4_3_touching_the_piece_that_moves_is_no_violation() -> None:
    hands = Hands(FIDE)
    hands.lift("e2")
    hands.put("e2", "P")
    hands.play("e2e4", "P", True)
    assert claims(hands) == []


def test_fide_4_4_2_rook_then_king_forbids_castling() -> None:
    hands = Hands(FIDE, fen=CASTLE_FEN)
    hands.move("h1f1", "R")
    hands.move("e1g1", "K")
    hands.press(True)
    assert [m["uci"] for m in hands.table.moves()] == ["e1g1"]
    assert [c["kind"] for c in claims(hands)] == ["castling-after-rook"]


def test_fide_4_4_king_first_castling_is_fine() -> None:
    hands = Hands(FIDE, fen=CASTLE_FEN)
    hands.move("e1g1", "K")
    hands.move("h1f1", "R")
    hands.press(True)
    assert claims(hands) == []


def test_fide_4_7_released_piece_stays_on_its_square() -> None:
    hands = Hands(FIDE)
    hands.move("b1c3", "N")
    hands.wait(1.0)
    hands.move("c3a3", "N")
    hands.press(True)
    assert [c["kind"] for c in claims(hands)] == ["released-piece"]


def test_fide_7_5_1_illegal_move_corrected_before_the_press_is_no_irregularity() -> None:
    hands = Hands(FIDE)
    hands.move("e1e3", "K")
    hands.wait(3)
    hands.move("e3e1", "K")
    hands.play("e2e4", "P", True)
    assert irregular(hands.out) == []
    assert [m["san"] for m in hands.table.moves()] == ["e4"]


def test_fide_7_5_1_illegal_move_completed_adds_two_minutes() -> None:
    hands = Hands(FIDE)
    hands.play("e2e4", "P", True)
    hands.table.take_clock_orders()
    hands.move("e8e6", "k")
    got = hands.press(False)
    assert irregular(got) == ["illegal-move"]
    assert rulings(got, "restore")[0]["restore_ply"] == 1
    assert rulings(got, "penalty-time")[0]["add_time"] == {"white": 120.0}
    assert rulings(got, "clock")[0]["run"] == "black"
    orders = hands.table.take_clock_orders()
    assert any(o.kind == "text" and o.text == "ILLEGAL" for o in orders)
    last = [o for o in orders if o.kind == "set_and_run"][-1]
    assert last.left > 400  # White (left) got two minutes
    assert last.run is not None
    assert last.run.value == "right"  # Black's time runs again
    hands.move("e6e8", "k")
    hands.play("e7e5", "p", False)  # the king could not move (4.5): any move


def test_fide_7_5_1_the_replacing_move_is_made_with_the_same_piece() -> None:
    hands = Hands(FIDE)
    hands.play("e2e4", "P", True)
    hands.play("e7e5", "p", False)
    hands.move("e1e3", "K")
    hands.press(True)
    hands.move("e3e1", "K")
    hands.play("g1f3", "N", True)  # 4.3 applies to the replacing move: Ke2 was possible
    offered = claims(hands)
    assert [c["kind"] for c in offered] == ["touch-move"]
    assert offered[0]["square"] == "e1"


@pytest.mark.parametrize("rules", ["fide-rapid", "fide-blitz"])
def test_fide_a_4_2_and_b_3_rapid_and_blitz_illegal_move_adds_one_minute(rules: str) -> None:
    hands = Hands(TableSettings(rules=rules, time_control="900+10"))
    hands.move("e1e3", "K")
    got = hands.press(True)
    assert rulings(got, "penalty-time")[0]["add_time"] == {"black": 60.0}


def test_fide_7_5_5_second_illegal_move_loses() -> None:
    hands = Hands(FIDE)
    hands.move("e1e3", "K")
    hands.press(True)
    hands.move("e3e1", "K")
    hands.move("d1d5", "Q")
    got = hands.press(True)
    assert rulings(got, "result")[0]["result"] == "0-1"
    assert hands.table.phase == "finished"


def test_fide_7_5_5_second_illegal_move_draws_when_the_opponent_cannot_mate() -> None:
    hands = Hands(FIDE, fen="4k3/8/8/8/8/8/4P3/4K3 w - - 0 1")
    hands.move("e1e3", "K")
    hands.press(True)
    hands.move("e3e1", "K")
    hands.move("e1e3", "K")
    hands.press(True)
    assert hands.table.result == "1/2-1/2"


def test_fide_7_5_2_pawn_on_the_last_rank_not_replaced() -> None:
    hands = Hands(FIDE, fen="8/4P1k1/8/8/8/8/8/4K3 w - - 0 1")
    hands.move("e7e8", "P")
    got = hands.press(True)
    assert irregular(got) == ["pawn-not-promoted"]
    assert rulings(got, "promote")[0]["uci"] == "e7e8q"
    assert rulings(got, "penalty-time")
    hands.lift("e8")
    hands.put("e8", "Q")
    assert [(m["uci"], m["final"]) for m in hands.table.moves()] == [("e7e8q", True)]


def test_fide_7_5_2_presence_only_board_reads_the_promotion_itself() -> None:
    hands = Hands(FIDE, fen="8/4P1k1/8/8/8/8/8/4K3 w - - 0 1", presence_only=True)
    hands.move("e7e8", "P")
    got = hands.press(True)
    assert irregular(got) == []
    assert [m["uci"] for m in hands.table.moves()] == ["e7e8q"]


def test_fide_7_5_3_press_without_a_move_is_penalised_as_illegal() -> None:
    hands = Hands(FIDE)
    got = hands.press(True)
    assert irregular(got) == ["press-without-move"]
    assert rulings(got, "penalty-time")[0]["add_time"] == {"black": 120.0}


def test_fide_7_4_1_displaced_pieces_are_restored_on_own_time() -> None:
    hands = Hands(FIDE)
    hands.move("e2e4", "P")
    hands.lift("d2")  # knocked over
    got = hands.press(True)
    assert irregular(got) == ["displaced-pieces"]
    assert rulings(got, "clock")[0]["run"] == "white"


def test_fide_6_9_flag_fall_loses_without_a_clock() -> None:
    hands = Hands(TableSettings(rules="fide-blitz", time_control="60+0"), clock=False)
    hands.wait(61)
    assert hands.table.result == "0-1"
    assert hands.table.state()["reason"] == "time-out"


def test_fide_6_9_flag_fall_draws_when_the_opponent_cannot_mate() -> None:
    hands = Hands(
        TableSettings(rules="fide-blitz", time_control="60+0"),
        fen="4k3/8/8/8/8/8/3PP3/4K3 w - - 0 1",
        clock=False,
    )
    hands.wait(61)
    assert hands.table.result == "1/2-1/2"


def test_fide_5_1_1_checkmate_before_the_flag_stands() -> None:
    fen = "rnbqkbnr/ppppp2p/5p2/6p1/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 3"
    hands = Hands(TableSettings(rules="fide-blitz", time_control="60+0"), fen=fen, clock=False)
    hands.move("d1h5", "Q")
    hands.wait(70)
    assert hands.table.result == "1-0"
    assert hands.table.state()["reason"] == "checkmate"


def test_fide_9_2_threefold_repetition_claim_and_9_5_wrong_claim() -> None:
    hands = Hands(FIDE)
    got = hands.admin("claim", side="white", kind="threefold")
    assert rulings(got, "reject")
    assert rulings(got, "penalty-time")[0]["add_time"] == {"black": 120.0}
    for _ in range(2):
        hands.play("g1f3", "N", True)
        hands.play("g8f6", "n", False)
        hands.play("f3g1", "N", True)
        hands.play("f6g8", "n", False)
    got = hands.admin("claim", side="white", kind="threefold")
    assert rulings(got, "result")[0]["reason"] == "threefold repetition"
    assert hands.table.result == "1/2-1/2"


def test_fide_9_3_fifty_moves_claim() -> None:
    hands = Hands(FIDE, fen="4k3/8/8/8/8/8/8/R3K3 w - - 99 80")
    hands.play("a1a2", "R", True)
    got = hands.admin("claim", side="black", kind="fifty-moves")
    assert rulings(got, "result")[0]["reason"] == "fifty moves"


def test_fide_5_2_2_dead_position_ends_the_game() -> None:
    hands = Hands(FIDE, fen="4k3/8/8/8/8/8/3q4/4K3 w - - 0 1")
    hands.play("e1d2", "K", True)
    assert hands.table.result == "1/2-1/2"


def test_fide_takeback_of_a_completed_move_is_an_irregularity() -> None:
    hands = Hands(FIDE)
    hands.play("e2e4", "P", True)
    hands.move("e4e2", "P")
    assert irregular(hands.out) == ["takeback"]
