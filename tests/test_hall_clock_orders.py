"""service.clock_orders: a table's clock orders reach the clock one after another, in order;
a clock that does not answer costs one order, not the next; and the hall sends a real
table's orders to an emulated board's clock through it."""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path

import pytest
from test_hall import wait_for

from dgt.emulator.board import VirtualBoard
from dgt.errors import ClockNotAnswering
from dgt.events import Side
from dgt.transports.emulator import EmulatorTransport
from service.clock_orders import ClockOrderSender, beep_units, send_order
from service.config import TableConfig
from service.hall import Hall
from service.store import Store
from service.table import ClockOrder


class FakeClock:
    """Records the commands; each waits until the test lets it answer (``answer``)."""

    def __init__(self, fail: set[str] | None = None) -> None:
        self.calls: list[tuple[object, ...]] = []
        self.in_flight = 0
        self.most_in_flight = 0
        self.fail = fail or set()
        self.gate = asyncio.Event()
        self.gate.set()

    async def _answer(self, *call: object) -> None:
        self.calls.append(call)
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await self.gate.wait()
            await asyncio.sleep(0)
            if call[0] in self.fail:
                raise ClockNotAnswering(f"{call[0]}: no answer")
        finally:
            self.in_flight -= 1

    async def set_and_run(self, left: float, right: float, *, run: Side | None = None) -> None:
        await self._answer("set_and_run", left, right, run)

    async def show_text(self, text: str, *, beep: int = 0) -> None:
        await self._answer("text", text, beep)

    async def end_text(self) -> None:
        await self._answer("end_text")

    async def beep(self, seconds: float = 0.5) -> None:
        await self._answer("beep", seconds)


ORDERS = [
    ClockOrder("set_and_run", 300.0, 290.5, Side.LEFT),
    ClockOrder("text", text="ILLEGAL", beep=0.5),
    ClockOrder("end_text"),
    ClockOrder("beep"),
]


def test_beep_units_are_sixteenths_of_a_second_within_the_range() -> None:
    assert beep_units(0.5) == 8
    assert beep_units(0) == 0
    assert beep_units(5.0) == 15
    assert beep_units(-1.0) == 0


async def test_orders_are_sent_one_after_another_in_order() -> None:
    clock = FakeClock()
    clock.gate.clear()
    sent: list[ClockOrder] = []
    sender = ClockOrderSender(clock, label="7", on_sent=sent.append)
    sender.submit(ORDERS[:2])
    sender.submit(ORDERS[2:])
    await asyncio.sleep(0.01)
    assert len(clock.calls) == 1  # the next one waits for the clock's answer
    assert sender.pending == 4
    clock.gate.set()
    await sender.flush()
    assert clock.most_in_flight == 1
    assert clock.calls == [
        ("set_and_run", 300.0, 290.5, Side.LEFT),
        ("text", "ILLEGAL", 8),
        ("end_text",),
        ("beep", 0.5),
    ]
    assert sent == ORDERS
    assert sender.pending == 0


async def test_an_unanswered_order_is_logged_and_the_next_one_is_sent(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = FakeClock(fail={"text"})
    sent: list[ClockOrder] = []
    sender = ClockOrderSender(clock, label="3", on_sent=sent.append)
    with caplog.at_level(logging.WARNING, logger="service.clock_orders"):
        sender.submit(ORDERS)
        await sender.flush()
    assert [c[0] for c in clock.calls] == ["set_and_run", "text", "end_text", "beep"]
    assert sent == [ORDERS[0], ORDERS[2], ORDERS[3]]
    assert sender.failures == 1
    assert "table 3: clock order text not sent" in caplog.text


async def test_unknown_orders_are_skipped_and_close_drops_what_waits() -> None:
    clock = FakeClock()
    assert await send_order(clock, ClockOrder("dance")) is False
    assert clock.calls == []
    clock.gate.clear()
    sender = ClockOrderSender(clock)
    sender.submit(ORDERS)
    await asyncio.sleep(0.01)
    await sender.close()
    clock.gate.set()
    await sender.flush()
    assert len(clock.calls) == 1
    assert sender.pending == 0
    await sender.close()  # idempotent


def test_orders_submitted_outside_a_loop_wait_for_one() -> None:
    clock = FakeClock()
    sender = ClockOrderSender(clock)
    sender.submit(ORDERS[:2])  # no running loop: nothing is sent yet
    assert sender.pending == 2
    asyncio.run(sender.flush())
    assert [c[0] for c in clock.calls] == ["set_and_run", "text"]
    assert sender.pending == 0


async def test_the_hall_sets_an_emulated_clock_to_the_time_control(tmp_path: Path) -> None:
    store = Store(tmp_path / "hall.db")
    hall = Hall(store, tick_interval=0)
    board = VirtualBoard(now=time.monotonic())
    transport = EmulatorTransport(board, name="emu-clock")
    runner = hall.add_table(
        TableConfig("1", transport.name, None, {"time_control": "600+0"}), transport
    )
    await hall.start()
    try:
        assert await runner.wait_ready(5)
        clock = board.clock
        assert clock is not None
        # the clock reports its times when the board connects: the table sets it at once
        await wait_for(lambda: clock.ticking and clock.times(time.monotonic())[0] > 590)
        transport.press_lever()  # the clock starts and reports: the table sets it

        def set_by_the_table() -> bool:
            left, right = clock.times(time.monotonic())
            return 590 < left <= 600 and 590 < right <= 600

        await wait_for(set_by_the_table)
        assert runner.clock_orders is not None
        await runner.clock_orders.flush()
        assert runner.clock_orders.failures == 0
    finally:
        await hall.close()
        store.close()
