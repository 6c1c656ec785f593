"""dgt.transports.poller.BoardPoller: many boards' descriptors polled together on a timer of
the event loop; serial transports on real ptys read through one poller (every byte, in order
per board, within about a period; a closed pty reported lost with the usual message and its
descriptor dropped); the hall with ``board_poll_ms`` set plays through emulated boards on
ptys as it does without; the config option's errors are one line."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import re
import subprocess
import sys
import termios
import time
import tty
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import chess
import pytest
from conftest import wait_until

from dgt.emulator import EmulatorServer
from dgt.emulator.board import VirtualBoard
from dgt.errors import ConnectionFailed
from dgt.protocol import Piece
from dgt.transports import BoardPoller, ReadWatcher, SerialTransport, open_transport
from dgt.transports import poller as poller_module
from dgt.transports.poller import BATCH, HOT, WARM, PollerClosed
from service.config import ConfigError, TableConfig, parse_config
from service.hall import Hall, Update
from service.store import Store

pytestmark = pytest.mark.usefixtures("no_leaked_tasks")

PERIOD = 0.02


@pytest.fixture
def ptys() -> Iterator[list[tuple[int, str]]]:
    """Four ptys in raw mode: (master fd, slave path) each."""
    opened: list[int] = []
    pairs = []
    for _ in range(4):
        master, slave = os.openpty()
        tty.setraw(slave, termios.TCSANOW)
        opened += [master, slave]
        pairs.append((master, os.ttyname(slave)))
    yield pairs
    for fd in opened:
        with contextlib.suppress(OSError):
            os.close(fd)


@pytest.fixture
async def poller() -> AsyncIterator[BoardPoller]:
    board_poller = BoardPoller(PERIOD)
    yield board_poller
    board_poller.close()


class Sink:
    def __init__(self) -> None:
        self.data = bytearray()
        self.lost: list[str] = []
        self.arrived: list[float] = []

    def on_data(self, data: bytes) -> None:
        self.data += data
        self.arrived.append(time.monotonic())

    def on_lost(self, reason: str) -> None:
        self.lost.append(reason)


def test_the_event_loop_and_the_poller_are_read_watchers() -> None:
    loop = asyncio.new_event_loop()
    try:
        watchers: list[ReadWatcher] = [loop, BoardPoller(0.01)]  # mypy checks the seam
        assert all(callable(w.add_reader) and callable(w.remove_reader) for w in watchers)
    finally:
        loop.close()


@pytest.mark.parametrize("period", [0, -1.0, float("nan")])
def test_a_poller_needs_a_period(period: float) -> None:
    with pytest.raises(ValueError, match="more than 0 s"):
        BoardPoller(period)


# -- the poller on its own (pipes: ready the moment they are written) -------------------


@pytest.fixture
def pipes() -> Iterator[list[tuple[int, int]]]:
    made = [os.pipe() for _ in range(3)]
    for r, _ in made:
        os.set_blocking(r, False)
    yield made
    for pair in made:
        for fd in pair:
            with contextlib.suppress(OSError):
                os.close(fd)


@pytest.mark.parametrize("kind", ["epoll", "selector"])
def test_both_ready_sets_report_readable_and_hung_up_descriptors(
    kind: str, pipes: list[tuple[int, int]]
) -> None:
    """The poller's epoll set and the selector it falls back to (no epoll) answer the same:
    the ready descriptors, a hung-up one among them (its reader then finds the end), at most
    ``most`` of them, none once unregistered."""
    ready_set = poller_module._Epoll() if kind == "epoll" else poller_module._Selected()
    try:
        for r, _ in pipes:
            ready_set.register(r)
        assert ready_set.ready(8) == []
        (r0, w0), (r1, w1), (r2, _) = pipes
        os.write(w0, b"x")
        os.close(w1)  # hung up
        assert sorted(fd for fd, _ in ready_set.ready(8)) == [r0, r1]
        assert len(ready_set.ready(1)) == 1
        ready_set.unregister(r1)
        assert [fd for fd, _ in ready_set.ready(8)] == [r0]
        os.read(r0, 10)
        assert ready_set.ready(8) == []
        with pytest.raises((KeyError, OSError)):
            ready_set.unregister(r1)  # not registered any more
        assert r2 not in [fd for fd, _ in ready_set.ready(8)]
    finally:
        ready_set.close()


async def test_one_poll_calls_every_ready_fd_and_the_timer_runs_only_while_it_has_one(
    poller: BoardPoller, pipes: list[tuple[int, int]]
) -> None:
    called: list[int] = []

    def reader(fd: int) -> None:
        os.read(fd, 100)
        called.append(fd)

    assert not poller.running
    for r, _ in pipes:
        poller.add_reader(r, functools.partial(reader, r))
    assert poller.running
    assert len(poller) == 3
    polls = poller.polls
    for _, w in pipes:
        os.write(w, b"x")
    await wait_until(lambda: len(called) == 3)
    assert sorted(called) == sorted(r for r, _ in pipes)
    assert poller.polls == polls + 1  # all three in one wake-up
    for r, _ in pipes:
        assert poller.remove_reader(r)
    assert not poller.remove_reader(pipes[0][0])
    assert not poller.running
    assert len(poller) == 0
    poller.add_reader(pipes[0][0], lambda: reader(pipes[0][0]))
    assert poller.running
    poller.close()
    assert not poller.running
    assert poller.closed
    with pytest.raises(PollerClosed, match="closed"):
        poller.add_reader(pipes[1][0], lambda: None)
    poller.close()  # idempotent


async def test_a_stretching_poller_waits_longer_while_few_fds_are_ready_and_less_once_many(
    pipes: list[tuple[int, int]],
) -> None:
    period, longest = 0.002, 0.016
    board_poller = BoardPoller(period, longest=longest)
    many: list[tuple[int, int]] = []
    try:
        assert repr(board_poller).startswith("<BoardPoller every 2-16 ms")
        r = pipes[0][0]
        board_poller.add_reader(r, lambda: os.read(r, 100))
        assert board_poller.now_period == period
        # polls that find nothing (or one board) ready: the period doubles up to the longest
        polls = board_poller.polls
        await wait_until(lambda: board_poller.polls >= polls + 4)
        assert board_poller.now_period == longest
        # more than twice BATCH descriptors ready at each poll (never drained): it halves
        # back down to the shortest
        for _ in range(2 * BATCH + 1):
            pair = os.pipe()
            many.append(pair)
            os.write(pair[1], b"x")
            board_poller.add_reader(pair[0], lambda: None)
        polls = board_poller.polls
        await wait_until(lambda: board_poller.polls >= polls + 4)
        assert board_poller.now_period == period
        # drained again: it stretches again
        for pair in many:
            board_poller.remove_reader(pair[0])
        polls = board_poller.polls
        await wait_until(lambda: board_poller.polls >= polls + 4)
        assert board_poller.now_period == longest
    finally:
        board_poller.close()
        for pair in many:
            for fd in pair:
                os.close(fd)


async def test_a_stretching_poller_keeps_its_shortest_period_while_the_process_is_busy(
    pipes: list[tuple[int, int]],
) -> None:
    """The same polls that find nothing ready, while the process uses a whole CPU (its CPU
    time, given, runs as fast as the loop's): the period never stretches; once the process
    is idle again (its CPU time stands still) it stretches up to the longest."""
    loop = asyncio.get_running_loop()
    busy = True
    idle_since = 0.0

    def cpu_time() -> float:
        return loop.time() if busy else idle_since

    board_poller = BoardPoller(0.002, longest=0.016, cpu_time=cpu_time)
    try:
        r = pipes[0][0]
        board_poller.add_reader(r, lambda: os.read(r, 100))
        polls = board_poller.polls
        await wait_until(lambda: board_poller.polls >= polls + 8)
        assert board_poller.now_period == 0.002
        assert board_poller.share > HOT
        busy, idle_since = False, loop.time()
        await wait_until(lambda: board_poller.now_period == 0.016)
        assert board_poller.share < WARM
    finally:
        board_poller.close()


def test_a_fixed_poller_keeps_its_period_and_a_longest_below_it_is_refused() -> None:
    fixed = BoardPoller(0.005)
    assert fixed.longest == fixed.period == fixed.now_period == 0.005
    assert repr(fixed).startswith("<BoardPoller every 5 ms")
    with pytest.raises(ValueError, match="longest period must be at least its period"):
        BoardPoller(0.005, longest=0.004)


async def test_a_fd_removed_while_ready_is_not_called(
    poller: BoardPoller, pipes: list[tuple[int, int]]
) -> None:
    called: list[int] = []
    (r1, w1), (r2, w2), (r3, w3) = pipes

    def first() -> None:  # whichever the poll calls first removes the other two
        called.append(1)
        for fd in (r1, r2, r3):
            poller.remove_reader(fd)

    for fd in (r1, r2, r3):
        poller.add_reader(fd, first)
    for w in (w1, w2, w3):
        os.write(w, b"x")
    await wait_until(lambda: bool(called))
    await asyncio.sleep(3 * PERIOD)
    assert called == [1]
    assert len(poller) == 0
    assert not poller.running


async def test_a_callback_that_raises_is_warned_about_once_and_stops_no_other(
    poller: BoardPoller, pipes: list[tuple[int, int]], caplog: pytest.LogCaptureFixture
) -> None:
    (r1, w1), (r2, w2), _ = pipes
    good: list[bytes] = []

    def bad() -> None:
        os.read(r1, 100)
        raise RuntimeError("a bug in one board's reader")

    poller.add_reader(r1, bad)
    poller.add_reader(r2, lambda: good.append(os.read(r2, 100)))
    with caplog.at_level(logging.DEBUG, logger="dgt.transports.poller"):
        for i in range(3):
            os.write(w1, b"x")
            os.write(w2, b"%d" % i)
            await wait_until(functools.partial(lambda n: len(good) == n, i + 1))
    assert good == [b"0", b"1", b"2"]
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert f"fd {r1}" in warnings[0].getMessage()
    assert "a bug in one board's reader" in warnings[0].getMessage()
    assert sum("raised again" in r.getMessage() for r in caplog.records) == 2


async def test_after_poll_follows_each_poll_that_found_bytes_and_its_error_is_logged(
    poller: BoardPoller, pipes: list[tuple[int, int]], caplog: pytest.LogCaptureFixture
) -> None:
    (r1, w1), (r2, w2), _ = pipes
    log: list[str] = []
    poller.add_reader(r1, lambda: log.append(f"read {os.read(r1, 100)!r}"))
    poller.add_reader(r2, lambda: log.append(f"read {os.read(r2, 100)!r}"))

    def after() -> None:
        log.append("after")
        if len(log) > 4:
            raise RuntimeError("the hall's commit failed")

    poller.after_poll = after
    await asyncio.sleep(3 * PERIOD)
    assert log == []  # polls that found nothing call nothing
    os.write(w1, b"a")
    os.write(w2, b"b")
    await wait_until(lambda: "after" in log)
    assert sorted(log[:2]) == ["read b'a'", "read b'b'"]
    assert log[2:] == ["after"]
    with caplog.at_level(logging.WARNING, logger="dgt.transports.poller"):
        os.write(w1, b"c")
        await wait_until(lambda: len(log) == 5)
        os.write(w1, b"d")
        await wait_until(lambda: len(log) == 7)  # it goes on polling
    assert log[3:] == ["read b'c'", "after", "read b'd'", "after"]
    assert any("the hall's commit failed" in r.getMessage() for r in caplog.records)


async def test_a_fd_number_reused_after_a_close_without_remove_is_polled_again(
    poller: BoardPoller,
) -> None:
    r, w = os.pipe()
    poller.add_reader(r, lambda: None)
    os.close(r)  # the kernel drops it from the poll; the poller still lists the number
    os.close(w)
    r2, w2 = os.pipe()
    try:
        os.set_blocking(r2, False)
        got: list[bytes] = []
        poller.add_reader(r2, lambda: got.append(os.read(r2, 10)))
        os.write(w2, b"again")
        await wait_until(lambda: got == [b"again"])
    finally:
        poller.remove_reader(r2)
        os.close(r2)
        os.close(w2)


# -- serial transports on ptys through one poller -----------------------------------------


async def test_bytes_of_several_boards_all_arrive_in_order_through_one_poller(
    poller: BoardPoller, ptys: list[tuple[int, str]]
) -> None:
    transports = [SerialTransport(name, watcher=poller) for _, name in ptys]
    sinks = [Sink() for _ in ptys]
    for transport, sink in zip(transports, sinks, strict=True):
        await transport.open(sink.on_data, sink.on_lost)
    assert len(poller) == len(ptys)
    sent: list[bytearray] = [bytearray() for _ in ptys]
    for step in range(40):
        for i, (master, _) in enumerate(ptys):
            chunk = bytes([i, step]) * (1 + (step + i) % 5)
            os.write(master, chunk)
            sent[i] += chunk
        if step % 7 == 0:
            await asyncio.sleep(PERIOD / 3)
    await wait_until(lambda: all(len(s.data) == len(b) for s, b in zip(sinks, sent, strict=True)))
    assert [bytes(s.data) for s in sinks] == [bytes(b) for b in sent]
    # the writes go out on the line at once (not through the poller)
    transports[0].write(b"\x40")
    assert os.read(ptys[0][0], 16) == b"\x40"
    for transport in transports:
        await transport.close()
    assert len(poller) == 0
    assert not poller.running
    assert not any(s.lost for s in sinks)


async def test_the_latency_added_is_at_most_about_one_period(
    ptys: list[tuple[int, str]],
) -> None:
    period = 0.05
    board_poller = BoardPoller(period)
    master, name = ptys[0]
    transport = SerialTransport(name, watcher=board_poller)
    sink = Sink()
    await transport.open(sink.on_data, sink.on_lost)
    try:
        delays = []
        for i in range(8):
            await asyncio.sleep(period * (i % 3) / 3)  # anywhere in the period
            sent = time.monotonic()
            os.write(master, b"m")
            await wait_until(functools.partial(lambda n: len(sink.data) == n, i + 1), within=2)
            delays.append(sink.arrived[-1] - sent)
        # a poll comes at most one period after the bytes (the loop's lateness on a
        # loaded machine on top), and bytes written just after a poll wait for the next
        # one (read at once, they would arrive within a millisecond)
        assert max(delays) < period + 0.05, delays
        assert max(delays) > period / 4, delays
    finally:
        await transport.close()
        board_poller.close()


async def test_a_closed_pty_is_lost_with_the_usual_message_and_its_fd_dropped(
    poller: BoardPoller, ptys: list[tuple[int, str]]
) -> None:
    reasons = []
    for watcher in (None, poller):  # the event loop, as before, then the poller
        master, name = ptys.pop()
        transport = SerialTransport(name, watcher=watcher)
        sink = Sink()
        await transport.open(sink.on_data, sink.on_lost)
        os.write(master, b"\x8e")
        await wait_until(lambda: bytes(sink.data) == b"\x8e")  # noqa: B023  # awaited here
        os.close(master)  # the cable is pulled
        await wait_until(lambda: bool(sink.lost))  # noqa: B023
        await asyncio.sleep(3 * PERIOD)
        assert len(sink.lost) == 1
        assert not transport.is_open
        reasons.append(sink.lost[0].replace(name, "PORT"))
        assert len(poller) == 0
        assert not poller.running
        await transport.close()
    assert reasons[0] == reasons[1]
    assert reasons[1].startswith("PORT: ")


async def test_a_board_reopened_after_a_loss_is_read_through_the_poller_again(
    poller: BoardPoller, tmp_path: Path
) -> None:
    async with EmulatorServer(VirtualBoard(), link=tmp_path / "board") as server:
        transport = open_transport(server.path, watcher=poller)
        assert isinstance(transport, SerialTransport)
        assert transport.watcher is poller
        for _ in range(2):
            sink = Sink()
            await transport.open(sink.on_data, sink.on_lost)
            assert len(poller) == 1
            transport.write(b"\x40")  # reset: no answer; then ask for the board
            transport.write(b"\x42")
            await wait_until(lambda: len(sink.data) >= 67)  # noqa: B023  # awaited here
            server.unplug()
            await wait_until(lambda: bool(sink.lost))  # noqa: B023
            assert len(poller) == 0
            server.plug()
        await transport.close()


async def test_a_transport_given_a_closed_poller_does_not_open(
    ptys: list[tuple[int, str]],
) -> None:
    board_poller = BoardPoller(PERIOD)
    board_poller.close()
    transport = SerialTransport(ptys[0][1], watcher=board_poller)
    with pytest.raises(ConnectionFailed, match="poller is closed"):
        await transport.open(Sink().on_data, Sink().on_lost)
    assert not transport.is_open
    again = SerialTransport(ptys[0][1])
    await again.open(Sink().on_data, Sink().on_lost)  # the port was let go
    await again.close()
    await transport.close()


# -- the hall -----------------------------------------------------------------------------

OPTIONS = {"reconnect_min": 0.05, "reconnect_max": 0.2, "handshake_timeout": 3.0}

FOOLS_MATE = ["f2f3", "e7e5", "g2g4", "d8h4"]


async def make_move(
    server: EmulatorServer, vb: VirtualBoard, uci: str, position: chess.Board
) -> None:
    """One hand makes ``uci`` on the board (no capture in the games played here), then
    presses the clock."""
    move = chess.Move.from_uci(uci)
    piece = Piece.from_symbol(position.piece_at(move.from_square).symbol())  # type: ignore[union-attr]
    position.push(move)
    server.act(lambda now: vb.lift(move.from_square, now))
    await asyncio.sleep(0.05)
    server.act(lambda now: vb.place(move.to_square, piece, now))
    await asyncio.sleep(0.05)
    server.act(lambda now: vb.press_lever(now))


@pytest.mark.slow
@pytest.mark.parametrize("board_poll_ms", [0, 5])
async def test_the_hall_plays_through_emulated_boards_on_ptys_both_ways(
    tmp_path: Path, board_poll_ms: int
) -> None:
    store = Store(tmp_path / "hall.db")
    hall = Hall(store, tick_interval=0.1, board_options=OPTIONS, board_poll_ms=board_poll_ms)
    seen: list[Update] = []
    hall.subscribe(seen.append)
    boards = {table: VirtualBoard(serial=f"0000{table}") for table in ("1", "2")}
    async with contextlib.AsyncExitStack() as stack:
        servers = {
            table: await stack.enter_async_context(EmulatorServer(vb, link=tmp_path / table))
            for table, vb in boards.items()
        }
        for table, server in servers.items():
            hall.add_table(TableConfig(table, server.path, None, {"rules": "casual"}))
        await hall.start()
        try:
            runners = hall.runners
            for runner in runners.values():
                assert await runner.wait_ready(10)
            poller = hall.board_poller
            if board_poll_ms:
                assert poller is not None
                assert poller.period == board_poll_ms / 1000
                assert len(poller) == 2
                assert poller.running
            else:
                assert poller is None
            commits_at_polls: list[int] = []
            if poller is not None:
                commit_at_poll = poller.after_poll
                assert commit_at_poll is not None

                def watched() -> None:
                    before = store.commits
                    commit_at_poll()
                    commits_at_polls.append(store.commits - before)

                poller.after_poll = watched

            def moves(table: str) -> list[str]:
                return [m["uci"] for m in hall.state(table)["moves"]]

            positions = {table: chess.Board() for table in boards}
            for ply, uci in enumerate(FOOLS_MATE):
                for table in boards:
                    await make_move(servers[table], boards[table], uci, positions[table])
                await wait_until(
                    functools.partial(lambda n: all(len(moves(t)) == n for t in boards), ply + 1),
                    within=10,
                )
            for table in boards:
                assert moves(table) == FOOLS_MATE
            await wait_until(lambda: all(hall.state(t)["result"] == "0-1" for t in boards))
            published = {u.table_id for u in seen for e in u.events if e["type"] == "move"}
            assert published == {"1", "2"}
            if poller is not None:  # moves committed at the end of the poll that read them
                assert sum(commits_at_polls) > 0
            # a board pulled and plugged in again comes back (through the poller again)
            servers["1"].unplug()
            await wait_until(lambda: not runners["1"].board.ready)  # type: ignore[union-attr]
            if poller is not None:
                assert len(poller) == 1
            servers["1"].plug()
            await wait_until(lambda: runners["1"].board.ready, within=10)  # type: ignore[union-attr]
            if poller is not None:
                assert len(poller) == 2
        finally:
            await hall.close()
            store.close()
        if board_poll_ms:
            assert hall.board_poller is not None
            assert hall.board_poller.closed


# -- the config option --------------------------------------------------------------------

TABLE = '\n[[table]]\nport = "/dev/ttyACM0"\n'


@pytest.mark.parametrize(
    ("value", "expected"), [("0", 0.0), ("5", 5.0), ("2.5", 2.5), ("50", 50.0)]
)
def test_board_poll_ms_is_read_from_service(value: str, expected: float) -> None:
    config = parse_config(f"[service]\nboard_poll_ms = {value}\n{TABLE}", "hall.toml")
    assert config.board_poll_ms == expected


def test_board_poll_ms_is_off_by_default_for_a_club() -> None:
    assert parse_config(TABLE, "hall.toml").board_poll_ms == 0.0


def serial_tables(count: int, first: int = 0) -> str:
    return "".join(
        f'\n[[table]]\nid = "{i}"\nport = "/dev/ttyUSB{i}"\n' for i in range(first, first + count)
    )


def test_board_poll_ms_is_5_by_default_from_100_boards_on_serial_ports() -> None:
    assert parse_config(serial_tables(99), "hall.toml").board_poll_ms == 0.0
    assert parse_config(serial_tables(100), "hall.toml").board_poll_ms == 5.0
    # boards that are not read from a descriptor of their own do not count
    others = "".join(
        f'\n[[table]]\nid = "e{i}"\nport = "{port}"\n'
        for i, port in enumerate(["emulator", "ble:AA:BB:CC:DD:EE:FF"])
    )
    assert parse_config(serial_tables(99) + others, "hall.toml").board_poll_ms == 0.0
    # what the config says stands
    said = "[service]\nboard_poll_ms = 0\n" + serial_tables(150)
    assert parse_config(said, "hall.toml").board_poll_ms == 0.0


def test_a_big_halls_default_reads_stretch_to_20_ms_and_a_said_board_poll_ms_does_not() -> None:
    assert parse_config(serial_tables(99), "hall.toml").board_poll_longest_ms == 0.0
    default = parse_config(serial_tables(100), "hall.toml")
    assert (default.board_poll_ms, default.board_poll_longest_ms) == (5.0, 20.0)
    said = parse_config("[service]\nboard_poll_ms = 5\n" + serial_tables(150), "hall.toml")
    assert (said.board_poll_ms, said.board_poll_longest_ms) == (5.0, 5.0)


async def test_the_hall_gives_its_poller_the_longest_period(tmp_path: Path) -> None:
    store = Store(tmp_path / "hall.db")
    try:
        stretching = Hall(store, board_poll_ms=5, board_poll_longest_ms=20).board_poller
        assert stretching is not None
        assert (stretching.period, stretching.longest) == (0.005, 0.02)
        fixed = Hall(store, board_poll_ms=5).board_poller
        assert fixed is not None
        assert (fixed.period, fixed.longest) == (0.005, 0.005)
    finally:
        store.close()


@pytest.mark.parametrize("value", ["-1", "51", "50.5", '"5"', "true", "nan", "inf", "[5]"])
def test_a_bad_board_poll_ms_is_one_line_naming_file_line_and_key(value: str) -> None:
    text = f"[service]\nport = 8080\nboard_poll_ms = {value}\n{TABLE}"
    with pytest.raises(ConfigError) as caught:
        parse_config(text, "hall.toml")
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("hall.toml:3: [service] board_poll_ms: must be a number of ")
    assert "from 0 to 50 (0: off)" in message


# -- the hall bench's option --------------------------------------------------------------

BENCH_HALL = Path(__file__).resolve().parent.parent / "bench" / "hall.py"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--sizes", "500", "--board-poll", "5"], "the boards of N=500 run in the service's"),
        (["--board-poll", "51", "--boards-process"], "51 is not a number of milliseconds"),
    ],
)
def test_the_hall_bench_refuses_a_board_poll_it_cannot_use_in_one_line(
    args: list[str], message: str
) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH_HALL), *args],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert message in done.stderr.splitlines()[-1]


@pytest.mark.slow
@pytest.mark.timeout(150)
def test_the_hall_bench_reads_its_boards_through_the_poller_and_says_so() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH_HALL), "--quick", "--no-stages", "--boards-process",
         "--board-poll", "5"],
        capture_output=True, text=True, timeout=140, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert re.search(
        r"^N=20: service CPU per input .* wake-ups/s .*; board poll 5 ms \([\d,]+ polls/s\)",
        done.stdout,
        re.M,
    ), done.stdout
