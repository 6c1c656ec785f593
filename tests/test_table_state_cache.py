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
from test_table_helpers import Hands, take_back_or_play

from dgt.events import BoardSnapshot, SquareChanged
from dgt.protocol.constants import Piece
from service.table import Table, TableEvent, TableSettings, chess_fen, placement_fen
from service.table.views import FenMemo
from service.variants import get_variant
from service.web.stream import summary as overview


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

    def fresh_table(self) -> Table:
        table = Table("t1", self.settings)
        for name, args in self.inputs:
            getattr(table, name)(*args)
        return table

    def fresh_state(self) -> dict[str, Any]:
        return self.fresh_table().state()


def checked(hands: RecordedHands) -> dict[str, Any]:
    state = hands.table.state()
    fresh = hands.fresh_table()
    assert state == fresh.state()
    assert hands.table.pgn() == fresh.pgn()
    assert {**hands.table.summary(), "connection": None} == overview(state)
    assert hands.table.summary() == fresh.summary()
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
        lambda: hands.admin("correct", ply=3, uci="d2d3", confirm=True),
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


def test_the_pgn_is_written_once_per_change_of_the_record() -> None:
    hands = Hands()
    hands.wait(1)
    assert '[White "?"]' in hands.table.pgn()
    hands.admin("players", white="Ann")  # no move yet: the game under way's players
    assert '[White "Ann"]' in hands.table.pgn()
    hands.move("e2e4", "P")
    first = hands.table.pgn()
    assert hands.table.pgn() is first  # nothing changed: the same text, not written again
    hands.press(True)  # the move is final now, with its clock
    second = hands.table.pgn()
    assert second is not first
    assert "1. e4" in second
    assert "1. e4" not in first
    hands.admin("players", white="Bea")  # the next game's: this record is kept as it is
    assert hands.table.pgn() is second


def test_a_replaced_game_is_kept_as_it_was_played() -> None:
    hands = RecordedHands(TableSettings(white="Ann", black="Bob", round="1"))
    assert hands.table.take_ended_games() == []  # nothing played yet
    hands.play("e2e4", "P", True)
    hands.play("e7e5", "p", False)
    hands.admin("end", result="0-1", reason="resignation")
    played = hands.table.pgn()
    assert "1. e4" in played
    assert "0-1" in played
    assert hands.table.take_ended_games() == []  # finished, but still at the table
    hands.admin("start", white="Cy", black="Di", round="2")
    assert hands.table.take_ended_games() == [played]  # under its own players and round
    assert hands.table.take_ended_games() == []  # handed out once
    assert '[White "Cy"]' in hands.table.pgn()
    hands.admin("start")  # a game without moves leaves nothing to keep
    assert hands.table.take_ended_games() == []


@pytest.mark.parametrize("variant_id", ["standard", "chess960", "t20"])
def test_the_quick_fen_reads_as_the_games_own(variant_id: str) -> None:
    """Random games (castling, en passant, promotions come up in a few hundred plies): the
    FEN written from the game's squares is the game's own FEN, position after position."""
    rng = random.Random(11)
    variant = get_variant(variant_id)
    compared = 0
    seen_ep = seen_castled = False
    for _ in range(20):
        game = variant.new_game()
        for _ in range(120):
            quick = chess_fen(game)
            assert quick is not None
            assert quick == game.fen()
            compared += 1
            seen_ep = seen_ep or quick.split()[3] != "-"
            seen_castled = seen_castled or quick.split()[2] not in ("KQkq", "-")
            legal = [la for la in game.legal_actions() if la.changes]
            if not legal:
                break
            game.apply(rng.choice(legal).action)
    assert compared > 400
    if variant_id != "t20":  # T20 games end at 20 points, mostly before anyone castles
        assert seen_ep
        assert seen_castled


def test_the_fen_after_a_move_follows_from_the_fen_before_it() -> None:
    """A table's game that follows its recogniser's (the moves waiting, not made on its own
    python-chess board): the FEN the memo works out move by move, through takebacks, is
    python-chess's own, and the game's waiting moves stay unmade."""
    rng = random.Random(3)
    variant = get_variant("standard")
    compared = 0
    seen_ep = seen_castled = seen_waiting = False
    for _ in range(30):
        leader, follower = variant.new_game(), variant.new_game()
        follower.share_positions(leader)
        memo = FenMemo()
        reference = chess.Board()
        for version in range(1, 201):
            legal = [la for la in leader.legal_actions() if la.changes]
            if not legal:
                break
            take_back_or_play(rng, legal, leader, follower, reference)
            seen_waiting = seen_waiting or bool(follower._unmade)
            fen = memo.fen(version, follower)
            assert fen == reference.fen()
            compared += 1
            seen_ep = seen_ep or fen.split()[3] != "-"
            seen_castled = seen_castled or fen.split()[2] not in ("KQkq", "-")
    assert compared > 2000
    assert seen_ep
    assert seen_castled
    assert seen_waiting


def test_a_game_with_its_own_fen_keeps_it() -> None:
    game = get_variant("twenty-chess").new_game()
    assert chess_fen(game) is None


def test_the_board_shown_follows_every_square_change() -> None:
    """Pieces put, lifted and swapped at random (the ranks written again one by one): the
    board the table shows is always the placement of what stands on the board."""
    rng = random.Random(7)
    pieces = [Piece.EMPTY] * 6 + [p for p in Piece if p.is_chessman]
    table = Table("t1", TableSettings())
    squares = [Piece.EMPTY] * 64
    table.feed(BoardSnapshot(0.0, tuple(squares), "connect"))
    for step in range(1, 600):
        if step % 150 == 0:  # a whole new reading now and then
            squares = [rng.choice(pieces) for _ in range(64)]
            table.feed(BoardSnapshot(step, tuple(squares), "resync"))
        else:
            square = rng.randrange(64)
            piece = rng.choice(pieces)
            table.feed(SquareChanged(step, square, piece, squares[square]))
            squares[square] = piece
        reference = chess.BaseBoard.empty()
        for square, piece in enumerate(squares):
            if piece is not Piece.EMPTY:
                reference.set_piece_at(square, chess.Piece.from_symbol(piece.symbol))
        assert table.physical() == tuple("" if p is Piece.EMPTY else p.symbol for p in squares)
        assert table.state()["board"] == reference.board_fen()
        assert table.summary()["board"] == reference.board_fen()
