"""service.table_runner.TableRunner: one table at one board, as the hall and the end-to-end
tests use it -- opening with back-off, feeding on the table's time line, its own ticks,
clock orders only to a ready clock, a table that fails on an input."""

from __future__ import annotations

import asyncio
import itertools
import time
from typing import Any

import pytest
from conftest import FAST, ErrorLog, wait_until
from hall_stand_in import EchoTable

import service.table_runner
from dgt import Board
from dgt.errors import PortNotFound
from dgt.events import BoardEvent, SquareChanged
from dgt.protocol import Piece
from dgt.transports.emulator import EmulatorTransport
from service.table import ClockOrder, OrderKind, TableEvent
from service.table_runner import Connection, InputKind, TableInput, TableRunner


class Host:
    """Records what a runner reports."""

    def __init__(self) -> None:
        self.inputs: list[TableInput] = []
        self.links: list[Connection] = []

    def table_input(self, runner: TableRunner, item: TableInput) -> None:
        self.inputs.append(item)

    def link_changed(self, runner: TableRunner) -> None:
        self.links.append(runner.link)

    def kinds(self) -> list[tuple[InputKind, str]]:
        return [(i.kind, e.type) for i in self.inputs for e in i.produced]


def kinds(item: TableInput) -> list[str]:
    return [e.type for e in item.produced]


class OrderingTable(EchoTable):
    """:class:`EchoTable` that orders a clock text for every placed piece."""

    def __init__(self, table_id: str, settings: dict[str, Any] | None = None) -> None:
        super().__init__(table_id, settings)
        self.orders: list[ClockOrder] = []

    def feed(self, event: BoardEvent) -> list[TableEvent]:
        got = super().feed(event)
        if any(e.type == "move" for e in got):
            self.orders.append(ClockOrder(OrderKind.TEXT, text=f"M{len(self.moves())}"))
        return got

    def take_clock_orders(self) -> list[ClockOrder]:
        orders, self.orders = self.orders, []
        return orders


async def test_a_board_that_cannot_be_opened_is_tried_again_with_back_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(service.table_runner, "OPEN_RETRY_MIN", 0.02)
    monkeypatch.setattr(service.table_runner, "OPEN_RETRY_MAX", 0.04)
    attempts: list[float] = []
    transport = EmulatorTransport()

    def make_board() -> Board:
        attempts.append(time.monotonic())
        if len(attempts) < 4:
            raise PortNotFound("no board on /dev/nothing")
        return Board(transport, read_memory=False, **FAST)

    host = Host()
    runner = TableRunner("t", EchoTable("t"), host, make_board, port="/dev/nothing")
    runner.start()
    try:
        assert await runner.wait_ready(5)
        assert host.links == [Connection.DOWN, Connection.UP]
        assert runner.error is None
        assert runner.connection() == {"state": "up", "port": "/dev/nothing", "error": None}
        gaps = [b - a for a, b in itertools.pairwise(attempts)]
        assert gaps[0] >= 0.015
        assert gaps[-1] >= 0.035  # doubling up to the cap
        await wait_until(lambda: any(i.kind is InputKind.BOARD for i in host.inputs), 3)
    finally:
        await runner.close()
    assert runner.board is not None
    assert not runner.board.ready  # the runner closed its board


async def test_events_go_in_on_the_table_time_line_and_clock_orders_to_a_ready_clock() -> None:
    transport = EmulatorTransport()
    sent: list[ClockOrder] = []
    table = OrderingTable("t")
    host = Host()
    origin = time.monotonic()
    runner = TableRunner(
        "t",
        table,
        host,
        lambda: Board(transport, read_memory=False, **FAST),
        table_time=lambda m: (m - origin) * 10.0,
        on_order_sent=sent.append,
    )
    # No board yet: an order is dropped (a reconnect re-syncs the clock from the table).
    runner.feed(SquareChanged(time.monotonic(), 20, Piece.WKNIGHT, Piece.EMPTY))
    assert runner.clock_orders is None
    assert table.orders == []
    runner.start()
    try:
        assert await runner.wait_ready(5)
        before = time.monotonic()
        transport.place(28, Piece.WPAWN)
        await wait_until(lambda: len(table.moves()) == 2, 3)
        move = next(i for i in host.inputs if "move" in kinds(i))
        assert move.event is not None
        assert move.time == pytest.approx((move.event.time - origin) * 10.0)
        assert move.time >= (before - origin) * 10.0
        await runner.flush_clock_orders()
        assert [o.text for o in sent] == ["M2"]
    finally:
        await runner.close()


