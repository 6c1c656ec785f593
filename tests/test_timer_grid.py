"""The boards' timers on a grid: a board's settle, dump-retry and liveness timers fall due
on multiples of its ``timer_grid`` (never before their time), a poller's polls fall on
multiples of its period, and the hall gives a board it reads through its poller the
poller's grid, so that those timers run in the turns of the loop the polls wake."""

from __future__ import annotations

import asyncio
import math
import os
import time
from pathlib import Path

import pytest
from conftest import wait_until

from dgt import Board
from dgt.board import TIMER_GRID, TIMER_RESOLUTION
from dgt.transports import BoardPoller, SerialTransport
from dgt.transports.emulator import EmulatorTransport
from dgt.transports.poller import on_grid
from service.config import TableConfig
from service.hall import Hall
from service.store import Store

pytestmark = pytest.mark.usefixtures("no_leaked_tasks")


def on_multiple(t: float, grid: float) -> bool:
    steps = t / grid
    return math.isclose(steps, round(steps), rel_tol=0.0, abs_tol=1e-6)


def falls_on_grid(timer: asyncio.TimerHandle, grid: float) -> bool:
    """The timer falls due on a multiple of ``grid``, or, on uvloop, at most one of its
    millisecond ticks after one: uvloop turns the time asked for into a delay from its clock,
    then reads its clock again to start the timer, so when the millisecond turns between the
    two readings the timer runs a tick late (never early)."""
    when = timer.when()
    if type(asyncio.get_running_loop()).__module__.startswith("uvloop"):
        return on_multiple(when, grid) or on_multiple(when - TIMER_RESOLUTION, grid)
    return on_multiple(when, grid)


def test_on_grid_is_the_first_multiple_at_or_after_a_time() -> None:
    assert on_grid(1.0, 0.02) == pytest.approx(1.0)
    assert on_grid(1.0001, 0.02) == pytest.approx(1.02)
    assert on_grid(1.019, 0.02) == pytest.approx(1.02)
    assert on_grid(12345.6789, 0.005) == pytest.approx(12345.68)
    for k in range(2000):  # a multiple plus a step, in floats, is the next one: none skipped
        assert on_grid(k * 0.005 + 0.005, 0.005) == pytest.approx((k + 1) * 0.005)
        assert on_grid(k * 0.02 + 0.005, 0.005) == pytest.approx(k * 0.02 + 0.005)


async def test_a_boards_timers_fall_on_its_grid_and_never_before_their_time() -> None:
    grid = 0.02
    async with Board(
        EmulatorTransport(), reconnect=False, liveness_idle=0.5, timer_grid=grid
    ) as board:
        assert board.timer_grid == grid
        liveness = board._liveness_timer
        assert liveness is not None
        assert falls_on_grid(liveness, grid)
        assert liveness.when() >= board._last_rx + board.liveness_idle
        for _ in range(3):
            dumps = board.resyncs
            due = time.monotonic() + 0.03
            board._arm_resync(due)
            timer = board._resync_timer
            assert timer is not None
            assert falls_on_grid(timer, grid)
            assert due <= timer.when() < due + grid + TIMER_RESOLUTION
            await wait_until(lambda d=dumps: board.resyncs > d, within=2)  # type: ignore[misc]
        board._request_dump()  # (the emulator's dump then comes at once: the retry goes)
        retry = board._dump_retry_timer
        assert retry is not None
        assert falls_on_grid(retry, grid)
        assert retry.when() >= time.monotonic() + 2.0 - grid
    assert Board(EmulatorTransport()).timer_grid == TIMER_GRID
    with pytest.raises(ValueError, match="timer grid"):
        Board(EmulatorTransport(), timer_grid=0)


async def test_a_timer_fired_a_hair_early_is_armed_again_ahead_not_for_now() -> None:
    # uvloop counts timers in whole milliseconds: a timer may fire a fraction of one before
    # its time; armed again for a grid point already passed, it would fire again and again
    grid = 0.001  # (the finest: the next grid point is the one a spin would take)
    async with Board(EmulatorTransport(), reconnect=False, timer_grid=grid) as board:
        board._arm_resync(time.monotonic() + 5.0)  # (a timer to replace)
        now = time.monotonic()
        board._resync_due = now + 0.0001  # due in a tenth of a millisecond
        board._resync_fire()
        timer = board._resync_timer
        assert timer is not None
        assert timer.when() >= now + TIMER_RESOLUTION
        assert on_multiple(timer.when(), grid)


async def test_a_pollers_polls_fall_on_multiples_of_its_period() -> None:
    loop = asyncio.get_running_loop()
    r, w = os.pipe()
    poller = BoardPoller(0.005, longest=0.02)
    assert poller.grid == 0.02
    dues: list[tuple[float, float]] = []
    try:
        poller.add_reader(r, lambda: None)  # never ready: the period stretches to 0.02
        for _ in range(8):
            dues.append((poller._due, poller.now_period))
            polls = poller.polls
            await wait_until(lambda p=polls: poller.polls > p, within=2)  # type: ignore[misc]
        assert loop.time() >= dues[-1][0]
    finally:
        poller.close()
        os.close(r)
        os.close(w)
    for due, period in dues:
        assert on_multiple(due, period)
    assert dues[-1][1] == 0.02


async def test_the_hall_gives_a_board_it_polls_the_pollers_grid(tmp_path: Path) -> None:
    store = Store(tmp_path / "hall.db")
    try:
        hall = Hall(store, board_poll_ms=5, board_poll_longest_ms=20)
        polled = hall.add_table(TableConfig("1", "/dev/null-board", None, {}))
        board = polled._make_board()
        assert isinstance(board, Board)
        assert isinstance(board.transport, SerialTransport)
        assert board.transport.watcher is hall.board_poller
        assert board.timer_grid == 0.02
        own = hall.add_table(TableConfig("2", "emu", None, {}), EmulatorTransport())
        board = own._make_board()
        assert isinstance(board, Board)
        assert board.timer_grid == TIMER_GRID  # its bytes come another way: no poll to join
        unpolled = Hall(store).add_table(TableConfig("3", "/dev/null-board", None, {}))
        board = unpolled._make_board()
        assert isinstance(board, Board)
        assert board.timer_grid == TIMER_GRID
    finally:
        store.close()
