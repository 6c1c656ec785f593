"""Realtime chess (the realtime chess rules): one scenario per numbered rule, in virtual time.

Times are seconds from the start of the game; the tick is 1 s unless a test says otherwise.
"""

from __future__ import annotations

import chess
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.variants import BLACK, WHITE, IllegalActionError, Move, StartPosition, get_variant
from service.variants.realtime import Realtime, RealtimeGame
from service.variants.standard import squares_of

sq = chess.parse_square


def game_from(fen: str, tick: float = 1.0) -> RealtimeGame:
    variant = Realtime(tick)
    game = variant.new_game(StartPosition("realtime", fen, squares_of(chess.Board(fen))))
    game.start_clock(0.0)
    return game


def mv(uci: str) -> Move:
    move = chess.Move.from_uci(uci)
    promotion = chess.piece_symbol(move.promotion) if move.promotion else None
    return Move(move.from_square, move.to_square, promotion)


def kinds(game: RealtimeGame) -> list[str]:
    return [e.kind for e in game.events()]


def test_rule_1_traditional_setup_and_moves() -> None:
    game = get_variant("realtime").new_game()
    assert game.squares == squares_of(chess.Board())
    ucis = {a.uci for a in game.legal_actions()}
    assert len(ucis) == 40  # the twenty opening moves of each side
    assert {"g1f3", "e2e4", "b8c6", "e7e5"} <= ucis


def test_rule_2_1_no_turns_both_sides_and_any_piece_at_any_time() -> None:
    game = get_variant("realtime").new_game()
    assert game.sides_to_act() == {WHITE, BLACK}
    game.apply_at(mv("e2e4"), 0.0)
    game.apply_at(mv("d2d4"), 0.2)  # White again, at once
    game.apply_at(mv("e7e5"), 0.2)
    game.advance(3.0)
    board = game.squares
    assert board[sq("e4")] == "P"
    assert board[sq("d4")] == "P"
    assert board[sq("e5")] == "p"


def test_rule_2_2_pawn_always_promotes_to_a_queen() -> None:
    game = game_from("4k3/P7/8/8/8/8/8/4K3 w - - 0 1")
    promotions = [a for a in game.legal_actions() if a.action.from_square == sq("a7")]
    assert [a.uci for a in promotions] == ["a7a8q"]
    assert dict(promotions[0].changes)[sq("a8")] == "Q"
    game.apply_at(promotions[0].action, 0.0)
    game.advance(1.0)
    assert game.squares[sq("a8")] == "Q"
    assert "promotion" in kinds(game)


def test_rule_2_3_no_check_king_walks_into_attack_and_castles_through_check() -> None:
    game = game_from("4kr2/8/8/8/8/8/8/4K2R w K - 0 1")
    ucis = {a.uci for a in game.legal_actions() if a.side == WHITE}
    assert "e1f1" in ucis  # into the rook's file: no check rule
    assert "e1g1" in ucis  # castling through the attacked f1


def test_rule_2_4_no_automatic_draw_by_repetition() -> None:
    game = game_from("4k3/8/8/8/8/8/8/4K1N1 w - - 0 1")
    t = 0.0
    for uci in ("g1f3", "f3g1") * 3:
        game.apply_at(mv(uci), t)
        t += 13.0  # two ticks' travel, ten ticks' delay
        game.advance(t)
    assert game.outcome() is None


def test_rule_3_1_a_piece_with_delay_cannot_move() -> None:
    game = get_variant("realtime").new_game()
    game.start_clock(0.0)
    game.apply_at(mv("e2e4"), 0.0)  # arrives at 2 s, delay until 12 s
    game.advance(5.0)
    assert game.delays() == {sq("e4"): pytest.approx(7.0)}
    with pytest.raises(IllegalActionError, match=r"rule 3\.1"):
        game.apply_at(mv("e4e5"), 5.0)
    game.advance(12.0)
    assert game.delays() == {}
    game.apply_at(mv("e4e5"), 12.0)


def test_rule_3_2_dodging_a_piece_under_attack_may_move_away() -> None:
    game = game_from("4k3/8/8/8/R3n3/8/8/4K3 w - - 0 1")
    game.apply_at(mv("a4e4"), 0.0)  # the rook's pivot reaches e4 at 3.501 s
    game.apply_at(mv("e4f6"), 2.0)  # the knight leaves in time
    game.advance(20.0)
    assert game.squares[sq("f6")] == "n"
    assert game.squares[sq("e4")] == "R"
    assert "capture" not in kinds(game)


