"""The table's own steps for its most frequent inputs give what the general steps give: the
data of a lift, a place and a move built straight equal the recogniser's JSON; the keeper's
flat increment equals the time control's; a move the recogniser made first is made again
in the same position; MoveEntry's setters drop its cached JSON; a square change's and a
lever press's JSON written straight are the recording's, the clock event's times rounded
as ``round`` rounds, and the store's output rows written as before."""

from __future__ import annotations

import itertools
import random
from enum import StrEnum
from pathlib import Path
from typing import Any

import chess
import pytest

from dgt.events import ClockUpdate, LeverMoved, Side, SquareChanged
from dgt.protocol.constants import Piece
from dgt.recording import event_to_json
from service.json_text import utf8_dumps
from service.recognize.events import Lift, MoveEvent, Place
from service.store import Store, board_input, output_json, row_text
from service.table.clock_keeper import ClockKeeper
from service.table.events import (
    TableEvent,
    event_data,
    lever_json,
    move_data,
    square_data,
    square_json,
)
from service.table.record import MoveEntry
from service.time_control import GameClocks, TimeControl
from service.variants import get_variant
from service.variants.base import WHITE, ScoreEvent


def test_square_data_is_the_recognisers_json() -> None:
    for square, piece in itertools.product(range(64), ["P", "k", "*", "?", "="]):
        for kind in (Lift, Place):
            assert square_data(square, piece) == event_data(kind(1.5, square, piece))
            assert list(square_data(square, piece)) == list(event_data(kind(1.5, square, piece)))


@pytest.mark.parametrize(
    "move",
    [
        MoveEvent(2.0, 1, 1, WHITE, "e2e4", "e4", False),
        MoveEvent(2.0, 2, 1, not WHITE, "e7e5", "e5", True),
        MoveEvent(
            2.0, 3, 2, WHITE, "g1f3", "Nf3", True,
            scores=(ScoreEvent(WHITE, 3, "capture"), ScoreEvent(not WHITE, -1, "check")),
            alternatives=(("g1h3", "Nh3"), ("b1c3", "Nc3")),
        ),
    ],
)  # fmt: skip
def test_move_data_is_the_recognisers_json(move: MoveEvent) -> None:
    built, general = move_data(move), event_data(move)
    assert built == general
    assert list(built) == list(general)  # the same order: the same text when written


def test_table_event_is_built_as_a_dataclass_would() -> None:
    event = TableEvent(3.0, "lift", {"square": "e2"})
    assert (event.time, event.type, event.data) == (3.0, "lift", {"square": "e2"})
    assert event == TableEvent(3.0, "lift", {"square": "e2"})
    assert event.to_json() == {"time": 3.0, "type": "lift", "square": "e2"}
    assert event != TableEvent(3.0, "place", {"square": "e2"})
    assert not hasattr(event, "__dict__")  # in slots: a table makes two or three an input


@pytest.mark.parametrize("text", ["300+0", "180+2", "40/5400+30:1800+30", "40/7200:3600", "-"])
def test_a_press_adds_what_the_time_control_says(text: str) -> None:
    control = TimeControl.parse(text)
    keeper = ClockKeeper(control)
    assert keeper.timed == control.timed
    assert keeper.counts_moves == control.counts_moves
    plain = GameClocks(control.base, control.base, WHITE, 0.0)
    keeper.clocks = GameClocks(control.base, control.base, WHITE, 0.0)
    t = 0.0
    side = WHITE
    for moves in range(1, 45):
        t += 7.25
        shown = keeper.pressed(side, True, True, moves, t)
        # what the press does by the time control's own words
        plain.run(not side, t)
        timed = control.timed
        increment = control.increment_after(moves) if timed else 0.0
        bonus = control.increment_after(moves) + control.bonus_after(moves) if timed else 0.0
        if bonus:
            plain.add(side, bonus, t)
        assert shown == plain.remaining(side, t) - increment
        assert keeper.clocks.snapshot(t + 1.0) == plain.snapshot(t + 1.0)
        side = not side
    keeper.control = TimeControl.parse("60+5")
    assert keeper.timed
    assert not keeper.counts_moves


def test_a_move_made_again_from_a_shared_position_reaches_the_same_position() -> None:
    variant = get_variant("standard")
    start = variant.default_start()
    first = variant.new_game(start)
    second = variant.new_game(start)
    second.share_positions(first)
    for uci in ("e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6"):
        legal = next(a for a in first.legal_actions() if a.uci == uci)
        first.apply(legal.action)
        second.apply(legal.action)  # made from a position the first game made it from
        assert second.squares == first.squares
        assert second.fen() == first.fen()
    board = chess.Board()
    for uci in ("e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6"):
        board.push_uci(uci)
    assert second.fen() == board.fen()
    second.undo()
    board.pop()
    assert second.fen() == board.fen()