async def test_a_runner_keeping_its_table_time_ticks_it_and_before_each_event() -> None:
    transport = EmulatorTransport()
    table = EchoTable("t")
    host = Host()
    async with Board(transport, read_memory=False, **FAST) as board:
        # a table second is a microsecond: the stand-in reports every tick
        runner = TableRunner("t", table, host, table_time=lambda m: m * 1e6, tick=0.02)
        await runner.attach(board)
        try:
            # the board as it stands goes in first (time passing up to it before)
            assert [i.kind for i in host.inputs] == [InputKind.TICK, InputKind.BOARD]
            assert host.inputs[1].produced[0].data["data"] == {"reason": "connect"}
            await wait_until(lambda: len(host.inputs) >= 4, 2)  # ticks of its own
            transport.place(28, Piece.WPAWN)
            await wait_until(lambda: len(table.moves()) == 1, 3)
            at = next(n for n, i in enumerate(host.inputs) if "move" in kinds(i))
            tick, move = host.inputs[at - 1], host.inputs[at]
            assert tick.kind is InputKind.TICK
            assert tick.time == move.time  # time passed up to the event first
        finally:
            await runner.close()
        assert board.ready  # the owner's board stays open
        seen = len(host.inputs)
        transport.place(36, Piece.WPAWN)
        await asyncio.sleep(0.2)
        assert len(host.inputs) == seen  # and is no longer listened to


class FailingTable(EchoTable):
    def feed(self, event: BoardEvent) -> list[TableEvent]:
        if isinstance(event, SquareChanged):
            raise RuntimeError("bug")
        return super().feed(event)


def test_a_table_failing_on_an_input_is_logged_and_the_input_dropped(
    error_log: ErrorLog,
) -> None:
    host = Host()
    runner = TableRunner("t", FailingTable("t"), host)
    runner.board_event(SquareChanged(1.0, 20, Piece.WPAWN, Piece.EMPTY))
    assert host.inputs == []
    assert error_log.expect("table t: the table failed on")


async def test_a_host_that_takes_the_clock_orders_gets_them_left_in_the_table() -> None:
    transport = EmulatorTransport()
    table = OrderingTable("t")
    host = Host()
    runner = TableRunner(
        "t", table, host, lambda: Board(transport, read_memory=False, **FAST), send_orders=False
    )
    runner.start()
    try:
        assert await runner.wait_ready(5)
        transport.place(28, Piece.WPAWN)
        await wait_until(lambda: len(table.moves()) == 1, 3)
        assert runner.clock_orders is None  # nothing sent by the runner...
        assert [o.text for o in table.take_clock_orders()] == ["M1"]  # ...the host takes them
    finally:
        await runner.close()


def test_table_input_is_the_dataclass_it_declares() -> None:
    """TableInput (one an input): its fields by position and by keyword, compared and copied
    as a dataclass, in slots (no dictionary an input)."""
    import copy

    from service.table_runner import InputKind, TableInput

    item = TableInput(InputKind.TICK, 2.5, ["x"])
    assert (item.kind, item.time, item.produced, item.event) == (InputKind.TICK, 2.5, ["x"], None)
    assert copy.copy(item) == item == TableInput(kind=InputKind.TICK, time=2.5, produced=["x"])
    assert item != TableInput(InputKind.TICK, 2.5, ["y"])
    assert not hasattr(item, "__dict__")