def test_rule_3_3_same_destination_blocking() -> None:
    game = game_from("4k3/8/8/6n1/R7/8/8/4K3 w - - 0 1")
    game.apply_at(mv("a4e4"), 0.0)
    game.advance(0.5)
    assert "g5e4" not in {a.uci for a in game.legal_actions()}
    with pytest.raises(IllegalActionError, match=r"rule 3\.3"):
        game.apply_at(mv("g5e4"), 0.5)


def test_rule_3_4_move_blocking_and_the_knight_exception() -> None:
    game = game_from("3rk3/8/8/8/R7/8/2N5/4K3 w - - 0 1")
    game.apply_at(mv("d8d4"), 0.0)  # Black heads for d4
    game.advance(0.5)
    ucis = {a.uci for a in game.legal_actions()}
    assert "a4h4" not in ucis  # through d4: blocked
    assert "a4c4" in ucis  # stops short of it
    with pytest.raises(IllegalActionError, match=r"rule 3\.4"):
        game.apply_at(mv("a4h4"), 0.5)
    assert "c2b4" in ucis  # a knight jumps: only its landing square counts


def test_rule_3_4_an_opponent_move_started_at_the_same_time_does_not_block() -> None:
    game = game_from("3rk3/8/8/8/R7/8/8/4K3 w - - 0 1")
    game.apply_at(mv("d8d4"), 0.0)
    game.apply_at(mv("a4h4"), 0.0)  # same instant: not "before you"
    assert game.ply == 2


def test_rule_3_5_through_an_own_moving_piece_but_not_its_destination() -> None:
    game = game_from("4k3/8/8/8/8/8/3R4/3QK3 w - - 0 1")
    game.apply_at(mv("d2h2"), 0.0)  # the rook leaves d2 for h2
    game.advance(0.1)
    ucis = {a.uci for a in game.legal_actions()}
    assert "d1d5" in ucis  # through the rook still on d2: allowed, it is moving
    game = game_from("4k3/8/8/8/R7/8/8/3QK3 w - - 0 1")
    game.apply_at(mv("a4d4"), 0.0)  # the rook is heading for d4
    game.advance(0.1)
    ucis = {a.uci for a in game.legal_actions()}
    assert "d1d6" not in ucis  # through the rook's destination
    assert "d1d3" in ucis


def test_rule_3_6_en_passant_only_while_the_pawn_has_its_delay() -> None:
    fen = "4k3/3p4/8/4P3/8/8/8/4K3 w - - 0 1"
    game = game_from(fen)
    game.apply_at(mv("d7d5"), 0.0)  # arrives at 2 s, delay until 12 s
    game.advance(1.0)
    assert "e5d6" not in {a.uci for a in game.legal_actions()}  # not arrived yet
    game.advance(3.0)
    ep = next(a for a in game.legal_actions() if a.uci == "e5d6")
    assert dict(ep.changes) == {sq("e5"): "", sq("d6"): "P", sq("d5"): ""}
    game.apply_at(ep.action, 3.0)
    game.advance(5.0)
    assert game.squares[sq("d5")] == ""
    assert game.squares[sq("d6")] == "P"
    assert "en-passant" in kinds(game)
    late = game_from(fen)
    late.apply_at(mv("d7d5"), 0.0)
    late.advance(12.0)
    assert "e5d6" not in {a.uci for a in late.legal_actions()}


def test_rule_3_7_a_normal_capture_beats_en_passant() -> None:
    game = game_from("2n1k3/3p4/8/4P3/8/8/8/4K3 w - - 0 1")
    game.apply_at(mv("d7d5"), 0.0)  # arrives at 2 s
    game.apply_at(mv("c8d6"), 2.0)  # the knight lands on d6 at 4 s
    game.advance(4.5)
    assert sq("d5") in game.delays()
    capture = next(a for a in game.legal_actions() if a.uci == "e5d6")
    assert sq("d5") not in capture.changed_squares
    game.apply_at(capture.action, 4.5)
    game.advance(6.0)
    assert game.squares[sq("d5")] == "p"  # the pawn was not taken en passant
    assert game.squares[sq("d6")] == "P"


