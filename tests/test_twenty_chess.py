"""20-chess (the 20-chess rules, Johan Framhout 2021; readings in docs/rules.md): one
scenario per numbered rule, the footnote, and the decisions recorded in docs/variants.md."""

from __future__ import annotations

import chess
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.variants import (
    BLACK,
    WHITE,
    Choice,
    Drop,
    IllegalActionError,
    Move,
    Remove,
    Swap,
    Tandem,
    get_variant,
)
from service.variants.twenty_chess import TwentyChess, TwentyChessGame

sq = chess.parse_square


def game_for(rule: int, placement: str, **setup: object) -> TwentyChessGame:
    """A game whose first turn is played under ``rule``, from a set-up position."""
    game = TwentyChess([rule]).new_game()
    game.setup(placement, **setup)  # type: ignore[arg-type]
    return game


def mv(uci: str) -> Move:
    move = chess.Move.from_uci(uci)
    promotion = chess.piece_symbol(move.promotion) if move.promotion else None
    return Move(move.from_square, move.to_square, promotion)


def ucis(game: TwentyChessGame) -> set[str]:
    return {a.uci for a in game.legal_actions()}


def moving_kinds(game: TwentyChessGame) -> set[str]:
    """The kinds of the pieces that may move now."""
    return {
        game.squares[a.action.from_square].lower()
        for a in game.legal_actions()
        if isinstance(a.action, Move)
    }


def from_square(game: TwentyChessGame, square: str) -> set[str]:
    """The legal moves of the piece on ``square``."""
    return {
        a.uci
        for a in game.legal_actions()
        if isinstance(a.action, Move) and a.action.from_square == sq(square)
    }


def play(game: TwentyChessGame, *actions: object) -> None:
    for action in actions:
        game.apply(mv(action) if isinstance(action, str) else action)  # type: ignore[arg-type]


KINGS = "4k3/8/8/8/8/8/8/4K3"


def test_default_schedule_is_rule_n_in_turn_n_then_orthodox() -> None:
    variant = TwentyChess()
    assert [variant.rule_of(n) for n in (1, 2, 12, 20, 21, 40)] == [1, 2, 12, 20, 1, 1]
    assert get_variant("twenty-chess").new_game().rule == 1
    with pytest.raises(ValueError, match="1-20"):
        TwentyChess([21])


def test_rule_1_orthodox_chess_one_move_each() -> None:
    game = get_variant("twenty-chess").new_game()
    assert len(ucis(game)) == 20
    assert game.sides_to_act() == {WHITE}
    play(game, "e2e4")
    assert game.sides_to_act() == {BLACK}
    play(game, "e7e5")
    assert (game.turn, game.rule) == (2, 2)


def test_rule_2_two_moves_with_two_different_pieces_white_then_black() -> None:
    game = TwentyChess([2]).new_game()
    play(game, "e2e4")
    assert game.sides_to_act() == {WHITE}
    assert game.step == "move2"
    assert "e4e5" not in ucis(game)  # not the same piece again
    play(game, "g1f3")
    assert game.sides_to_act() == {BLACK}
    play(game, "e7e5", "b8c6")
    assert game.turn == 2
    assert game.sides_to_act() == {WHITE}


def test_rule_3_swap_two_own_pieces_then_move_another() -> None:
    game = TwentyChess([3]).new_game()
    assert game.step == "swap"
    swaps = [a for a in game.legal_actions() if isinstance(a.action, Swap)]
    assert all(a.side == WHITE for a in swaps)
    assert not any({a.action.first, a.action.second} == {sq("a2"), sq("b2")} for a in swaps)
    swap = Swap(sq("b1"), sq("c1"))  # knight and bishop change places
    legal = next(a for a in swaps if a.action == swap)
    assert dict(legal.changes) == {sq("b1"): "B", sq("c1"): "N"}
    play(game, swap)
    assert game.step == "move"
    assert "c1d3" not in ucis(game)  # the swapped knight may not move
    assert "g1f3" in ucis(game)


def test_rule_3_no_pawn_swapped_onto_its_last_row() -> None:
    game = game_for(3, "R3k3/1P6/8/8/8/8/8/4K3")
    assert Swap(sq("a8"), sq("b7")) not in {a.action for a in game.legal_actions()}


