"""The table: one game at one board, end to end with the recogniser and the casual rules."""

from __future__ import annotations

import io
from typing import Any

import chess.pgn
import pytest
from test_table_helpers import Hands, of_type

from dgt.events import BoardSnapshot, SquareChanged
from dgt.protocol.constants import Piece
from service.table import ClockOrder, Table, TableError, TableSettings


def test_casual_game_records_moves_with_clock_times_and_pgn() -> None:
    hands = Hands()
    assert hands.table.phase == "playing"
    hands.play("e2e4", "P", True)
    hands.play("e7e5", "p", False)
    hands.play("g1f3", "N", True)
    moves = hands.table.moves()
    assert [m["san"] for m in moves] == ["e4", "e5", "Nf3"]
    assert all(m["final"] and m["clock_seconds"] is not None for m in moves)
    pgn = hands.table.pgn()
    game = chess.pgn.read_game(io.StringIO(pgn))
    assert game is not None
    assert [n.san() for n in game.mainline()] == ["e4", "e5", "Nf3"]
    assert all(n.clock() is not None for n in game.mainline())
    assert '[TimeControl "300+0"]' in pgn


def test_game_start_sets_the_clock_and_runs_whites_side() -> None:
    hands = Hands()
    orders = hands.table.take_clock_orders()
    assert orders[0] == ClockOrder("set_and_run", 300.0, 300.0, orders[0].run)
    assert orders[0].run is not None
    assert hands.table.take_clock_orders() == []


def test_casual_takeback_of_a_completed_move_is_allowed() -> None:
    hands = Hands()
    hands.play("e2e4", "P", True)
    hands.move("e4e2", "P")
    assert of_type(hands.out, "takeback")
    assert hands.table.moves() == []
    assert of_type(hands.out, "irregularity") == []


def test_without_a_clock_moves_complete_after_the_settle_delay() -> None:
    hands = Hands(clock=False)
    hands.move("e2e4", "P")
    hands.wait(3)
    assert [m["final"] for m in hands.table.moves()] == [True]


def test_same_inputs_give_the_same_events_and_state() -> None:
    def run() -> tuple[list[dict[str, object]], dict[str, object], str]:
        hands = Hands(TableSettings(rules="fide-blitz"))
        hands.play("e2e4", "P", True)
        hands.move("e8e6", "k")
        hands.press(False)
        hands.wait(5)
        return [e.to_json() for e in hands.out], hands.table.state(), hands.table.pgn()

    assert run() == run()


def test_admin_players_end_and_errors() -> None:
    hands = Hands()
    hands.admin("players", white="Ann", black="Bob")
    assert hands.table.settings.white == "Ann"
    hands.admin("end", result="1/2-1/2", reason="agreement")
    assert hands.table.phase == "finished"
    assert '[Termination "agreement"]' in hands.table.pgn()
    with pytest.raises(TableError):
        hands.admin("fly")
    with pytest.raises(TableError):
        hands.admin("end", result="2-0")
    with pytest.raises(TableError):
        hands.admin("rule", claim="c99", decision="accept")
    with pytest.raises(TableError):
        Table("t", TableSettings(rules="nonsense"))
    with pytest.raises(TableError):
        Table("t", TableSettings(time_control="five minutes"))


@pytest.mark.parametrize("name", ["white", "black", "event", "round", "rules", "variant"])
def test_a_setting_set_to_null_is_refused_and_the_record_still_writes(name: str) -> None:
    hands = Hands()
    with pytest.raises(TableError, match=f"^setting {name} must be a string$"):
        hands.admin("start", **{name: None})
    assert hands.table.pgn().startswith('[Event "?"]')
    with pytest.raises(TableError, match=f"^setting {name} must be a string$"):
        Table("t", TableSettings(**{name: None}))  # type: ignore[arg-type]


def test_admin_start_restarts_and_correct_rewrites_the_game() -> None:
    hands = Hands()
    hands.play("e2e4", "P", True)
    hands.play("e7e5", "p", False)
    hands.admin("correct", ply=2, uci="e7e6")
    assert [m["san"] for m in hands.table.moves()] == ["e4", "e6"]
    assert "e6" in hands.table.pgn()
    with pytest.raises(TableError):
        hands.admin("correct", ply=1, uci="e2e5")
    hands.admin("start", white="X")
    assert hands.table.moves() == []
    assert hands.table.settings.white == "X"


def test_state_is_json_able_and_complete() -> None:
    import json

    hands = Hands()
    hands.play("e2e4", "P", True)
    state = hands.table.state()
    json.dumps(state)
    keys = ("id", "settings", "phase", "fen", "board", "orientation", "last_move", "moves")
    keys += ("clocks", "scores", "claims", "irregularities", "result", "reason", "link")
    for key in keys:
        assert key in state
    assert state["last_move"]["uci"] == "e2e4"


