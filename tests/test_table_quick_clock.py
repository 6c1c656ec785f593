"""The table's :class:`~service.table.quick_clock.QuickClock` changes nothing a table shows:
games played at a runner (clock reports that change nothing but time answered by the quick
clock, ticks before it is due skipped) answer and show what the same table fed every input
itself answers and shows, input by input (its events, its state, its summary, its PGN)."""

from __future__ import annotations

import random
from typing import Any

import chess
import pytest
from conftest import ErrorLog

from dgt.emulator.board import start_squares
from dgt.events import (
    BoardEvent,
    BoardSnapshot,
    ClockUpdate,
    LeverMoved,
    Side,
    SquareChanged,
)
from dgt.protocol.constants import Piece
from service.table import Table, TableEvent, TableSettings
from service.table_runner import TableInput, TableRunner

MOVES = ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "b5c6", "d7c6", "e1g1", "f7f6"]


class _Host:
    def table_input(self, runner: TableRunner, item: TableInput) -> None:
        pass

    def link_changed(self, runner: TableRunner) -> None:
        pass


def piece_on(board: chess.Board, square: int) -> Piece:
    """The emulator's piece of what python-chess has on ``square``."""
    found = board.piece_at(square)
    return Piece.EMPTY if found is None else Piece.from_symbol(found.symbol())


def move_cells(board: chess.Board, move: chess.Move) -> list[tuple[int, Piece]]:
    """The squares a hand changes to make ``move`` (White's castlings only) from ``board``,
    in order, each with the piece it then holds."""
    cells = [(move.from_square, Piece.EMPTY)]
    if board.is_castling(move):
        rook_from, rook_to = (chess.H1, chess.F1) if move.to_square > move.from_square else (
            chess.A1, chess.D1)  # fmt: skip
        cells += [(move.to_square, piece_on(board, move.from_square)),
                  (rook_from, Piece.EMPTY), (rook_to, piece_on(board, rook_from))]  # fmt: skip
    else:
        if board.piece_at(move.to_square) is not None:
            cells.append((move.to_square, Piece.EMPTY))
        cells.append((move.to_square, piece_on(board, move.from_square)))
    return cells


def _game(seed: int, *, clock: bool) -> list[tuple[str, float, BoardEvent | None]]:
    """A game's inputs at a board: ``("board", t, event)`` and ``("tick", t, None)``, the
    clock reporting once a second (with pauses, a flag and a time at zero now and then)."""
    rng = random.Random(seed)
    out: list[tuple[str, float, BoardEvent | None]] = []
    t = 1_000.0
    out.append(("board", t, BoardSnapshot(t, start_squares(), "connect")))
    board = chess.Board()
    times = {Side.LEFT: 60.0, Side.RIGHT: 60.0}
    lever = Side.LEFT  # White's lever up: White's time runs first
    running = False
    next_tick = t + 0.5

    def advance(seconds: float) -> None:
        nonlocal t, next_tick
        end = t + seconds
        while next_tick <= end:
            out.append(("tick", next_tick, None))
            next_tick += 0.5
        t = end

    def report(**extra: Any) -> None:
        if not clock:
            return
        if running:
            times[lever] = max(0.0, times[lever] - 1.0)
        fields: dict[str, Any] = {"left_flag": False, "right_flag": False}
        fields.update(extra)
        out.append(("board", t, ClockUpdate(
            t, times[Side.LEFT], times[Side.RIGHT], running, lever,
            fields["left_flag"], fields["right_flag"], False, lever if running else None,
        )))  # fmt: skip

    report()
    running = clock
    for uci in MOVES:
        for _ in range(rng.randrange(0, 6)):
            advance(rng.choice((0.3, 1.0, 1.0, 2.5)))
            kind = rng.random()
            if kind < 0.05:
                running = not running  # the clock paused or started again
                report()
            elif kind < 0.08:
                report(left_flag=True)
            elif kind < 0.10:
                times[lever] = 1.0  # the next report shows zero
                report()
            else:
                report()
        move = chess.Move.from_uci(uci)
        for square, piece in move_cells(board, move):
            advance(rng.choice((0.2, 0.4, 0.7)))
            out.append(("board", t, SquareChanged(t, square, piece, Piece.EMPTY)))
            for _ in range(rng.choice((0, 0, 1, 3))):  # reports with the move half made
                advance(1.0)
                report()
        board.push(move)
        advance(rng.choice((0.3, 0.5, 3.0)))  # a press soon, or after the settle delay
        if clock and running:
            lever = Side.RIGHT if lever is Side.LEFT else Side.LEFT
            out.append(("board", t, LeverMoved(t, lever)))
            report()
    advance(130.0)  # the flag falls (kept by the table when there is no clock)
    report()
    return out