def test_rule_4_drop_an_own_choice_without_check_then_move_another() -> None:
    game = game_for(4, KINGS, hands={WHITE: "np", BLACK: "r"})
    assert game.step == "drop"
    drops = {a.action for a in game.legal_actions()}
    assert Drop("N", sq("c4")) in drops
    assert Drop("N", sq("d6")) not in drops  # would give check
    assert Drop("P", sq("a8")) not in drops  # pawn on the last row
    play(game, Drop("N", sq("c4")))
    assert game.hand(WHITE) == ("p",)
    assert "c4b6" not in ucis(game)  # the dropped knight may not move now
    play(game, "e1d1")
    assert game.step == "drop"
    assert game.sides_to_act() == {BLACK}
    play(game, Drop("r", sq("a5")), "e8e7")
    assert game.squares[sq("a5")] == "r"
    assert game.turn == 2


def test_rule_4_without_captured_pieces_on_both_sides_is_orthodox() -> None:
    game = game_for(4, KINGS, hands={WHITE: "n"})
    assert game.step == "move"
    assert not any(isinstance(a.action, Drop) for a in game.legal_actions())


def test_rule_5_the_opponent_chooses_the_piece() -> None:
    game = game_for(5, KINGS, hands={WHITE: "nq", BLACK: "r"})
    assert game.step == "choose"
    assert game.sides_to_act() == {WHITE}  # White's part; Black chooses White's piece
    choices = [a for a in game.legal_actions() if isinstance(a.action, Choice)]
    assert {a.action for a in choices} == {Choice("piece", "n"), Choice("piece", "q")}
    assert all(a.changes == () and a.side == BLACK for a in choices)
    play(game, Choice("piece", "n"))
    assert game.sides_to_act() == {WHITE}
    assert {type(a.action) for a in game.legal_actions()} == {Drop}
    assert all(a.action.piece == "N" for a in game.legal_actions())  # type: ignore[union-attr]
    play(game, Drop("N", sq("a3")), "e1d2")
    assert game.step == "drop"  # a single kind in Black's hand: nothing to choose
    play(game, Drop("r", sq("a6")), "e8d8")
    assert game.turn == 2


def test_rule_6_drops_until_one_side_runs_out() -> None:
    game = game_for(6, KINGS, hands={WHITE: "nbr", BLACK: "qp"})
    for square in ("a3", "b3"):
        assert game.step == "drop"
        kind = game.hand(WHITE)[0]
        play(game, Drop(kind.upper(), sq(square)))
    assert game.step == "move"
    assert game.hand(WHITE) == ("r",)
    play(game, "e1f1")
    play(game, Drop("q", sq("h7")), Drop("p", sq("b6")), "e8d8")
    assert game.hand(BLACK) == ()
    assert game.turn == 2


@pytest.mark.parametrize(
    ("rule", "allowed"),
    [(7, {"p", "k"}), (8, {"n", "k"}), (9, {"b", "k"}), (10, {"r", "k"})],
)
def test_rules_7_to_10_the_move_is_only_with_one_kind_or_the_king(
    rule: int, allowed: set[str]
) -> None:
    game = game_for(rule, "4k3/8/8/8/8/8/1P3P2/RNBQKBNR")
    assert moving_kinds(game) == allowed


def test_rules_7_to_10_fall_back_to_orthodox_when_nothing_may_move() -> None:
    game = game_for(9, "4k3/8/8/8/8/8/8/R3K1NQ")  # no bishop, but the king may move
    assert moving_kinds(game) == {"k"}
    game = game_for(9, "4k3/8/8/8/8/8/3PPP2/R2PKP1N")  # no bishop, the king boxed in
    assert {"n", "r"} <= moving_kinds(game)


def test_rule_11_bishop_and_rook_step_one_square_the_other_way() -> None:
    game = game_for(11, "4k3/8/8/8/3B4/8/8/R3K3")
    moves = ucis(game)
    assert {"d4d5", "d4c4", "d4e4", "d4d3"} <= moves  # the bishop's orthogonal step
    assert "d4d6" not in moves
    assert "a1b2" in moves  # the rook's diagonal step
    assert "a1c3" not in moves


