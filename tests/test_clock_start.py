"""A clock that already shows the time control, stopped, must still be started by the table.

Such a clock has nothing new to say in UPDATE_NICE mode (it reports its times only when they
change, docs/protocol.md §2), and a set-and-run to the times it already shows changes nothing on
its display either.  The driver asks for the clock's times itself after every handshake
(SEND_CLK, answered with one BWTIME in any mode), so the table learns the lever and sets
White's side running.

Everything runs through the in-process emulator (``dgt.transports.emulator``), the driver
(``dgt.Board``) and :class:`linked_table.LinkedTable` (the service's ``TableRunner``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from conftest import FAST, wait_until
from linked_table import LinkedTable

from dgt import Board
from dgt.board import CLOCK_TIMES_TRIES
from dgt.emulator.board import VirtualBoard
from dgt.emulator.clock import VirtualClock
from dgt.events import ClockUpdate, Side
from dgt.protocol import ClockAck, ClockCommand, ClockTimes, Command
from dgt.protocol.parser import HostCommand
from dgt.transports.emulator import EmulatorTransport
from service.table import Table, TableSettings

pytestmark = pytest.mark.usefixtures("no_leaked_tasks")

RETRY = 0.2
"""Seconds between clock-times requests in the tests that need them repeated."""


class SettingsClock(VirtualClock):
    """The emulated DGT 3000, remembering who ran after each set-and-run it took."""

    def __init__(self, seconds: float, *, right_high: bool = False) -> None:
        super().__init__(left=seconds, right=seconds, right_high=right_high)
        self.settings: list[tuple[float, float, Side | None]] = []

    def command(self, data: bytes, now: float) -> tuple[int, int, int, int] | None:
        ack = super().command(data, now)
        if len(data) > 2 and data[1] == ClockCommand.SETNRUN:
            left, right = self.times(now)
            self.settings.append((left, right, self.running if not self.paused else None))
        return ack


@asynccontextmanager
async def linked(
    clock: SettingsClock, time_control: str
) -> AsyncIterator[tuple[EmulatorTransport, Board, LinkedTable]]:
    vb = VirtualBoard(now=time.monotonic(), clock=clock)
    transport = EmulatorTransport(vb, name="clock-start")
    table = Table("clock-start", TableSettings(time_control=time_control))
    async with Board(transport, read_memory=False, **FAST) as board:
        await wait_until(lambda: board.clock.connected is True, 3)
        async with LinkedTable(board, table) as link:
            yield transport, board, link


async def test_clock_showing_the_control_is_started_for_white() -> None:
    clock = SettingsClock(300)  # exactly 300+0, stopped, left (White's) side up
    async with linked(clock, "300+0") as (_, _, link):
        await wait_until(lambda: link.table.phase == "playing", 3)
        await wait_until(lambda: clock.ticking, 3)
        await link.flush()
        assert clock.running is Side.LEFT  # White's side runs ...
        assert clock.settings[-1] == (300.0, 300.0, Side.LEFT)  # ... from the time control
        left, right = clock.times(time.monotonic())
        assert left < 300.0
        assert right == 300.0
        snapshot = link.table.state()["clocks"]
        assert snapshot["running"] == "white"


async def test_clock_showing_the_control_right_side_up_starts_the_right_side() -> None:
    """White sits at the right: its side of the lever is up, so the right time runs."""
    clock = SettingsClock(180, right_high=True)
    async with linked(clock, "180+0") as (_, _, link):
        await wait_until(lambda: clock.ticking, 3)
        await link.flush()
        assert clock.running is Side.RIGHT
        assert clock.settings[-1] == (180.0, 180.0, Side.RIGHT)


async def test_driver_asks_for_the_times_of_an_idle_clock_after_connect_and_reconnect() -> None:
    """An idle clock (nothing changes, so UPDATE_NICE reports nothing) is seen after the
    handshake and again after the link came back."""
    clock = VirtualClock(left=300, right=300)
    vb = VirtualBoard(now=time.monotonic(), clock=clock)
    transport = EmulatorTransport(vb, name="idle-clock")
    async with Board(transport, read_memory=False, **FAST) as board:
        await wait_until(lambda: board.clock.state.last_update is not None, 3)
        assert (board.clock.left, board.clock.right) == (300.0, 300.0)
        assert board.clock.running is False
        assert board.clock.lever is Side.LEFT
        assert transport.written.count(bytes((Command.SEND_CLK,))) >= 1
        seen: list[ClockUpdate] = []
        board.add_listener(lambda e: seen.append(e) if isinstance(e, ClockUpdate) else None)
        transport.unplug()
        transport.plug()
        await wait_until(lambda: bool(seen), 5)
        assert (seen[-1].left, seen[-1].right, seen[-1].running) == (300.0, 300.0, False)


class StutteringBoard(VirtualBoard):
    """Answers its first clock-times requests badly, as Bluetooth firmware may right after a
    clock command (docs/protocol.md §5.5: an all-zero BWTIME, or the ack instead of the times), or
    not at all (a lost answer)."""

    def __init__(self, answer: str, bad: int) -> None:
        super().__init__(now=time.monotonic(), clock=VirtualClock(left=300, right=300))
        self.answer = answer
        self.bad = bad
        self.asked = 0

    def _single_command(self, cmd: HostCommand, now: float) -> bytes:
        if cmd.code != Command.SEND_CLK:
            return super()._single_command(cmd, now)
        self.asked += 1
        if self.asked > self.bad:
            return super()._single_command(cmd, now)
        if self.answer == "null":
            return ClockTimes(bytes(7)).to_bytes()
        if self.answer == "ack":
            return ClockAck(0x10, ClockCommand.VERSION, 0x20, 0).to_bytes()
        return b""


@pytest.mark.slow
@pytest.mark.parametrize("answer", ["null", "ack", "lost"])
async def test_clock_times_are_asked_again_until_a_readable_answer(answer: str) -> None:
    vb = StutteringBoard(answer, bad=CLOCK_TIMES_TRIES - 1)
    transport = EmulatorTransport(vb, name="stutter")
    async with Board(transport, read_memory=False, clock_times_retry=RETRY, **FAST) as board:
        within = RETRY * CLOCK_TIMES_TRIES + 1
        await wait_until(lambda: board.clock.state.last_update is not None, within)
        assert (board.clock.left, board.clock.right) == (300.0, 300.0)
        assert vb.asked == CLOCK_TIMES_TRIES
        await asyncio.sleep(RETRY + 0.2)
        assert vb.asked == CLOCK_TIMES_TRIES  # answered: no more asking


@pytest.mark.slow
async def test_asking_gives_up_after_the_last_try() -> None:
    vb = StutteringBoard("lost", bad=CLOCK_TIMES_TRIES + 5)
    transport = EmulatorTransport(vb, name="mute")
    async with Board(transport, read_memory=False, clock_times_retry=RETRY, **FAST) as board:
        await asyncio.sleep(RETRY * (CLOCK_TIMES_TRIES + 1) + 0.2)
        assert vb.asked == CLOCK_TIMES_TRIES
        assert board.clock.state.last_update is None
        assert board.clock.connected is True  # the version ack still tells the clock is there


@pytest.mark.slow
async def test_a_board_without_clock_says_so_when_asked() -> None:
    vb = VirtualBoard(now=time.monotonic(), clock=None)
    transport = EmulatorTransport(vb, name="no-clock")
    async with Board(transport, read_memory=False, clock_times_retry=RETRY, **FAST) as board:
        await wait_until(lambda: board.clock.connected is False, 3)
        await asyncio.sleep(RETRY + 0.2)
        assert transport.written.count(bytes((Command.SEND_CLK,))) == 1
