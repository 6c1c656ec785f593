"""A press's (or a ruling's) ``clock`` event carries the clocks the table's summary shows
(:meth:`~service.table.clock_keeper.ClockKeeper.shown`, one dictionary made once): it reads
as the clocks' snapshot at its time, and stays so whatever the summaries read after it."""

from __future__ import annotations

import json
import random

from test_table_helpers import Hands

from service.table import TableSettings, clock_keeper

COMPILED = not str(clock_keeper.__file__).endswith(".py")
"""Whether the table comes from the optional compiled build (``build_compiled.py``)."""


def test_a_press_shows_its_clocks_once_for_its_event_and_the_summary() -> None:
    hands = Hands(settings=TableSettings(time_control="5+3"))
    rng = random.Random(3)
    presses = 0
    kept: list[tuple[dict[str, object], str]] = []
    moves = [("e2e4", "P"), ("e7e5", "p"), ("g1f3", "N"), ("b8c6", "n"), ("f1c4", "B"),
             ("g8f6", "n"), ("d2d3", "P"), ("f8c5", "b")]  # fmt: skip
    for ply, (uci, symbol) in enumerate(moves):
        color = ply % 2 == 0
        hands.move(uci, symbol, dt=rng.choice((0.3, 0.7, 1.1)))
        got = hands.press(color, dt=rng.choice((0.2, 0.5)))
        clocks = hands.table._clock.clocks
        shown = [event for event in got if event.type == "clock"]
        assert len(shown) == 1
        event = shown[0]
        assert json.dumps(event.data) == json.dumps(clocks.snapshot(event.time))
        summary = hands.table.summary()
        assert summary["clocks"] == event.data
        if not COMPILED:  # made once, shared (the compiled keeper boxes each time anew, and
            # its test of the same time by identity fails: a new dictionary, the same values)
            assert summary["clocks"] is event.data
        kept.append((event.data, json.dumps(event.data)))
        presses += 1
        hands.wait(rng.choice((0.0, 0.4, 1.3)))
        hands.table.summary()
    assert presses == len(moves)
    for data, text in kept:  # no summary after it changed what an event carried
        assert json.dumps(data) == text