def test_move_entry_setters_drop_its_json() -> None:
    entry = MoveEntry(1, 1, WHITE, "e2e4", "e4")
    assert entry.to_json()["final"] is False
    entry.finish(295.5)
    assert entry.to_json()["final"] is True
    assert entry.to_json()["clock_seconds"] == 295.5
    entry.set_clock(290.0)
    assert entry.to_json()["clock_seconds"] == 290.0
    entry.finish()
    assert entry.to_json()["clock_seconds"] == 290.0


def test_square_and_lever_json_are_the_recordings_json() -> None:
    sides = (Side.LEFT, Side.RIGHT)
    for square, piece, previous in itertools.product(range(64), Piece, (Piece.EMPTY, Piece.BKING)):
        event = SquareChanged(1.5, square, piece, previous)
        for written in (square_json(event), board_input(event)):
            assert written == event_to_json(event)
            assert list(written) == list(event_to_json(event))  # the same text when written
    for side in sides:
        lever = LeverMoved(2.5, side)
        for written in (lever_json(lever), board_input(lever)):
            assert written == event_to_json(lever)
            assert list(written) == list(event_to_json(lever))
    report = ClockUpdate(3.0, 299.0, 300.0, True, Side.LEFT, False, False, False, Side.LEFT)
    assert board_input(report) == event_to_json(report)


def test_output_json_of_a_table_event_is_its_json() -> None:
    event = TableEvent(3.5, "move", {"ply": 1, "uci": "e2e4", "final": False})
    assert output_json(event) == event.to_json()
    assert list(output_json(event)) == list(event.to_json())
    assert output_json({"type": "x", "time": 1.0}) == {"type": "x", "time": 1.0}


def test_the_clock_events_times_are_rounded_as_round_would() -> None:
    rng = random.Random(29)
    values: list[float] = [0.0, -0.0, -3.0, 0.0005, 2.675, 299.9995, float("nan"), 1e12]
    values += [rng.uniform(-5.0, 10_800.0) for _ in range(20_000)]
    for white, black in zip(values, reversed(values), strict=True):
        for running in (None, WHITE, not WHITE):
            clocks = GameClocks(white, black, running, 10.0)
            got = clocks.snapshot(12.345)
            spent = 2.345 if running is not None else 0.0
            w = white - spent if running == WHITE else white
            b = black - spent if running is not None and running != WHITE else black
            want = {"white": round(max(0.0, w), 3), "black": round(max(0.0, b), 3)}
            for color in ("white", "black"):
                assert repr(got[color]) == repr(want[color]), (white, black, running)
    ints = GameClocks(300, 0, None, 0.0).snapshot(1.0)
    assert (ints["white"], type(ints["white"])) == (300, int)  # as round: an int stays one
    assert (ints["black"], type(ints["black"])) == (0.0, float)  # max(0.0, 0) is the float


def test_output_rows_are_written_as_before(tmp_path: Path) -> None:
    """An output's kind and time as ``str(out.get("type", "?"))`` and
    ``float(out.get("time", t) or t)`` read them, its text as ``utf8_dumps`` writes it."""

    class Kind(StrEnum):
        MOVE = "move"

    store = Store(tmp_path / "log.db")
    outs: list[dict[str, Any]] = [
        {"time": 2.5, "type": "move", "san": "Żf3"},
        {"time": 0, "type": Kind.MOVE},
        {"time": 0.0, "type": 7},
        {"time": 3, "type": "clock"},
        {"san": "e4"},
        {"time": 1.25, "type": "big", "n": 2**70},  # orjson refuses: the standard library's
    ]
    store._append("1", "board", "in", 9.0, {"event": "x"}, outs)
    rows = [row_text(row) for row in store._pending]  # (its role and kind as text)
    assert [row[2:4] for row in rows[1:]] == [
        ("move", 2.5), ("move", 9.0), ("7", 9.0), ("clock", 3.0), ("?", 9.0), ("big", 1.25)
    ]  # fmt: skip
    assert all(type(row[3]) is float and type(row[2]) is str for row in rows)
    assert [row[4] for row in rows[1:]] == [utf8_dumps(out) for out in outs]
    store._pending.clear()
    store._append("2", "board", "in", 9.0, {"event": "x"}, [{"type": "bad\ud800"}])
    assert not store._pending  # no UTF-8 form: refused, as before
    assert store.refused == 2
    store._append("3", "board", "in", 9.0, {"n": 2**70}, [])  # the input's text as well
    assert [row[4] for row in store._pending] == [utf8_dumps({"n": 2**70})]
    store._pending.clear()
    store._append("4", "board", "in", 9.0, {"name": "\ud800"}, [{"type": "x"}])
    assert not store._pending
    assert store.refused == 4
    store.close()