TWO_CAPTURES = "4k3/8/8/3p1n2/4P3/8/8/4K3 w - - 0 1"
"""White pawn e4 can take the pawn on d5 or the knight on f5."""


def exf5_or_exd5_then_ke7() -> Hands:
    """A presence-only board: e4 takes, d5 and f5 both lifted and set down while the pawn
    is in the hand (one was knocked over), the clock pressed; then ...Ke7."""
    hands = Hands(presence_only=True, fen=TWO_CAPTURES)
    hands.lift("e4")
    hands.lift("f5", 0.2)
    hands.lift("d5", 0.3)
    hands.put("f5", "N", 0.3)
    hands.put("d5", "P", 0.3)
    hands.press(True)
    hands.play("e8e7", "k", False)
    return hands


def test_a_capture_the_board_cannot_tell_is_shown_with_the_other_reading_and_corrected() -> None:
    """A presence-only board: e4 takes, d5 and f5 both lifted and set down while the pawn is
    in the hand (one was knocked over).  The move list and the PGN name the other reading;
    the arbiter's correction to it rewrites the game and the mark goes."""
    hands = exf5_or_exd5_then_ke7()
    moves = hands.table.moves()
    assert [(m["uci"], m.get("alternatives")) for m in moves] == [
        ("e4f5", [{"uci": "e4d5", "san": "exd5"}]),
        ("e8e7", None),
    ]
    assert [e["alternatives"] for e in of_type(hands.out, "move") if e["ply"] == 1] == [
        [{"uci": "e4d5", "san": "exd5"}]
    ] * 2
    game = chess.pgn.read_game(io.StringIO(hands.table.pgn()))
    assert game is not None
    first = game.next()
    assert first is not None
    assert "(the board could not tell this from exd5)" in first.comment
    hands.admin("correct", ply=1, uci="e4d5")
    assert [(m["san"], m.get("alternatives")) for m in hands.table.moves()] == [
        ("exd5", None),
        ("Ke7", None),
    ]
    assert "could not tell" not in hands.table.pgn()


def test_moves_before_a_corrected_one_keep_their_other_reading() -> None:
    hands = exf5_or_exd5_then_ke7()
    hands.admin("correct", ply=2, uci="e8d8")
    assert [(m["san"], m.get("alternatives")) for m in hands.table.moves()] == [
        ("exf5", [{"uci": "e4d5", "san": "exd5"}]),
        ("Kd8", None),
    ]


def test_a_presence_only_board_shows_the_games_pieces_where_it_reads_one() -> None:
    """A Pegasus reads only occupied or empty: the page's board shows the game's piece on
    each occupied square, and a lifted piece is gone from it until it is set down."""
    hands = Hands(presence_only=True, fen=TWO_CAPTURES)
    assert hands.table.state()["board"] == "4k3/8/8/3p1n2/4P3/8/8/4K3"
    hands.lift("e4")
    assert hands.table.state()["board"] == "4k3/8/8/3p1n2/8/8/8/4K3"
    hands.lift("d5")
    hands.put("d5", "P")
    hands.press(True)
    assert hands.table.state()["board"] == "4k3/8/8/3P1n2/8/8/8/4K3"
    assert hands.table.summary()["board"] == "4k3/8/8/3P1n2/8/8/8/4K3"


@pytest.mark.parametrize("presence_only", [False, True], ids=["identity", "presence"])
def test_a_start_fen_in_the_settings_starts_the_first_game_from_it(presence_only: bool) -> None:
    """A table made with a start FEN plays its first game from that position as soon as the
    board is read (it shows that position: nothing to set up), as a start command would."""
    board = chess.Board(TWO_CAPTURES)
    table = Table("t1", TableSettings(start=TWO_CAPTURES, time_control="-"))
    squares = tuple(
        Piece.EMPTY if piece is None
        else Piece.OCCUPIED if presence_only
        else Piece.from_symbol(piece.symbol())
        for piece in map(board.piece_at, chess.SQUARES)
    )  # fmt: skip
    table.feed(BoardSnapshot(1.0, squares, "connect"))
    assert table.phase == "playing"
    assert table.state()["fen"] == TWO_CAPTURES
    assert table.state()["mismatch"] == []
    for t, square, piece in (
        (2.0, "e4", Piece.EMPTY),
        (2.3, "d5", Piece.EMPTY),
        (2.6, "d5", Piece.OCCUPIED if presence_only else Piece.WPAWN),
    ):
        table.feed(SquareChanged(t, chess.parse_square(square), piece, Piece.EMPTY))  # fmt: skip
    table.tick(6.0)
    assert [m["san"] for m in table.moves()] == ["exd5"]
    assert '[FEN "4k3/8/8/3p1n2/4P3/8/8/4K3 w - - 0 1"]' in table.pgn()


