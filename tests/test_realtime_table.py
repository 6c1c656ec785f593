"""The realtime table on its own (pure): settings, the record and its PGN, the state for
the mirror, clock texts, admin commands, and replay (the same inputs give the same
outputs).  The scenarios per rule through the emulator are in test_realtime_scenarios.py."""

from __future__ import annotations

import json
from typing import Any

import chess
import pytest

from dgt.events import BoardSnapshot, ClockConnection, SquareChanged
from dgt.protocol.constants import Piece
from service.table import RealtimeTable, TableError, TableSettings, clock_text, realtime_settings
from service.variants.realtime import Correction, CorrectionKind

sq = chess.parse_square


def start() -> tuple[Piece, ...]:
    cells = [Piece.EMPTY] * 64
    for square, piece in chess.Board().piece_map().items():
        cells[square] = Piece.from_symbol(piece.symbol())
    return tuple(cells)


def inputs() -> list[Any]:
    """A short game: the clock is there, both sides move at once, a move is refused."""
    out: list[Any] = [
        ClockConnection(0.0, True, "1.0", "link"),
        BoardSnapshot(0.0, start(), "connect"),
    ]

    def move(a: str, b: str, symbol: str, t: float) -> None:
        piece = Piece.from_symbol(symbol)
        out.append(SquareChanged(t, sq(a), Piece.EMPTY, piece))
        out.append(SquareChanged(t + 0.2, sq(b), piece, Piece.EMPTY))

    move("e2", "e4", "P", 1.0)
    move("e7", "e5", "p", 1.1)
    move("g1", "f3", "N", 1.5)
    move("f3", "g5", "N", 3.0)  # the knight rests until 3.9: refused (3.1)
    return out


def play(table: RealtimeTable) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for event in inputs():
        events += [e.to_json() for e in table.tick(event.time) + table.feed(event)]
    events += [e.to_json() for e in table.tick(3.3)]
    return events


def test_settings_tick_range_and_errors_are_one_line() -> None:
    assert realtime_settings({"tick": "0.1"}).tick == 0.1
    assert realtime_settings(None).tick == 1.0
    assert realtime_settings({"tick": 0.5, "port": "/dev/x"}).tick == 0.5  # others ignored
    for bad in ("0.05", "2", "fast", True):
        with pytest.raises(TableError, match="tick must be") as info:
            realtime_settings({"tick": bad})
        assert "\n" not in str(info.value)
    with pytest.raises(TableError, match="variant realtime"):
        realtime_settings(TableSettings())
    from_table = realtime_settings(TableSettings(variant="realtime", white="Ann"))
    assert (from_table.white, from_table.tick) == ("Ann", 1.0)
    with pytest.raises(TableError, match=r"^variant realtime takes no options$"):
        realtime_settings(TableSettings(variant="realtime", options="cast"))
    with pytest.raises(TableError, match="each side needs a king"):
        realtime_settings({"start": "8/8/8/8/8/8/8/4K3 w - - 0 1"})
    with pytest.raises(TableError, match="unknown setting"):
        realtime_settings(None, colour="red")


def test_record_pgn_and_state() -> None:
    table = RealtimeTable("t", {"tick": "0.2", "white": "Ann", "black": "Bob"})
    events = play(table)
    assert [m["uci"] for m in table.moves()] == ["e2e4", "e7e5", "g1f3"]
    refused = [e for e in events if e["type"] == "ruling"]
    assert [(r["kind"], r["article"], r["uci"]) for r in refused] == [
        ("refused", "realtime 3.1", "f3g5")
    ]
    state = table.state()
    json.dumps(state)  # JSON-able
    rt = state["realtime"]
    assert rt["corrections"] == [
        {"kind": "move", "square": "f3", "piece": "N", "from": "g5",
         "text": "move N from g5 to f3"}
    ]  # fmt: skip
    assert set(rt["delays"]) == {"e4", "e5", "f3"}
    assert state["board"] == "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R"
    assert state["physical"] == "rnbqkbnr/pppp1ppp/8/4p1N1/4P3/8/PPPP1PPP/RNBQKB1R"
    pgn = table.pgn()
    assert '[Variant "Realtime"]' in pgn
    assert '[RealtimeTick "0.2"]' in pgn
    assert "1. e2-e4 {[%vt 1.000] arrives 1.400} 2... e7-e5 {[%vt 1.100] arrives 1.500}" in pgn
    assert "refused (rule 3.1" in pgn
    texts = [o.text for o in table.take_clock_orders() if o.kind == "text"]
    assert texts == ["G5 TO F3"]


def test_replaying_the_inputs_gives_the_same_outputs() -> None:
    first, second = RealtimeTable("t", {"tick": "0.2"}), RealtimeTable("t", {"tick": "0.2"})
    assert play(first) == play(second)
    assert first.pgn() == second.pgn()