def _same(a: list[TableEvent], b: list[TableEvent]) -> None:
    assert [e.to_json() for e in a] == [e.to_json() for e in b]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize(
    ("control", "rules", "clock"),
    [
        ("60+0", "casual", True),
        ("60+2", "fide-blitz", True),
        ("-", "casual", True),
        ("60+0", "uscf-speed", True),
        ("60+0", "fide-blitz", False),
    ],
)
def test_a_runner_with_its_quick_clock_answers_as_the_table(
    seed: int, control: str, rules: str, clock: bool
) -> None:
    settings = TableSettings(time_control=control, rules=rules)
    quick = Table("q", settings)
    plain = Table("q", settings)
    runner = TableRunner("q", quick, _Host(), send_orders=False)  # as the hall has it
    answered_quickly = skipped = 0
    for kind, t, event in _game(seed, clock=clock):
        if kind == "tick":
            if t < quick.quick.due:
                skipped += 1
            _same(runner.tick(t), plain.tick(t))
        else:
            assert event is not None
            if type(event) is ClockUpdate and quick.quick.lever_high is event.lever_high:
                answered_quickly += 1
            fed = runner.feed(event, t)
            assert fed is not None
            _same(list(fed.produced), plain.feed(event))
        assert quick.state() == plain.state()
        assert quick.summary() == plain.summary()
        assert runner.take_clock_orders() == plain.take_clock_orders()
    assert quick.pgn() == plain.pgn()
    assert skipped > 0
    if clock:
        assert answered_quickly > 0


class _Feeding:
    """The table as its runner sees it, its feed recorded in ``fed`` and failing while
    ``fails`` (a compiled table's methods cannot be patched: its runner's table is)."""

    def __init__(self, table: Table, fed: list[BoardEvent]) -> None:
        self.table, self.fed, self.fails = table, fed, True

    def feed(self, event: BoardEvent) -> list[TableEvent]:
        self.fed.append(event)
        if self.fails:
            raise RuntimeError("broken")
        return self.table.feed(event)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.table, name)


def test_a_table_that_fails_takes_every_clock_report_until_it_arms_its_quick_clock_again(
    monkeypatch: pytest.MonkeyPatch, error_log: ErrorLog
) -> None:
    table = Table("q", TableSettings(time_control="60+0"))
    runner = TableRunner("q", table, _Host(), send_orders=False)
    for _, t, event in _game(1, clock=True):  # up to the first report it would answer
        if type(event) is ClockUpdate and table.quick.lever_high is event.lever_high:
            break
        if event is None:
            runner.tick(t)
        else:
            runner.feed(event, t)
    assert table.quick.lever_high is not None  # armed
    fed: list[BoardEvent] = []
    feeding = _Feeding(table, fed)
    monkeypatch.setattr(runner, "table", feeding)  # its feed fails
    snapshot = BoardSnapshot(t, start_squares(), "poll")
    assert runner.feed(snapshot, t) is None  # the table failed: no answer
    error_log.expect("table q: the table failed on")
    assert table.quick.lever_high is None  # disarmed

    feeding.fails = False  # its feed is the table's again (and recorded)
    report = ClockUpdate(t + 0.5, 59.0, 60.0, True, Side.LEFT, False, False, False, Side.LEFT)
    runner.feed(report, t + 0.5)
    assert type(fed[-1]) is ClockUpdate  # the table itself took the report
