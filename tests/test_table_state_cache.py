"""The table's cached views (placement, FEN, the move list, the settings) always read as a
table that never cached anything would: after every input, the live table's state equals
the state of a fresh table fed the same inputs."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import chess
import pytest
from test_table_helpers import Hands

from service.table import Table, TableEvent, TableSettings, placement_fen


def test_placement_fen_writes_what_python_chess_writes() -> None:
    rng = random.Random(5)
    symbols = ["", "", "", "P", "n", "K", "q", "*", "?", "b", "R"]
    for _ in range(300):
        cells = tuple(rng.choice(symbols) for _ in range(64))
        board = chess.BaseBoard.empty()
        for square, symbol in enumerate(cells):
            if symbol and symbol in "PNBRQKpnbrqk":
                board.set_piece_at(square, chess.Piece.from_symbol(symbol))
        assert placement_fen(cells) == board.board_fen()
    assert placement_fen(("",) * 64) == "8/8/8/8/8/8/8/8"


@dataclass
class RecordedHands(Hands):
    """:class:`Hands` keeping every input its table gets, to replay them into a fresh
    table."""

    inputs: list[tuple[str, tuple[Any, ...]]] = field(default_factory=list)

    def feed(self, event: Any) -> list[TableEvent]:
        self.inputs += [("tick", (event.time,)), ("feed", (event,))]
        return super().feed(event)

    def wait(self, seconds: float) -> list[TableEvent]:
        self.inputs.append(("tick", (self.time + seconds,)))
        return super().wait(seconds)

    def admin(self, command: str, **args: Any) -> list[TableEvent]:
        self.inputs.append(("admin", (command, args, self.time)))
        return super().admin(command, **args)

    def fresh_state(self) -> dict[str, Any]:
        table = Table("t1", self.settings)
        for name, args in self.inputs:
            getattr(table, name)(*args)
        return table.state()


def checked(hands: RecordedHands) -> dict[str, Any]:
    state = hands.table.state()
    assert state == hands.fresh_state()
    game = hands.table.game
    assert state["fen"] == (game.fen() if game is not None else None)
    reference = chess.BaseBoard.empty()
    for square, piece in hands.squares.items():
        reference.set_piece_at(square, chess.Piece.from_symbol(piece.symbol))
    assert state["board"] == reference.board_fen()
    return state


@pytest.mark.parametrize("variant", ["standard", "t20"])
def test_state_after_every_input_matches_a_fresh_table(variant: str) -> None:
    settings = TableSettings(variant=variant)
    hands = RecordedHands(settings)
    checked(hands)
    steps: list[Callable[[], object]] = [
        lambda: hands.play("e2e4", "P", True),
        lambda: hands.play("e7e5", "p", False),
        lambda: hands.lift("g1"),
        lambda: hands.put("f3", "N"),
        lambda: hands.press(True),
        lambda: hands.move("f3g1", "N"),  # taken back
        lambda: hands.play("d2d4", "P", True),
        lambda: hands.play("e5d4", "p", False),  # a capture
        lambda: hands.admin("players", white="Ann", black="Bob"),
        lambda: hands.admin("correct", ply=3, uci="d2d3"),
        lambda: hands.wait(3),
        lambda: hands.admin("start"),
        lambda: hands.admin("players", white="Cy"),
    ]
    plies = []
    for step in steps:
        step()
        state = checked(hands)
        plies.append(len(state["moves"]))
    assert max(plies) >= 3  # the game went on and was rewritten, not only restarted
    assert plies[-1] == 0
    assert hands.table.state()["settings"]["white"] == "Cy"


def test_move_entries_follow_their_changes() -> None:
    hands = Hands()
    hands.move("e2e4", "P")
    first = hands.table.moves()
    assert [m["final"] for m in first] == [False]
    hands.press(True)
    second = hands.table.moves()
    assert [m["final"] for m in second] == [True]
    assert second[0]["clock_seconds"] is not None
    assert first[0]["final"] is False  # what was handed out earlier did not change