def test_rule_12_the_extra_piece_is_dropped_as_a_fool_with_the_last_moved_capacity() -> None:
    game = game_for(12, KINGS, last_moved="n")
    assert game.step == "extra"
    assert all(isinstance(a.action, Drop) for a in game.legal_actions())  # dropping is a must
    play(game, Drop("F", sq("d4")))
    assert game.extra_status(WHITE) == "board"
    assert "d4e6" not in ucis(game)  # "followed by a move with another chessman"
    play(game, "e1d1")  # a king move: the fool now moves as a king
    assert game.last_moved == "k"
    play(game, Drop("f", sq("d5")))
    assert game.squares[sq("d5")] == "f"
    play(game, "e8f8")
    # turn 2 is orthodox: White's fool moves as a king (Black's last moved piece)
    assert from_square(game, "d4") == {
        "d4c3",
        "d4c4",
        "d4c5",
        "d4d3",
        "d4e3",
        "d4e4",
        "d4e5",
        "d4d5",
    }


def test_rule_13_the_extra_piece_becomes_an_elephant_and_may_be_re_dropped() -> None:
    game = game_for(13, "4k3/8/8/8/3F4/8/8/4K3")
    assert game.squares[sq("d4")] == "E"  # its capacity changed at once
    actions = {a.action for a in game.legal_actions()}
    assert Move(sq("d4"), sq("h5")) in actions  # re-drop anywhere
    assert mv("e1d1") in actions  # or leave it and move another piece
    play(game, "e1d1")
    assert game.sides_to_act() == {BLACK}
    play(game, Drop("e", sq("c6")), "e8f8")
    assert from_square(game, "d4") == {
        "d4c5",
        "d4e5",
        "d4c3",
        "d4e3",
        "d4b6",
        "d4f6",
        "d4b2",
        "d4f2",
    }


def test_rule_13_the_elephant_jumps() -> None:
    game = game_for(1, "4k3/8/8/2ppp3/2pEp3/2ppp3/8/4K3")
    assert {"d4b6", "d4f6", "d4b2", "d4f2", "d4c5", "d4e3"} <= from_square(game, "d4")


def test_rule_14_the_mountain_cannot_move_nor_be_captured_and_blocks() -> None:
    game = game_for(14, "4k3/8/8/8/r7/8/8/4K3")
    play(game, Drop("M", sq("a2")), "e1d2", Drop("m", sq("h8")))
    rook = from_square(game, "a4")
    assert "a4a3" in rook
    assert "a4a2" not in rook
    assert "a4a1" not in rook
    play(game, "e8f8")
    assert from_square(game, "a2") == set()  # it cannot move


def test_footnote_a_captured_extra_piece_returns_and_is_no_captured_piece() -> None:
    game = game_for(1, "4k3/8/8/8/3e4/8/8/3RK3")
    play(game, "d1d4")
    assert game.extra_status(BLACK) == "captured"
    assert game.hand(WHITE) == ()  # not among the pieces White may drop (rules 4-6)
    game = TwentyChess([1, 12]).new_game()
    game.setup("4k3/8/8/8/3e4/8/8/3RK3")
    play(game, "d1d4", "e8f8")
    play(game, Drop("F", sq("a1")), "e1e2")
    drops = {a.action for a in game.legal_actions()}
    assert Drop("f", sq("a8")) in drops  # Black's captured extra piece comes back


def test_rule_15_the_king_jumps_as_a_knight_and_may_not_castle() -> None:
    game = game_for(15, "4k3/8/8/8/8/8/8/R3K2R", castling="KQ")
    moves = ucis(game)
    assert {"e1d3", "e1f3", "e1c2", "e1g2"} <= moves
    assert "e1g1" not in moves
    assert "e1c1" not in moves
    assert "a1a5" in moves  # another piece may move instead


def test_rule_16_the_board_is_a_cylinder() -> None:
    game = game_for(16, "4k3/8/8/8/8/8/8/R3K3")
    moves = ucis(game)
    assert {"a1h1", "a1g1", "a1f1"} <= moves  # leftwards round the cylinder
    game = game_for(16, "4k3/8/8/8/8/8/8/N3K3")
    assert {"a1h3", "a1g2"} <= ucis(game)


