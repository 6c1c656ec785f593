"""Set-up before play: a game started while the board does not show its start position
waits (the clock stopped, the squares to set right listed, the LEDs on them) and begins when
the board shows it."""

from __future__ import annotations

import chess
import pytest
from test_table_helpers import Hands, of_type

from dgt.events import BoardSnapshot
from dgt.protocol.constants import Piece
from service.leds import plan_leds
from service.table import Table, TableSettings
from service.variants.chess960 import chess960_starts
from service.variants.t20 import T20_FEN

MIDDLEGAME = "r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/3P1N2/PPP2PPP/RNBQK2R w KQkq - 1 5"


def _set_up(hands: Hands, fen: str) -> None:
    """Put the board right square by square (0.5 s apart), as an arbiter would."""
    want = chess.Board(fen)
    for square in chess.SQUARES:
        piece = want.piece_at(square)
        have = hands.squares.get(square)
        wanted = None if piece is None else hands.code(piece.symbol())
        if have == wanted:
            continue
        name = chess.square_name(square)
        if have is not None:
            hands.lift(name, 0.5)
        if piece is not None:
            hands.put(name, piece.symbol(), 0.5)


def test_a_start_on_a_middlegame_waits_in_set_up_and_plays_once_the_board_is_set() -> None:
    hands = Hands()
    hands.play("e2e4", "P", True)
    hands.play("e7e5", "p", False)
    # the board is taken to a middlegame (a game from elsewhere), then a new game is started
    _set_up(hands, MIDDLEGAME)
    hands.time = 100.0
    got = hands.admin("start", white="X", black="Y")
    table = hands.table
    assert table.phase == "setup"
    assert [e["fen"] for e in of_type(got, "setup")] == [chess.STARTING_FEN]
    state = table.state(100.0)
    assert state["awaiting_start"] == chess.STARTING_FEN
    assert state["clocks"] == {"white": 300.0, "black": 300.0, "running": None, "as_of": 100.0}
    wrong = {e["square"]: (e["want"], e["have"]) for e in state["set_right"]}
    assert wrong["e4"] == ("", "P")
    assert wrong["e2"] == ("P", "")
    assert wrong["c6"] == ("", "n")
    assert wrong["b8"] == ("n", "")
    assert wrong["g1"] == ("N", "")
    assert "a1" not in wrong
    assert table.summary(100.0)["set_right"] == state["set_right"]
    # presses and time while the board is set up: no game, no result, the clock stays
    hands.press(True, 1.0)
    hands.wait(30.0)
    assert table.phase == "setup"
    assert table.result == "*"
    assert table.state()["clocks"]["running"] is None
    assert table.state()["clocks"]["white"] == 300.0
    # the game played before is kept
    assert len(table.take_ended_games()) == 1
    _set_up(hands, chess.STARTING_FEN)
    assert table.phase == "playing"
    began = of_type(hands.out, "new_game")[-1]
    assert began["time"] == hands.time
    assert table.state()["set_right"] == []
    assert table.state(hands.time)["clocks"]["running"] == "white"
    hands.play("d2d4", "P", True)
    assert [m["san"] for m in table.moves()] == ["d4"]
    assert table.result == "*"
    assert '[White "X"]' in table.pgn()


def test_the_issues_case_no_longer_loses_the_game_with_no_move() -> None:
    """An admin start on a board still holding a middlegame used to run the clock and lose
    the game "0-1 (illegal move number 2)" with no move."""
    hands = Hands(fen=None)
    _set_up(hands, MIDDLEGAME)
    hands.admin("start")
    for _ in range(3):
        hands.play("c4f7", "B", True)
        hands.move("f7c4", "B")
    hands.wait(60.0)
    assert hands.table.result == "*"
    assert hands.table.phase == "setup"
    assert not of_type(hands.out, "irregularity")


def test_a_start_fen_waits_for_its_position_and_a_settings_fen_for_the_first_game() -> None:
    fen = "4k3/8/8/3p1n2/4P3/8/8/4K3 w - - 0 1"
    table = Table("t1", TableSettings(start=fen, time_control="-"))
    standard = tuple(
        Piece.from_symbol(p.symbol()) if (p := chess.Board().piece_at(s)) else Piece.EMPTY
        for s in chess.SQUARES
    )
    table.feed(BoardSnapshot(1.0, standard, "connect"))
    assert table.phase == "setup"
    assert table.state()["awaiting_start"] == fen
    assert len(table.state()["set_right"]) == 30 + 3  # all but the kings to clear; e4, d5, f5
    wanted = chess.Board(fen)
    board = tuple(
        Piece.from_symbol(p.symbol()) if (p := wanted.piece_at(s)) else Piece.EMPTY
        for s in chess.SQUARES
    )
    got = table.feed(BoardSnapshot(2.0, board, "resync"))
    assert table.phase == "playing"
    assert table.state()["fen"] == fen
    assert of_type(got, "new_game")[0]["time"] == 2.0


@pytest.mark.parametrize("variant", ["chess960", "t20"])
def test_a_variant_start_is_waited_for(variant: str) -> None:
    fen = chess960_starts()[518 if variant == "t20" else 7].fen if variant != "t20" else T20_FEN
    hands = Hands(TableSettings(variant=variant))
    hands.admin("start")  # the board shows the standard start: a T20 start differs
    table = hands.table
    if variant == "chess960":  # the classical start is a Chess960 start: play begins
        assert table.phase == "playing"
        hands.admin("start", start=fen)
    assert table.phase == "setup"
    assert table.state()["set_right"]
    _set_up(hands, fen)
    assert table.phase == "playing"
    assert table.state()["fen"] == fen


def test_a_presence_only_board_is_compared_by_occupancy() -> None:
    hands = Hands(presence_only=True)
    hands.play("e2e4", "P", True)
    hands.admin("start")
    assert hands.table.phase == "setup"
    assert [(e["square"], e["want"], e["have"]) for e in hands.table.state()["set_right"]] == [
        ("e2", "P", ""),
        ("e4", "", "*"),
    ]
    hands.move("e4e2", "P")
    assert hands.table.phase == "playing"


def test_the_leds_show_the_squares_to_set_right_while_a_game_waits() -> None:
    hands = Hands()
    hands.play("e2e4", "P", True)
    hands.admin("start")
    state = hands.table.state()
    plan = plan_leds(state, physical=hands.table.physical())
    assert plan.pattern == "fix"
    assert plan.squares == {chess.E2, chess.E4}
    hands.move("e4e2", "P")
    assert plan_leds(hands.table.state()).pattern != "fix"


def test_while_playing_the_squares_where_the_board_differs_from_the_game_are_listed() -> None:
    hands = Hands()
    hands.play("e2e4", "P", True)
    assert hands.table.state()["set_right"] == []
    hands.lift("g8")  # a piece in the hand: the board differs from the game
    assert hands.table.state()["set_right"] == [{"square": "g8", "want": "n", "have": ""}]


def test_a_board_set_up_turned_round_starts_the_game_turned_round() -> None:
    table = Table("t1", TableSettings(time_control="-"))
    table.feed(BoardSnapshot(1.0, (Piece.EMPTY,) * 64, "connect"))
    table.admin("start", {}, 2.0)
    assert table.phase == "setup"
    start = chess.Board()
    turned = tuple(
        Piece.from_symbol(p.symbol()) if (p := start.piece_at(63 - s)) else Piece.EMPTY
        for s in chess.SQUARES
    )
    table.feed(BoardSnapshot(3.0, turned, "resync"))
    assert table.phase == "playing"
    assert table.state()["orientation"] == "black"
    assert table.state()["set_right"] == []