def test_admin_commands() -> None:
    table = RealtimeTable("t", {"tick": "0.2"})
    play(table)
    with pytest.raises(TableError, match="does not apply to realtime chess"):
        table.admin("claim", {"side": "white", "kind": "threefold"}, 6.0)
    with pytest.raises(TableError, match="result must be"):
        table.admin("end", {"result": "2-0"}, 6.0)
    [players] = table.admin("players", {"white": "Cy"}, 6.0)
    assert players.data == {  # the game has moves: the record keeps its players
        "white": "Cy", "black": "?", "applies": "next game",
        "message": "applies to the next game: the game under way has moves",
    }  # fmt: skip
    assert table.settings.white == "?"
    [result] = table.admin("end", {"result": "1/2-1/2", "reason": "agreement"}, 6.0)
    assert (result.type, table.phase, table.result) == ("result", "finished", "1/2-1/2")
    assert '[Termination "agreement"]' in table.pgn()
    assert '[White "?"]' in table.pgn()
    assert table.change_log() == [  # the players named were the next game's
        {"time": 6.0, "what": "result", "old": {"result": "*", "reason": ""},
         "new": {"result": "1/2-1/2", "reason": "agreement"}},
    ]  # fmt: skip
    events = table.admin("start", {"tick": "0.1"}, 7.0)
    assert events[0].type == "new_game"
    assert table.settings.white == "Cy"
    [players] = table.admin("players", {"black": "Di"}, 7.5)  # no move yet: this game
    assert players.data == {"white": "Cy", "black": "Di"}
    assert [c["what"] for c in table.change_log()] == ["players"]  # a new game, a new log
    assert table.phase == "playing"
    assert table.moves() == []
    assert "move P from e4 to e2" in [c["text"] for c in table.corrections()]


def test_clock_texts_fit_the_dgt_3000() -> None:
    texts = [
        clock_text(Correction(CorrectionKind.MOVE, sq("e2"), "P", sq("e4"))),
        clock_text(Correction(CorrectionKind.REMOVE, sq("a4"), "n")),
        clock_text(Correction(CorrectionKind.PLACE, sq("h8"), "Q")),
    ]
    assert texts == ["E4 TO E2", "OFF A4", "PUT H8"]
    assert all(len(t) <= 8 for t in texts)


def test_a_tick_reports_every_arrival_and_every_delay_that_ran_out() -> None:
    """An arrival or the end of a delay changes what viewers see without any board event:
    the tick that passes it reports it, once, whatever the spacing of the ticks."""
    table = RealtimeTable("t", {"tick": "0.2"})
    seen: list[dict[str, Any]] = []
    for event in inputs()[:-2]:  # without the refused knight move
        seen += [e.to_json() for e in table.tick(event.time) + table.feed(event)]
    assert table.tick(1.8) == []  # the knight (lifted 1.5) is still under way
    late = [e.to_json() for e in table.tick(5.0)]  # one late tick passes five instants
    timeline = [e for e in seen + late if e["type"] in ("arrival", "delay_end")]
    assert [(e["type"], e["square"], e["piece"], e["virtual_time"]) for e in timeline] == [
        ("arrival", "e4", "P", 1.4),
        ("arrival", "e5", "p", 1.5),
        ("arrival", "f3", "N", 1.9),
        ("delay_end", "e4", "P", 3.4),
        ("delay_end", "e5", "p", 3.5),
        ("delay_end", "f3", "N", 3.9),
    ]
    assert [e["delay_ends"] for e in timeline if e["type"] == "arrival"] == [3.4, 3.5, 3.9]
    assert [e["time"] for e in late] == [1.9, 3.4, 3.5, 3.9]  # stamped when they happened
    assert table.tick(5.0) == []  # each reported once
    assert table.tick(6.0) == []
    assert table.state()["realtime"]["delays"] == {}


def test_summary_is_what_the_overview_shows_of_the_state() -> None:
    from service.web.stream import summary as overview

    table = RealtimeTable("t", {"tick": "0.2", "white": "Ann", "black": "Bob", "round": "2"})
    play(table)
    shown = table.summary(4.0)
    expected = overview(table.state(4.0))
    del expected["connection"]  # the hall adds the board's connection
    assert shown == expected
    assert (shown["white"], shown["round"], shown["variant"], shown["ply"]) == (
        "Ann", "2", "realtime", 3,
    )  # fmt: skip
    assert (shown["claims"], shown["irregularities"]) == (0, 0)


def test_a_replaced_game_with_moves_is_kept_as_it_read_under_its_settings() -> None:
    table = RealtimeTable("t", {"tick": "0.2", "white": "Ann", "black": "Bob"})
    play(table)
    assert table.take_ended_games() == []
    before = table.pgn()
    table.admin("start", {"white": "Cy"}, 7.0)
    assert table.take_ended_games() == [before]
    assert table.take_ended_games() == []
    table.admin("start", {}, 8.0)  # the new game has no moves: nothing to keep
    assert table.take_ended_games() == []