def test_rule_17_a_move_needs_another_piece_making_the_identical_move() -> None:
    game = game_for(17, "4k3/8/8/8/8/8/8/R3K2N")
    actions = {a.action for a in game.legal_actions()}
    assert all(isinstance(a, Tandem) for a in actions)
    # rook a1-a3 with the knight h1-h3 (not a knight's move) onto an empty square
    tandem = Tandem((mv("a1a3"), mv("h1h3")))
    assert tandem in actions
    assert Tandem((mv("a1a3"), mv("e1e3"))) in actions  # the king may be the partner
    legal = next(a for a in game.legal_actions() if a.action == tandem)
    assert dict(legal.changes) == {sq("a1"): "", sq("a3"): "R", sq("h1"): "", sq("h3"): "N"}
    # no partner can copy a move onto an occupied square
    game = game_for(17, "4k3/8/8/8/8/7p/8/R3K2N")
    assert Tandem((mv("a1a3"), mv("h1h3"))) not in {a.action for a in game.legal_actions()}


def test_rule_18_only_backwards_moves() -> None:
    game = game_for(18, "4k3/8/8/3N4/8/8/P7/4K3")
    assert ucis(game) == {"d5c3", "d5e3", "d5b4", "d5f4"}  # the king and pawn cannot


def test_rule_19_give_a_piece_to_the_opponent_then_move() -> None:
    game = game_for(19, "4k3/8/8/8/8/8/8/R3K2R", castling="KQ")
    gifts = {a.action for a in game.legal_actions()}
    assert gifts == {Remove(sq("a1")), Remove(sq("h1"))}  # never the king
    play(game, Remove(sq("a1")))
    assert game.hand(BLACK) == ("r",)
    assert "e1c1" not in ucis(game)
    assert "e1g1" in ucis(game)
    play(game, "e1g1")
    assert game.step == "move"  # Black has nothing to give but the king


def test_rule_20_moving_a_knight_moves_both_knights() -> None:
    game = game_for(20, "4k3/8/8/8/8/8/8/1N2K1N1")
    actions = [a.action for a in game.legal_actions()]
    knight_moves = [a for a in actions if isinstance(a, Tandem)]
    assert knight_moves
    assert all({m.from_square for m in a.moves} == {sq("b1"), sq("g1")} for a in knight_moves)
    assert not any(isinstance(a, Move) and a.from_square == sq("b1") for a in actions)
    assert mv("e1e2") in actions  # a king move stays a single move


def test_check_no_action_may_leave_the_own_king_in_check_and_mate_ends_the_game() -> None:
    game = game_for(1, "4k3/8/8/8/8/8/4r3/4K3")
    assert "e1e2" in ucis(game)
    assert "e1d2" not in ucis(game)
    # fool's mate: White has no action at all while in check
    game = get_variant("twenty-chess").new_game()
    game.setup("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR", castling="KQkq")
    end = game.outcome()
    assert end is not None
    assert (end.result, end.reason) == ("0-1", "checkmate")


def test_cast_mode_each_turn_starts_with_the_rule_cast() -> None:
    game = TwentyChess(cast=True).new_game()
    assert game.step == "cast"
    assert game.rule is None
    assert {a.action for a in game.legal_actions()} == {
        Choice("rule", str(n)) for n in range(1, 21)
    }
    play(game, Choice("rule", "2"))
    assert game.rule == 2
    assert game.step == "move"
    game.undo()
    assert game.rule is None


def test_stand_ins_map_the_extra_piece_to_a_physical_piece() -> None:
    game = get_variant("twenty-chess").new_game()
    assert game.board_symbol("F") == "q"
    assert game.board_symbol("m") == "Q"
    assert game.board_symbol("N") == "N"
    special = TwentyChess(stand_ins={WHITE: "W", BLACK: "X"}).new_game()
    assert special.board_symbol("E") == "W"


def test_illegal_actions_raise_and_undo_restores() -> None:
    game = get_variant("twenty-chess").new_game()
    with pytest.raises(IllegalActionError):
        game.apply(mv("e2e5"))
    before = game.fen()
    play(game, "e2e4")
    assert game.undo() == mv("e2e4")
    assert game.fen() == before


@pytest.mark.slow
@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(0, 10_000), min_size=10, max_size=90))
def test_random_play_keeps_changes_and_position_consistent(picks: list[int]) -> None:
    game = get_variant("twenty-chess").new_game()
    history = []
    for pick in picks:
        actions = game.legal_actions()
        if not actions:
            assert game.outcome() is not None
            break
        legal = actions[pick % len(actions)]
        assert legal.side in game.sides_to_act() or isinstance(legal.action, Choice)
        before = game.squares
        history.append(game.fen())
        game.apply(legal.action)
        after = game.squares
        changed = {s: after[s] for s in range(64) if before[s] != after[s]}
        # the extra piece takes its new capacity when a part of rules 12-14 begins
        changes = dict(legal.changes)
        changed = {s: v for s, v in changed.items() if v.lower() not in "fem" or s in changes}
        assert changed == changes
        assert after.count("K") == 1
        assert after.count("k") == 1
    for fen in reversed(history):
        game.undo()
        assert game.fen() == fen