def test_an_amended_move_shows_the_reading_it_replaced() -> None:
    """exd5 with two hands, then the knight on f5 straightened before the clock press: a
    presence-only board amends the capture to exf5 (a known limit), and the table lists
    exd5 as the other reading from the amendment on."""
    hands = Hands(presence_only=True, fen=TWO_CAPTURES)
    hands.lift("d5", 0.5)
    hands.lift("e4", 0.04)
    hands.put("d5", "P", 0.4)
    assert [(m["uci"], m.get("alternatives")) for m in hands.table.moves()] == [("e4d5", None)]
    hands.lift("f5", 0.6)
    hands.put("f5", "n", 0.4)
    other = [{"uci": "e4d5", "san": "exd5"}]
    assert [(e["uci"], e.get("alternatives")) for e in of_type(hands.out, "amend")] == [
        ("e4f5", other)
    ]
    assert [(m["uci"], m.get("alternatives")) for m in hands.table.moves()] == [("e4f5", other)]
    hands.press(True)
    assert [(m["uci"], m["final"], m.get("alternatives")) for m in hands.table.moves()] == [
        ("e4f5", True, other)
    ]


def test_the_admin_commands_are_one_registry_the_tables_and_the_web_read() -> None:
    from service.table import REALTIME_COMMANDS, AdminCommand, RealtimeTable
    from service.web.app import ADMIN_COMMANDS

    names = ["start", "end", "players", "rule", "claim", "correct", "choose", "drop_kind"]
    assert [str(c) for c in AdminCommand] == names
    assert list(ADMIN_COMMANDS) == names
    hands = Hands()
    with pytest.raises(TableError, match=r"^unknown command 'fly': use start, end, players, "):
        hands.admin("fly")
    assert [str(c) for c in REALTIME_COMMANDS] == ["start", "end", "players"]
    realtime = RealtimeTable("r", {})
    with pytest.raises(TableError, match=r"^unknown command 'choose': use start, end or players$"):
        realtime.admin("choose", {}, 0.0)
    with pytest.raises(TableError, match="does not apply to realtime chess"):
        realtime.admin(AdminCommand.CORRECT, {}, 0.0)
    with pytest.raises(TableError, match="admin arguments must be a mapping"):
        realtime.admin("end", [], 0.0)  # type: ignore[arg-type]


def test_players_of_a_game_with_moves_or_finished_apply_to_the_next_game() -> None:
    hands = Hands()
    hands.admin("players", white="Ann", black="Bob")  # no move yet: this game
    assert hands.table.settings.white == "Ann"
    hands.play("e2e4", "P", True)
    [event] = hands.admin("players", white="Cy")
    assert event.to_json()["applies"] == "next game"
    assert event.to_json()["message"] == "applies to the next game: the game under way has moves"
    assert (event.data["white"], event.data["black"]) == ("Cy", "Bob")
    assert '[White "Ann"]' in hands.table.pgn()
    hands.admin("end", result="1-0", reason="resignation")
    [event] = hands.admin("players", black="Dee")
    assert event.data["message"] == "applies to the next game: the game under way is finished"
    finished = hands.table.pgn()
    assert '[White "Ann"]' in finished
    assert '[Black "Bob"]' in finished
    hands.admin("start")
    assert hands.table.take_ended_games() == [finished]
    assert (hands.table.settings.white, hands.table.settings.black) == ("Cy", "Dee")
    assert '[White "Cy"]' in hands.table.pgn()


def test_players_named_for_the_next_game_take_their_seats_when_the_board_starts_it() -> None:
    hands = Hands()
    hands.play("e2e4", "P", True)
    hands.play("e7e5", "p", False)
    hands.admin("end", result="1-0")
    hands.admin("players", white="Next", black="Other")
    finished = hands.table.pgn()
    hands.move("e4e2", "P")  # the pieces set up again: the board starts the next game
    hands.move("e5e7", "p")
    hands.wait(5)
    assert hands.table.phase == "playing"
    assert hands.table.moves() == []
    assert hands.table.take_ended_games() == [finished]
    assert '[White "Next"]' in hands.table.pgn()


def scotch() -> Hands:
    hands = Hands()
    for uci, symbol, color in [("e2e4", "P", True), ("e7e5", "p", False),
                               ("g1f3", "N", True), ("b8c6", "n", False),
                               ("d2d4", "P", True)]:  # fmt: skip
        hands.play(uci, symbol, color)
    return hands


