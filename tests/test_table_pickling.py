"""A table pickled and unpickled (what a read replica does with its snapshot) is the same
table: it shows the same and answers the next inputs as the original does.  In plain Python
and in the compiled build (build_compiled.py), whose ``__new__`` runs ``__init__``: the
tables, their clock keepers, arbiters, records and games say what to pass it."""

from __future__ import annotations

import pickle
import zlib
from typing import Any

import pytest
from test_realtime_table import inputs
from test_table_helpers import Hands

from service.scaleout.replica import _packed, unpickled
from service.table import RealtimeTable, TableSettings
from service.table.record import MoveEntry
from service.variants import VARIANTS, get_variant

GAME = [("e2e4", "P"), ("e7e5", "p"), ("g1f3", "N"), ("b8c6", "n"), ("f1c4", "B")]


def _copies(value: Any) -> list[Any]:
    """``value`` through pickle, and through the replica's own pickler."""
    return [pickle.loads(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)),
            unpickled(zlib.decompress(_packed(value)))]  # fmt: skip


@pytest.mark.parametrize("variant", ["standard", "t20", "chess960"])
def test_a_table_in_play_unpickled_shows_and_plays_on_as_the_original(variant: str) -> None:
    hands = Hands(TableSettings(time_control="300+2", variant=variant))
    for i, (uci, symbol) in enumerate(GAME):
        hands.play(uci, symbol, i % 2 == 0)
    hands.move("f8c5", "b")  # not completed: the clock not pressed yet
    copies = _copies(hands.table)
    twins = []
    for copy in copies:
        assert copy is not hands.table
        assert copy.state(hands.time) == hands.table.state(hands.time)
        assert copy.moves() == hands.table.moves()
        assert copy.pgn() == hands.table.pgn()
        twin = Hands(TableSettings(time_control="300+2", variant=variant))
        twin.table, twin.time, twin.squares = copy, hands.time, dict(hands.squares)
        twins.append(twin)
    for side in (hands, *twins):  # the same press, then the same move: the same answers
        side.out = []
        side.press(False)
        side.play("d2d3", "P", True)
    for twin in twins:
        assert [e.to_json() for e in twin.out] == [e.to_json() for e in hands.out]
        assert twin.table.state(hands.time) == hands.table.state(hands.time)
        assert twin.table.pgn() == hands.table.pgn()


def test_a_realtime_table_unpickled_plays_on_as_the_original() -> None:
    table = RealtimeTable("r1", {"tick": 0.5})
    events = inputs()
    for event in events[:-2]:
        table.tick(event.time)
        table.feed(event)
    for copy in _copies(table):
        assert copy.state(2.0) == table.state(2.0)
        assert copy.moves() == table.moves()
    later = _copies(table)
    for t in (table, *later):
        for event in events[-2:]:
            t.tick(event.time)
            t.feed(event)
        t.tick(4.0)
    for copy in later:
        assert copy.state(4.0) == table.state(4.0)
        assert copy.pgn() == table.pgn()


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_a_game_of_each_variant_unpickled_is_the_same_position(variant: str) -> None:
    game = get_variant(variant).new_game()
    action = game.legal_actions()[0]
    game.apply(action.action)
    for copy in _copies(game):
        assert type(copy) is type(game)
        assert copy.squares == game.squares
        assert [a.uci for a in copy.legal_actions()] == [a.uci for a in game.legal_actions()]
        assert copy.variant.id == game.variant.id


def test_a_move_of_the_record_unpickled_keeps_its_fields_and_drops_its_json_on_change() -> None:
    entry = MoveEntry(3, 2, True, "g1f3", "Nf3", clock=291.5, alternatives=(("g1h3", "Nh3"),))
    entry.notes.append("a note")
    shown = entry.to_json()
    for copy in _copies(entry):
        assert copy == entry
        assert copy.notes == ["a note"]
        assert copy.to_json() == shown
        copy.set_clock(280.0)
        assert copy.to_json()["clock_seconds"] == 280.0
        copy.set_alternatives(())
        assert "alternatives" not in copy.to_json()
        copy.amend("g1h3", "Nh3", (("g1f3", "Nf3"),), ())
        assert (copy.to_json()["uci"], copy.to_json()["san"]) == ("g1h3", "Nh3")
        copy.rewrite("g1f3", "Nf3")
        assert (copy.to_json()["uci"], copy.to_json()["san"]) == ("g1f3", "Nf3")
