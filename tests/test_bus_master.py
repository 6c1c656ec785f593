"""dgt.BusMaster against the emulator's bus line (dgt.emulator.BusLine) on a real
pseudo-terminal, read through pyserial: discovery, per-address events, a pulled cable,
garbage on the line, boards that do not answer, wrong ports."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import chess
import pytest
from conftest import move_on, replay_squares, wait_until

from dgt.bus_master import BusAddressNotAnswering, BusBoard, BusMaster, NoBusBoards
from dgt.emulator import BusLine, EmulatorServer, VirtualBoard, make_bus
from dgt.errors import LinkClosed, NotSupported, PortNotFound
from dgt.events import (
    BoardEvent,
    BoardSnapshot,
    ClockUpdate,
    LeverMoved,
    LinkLost,
    LinkRestored,
    Side,
    SquareChanged,
)
from dgt.protocol import BusMessageId, Piece

pytestmark = pytest.mark.usefixtures("no_leaked_tasks")

BUS_FAST: dict[str, Any] = {
    "reply_timeout": 0.25,  # a loaded test machine, not a 9600-baud line
    "cycle_min": 0.02,
    "reconnect_min": 0.05,
    "reconnect_max": 0.2,
    "handshake_timeout": 5.0,
}
"""BusMaster options for tests: quick cycles and back-off, a forgiving reply time-out."""

ADDRESSES = (10001, 10002, 10003)


def record(bus: BusMaster) -> dict[int, list[BoardEvent]]:
    seen: dict[int, list[BoardEvent]] = {}
    for address, board in bus.boards.items():
        seen[address] = []
        board.add_listener(seen[address].append)
    return seen


async def drain(board: BusBoard) -> list[BoardEvent]:
    return [e async for e in board.events()]


def of(kind: type, events: list[BoardEvent]) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


@asynccontextmanager
async def polled(
    line: BusLine, tmp_path: Path, addresses: Sequence[int] = ADDRESSES
) -> AsyncIterator[tuple[EmulatorServer, BusMaster, dict[int, list[BoardEvent]]]]:
    """``line`` on a pty, a BusMaster polling ``addresses`` on it, and every board's events
    from the start (by address)."""
    async with (
        EmulatorServer(line, link=tmp_path / "bus") as server,
        BusMaster(server.path, addresses, **BUS_FAST) as bus,
    ):
        yield server, bus, record(bus)


@pytest.mark.slow
async def test_all_boards_found_by_broadcast_ping(tmp_path: Path) -> None:
    line = make_bus(3)
    async with (
        EmulatorServer(line, link=tmp_path / "bus") as server,
        BusMaster(server.path, discovery_wait=1.2, **BUS_FAST) as bus,
    ):
        assert sorted(bus.boards) == list(ADDRESSES)
        for address, board in bus.boards.items():
            assert board.ready
            first = await board.next_event(1.0)
            assert isinstance(first, BoardSnapshot)
            assert first.reason == "connect"
            assert first.squares == line.board(address).board_frame()
            assert board.info.version is not None
            assert (board.info.version.major, board.info.version.minor) == (3, 10)


@pytest.mark.slow
async def test_a_move_on_board_2_reaches_address_2_only(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    line = make_bus(3)
    second = line.board(10002)
    async with polled(line, tmp_path) as (server, bus, seen):
        board = bus.board(10002)
        move_on(server, second, chess.E2, chess.E4)
        await wait_until(lambda: len(of(SquareChanged, seen[10002])) == 2)
        changes = of(SquareChanged, seen[10002])
        assert [(c.square, c.piece) for c in changes] == [
            (chess.E2, Piece.EMPTY),
            (chess.E4, Piece.WPAWN),
        ]
        assert list(board.squares) == list(second.board_frame())
        await board.resync()  # a dump on demand finds the mirror right
        assert (board.resyncs, board.corrections) == (1, 0)
        # the clock is read: its times arrive, and a lever press shows as LeverMoved
        await wait_until(lambda: bool(of(ClockUpdate, seen[10002])))
        server.act(second.press_lever)
        await wait_until(lambda: bool(of(LeverMoved, seen[10002])))
        await asyncio.sleep(0.3)  # a few more cycles: nothing leaks to the other boards
        for address in (10001, 10003):
            assert not of(SquareChanged, seen[address])
            assert not of(LeverMoved, seen[address])
            assert list(bus.board(address).squares) == list(line.board(address).board_frame())
        # bus mode has no clock and no LED commands: a clear error, logged once
        with caplog.at_level(logging.WARNING, logger="dgt.bus_master"):
            for _ in range(2):
                with pytest.raises(NotSupported, match="bus line"):
                    await board.clock.set_and_run(300, 300, run=Side.LEFT)
        warnings = [r for r in caplog.records if "clock commands are not sent" in r.message]
        assert len(warnings) == 1
        with pytest.raises(NotSupported):
            await board.set_leds([chess.E4])
        assert board.info.leds is None


async def test_unplugged_line_recovers_every_board(tmp_path: Path) -> None:
    line = make_bus(3)
    first = line.board(10001)
    async with polled(line, tmp_path) as (server, bus, seen):
        server.unplug()
        await wait_until(lambda: all(of(LinkLost, seen[a]) for a in ADDRESSES))
        assert not any(b.ready for b in bus.boards.values())
        # a move made while the cable is out
        move_on(server, first, chess.G1, chess.F3)
        await asyncio.sleep(0.3)
        server.plug()
        await wait_until(lambda: all(of(LinkRestored, seen[a]) for a in ADDRESSES))
        for address in ADDRESSES:
            events = seen[address]
            snapshot = of(BoardSnapshot, events)[-1]
            assert snapshot.reason == "reconnect"
            assert events.index(snapshot) == events.index(of(LinkRestored, events)[0]) - 1
            board = bus.board(address)
            assert board.ready
            assert list(board.squares) == list(line.board(address).board_frame())
        assert of(LinkRestored, seen[10001])[0].changed == frozenset({chess.G1, chess.F3})
        assert of(LinkRestored, seen[10002])[0].changed == frozenset()
        # and moves are read again afterwards
        third = line.board(10003)
        server.act(lambda now: third.lift(chess.D7, now))
        await wait_until(lambda: bool(of(SquareChanged, seen[10003])))
        assert bus.line_losses == 1


class NoisyLine:
    """A bus line whose replies are spoiled now and then while ``noisy`` (half of the
    replies that carry changes, ``rate`` of the others): a byte flipped (bad checksum or
    length), the reply lost, or noise put in front of it."""

    def __init__(self, line: BusLine, rng: random.Random, rate: float) -> None:
        self.line = line
        self.rng = rng
        self.rate = rate
        self.noisy = False
        self.spoiled = 0
        self.spoiled_changes = 0

    @property
    def last_now(self) -> float:
        return self.line.last_now

    def receive(self, data: bytes, now: float) -> bytes:
        out = self.line.receive(data, now)
        if not out or not self.noisy:
            return out
        changes = out[0] == BusMessageId.UPDATE and len(out) > 6  # a reply with changes
        if self.rng.random() >= (0.5 if changes else self.rate):
            return out
        self.spoiled += 1
        self.spoiled_changes += changes
        kind = self.rng.randrange(3)
        if kind == 0:
            spoilt = bytearray(out)
            spoilt[self.rng.randrange(1, len(out))] ^= 1 << self.rng.randrange(7)
            return bytes(spoilt)
        if kind == 1:
            return b""
        return self.rng.randbytes(self.rng.randrange(1, 20)) + out

    def poll(self, now: float) -> bytes:
        return self.line.poll(now)

    def next_deadline(self) -> float | None:
        return self.line.next_deadline()

    def power_up(self, now: float) -> None:
        self.line.power_up(now)


@pytest.mark.slow
async def test_garbage_on_the_line_is_survived(tmp_path: Path) -> None:
    """Spoiled replies (bad checksums, lost replies, noise) and noise between them while
    pieces move on every board: no change is lost and every mirror ends equal."""
    rng = random.Random(7)
    line = make_bus(3)
    noisy = NoisyLine(line, random.Random(11), rate=0.15)
    async with (
        EmulatorServer(noisy, link=tmp_path / "bus", seed=3) as server,  # type: ignore[arg-type]
        BusMaster(server.path, ADDRESSES, **{**BUS_FAST, "max_misses": 8}) as bus,
    ):
        seen: dict[int, list[BoardEvent]] = {}
        for address, board in bus.boards.items():
            seen[address] = [board.mirror.snapshot(0.0, "connect")]
            board.add_listener(seen[address].append)
        noisy.noisy = True
        files = range(8)
        for step, file in enumerate(files):
            vb = line.board(ADDRESSES[step % 3])
            square = chess.square(file, 1)
            server.act(lambda now, vb=vb, square=square: vb.lift(square, now))
            server.garbage(rng.randrange(1, 60))
            await asyncio.sleep(rng.uniform(0.05, 0.2))
            server.act(lambda now, vb=vb, square=square: vb.place(square + 8, Piece.WPAWN, now))
            server.garbage(rng.randrange(1, 60))
            await asyncio.sleep(rng.uniform(0.05, 0.2))
        noisy.noisy = False

        def settled() -> bool:
            return all(
                list(bus.board(a).squares) == list(line.board(a).board_frame())
                and replay_squares(seen[a]) == list(line.board(a).board_frame())
                for a in ADDRESSES
            )

        await wait_until(settled, within=10)
        assert noisy.spoiled_changes > 0
        assert bus.timeouts > 0  # lost and garbled replies were asked again
        assert bus.dropped_frames + bus._parser.discarded > 0  # the noise was seen
        for address in ADDRESSES:
            assert not of(LinkLost, seen[address])
            assert bus.board(address).ready
            moved = of(SquareChanged, seen[address])
            assert len(moved) >= 4  # every lift and place came through (none only by luck)


@pytest.mark.slow
async def test_a_board_that_does_not_answer_does_not_stop_the_others(tmp_path: Path) -> None:
    line = make_bus(3)
    second, third = line.board(10002), line.board(10003)
    async with polled(line, tmp_path, [*ADDRESSES, 10009]) as (server, bus, seen):
        absent = bus.board(10009)
        assert not absent.ready
        absent.handshake_timeout = 0.5
        with pytest.raises(BusAddressNotAnswering, match="bus address 10009"):
            await absent.open()
        # board 2 goes silent (its boot loader runs: it reads nothing until power-up)
        second.bootloader = True
        await wait_until(lambda: bool(of(LinkLost, seen[10002])))
        assert "10002 stopped answering" in of(LinkLost, seen[10002])[0].reason
        server.act(lambda now: third.lift(chess.H7, now))
        await wait_until(lambda: bool(of(SquareChanged, seen[10003])), within=2)
        assert not of(LinkLost, seen[10001])
        assert not of(LinkLost, seen[10003])
        # board 2 is switched on again: it is taken on again
        server.act(lambda now: second.lift(chess.A7, now))
        second.power_up(server.now())
        await wait_until(lambda: bool(of(LinkRestored, seen[10002])))
        assert of(LinkRestored, seen[10002])[0].changed == frozenset({chess.A7})
        assert list(bus.board(10002).squares) == list(second.board_frame())


async def test_boards_opened_one_by_one_share_the_line(tmp_path: Path) -> None:
    line = make_bus(2)
    async with EmulatorServer(line, link=tmp_path / "bus") as server:
        bus = BusMaster(server.path, **BUS_FAST)
        one, two = bus.board(10001), bus.board(10002)
        await asyncio.gather(one.open(), two.open())
        assert bus.running
        assert one.ready
        assert two.ready
        assert isinstance(await two.next_event(1.0), BoardSnapshot)
        await one.close()
        assert bus.running  # board two still uses the line
        with pytest.raises(LinkClosed):
            await one.open()
        await two.close()
        assert not bus.running
        assert not bus.transport.is_open
        rest = await asyncio.wait_for(drain(two), 1.0)  # events() ends after close()
        assert all(not isinstance(e, BoardSnapshot) for e in rest)


@pytest.mark.slow
async def test_wrong_port_and_silent_line_give_one_line_errors(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-port")
    with pytest.raises(PortNotFound) as info:
        await BusMaster(missing, **BUS_FAST).open()
    assert "\n" not in str(info.value)
    board: BusBoard = BusMaster(missing, [10001], **BUS_FAST).board(10001)
    with pytest.raises(PortNotFound):
        await board.open()
    # a line where nothing answers bus commands (a Pegasus has no bus mode)
    options = {**BUS_FAST, "handshake_timeout": 0.5, "discovery_wait": 0.3}
    async with EmulatorServer(VirtualBoard(pegasus=True), link=tmp_path / "peg") as server:
        bus = BusMaster(server.path, **options, discovery_rounds=1)
        with pytest.raises(NoBusBoards, match="no DGT board answered on the bus") as found:
            await bus.open()
        assert "\n" not in str(found.value)
        assert not bus.transport.is_open
        bus = BusMaster(server.path, [10001], **options)
        with pytest.raises(NoBusBoards):
            await bus.open()
        assert not bus.running


async def test_a_cancel_that_meets_a_wake_still_stops_the_poller(tmp_path: Path) -> None:
    """Python 3.11's ``wait_for`` returns a wake and drops a cancel that meets it in one turn
    of the loop; the poller must stop all the same (or closing the line waits for ever)."""
    line = make_bus(1)
    async with EmulatorServer(line, link=tmp_path / "bus") as server:
        bus = BusMaster(server.path, [10001], **{**BUS_FAST, "cycle_min": 30.0})
        await bus.board(10001).open()
        task = bus._task
        assert task is not None
        await wait_until(lambda: len(bus.cycle_times) >= 1)
        await asyncio.sleep(0.05)  # the poller rests until its next cycle, 30 s away
        assert not task.done()
        bus.board(10002)  # a new address wakes the poller, and the cancel comes in the same turn
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 2.0)
        await bus.close()