def test_a_correction_that_would_drop_later_moves_is_refused_unless_confirmed() -> None:
    hands = scotch()
    before = hands.table.moves()
    with pytest.raises(TableError) as refused:
        hands.admin("correct", ply=1, uci="g1h3")  # 2. Nf3 is then illegal, and all after it
    assert str(refused.value) == (
        "correcting move 1 to g1h3 drops the 3 later moves it makes illegal: "
        "2. Nf3 Nc6 3. d4; send confirm: true to correct anyway"
    )
    assert hands.table.moves() == before
    with pytest.raises(TableError, match=r"drops the 1 later move it makes illegal: 3\. d4;"):
        hands.admin("correct", ply=3, uci="d2d4", confirm=False)
    with pytest.raises(TableError, match=r"^confirm must be true or false$"):
        hands.admin("correct", ply=1, uci="g1h3", confirm="yes")
    [ruling] = of_type(hands.admin("correct", ply=1, uci="g1h3", confirm=True), "ruling")
    assert ruling["message"] == (
        "move 1 corrected to g1h3; the game is rewritten; "
        "dropped the 3 later moves: 2. Nf3 Nc6 3. d4"
    )
    assert [m["san"] for m in ruling["dropped"]] == ["Nf3", "Nc6", "d4"]
    assert [m["san"] for m in ruling["moves"]] == ["Nh3", "e5"]


def test_a_correction_that_drops_nothing_answers_as_before() -> None:
    hands = scotch()
    [ruling] = of_type(hands.admin("correct", ply=5, uci="f1c4"), "ruling")
    assert "dropped" not in ruling
    assert ruling["message"] == "move 5 corrected to f1c4; the game is rewritten"


def test_a_stored_correction_without_confirm_replays_as_it_was_taken() -> None:
    from service.store import Input, apply_input

    hands = scotch()
    args = {"ply": 1, "uci": "g1h3"}
    stored = Input(1, "admin", hands.time, {"command": "correct", "args": args}, ())
    [ruling] = of_type(list(apply_input(hands.table, stored)), "ruling")
    assert ruling["message"] == "move 1 corrected to g1h3; the game is rewritten"
    assert "dropped" not in ruling
    assert [m["san"] for m in ruling["moves"]] == ["Nh3", "e5"]


def test_every_change_to_the_game_is_kept_in_its_change_log() -> None:
    hands = scotch()
    t0 = hands.time
    hands.admin("correct", ply=5, uci="f1c4")
    hands.admin("correct", ply=1, uci="g1h3", confirm=True)
    hands.admin("end", result="0-1", reason="resignation")
    hands.admin("players", white="Next")  # the next game's: not a change to this one
    assert hands.table.change_log() == [
        {"time": t0, "what": "correction", "ply": 5, "old": "3. d4", "new": "3. Bc4"},
        {"time": t0, "what": "correction", "ply": 1, "old": "1. e4", "new": "1. Nh3",
         "dropped": ["2. Nf3", "2... Nc6", "3. Bc4"]},
        {"time": t0, "what": "result", "old": {"result": "*", "reason": ""},
         "new": {"result": "0-1", "reason": "resignation"}},
    ]  # fmt: skip
    hands.admin("start")  # the board still shows the old game: the new one waits in set-up
    assert hands.table.phase == "setup"
    assert hands.table.change_log() == []  # a new game, a new log
    for uci, symbol in [("d4d2", "P"), ("c6b8", "n"), ("f3g1", "N"), ("e5e7", "p"),
                        ("e4e2", "P")]:  # fmt: skip
        hands.move(uci, symbol)
    assert hands.table.phase == "playing"
    t1 = hands.time
    hands.admin("players", black="Bea")
    assert hands.table.change_log() == [
        {"time": t1, "what": "players", "old": {"white": "Next", "black": "?"},
         "new": {"white": "Next", "black": "Bea"}},
    ]  # fmt: skip


def test_a_stored_players_command_replays_as_it_was_taken() -> None:
    """A log written before the record was kept apart renamed a finished game: replayed,
    it still does (the table reads as it did); a command whose stored answer says it waits
    for the next game waits on replay too."""
    from service.store import Input, apply_input

    def replayed(outputs: tuple[dict[str, Any], ...]) -> Hands:
        hands = Hands()
        hands.play("e2e4", "P", True)
        hands.admin("end", result="1-0")
        data = {"command": "players", "args": {"white": "Renamed"}}
        apply_input(hands.table, Input(1, "admin", hands.time, data, outputs))
        return hands

    old = replayed(({"time": 0.0, "type": "players", "white": "Renamed", "black": "?"},))
    assert old.table.settings.white == "Renamed"
    assert '[White "Renamed"]' in old.table.pgn()
    new = replayed(({"time": 0.0, "type": "players", "white": "Renamed", "black": "?",
                     "applies": "next game", "message": "..."},))  # fmt: skip
    assert new.table.settings.white == "?"
    with pytest.raises(TableError, match=r"^players takes white and/or black$"):
        new.admin("players", white="X", applies="now")
