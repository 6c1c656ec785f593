"""Today's PGN, pinned byte for byte: a few games of each kind the service writes (the
turn-based table with clocks, segments of US speed 11, the board's ambiguity note, T20
scores, 20-chess parts and a corrected drop, a Chess960 start, an ended game, the realtime
table, and the recogniser's record).  Whoever changes the PGN writer keeps these texts."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from test_realtime_table import play as play_realtime
from test_table import exf5_or_exd5_then_ke7
from test_table_helpers import Hands
from test_twenty_admin import at_rule_4

from service.recognize.pgn import GameRecord, RecordedMove, game_pgn
from service.table import RealtimeTable, TableSettings
from service.variants import get_variant

PINNED = Path(__file__).with_name("pgn_pinned.json")

OPENING = [
    ("e2e4", "P", True), ("e7e5", "p", False), ("g1f3", "N", True), ("b8c6", "n", False),
    ("f1c4", "B", True), ("g8f6", "n", False), ("d2d3", "P", True), ("f8c5", "b", False),
    ("e1g1", "K", True),
]  # fmt: skip


def casual_with_clock() -> str:
    settings = TableSettings(
        white='Ann "The Rook" \\ Smith', black="Bob", event="Club {night}", round="3",
        time_control="180+2",
    )  # fmt: skip
    hands = Hands(settings)
    for uci, symbol, white in OPENING[:-1]:
        hands.play(uci, symbol, white)
    hands.admin("end", result="1/2-1/2", reason="agreement")
    return hands.table.pgn()


def uscf_illegal_move_stood() -> str:
    hands = Hands(TableSettings(rules="uscf-speed"))
    hands.move("g1g3", "N")
    hands.press(True)
    hands.play("e7e5", "p", False)
    hands.play("g3f5", "N", True)
    hands.play("d7d6", "p", False)
    return hands.table.pgn()


def ambiguity_note() -> str:
    return exf5_or_exd5_then_ke7().table.pgn()


def t20_scores() -> str:
    fen = "rbnqbrk1/pppppppp/6n1/8/8/6N1/PPPPPPPP/RBNQBRK1 w - - 0 1"
    hands = Hands(TableSettings(variant="t20"), fen=fen)
    hands.play("e2e4", "P", True)
    hands.play("d7d5", "p", False)
    hands.play("e4d5", "P", True)
    return hands.table.pgn()


def twenty_chess_parts() -> str:
    hands = at_rule_4()
    hands.admin("drop_kind", ply="last", kind="q")
    hands.put("a6", "p")
    hands.play("b8c6", "n", False)
    return hands.table.pgn()


def chess960_without_clock() -> str:
    fen = "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9"
    hands = Hands(TableSettings(variant="chess960"), fen=fen, clock=False)
    hands.move("e2e4", "P")
    hands.wait(3)
    hands.move("f6e4", "n")
    hands.wait(3)
    return hands.table.pgn()


def ended_game() -> str:
    hands = Hands(TableSettings(white="A", black="B"))
    hands.play("d2d4", "P", True)
    hands.play("d7d5", "p", False)
    hands.admin("start", white="C", time_control="60+1")
    return "\n".join(hands.table.take_ended_games())


def realtime() -> str:
    table = RealtimeTable("t", {"tick": "0.2", "white": "Ann", "black": "Bob"})
    play_realtime(table)
    return table.pgn()


def recognised_record() -> str:
    start = get_variant("standard").default_start()
    moves = (
        RecordedMove(1, 1, True, "e2e4", "e4", True),
        RecordedMove(2, 1, False, "e7e5", "e5", True, ("d5", "Qe7")),
        RecordedMove(3, 2, True, "g1f3", "Nf3", True),
        RecordedMove(4, 2, False, "b8c6", "Nc6", False),
    )
    record = GameRecord("standard", start, moves, "*", {"Variant": "Standard"})
    tags = {"White": 'X "Y"', "Event": "E"}
    return game_pgn(record, tags) + game_pgn(record, include_provisional=True)


GAMES: dict[str, Callable[[], str]] = {
    f.__name__: f
    for f in (
        casual_with_clock, uscf_illegal_move_stood, ambiguity_note, t20_scores,
        twenty_chess_parts, chess960_without_clock, ended_game, realtime, recognised_record,
    )
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(GAMES))
def test_pgn_is_as_pinned(name: str) -> None:
    pinned = json.loads(PINNED.read_text(encoding="utf-8"))
    assert GAMES[name]() == pinned[name]


if __name__ == "__main__":  # write the pins anew (only when a change of the PGN is wanted)
    PINNED.write_text(
        json.dumps({n: f() for n, f in sorted(GAMES.items())}, indent=1) + "\n",
        encoding="utf-8",
    )
    sys.exit(0)