def test_rule_4_1_capture_the_standing_piece_is_removed() -> None:
    game = game_from("4k3/8/8/8/R3n3/8/8/4K3 w - - 0 1")
    game.apply_at(mv("a4e4"), 0.0)
    game.advance(3.5)
    assert game.virtual_squares()[sq("e4")] == "n"
    game.advance(3.501)
    capture = [e for e in game.events() if e.kind == "capture"]
    assert [(e.time, e.square, e.piece) for e in capture] == [(3.501, sq("e4"), "n")]


def test_rule_4_2_in_move_the_piece_moved_last_is_removed() -> None:
    game = game_from("4k3/8/3r4/8/R7/8/8/4K3 w - - 0 1")
    game.apply_at(mv("a4h4"), 0.0)  # on d4 from 2.501 s to 3.5 s
    game.apply_at(mv("d6d1"), 1.0)  # on d4 from 2.501 s: moved last
    game.advance(10.0)
    [inmove] = [e for e in game.events() if e.kind == "in-move"]
    assert (inmove.square, inmove.piece, inmove.time) == (sq("d4"), "r", 2.501)
    assert game.squares[sq("h4")] == "R"
    assert game.squares[sq("d1")] == ""


def test_rule_4_3_in_move_capture_through_a_piece_that_came_to_stand() -> None:
    game = game_from("4k3/8/8/6n1/R7/8/8/4K3 w - - 0 1")
    game.apply_at(mv("a4h4"), 0.0)  # on e4 from 3.501 s
    game.apply_at(mv("g5e4"), 0.0)  # the knight lands on e4 at 2 s and stands there
    game.advance(10.0)
    capture = [e for e in game.events() if e.kind == "capture"]
    assert [(e.square, e.piece) for e in capture] == [(sq("e4"), "n")]
    assert game.squares[sq("h4")] == "R"


def test_rule_4_4_double_dodge_when_both_moved_at_the_same_time() -> None:
    game = game_from("4k3/3r4/8/8/R7/8/8/4K3 w - - 0 1")
    game.apply_at(mv("a4h4"), 0.0)
    game.apply_at(mv("d7d1"), 0.0)  # both on d4 from 2.501 s
    game.advance(10.0)
    assert "dodge" in kinds(game)
    assert "in-move" not in kinds(game)
    assert game.squares[sq("h4")] == "R"
    assert game.squares[sq("d1")] == "r"


def test_rule_5_1_taking_the_king_wins() -> None:
    game = game_from("k7/8/8/8/R7/8/8/4K3 w - - 0 1")
    game.apply_at(mv("a4a8"), 0.0)
    game.advance(3.0)
    assert game.outcome() is None
    game.advance(3.501)
    end = game.outcome()
    assert end is not None
    assert (end.result, end.reason) == ("1-0", "king taken")
    assert game.sides_to_act() == frozenset()
    assert game.legal_actions() == []


def test_rule_5_4_five_minutes_without_a_capture_draw() -> None:
    game = game_from("4k3/8/8/8/R3n3/8/8/4K3 w - - 0 1")
    game.advance(100.0)
    game.apply_at(mv("a4e4"), 100.0)  # captures at 103.501 s
    game.advance(300.0)
    assert game.outcome() is None
    game.advance(403.5)
    assert game.outcome() is None
    game.advance(403.501)
    end = game.outcome()
    assert end is not None
    assert (end.result, end.reason) == ("1/2-1/2", "five minutes without capture")


def test_rule_6_one_field_per_tick_half_way_rule_and_delay_of_ten_ticks() -> None:
    game = get_variant("realtime").new_game()
    game.start_clock(0.0)
    game.apply_at(mv("e2e4"), 0.0)
    game.advance(0.5)
    assert game.virtual_squares()[sq("e2")] == "P"
    game.advance(0.501)
    assert game.virtual_squares()[sq("e3")] == "P"
    game.advance(1.501)
    assert game.virtual_squares()[sq("e4")] == "P"
    [travel] = game.travels()
    assert travel.arrives == 2.0
    game.advance(2.0)
    assert game.delays() == {sq("e4"): 10.0}


