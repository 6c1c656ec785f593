"""The table's own steps for its most frequent inputs give what the general steps give: the
data of a lift, a place and a move built straight equal the recogniser's JSON; the keeper's
flat increment equals the time control's; a move the recogniser made first is made again
in the same position; MoveEntry's setters drop its cached JSON."""

from __future__ import annotations

import itertools

import chess
import pytest

from service.recognize.events import Lift, MoveEvent, Place
from service.table.clock_keeper import ClockKeeper
from service.table.events import TableEvent, event_data, move_data, square_data
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
    with pytest.raises(AttributeError):
        event.time = 4.0  # type: ignore[misc]


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
