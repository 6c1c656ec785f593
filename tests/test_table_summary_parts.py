"""The table's summary (what the overview shows, asked at every update a table publishes)
is built from parts kept until what each is written from changes; after every input it
reads, as JSON byte for byte, as a summary written from nothing."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

import pytest
from test_table_helpers import Hands
from test_table_quick_clock import _game, _Host

from dgt.protocol.constants import Piece
from service.table import Table, TableSettings, placement_fen
from service.table.clock_keeper import ClockKeeper
from service.table.game import Phase
from service.table.record import move_squares
from service.table.settings import details_summary, next_players_shown
from service.table.views import BoardView, SetRightMemo, set_right
from service.table_runner import TableRunner
from service.time_control import TimeControl
from service.variants import get_variant
from service.variants.base import BLACK, WHITE


def _set_right_fresh(table: Any) -> list[dict[str, str]]:
    cells = table.physical()
    game = table._game
    if table._awaiting is not None:
        return set_right(table._awaiting.squares, cells)
    if table._phase is Phase.PLAYING and game is not None:
        return set_right(game.squares, cells)
    if table._phase is Phase.SETUP and table._start is None:
        starts = table._variant.start_positions()
        return set_right(starts[0].squares, cells, loose=len(starts) > 1)
    return []


def fresh_summary(table: Any) -> dict[str, Any]:
    """The summary as written from the table's state with no part kept."""
    game = table.game
    cells = table.physical()
    if table.presence_only and game is not None:
        cells = tuple(game.squares[s] or c if c == "*" else c for s, c in enumerate(cells))
    record = table._record
    last = record[-1] if record else None
    last_move = None
    if last is not None:
        origin, target = move_squares(last.uci)
        last_move = {"from": origin, "to": target, "uci": last.uci, "san": last.san}
    clocks = table._clock.clocks
    s = table.settings
    return {
        "id": table.id,
        "phase": table._phase,
        "fen": None if game is None else game.fen(),
        "board": placement_fen(cells),
        "orientation": "black" if table._recognizer.rotated else "white",
        "last_move": last_move,
        "clocks": clocks.snapshot(clocks.as_of),
        "scores": table._scores(),
        "result": table._result,
        "reason": table._reason,
        "link": table._link,
        "white": s.white,
        "black": s.black,
        "round": s.round,
        "event": s.event,
        "variant": s.variant,
        "ply": len(record),
        "claims": len(table._arbiter.open_claims()),
        "irregularities": len(table._irregularities),
        "set_right": _set_right_fresh(table),
        **details_summary(s),
        **next_players_shown(table._next_players),
    }


def same_json(table: Table) -> None:
    want = json.dumps(fresh_summary(table))
    assert json.dumps(table.summary()) == want
    assert json.dumps(table.summary()) == want  # asked again, from what was kept


def _steps(hands: Hands) -> list[Callable[[], object]]:
    return [
        lambda: hands.play("e2e4", "P", True),
        lambda: hands.lift("e7"),
        lambda: hands.put("e5", "p"),
        lambda: hands.press(False),
        lambda: hands.lift("g1"),
        lambda: hands.put("f3", "N"),
        lambda: hands.press(True),
        lambda: hands.move("f3g1", "N"),  # taken back
        lambda: hands.play("d2d4", "P", True),
        lambda: hands.play("e5d4", "p", False),  # a capture
        lambda: hands.lift("a2"),
        lambda: hands.lift("b2"),
        lambda: hands.put("a2", "P"),
        lambda: hands.put("b2", "P"),
        lambda: hands.admin("players", white="Ann", black="Bob", white_elo="2100"),
        lambda: hands.wait(2.5),
        lambda: hands.admin("correct", ply=3, uci="d2d3", confirm=True),
        lambda: hands.wait(3),
        lambda: hands.admin("players", white="Dee"),
        lambda: hands.admin("end", result="1-0"),
        lambda: hands.admin("players", white="Eve", black="Fay"),
        lambda: hands.admin("start"),
        lambda: hands.admin("players", white="Cy"),
        lambda: hands.play("e2e4", "P", True),
    ]


def test_the_summary_after_every_input_reads_as_one_written_from_nothing() -> None:
    hands = Hands(TableSettings())
    same_json(hands.table)
    for step in _steps(hands):
        step()
        same_json(hands.table)
        hands.wait(0.7)  # the clock runs: the summary's clocks follow
        same_json(hands.table)


def test_the_summary_of_a_board_set_up_piece_by_piece() -> None:
    hands = Hands()
    names = ["a1", "b1", "c1", "d1", "e1", "f1", "g1", "h1", "a2", "e2", "d7", "e8"]
    for name in names:  # the board emptied square by square, then set up again
        hands.lift(name)
        same_json(hands.table)
    for name, symbol in zip(names, "RNBQKBNRPPpk", strict=True):
        hands.put(name, symbol)
        same_json(hands.table)
    assert hands.table.summary()["set_right"] == []