def test_rule_6_knight_and_castling_take_two_ticks() -> None:
    game = game_from("4k3/8/8/8/8/8/8/4K1NR w K - 0 1")
    game.apply_at(mv("g1f3"), 0.0)
    game.advance(1.0)
    virtual = game.virtual_squares()
    assert virtual[sq("g1")] == ""
    assert virtual[sq("f3")] == ""
    game.advance(2.0)
    assert game.delays() == {sq("f3"): 10.0}
    castle = game_from("4k3/8/8/8/8/8/8/4K2R w K - 0 1")
    legal = next(a for a in castle.legal_actions() if a.uci == "e1g1")
    assert dict(legal.changes) == {sq("e1"): "", sq("h1"): "", sq("g1"): "K", sq("f1"): "R"}
    assert castle.san(legal.action) == "O-O"
    castle.apply_at(legal.action, 0.0)
    castle.advance(2.0)
    assert castle.delays() == {sq("g1"): 10.0, sq("f1"): 10.0}


def test_rule_6_fast_tick_scales_travel_and_delay() -> None:
    game = Realtime(0.1).new_game()
    game.start_clock(0.0)
    game.apply_at(mv("e2e4"), 0.0)
    game.advance(0.2)
    assert game.delays() == {sq("e4"): pytest.approx(1.0)}
    with pytest.raises(ValueError, match="tick"):
        Realtime(0.05)


def test_a_late_lift_slots_in_and_refuses_a_later_move_to_the_same_square() -> None:
    game = game_from("3rk3/8/8/8/R7/8/8/4K3 w - - 0 1")
    game.apply_at(mv("d8d4"), 0.5)  # known first, lifted second
    game.apply_at(mv("a4d4"), 0.0)  # lifted first: Black's move was not allowed
    assert game.refused() == {mv("d8d4"): "rule 3.3: another piece is moving to that square"}
    physical = list(game.squares)
    # Black put the rook on d4 first; White still holds the rook lifted from a4
    physical[sq("d8")], physical[sq("d4")], physical[sq("a4")] = "", "r", ""
    game.advance(1.0)
    corrections = [str(c) for c in game.set_right(physical)]
    assert corrections == ["move r from d4 to d8", "put R on d4"]
    # once the pieces stand as the game says, nothing is left to set right
    physical[sq("d4")], physical[sq("d8")] = "*", "*"
    assert game.set_right(physical, presence_only=True) == []


def test_set_right_after_a_collision_says_which_piece_to_take_off() -> None:
    game = game_from("4k3/8/3r4/8/R7/8/8/4K3 w - - 0 1")
    game.apply_at(mv("a4h4"), 0.0)
    game.apply_at(mv("d6d1"), 1.0)
    physical = list(game.squares)  # both players have put their rooks down
    assert physical[sq("d1")] == "r"
    game.advance(3.0)
    assert [str(c) for c in game.set_right(physical)] == ["take r off d1"]


def test_note_lift_gives_the_start_time_and_undo_takes_a_move_back() -> None:
    game = get_variant("realtime").new_game()
    game.note_lift(sq("g1"), 10.0)
    game.advance(11.5)
    legal = next(a for a in game.legal_actions() if a.uci == "g1f3")
    game.apply(legal.action)
    [travel] = game.travels()
    assert (travel.started, travel.arrives) == (10.0, 12.0)
    assert game.undo() == mv("g1f3")
    assert game.squares == squares_of(chess.Board())
    assert game.ply == 0


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2500), st.integers(0, 10_000)), max_size=60))
def test_random_play_keeps_the_model_consistent(plan: list[tuple[int, int]]) -> None:
    game = get_variant("realtime").new_game()
    game.start_clock(0.0)
    now = 0.0
    for wait, pick in plan:
        now += wait / 1000
        game.advance(now)
        actions = game.legal_actions()
        if game.outcome() is not None:
            assert actions == []
            break
        if not actions:
            continue
        legal = actions[pick % len(actions)]
        before = game.squares
        game.apply_at(legal.action, now)
        after = game.squares
        assert dict(legal.changes) == {s: after[s] for s in range(64) if before[s] != after[s]}
        targets = [t.target for t in game.travels()]
        assert len(targets) == len(set(targets))  # rule 3.3
        assert all(0 < d <= 10.0 for d in game.delays().values())
        board = game.squares
        assert board.count("K") <= 1
        assert board.count("k") <= 1
