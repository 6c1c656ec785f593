"""dgt.Board's timers on the service's loop: a timer that fires a little before its due time
(uvloop counts timers in whole milliseconds) waits for the rest once, not once per loop
turn."""

from __future__ import annotations

import asyncio
import time

import pytest
from conftest import wait_until

from dgt import Board
from dgt.board import LIFTED_SETTLE_FACTOR, TIMER_RESOLUTION, _wait
from dgt.protocol import Piece
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


async def test_a_lifted_piece_waits_longer_for_the_re_dump_and_its_placing_cuts_it_short() -> None:
    """A field update that empties a square (a piece lifted) asks the re-dump
    LIFTED_SETTLE_FACTOR times the settle delay later; the placing after it asks it one
    settle delay after the placing: a move held longer than the settle delay is checked
    once, not once a square."""
    settle = 0.2  # (the margins below are a few settle delays: room for a loaded machine)
    transport = EmulatorTransport()
    async with Board(transport, reconnect=False, settle_delay=settle) as board:
        await wait_until(lambda: board._resync_due is None and board._dump_requested is None)
        e2, e4 = 12, 28
        dumps = board.resyncs
        transport.lift(e2)
        await wait_until(lambda: board._resync_due is not None)
        lifted_at = time.monotonic()
        assert board._resync_due is not None
        assert board._resync_due - lifted_at > (LIFTED_SETTLE_FACTOR - 1) * settle
        await asyncio.sleep(3 * settle)  # longer than a settle delay: no re-dump yet
        assert board.resyncs == dumps
        assert board._dump_requested is None
        transport.place(e4, Piece.WPAWN)
        await wait_until(lambda d=dumps: board.resyncs > d, within=2)  # type: ignore[misc]
        placed_for = time.monotonic() - lifted_at
        assert placed_for < LIFTED_SETTLE_FACTOR * settle  # the placing cut the wait short
        await asyncio.sleep(2 * settle)
        assert board.resyncs == dumps + 1  # one re-dump for the move
        # a piece lifted and left off the board is still checked, later
        transport.lift(e4)
        left_at = time.monotonic()
        await wait_until(lambda d=dumps: board.resyncs > d + 1, within=3)  # type: ignore[misc]
        assert time.monotonic() - left_at > (LIFTED_SETTLE_FACTOR - 1) * settle
        assert board.mirror.squares[e4] is Piece.EMPTY
        assert board.mirror.squares[e2] is Piece.EMPTY