def test_the_summary_of_a_presence_only_board() -> None:
    hands = Hands(presence_only=True)
    same_json(hands.table)
    for step in _steps(hands)[:10]:
        step()
        same_json(hands.table)


def test_squares_to_set_right_follow_the_board_square_by_square() -> None:
    rng = random.Random(20)
    pieces = [Piece.EMPTY, Piece.EMPTY, Piece.WPAWN, Piece.BKNIGHT, Piece.WKING, Piece.BQUEEN]
    start = get_variant("standard").start_positions()[0].squares
    for rotated, loose in ((False, False), (True, True)):
        board = BoardView()
        memo = SetRightMemo()
        board.snapshot([Piece.EMPTY] * 64)
        for n in range(400):
            if n % 50 == 0:
                board.physical(rotated)  # a board read whole: no step to follow
            board.set_square(rng.randrange(64), rng.choice(pieces))
            cells = board.physical(rotated)
            if rng.random() < 0.7:  # the summary is not asked after every change
                got = memo.squares(start, cells, loose=loose, step=board.last_step)
                assert got == set_right(start, cells, loose=loose)


def test_squares_to_set_right_are_written_again_for_another_position_board_or_looseness() -> None:
    """The memo knows what it wrote from by identity: another position or board object (the
    table makes a new one at every change), or another looseness, is written again, and
    what it returns is the caller's to change."""
    start = get_variant("standard").start_positions()[0].squares
    lifted = tuple("" if square == 12 else cell for square, cell in enumerate(start))  # e2
    moved = tuple("P" if square == 28 else cell for square, cell in enumerate(lifted))  # e4
    swapped = list(start)
    swapped[1], swapped[2] = swapped[2], swapped[1]  # a knight and a bishop swapped
    memo = SetRightMemo()
    got = memo.squares(start, lifted)
    assert got == [{"square": "e2", "want": "P", "have": ""}]
    got.clear()  # the caller's list: the memo's own is left as it was
    assert memo.squares(start, lifted) == [{"square": "e2", "want": "P", "have": ""}]
    assert memo.squares(moved, lifted) == set_right(moved, lifted)  # another position
    assert memo.squares(moved, moved) == []  # another board
    assert memo.squares(start, tuple(swapped)) == set_right(start, tuple(swapped))
    assert len(memo.squares(start, tuple(swapped))) == 2
    assert memo.squares(start, tuple(swapped), loose=True) == []  # any start will do


def test_the_clocks_shown_read_as_a_snapshot_taken_anew() -> None:
    rng = random.Random(7)
    keeper = ClockKeeper(TimeControl.parse("5+3"))
    times: list[float] = [0.0, 1, 1.0, 2.5, 300.0, 299.999, 0.0004, -1.0, 0]
    t = 0.0
    for _ in range(3000):
        clocks = keeper.clocks
        step = rng.random()
        if step < 0.2:
            clocks.white = rng.choice(times)
        elif step < 0.4:
            clocks.black = rng.choice(times)
        elif step < 0.6:
            clocks.running = rng.choice([None, WHITE, BLACK])
        elif step < 0.7:
            clocks.as_of = t
        elif step < 0.8:  # both times given anew, the same values (as a clock reports them)
            clocks.white, clocks.black = _anew(clocks.white), _anew(clocks.black)
        t = rng.choice([t, t + rng.random(), t - 0.5, float(int(t))])
        want = json.dumps(clocks.snapshot(t))
        assert json.dumps(keeper.shown(t)) == want
        assert json.dumps(keeper.shown(clocks.as_of)) == json.dumps(clocks.snapshot(clocks.as_of))


def _anew(value: float) -> float:
    """The same value as another object (an int stays an int)."""
    return float(repr(value)) if type(value) is float else int(str(value))


def test_a_summary_kept_between_inputs_is_the_callers_to_change() -> None:
    hands = Hands(TableSettings())
    hands.play("e2e4", "P", True)
    first = hands.table.summary()
    first["connection"] = {"state": "up"}  # as the hall adds it
    first["clocks"] = None
    same_json(hands.table)  # written from what was kept, untouched by the caller
    assert "connection" not in hands.table.summary()


@pytest.mark.parametrize(("control", "rules", "clock"), [
    ("60+0", "casual", True), ("60+2", "fide-blitz", True), ("60+0", "fide-blitz", False)
])  # fmt: skip
def test_the_summary_kept_between_inputs_reads_as_one_written_from_nothing(
    control: str, rules: str, clock: bool
) -> None:
    """Lifts, places, presses and clock reports, answered by the runner's quick clock or
    by the table: the summary (part of it kept across inputs that change only the board
    or only time) after each one reads as one written from nothing."""
    table = Table("q", TableSettings(time_control=control, rules=rules))
    runner = TableRunner("q", table, _Host(), send_orders=False)
    for seed in range(2):
        for kind, t, event in _game(seed, clock=clock):
            if kind == "tick":
                runner.tick(t)
            else:
                assert event is not None
                runner.feed(event, t)
            same_json(table)
