"""dgt.Board's timers on the service's loop: a timer that fires a little before its due time
(uvloop counts timers in whole milliseconds) waits for the rest once, not once per loop
turn."""

from __future__ import annotations

import time

import pytest
from conftest import wait_until

from dgt import Board
from dgt.board import TIMER_RESOLUTION, _wait
from dgt.transports.emulator import EmulatorTransport

pytestmark = pytest.mark.usefixtures("no_leaked_tasks")


def test_a_timer_waits_at_least_the_resolution_for_a_time_ahead() -> None:
    assert _wait(10.0, 11.0) == 0.0  # due already: at once
    assert _wait(10.0, 10.0) == 0.0
    assert _wait(10.0001, 10.0) == TIMER_RESOLUTION
    assert _wait(10.5, 10.0) == 0.5


async def test_a_settle_due_within_a_millisecond_fires_once_or_twice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fires = 0
    fire = Board._resync_fire

    def counted(board: Board) -> None:
        nonlocal fires
        fires += 1
        fire(board)

    monkeypatch.setattr(Board, "_resync_fire", counted)
    async with Board(EmulatorTransport(), reconnect=False) as board:
        for _ in range(5):
            fires = 0
            dumps = board.resyncs
            board._arm_resync(time.monotonic() + 0.0003)
            await wait_until(lambda: board._resync_due is None, within=2)
            # the dump is asked for once its time came, after one or two timer calls
            assert 1 <= fires <= 2
            await wait_until(lambda d=dumps: board.resyncs > d, within=2)  # type: ignore[misc]