def test_a_decision_is_no_action_and_survives_a_takeback() -> None:
    from service.variants.twenty_chess import ChoiceError

    game = game_for(5, KINGS, hands={WHITE: "nq", BLACK: "r"})
    assert game.pending_choice() == ("piece", BLACK, ("n", "q"))
    with pytest.raises(ChoiceError, match="choose one of n, q"):
        game.decide(Choice("piece", "r"))
    game.decide(Choice("piece", "q"))
    assert game.ply == 0
    assert game.step == "drop"
    assert game.pending_choice() is None
    assert {a.action.piece for a in game.legal_actions()} == {"Q"}  # type: ignore[union-attr]
    play(game, Drop("Q", sq("a3")))
    game.undo()
    assert game.step == "drop"  # the pick holds for the part
    with pytest.raises(ChoiceError, match="no decision is due"):
        game.decide(Choice("piece", "n"))


def test_the_pick_can_be_read_off_the_drop() -> None:
    game = game_for(5, KINGS, hands={WHITE: "nq", BLACK: "r"})
    drops = [a for a in game.legal_actions() if isinstance(a.action, Drop)]
    assert {a.action.piece for a in drops} == {"N", "Q"}  # type: ignore[union-attr]
    assert all(a.side == WHITE for a in drops)
    play(game, Drop("N", sq("a3")))
    assert game.step == "move"
    assert game.hand(WHITE) == ("q",)


def test_cast_rule_decided_before_the_turn() -> None:
    game = TwentyChess(cast=True).new_game()
    assert game.pending_choice() is not None
    assert game.clock_text() == "CAST?"
    game.decide(Choice("rule", "2"))
    assert game.rule == 2
    assert game.ply == 0
    assert game.clock_text() == "RULE 2"
    assert game.record_note() == "rule 2: two moves, with two different pieces"


def test_options_text() -> None:
    variant = TwentyChess.from_options("schedule=12,13 cast stand-ins=special")
    assert variant.schedule == (12, 13)
    assert variant.cast
    assert variant.stand_ins == {WHITE: "W", BLACK: "X"}
    assert TwentyChess.from_options("stand-ins=Qq").stand_ins == {WHITE: "Q", BLACK: "q"}
    assert TwentyChess.from_options(None).stand_ins == {WHITE: "q", BLACK: "Q"}
    for bad in ("schedule=21", "schedule=a", "colour=red", "stand-ins=1"):
        with pytest.raises(ValueError, match=r"1-20|20-chess option"):
            TwentyChess.from_options(bad)


def test_panel_for_the_mirror() -> None:
    game = game_for(12, KINGS)
    play(game, Drop("F", sq("d4")))
    panel = game.panel()
    assert panel["rule"] == 12
    assert panel["side"] == "white"
    assert panel["step"] == "move"
    assert panel["extra"] == {  # type: ignore[comparison-overlap]
        "white": {"status": "board", "kind": "fool", "square": "d4", "stand_in": "q"},
        "black": {"status": "out", "kind": None, "square": None, "stand_in": "Q"},
    }
    assert panel["placement"] == "4k3/8/8/8/3F4/8/8/4K3"
    assert "turn 1, rule 12" in game.rule_hint()


def test_a_forbidden_drop_says_which_rule_forbids_it() -> None:
    game = game_for(4, KINGS, hands={WHITE: "np", BLACK: "r"})
    assert game.forbidden_drop("N", sq("d6")) == "rule 4: a drop may not give check"
    assert game.forbidden_drop("P", sq("a8")) == "rule 4: no pawn on the last row"
    assert game.forbidden_drop("N", sq("c4")) is None  # legal
    assert game.forbidden_drop("Q", sq("c4")) is None  # no queen in the hand: no drop
    assert game.forbidden_drop("r", sq("a5")) is None  # not Black's part
    play(game, Drop("N", sq("c4")))
    assert game.forbidden_drop("P", sq("a8")) is None  # the drop is made: a move is due
