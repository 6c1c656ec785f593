"""Hall figure: N emulated boards in one process on one core, board event to SSE update.

One process pinned to one CPU runs N virtual DGT boards with DGT 3000 clocks (in-process
transport), each replaying real games with human timing (a move every 2-6 s, the clock
reporting every second while it runs), and the service (``dgt.Board`` per table,
``Table``, the SQLite store with commit-before-publish, the web server).  One spectator
follows the overview stream (``/api/stream``, every table) over HTTP on 127.0.0.1 from a
process of its own (:class:`SpectatorProcess`, on another CPU when there is one), as a
hall's spectators are browsers on other machines; ``--spectator-inside`` follows it from
inside the service's process instead, as runs before 2026-11-22 did (its CPU then counts
in the bench's share of the same core).

Reported per N, over a measuring window after a warm-up:

* latency: from the moment the board's bytes were received (the ``dgt.Board`` event time)
  to the moment the spectator parsed the SSE message carrying the table's new state,
  p50 / p99 / max (time is not accelerated: the replay runs at human speed);
* CPU share: CPU seconds of the whole process (emulated boards and replay included) per
  wall second, and split into the service's own share and the bench's load: the CPU time
  (``time.thread_time``) spent in the emulated boards (the replaying tasks, the virtual
  boards answering the host and running their clocks) and in the spectator's task (when
  inside) is charged to the bench (:class:`CpuSplit`), the rest to the service (driver,
  tables, store, web server);
* memory per table: growth of the process's resident set from before the tables were
  built to the end of the window, divided by N (emulated boards included);
* service CPU per input: the service's CPU seconds in the window divided by the inputs the
  tables took (board events, ticks that produced something, admin commands), a cost figure
  that other load on the machine disturbs far less than the latency;
* the share of the window the service's process waited, ready to run, for a CPU that other
  processes held (``/proc/PID/schedstat``), and the boards process's the same: on a shared
  machine a run with more than a few percent there measured a core that was not its own;
* the cycle collector: its share of the window, the full collections in it and the longest
  of their pauses (wall time; see ``service.collector_pacer.CollectorPacer``);
* updates and moves seen, and how many updates the stream merged for a slow reader;
* per input kind (clock report, square change, lever, other board events, tick, admin), the
  service's CPU per input split by stage: driver, recogniser, table and arbiter, store rows,
  commit, stream fan-out (:mod:`bench._stages`: the service's methods are wrapped only while
  the bench runs; ``--no-stages`` leaves them alone and prints no split).

From N = 2,000 on, the boards run in a process of their own (``--boards-process``, below) so
that the service has its core to itself; ``--boards-inside`` keeps them in.

Each board starts its first game at a random moment within ``--stagger`` seconds (6 by
default), as in a hall where the games are at different points: started all in one
instant, the boards make their first moves in step, a burst of a few hundred milliseconds
that on its own decided the p99 of a 20 s window whenever it fell inside it (runs before
2026-11-22 started them so).  ``--stagger 0`` measures that burst.

    .venv/bin/python bench/hall.py                 # N = 100, 500, 1000, 30 s each
    .venv/bin/python bench/hall.py --sizes 1000 --duration 20
    .venv/bin/python bench/hall.py --quick         # N = 20, 4 s (CI smoke run)
    .venv/bin/python bench/hall.py --boards-process   # the boards in a second process
    .venv/bin/python bench/hall.py --sizes 1000 2000  # 2,000: boards in a second process
    .venv/bin/python bench/hall.py --sizes 5000       # boards over TCP (pty/max is 4,096)
    .venv/bin/python bench/hall.py --sizes 2000 --memory   # where the memory goes
    .venv/bin/python bench/hall.py --sizes 2000 --board-poll 5  # boards read together every 5 ms

``--boards-process`` moves the emulated boards and their replays out of the service's
process: a child process (pinned to another CPU when there is one) serves each virtual board
on its own pseudo-terminal (:class:`dgt.emulator.pty.EmulatorServer`, as ``dgt-service demo
--pty`` does) and the hall opens them as serial ports, as it would real boards.  The kernel
allows only so many pseudo-terminals (``/proc/sys/kernel/pty/max``, 4,096 by default): when
N does not fit in the ones free, the child serves every board on a TCP port of 127.0.0.1
instead (:class:`dgt.emulator.tcp.TcpEmulatorServer`) and the hall opens it as a pyserial
``socket://`` URL, as it would a board behind a serial-to-network bridge; the same driver,
read on the same event loop (``--boards-transport`` picks one; the figure line says which
was used), each board waking it, or all of them read together every MS milliseconds
(``--board-poll MS``; by default as the service's config does, 5 ms from 100 boards up; the
config's ``board_poll_ms``: :class:`dgt.transports.poller.BoardPoller`;
the figure line says which, and the latency, counted from the moment the service read the
bytes, leaves out the up to MS they waited for the poll).  The
service's process then holds only the service and the spectator (still charged to the
bench), its memory growth is the service's alone, and the child's CPU share is printed
apart.  The replays in the child do not set the players through the admin API (the child
has no hall); everything else is the same load.

A hall too big for the core cannot keep up with its boards: the backlog grows, each turn of
the event loop takes longer than the last, and the bench's own timers (the end of the
warm-up, of the window) would come back only after minutes or never.  A watch thread
(:class:`LoopWatch`) then ends the run: when the loop is :data:`OVERLOAD_LATE` seconds late
for the bench, it prints the inputs per second the service handled meanwhile and their CPU,
stops the child processes and exits with status 3.
"""

from __future__ import annotations

import argparse
import asyncio
import collections.abc
import contextlib
import functools
import gc
import json
import os
import random
import re
import resource
import signal
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Generator
from pathlib import Path
from typing import Any, TypeVar

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._memory import Traced, garbage_held, shared_per_table, table_breakdown  # noqa: E402
from bench._stages import StageMeter, report  # noqa: E402
from dgt.emulator.board import VirtualBoard  # noqa: E402
from dgt.emulator.pty import EmulatorServer  # noqa: E402
from dgt.emulator.replay import replay_games  # noqa: E402
from dgt.emulator.tcp import TcpEmulatorServer  # noqa: E402
from dgt.transports.emulator import EmulatorTransport  # noqa: E402
from service import event_loop  # noqa: E402
from service.collector_pacer import CollectorPacer  # noqa: E402
from service.commands.demo import emulated_tables, load_games, play  # noqa: E402
from service.config import (  # noqa: E402
    BIG_HALL_BOARDS,
    BIG_HALL_POLL_LONGEST_MS,
    BIG_HALL_POLL_MS,
    BOARD_POLL_MS,
    TableConfig,
)
from service.hall import Hall  # noqa: E402
from service.store import Store  # noqa: E402
from service.web import WebServer  # noqa: E402

SERVICE_CODE = Path(event_loop.__file__).resolve().parent.parent
"""The checkout whose service this bench measures (its own: :data:`ROOT` comes first)."""

SCRIPT = Path(__file__).resolve()
LICHESS_GAMES = ROOT / "tests" / "data" / "lichess-2012-12-31-100.pgn"
"""The 100 lichess games kept in the repository (CC0; see ``tests/data/README.md``)."""

T = TypeVar("T")

BOARDS_PROCESS_FROM = 2000
"""From this many tables on, the emulated boards run in a process of their own by default
(``--boards-inside`` keeps them in): the service then has its core to itself."""

PTY_MARGIN = 64
"""Pseudo-terminals left free for everything else on the machine when ``--boards-transport
auto`` picks ptys (other programs, and tests running beside the bench, open ptys too)."""

PATHS_LINE_LIMIT = 1 << 24
"""Longest line the boards process hands its paths over in (one JSON line of every pty's
path, ~40 bytes each: more than the 64 KiB a stream reader takes by default at N = 2,000)."""


class CpuSplit:
    """Charges the CPU time of marked code (the bench's load) to the bench; whatever runs
    unmarked is the service's.  Sections nest: service code called from bench code (the
    replay setting players through the hall's admin API) is not charged."""

    def __init__(self) -> None:
        self.bench = 0.0
        """CPU seconds spent in bench code."""
        self._stack: list[bool] = []
        self._mark = 0.0

    def enter(self, bench: bool) -> None:
        now = time.thread_time()
        if self._stack and self._stack[-1]:
            self.bench += now - self._mark
        self._stack.append(bench)
        self._mark = now

    def leave(self) -> None:
        now = time.thread_time()
        if self._stack.pop():
            self.bench += now - self._mark
        self._mark = now

    def wrap(self, fn: Callable[..., T], *, bench: bool = True) -> Callable[..., T]:
        """``fn`` with its calls charged to the bench (or, ``bench=False``, not)."""

        @functools.wraps(fn)
        def charged(*args: Any, **kwargs: Any) -> T:
            self.enter(bench)
            try:
                return fn(*args, **kwargs)
            finally:
                self.leave()

        return charged

    def task(self, coro: Coroutine[Any, Any, T]) -> Coroutine[Any, Any, T]:
        """``coro`` with every step it runs charged to the bench (for ``create_task``)."""
        return _ChargedCoroutine(coro, self)


class _ChargedCoroutine(collections.abc.Coroutine[Any, Any, T]):
    """A coroutine whose steps (``send``/``throw``) run inside a bench section."""

    def __init__(self, coro: Coroutine[Any, Any, T], split: CpuSplit) -> None:
        self._coro = coro
        self._split = split

    def send(self, value: Any) -> Any:
        self._split.enter(True)
        try:
            return self._coro.send(value)
        finally:
            self._split.leave()

    def throw(self, *args: Any) -> Any:
        self._split.enter(True)
        try:
            return self._coro.throw(*args)
        finally:
            self._split.leave()

    def close(self) -> None:
        self._coro.close()

    def __await__(self) -> Generator[Any, None, T]:
        return self._coro.__await__()


def charge_emulators(split: CpuSplit) -> Callable[[], None]:
    """Charge the virtual boards and their in-process transports to the bench: the board
    answering a command the host wrote, and its own timed output (running clock, lever);
    handing bytes to the host (the driver's parser) stays the service's.  Returns the undo."""
    saved = (EmulatorTransport.write, EmulatorTransport._poll)
    EmulatorTransport.write = split.wrap(EmulatorTransport.write)  # type: ignore[method-assign]
    EmulatorTransport._poll = split.wrap(EmulatorTransport._poll)  # type: ignore[method-assign]

    def undo() -> None:
        EmulatorTransport.write, EmulatorTransport._poll = saved  # type: ignore[method-assign]

    return undo


def not_charged(split: CpuSplit, fn: Callable[..., Awaitable[T]]) -> Callable[..., Awaitable[T]]:
    """An async service call made from bench code (it must finish without suspending, as
    ``Hall.admin`` does), kept out of the bench's share."""

    @functools.wraps(fn)
    async def service(*args: Any, **kwargs: Any) -> T:
        split.enter(False)
        try:
            return await fn(*args, **kwargs)
        finally:
            split.leave()

    return service


class GcWatch:
    """Pauses of the cycle collector's full collections while :attr:`on`."""

    def __init__(self) -> None:
        self.on = False
        self.full = 0
        self.longest = 0.0
        self.total = 0.0
        """Seconds spent in collections of any generation while on."""
        self._start = 0.0

    def __enter__(self) -> GcWatch:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self._callback)

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._start = time.perf_counter()
            return
        if not self.on:
            return
        pause = time.perf_counter() - self._start
        self.total += pause
        if info.get("generation") == 2:
            self.full += 1
            self.longest = max(self.longest, pause)


def rss_bytes() -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class Spectator:
    """Follows the overview stream and keeps the latency of every update."""

    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.updates = 0
        self.moves = 0
        self.measuring = False

    async def follow(self, url: str, ready: Callable[[], None] | None = None) -> None:
        timeout = aiohttp.ClientTimeout(total=None, sock_read=None)
        async with (
            aiohttp.ClientSession(timeout=timeout) as session,
            session.get(url + "api/stream") as response,
        ):
            if ready is not None:
                ready()
            async for raw in response.content:
                if not raw.startswith(b"data: ") or not self.measuring:
                    continue
                now = time.monotonic()
                t_in = _t_in(raw)
                if t_in is None:
                    continue
                self.updates += 1
                self.latencies.append(now - t_in)
                self.moves += raw.count(b'"type":"move"')


class SpectatorProcess:
    """The spectator in a child process of its own (pinned to another CPU when there is
    one), as a hall's spectators are browsers on other machines: it costs the service's
    core nothing but the stream the service writes.  Told over its standard input when
    the window starts and ends; answers with one JSON line."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    @classmethod
    async def start(cls, url: str) -> SpectatorProcess:
        process = await asyncio.create_subprocess_exec(
            sys.executable, str(SCRIPT), "--spectate", url, *on_cpus_arguments(),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        )  # fmt: skip
        assert process.stdout is not None
        if await process.stdout.readline() != b"following\n":
            raise RuntimeError("the spectator process did not start (see its error output)")
        return cls(process)

    def measure(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(b"start\n")

    async def result(self) -> Spectator:
        """Ends the window; the spectator's figures for it."""
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.write(b"stop\n")
        body = json.loads(await self.process.stdout.read())  # then it exits
        spectator = Spectator()
        spectator.latencies = body["latencies"]
        spectator.updates = body["updates"]
        spectator.moves = body["moves"]
        return spectator

    async def stop(self) -> None:
        if self.process.returncode is None:
            self.process.kill()
        await self.process.wait()


def _say_following() -> None:
    print("following", flush=True)


async def spectate(url: str) -> int:
    """The child of :class:`SpectatorProcess`: follow ``url``'s stream, measure between
    ``start`` and ``stop`` on standard input, then print the figures as one JSON line."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    spectator = Spectator()
    follower = asyncio.create_task(
        spectator.follow(url, ready=lambda: print("following", flush=True))
    )
    try:
        await reader.readline()
        spectator.measuring = True
        await reader.readline()
        spectator.measuring = False
        print(json.dumps({
            "latencies": spectator.latencies, "updates": spectator.updates,
            "moves": spectator.moves,
        }), flush=True)  # fmt: skip
    finally:
        follower.cancel()
        await asyncio.gather(follower, return_exceptions=True)
    return 0


_T_IN = re.compile(rb'"t_in":(-?[0-9.eE+-]+)')


def _t_in(raw: bytes) -> float | None:
    """The ``t_in`` of an update line, read without parsing the rest: the spectator is the
    measuring instrument, and decoding every update in full took ~5 % of the core at
    N = 1,000, which a hall's real spectators (browsers on other machines) do not cost it.
    (The bench's tests check that it reads the same as a full parse.)"""
    found = _T_IN.search(raw)
    return float(found.group(1)) if found else None


def process_cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) another process used so far (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_wait_seconds(pid: int | str = "self") -> float:
    """Seconds the main thread of process ``pid`` (an event loop's) spent ready to run but
    waiting for a CPU that other processes held (Linux ``/proc/PID/schedstat``; 0 where the
    system does not say, and once the process is gone).  A loop that is late while its
    process waits this way is late for want of a CPU, not for its own work."""
    try:
        with open(f"/proc/{pid}/schedstat", encoding="ascii") as schedstat:
            return int(schedstat.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return 0.0


def wake_ups(pid: int | str = "self") -> int:
    """How many times the main thread of process ``pid`` went to sleep of its own accord and
    was woken again (Linux ``voluntary_ctxt_switches``; 0 where the system does not say).
    Each wake-up after a pause of more than a fraction of a millisecond finds the CPU's caches
    cold: on this kind of virtual machine the same work costs up to several times its
    tight-loop CPU right after one (``bench/replay_cost.py --gap``), so inputs taken per
    wake-up weigh on the service CPU per input."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("voluntary_ctxt_switches:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


class BoardsProcess:
    """The child process serving the emulated boards on pseudo-terminals (see the module
    docstring): started with the paths it serves, told when to start replaying, killed at
    the end."""

    def __init__(self, process: asyncio.subprocess.Process, paths: list[str]) -> None:
        self.process = process
        self.paths = paths

    @classmethod
    async def start(cls, n: int, args: argparse.Namespace, transport: str) -> BoardsProcess:
        process = await asyncio.create_subprocess_exec(
            sys.executable, str(SCRIPT), "--serve-boards", str(n),
            "--seed", str(args.seed), "--speed", str(args.speed), "--stagger", str(args.stagger),
            "--boards-transport", transport, *on_cpus_arguments(),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=PATHS_LINE_LIMIT,
        )  # fmt: skip
        assert process.stdout is not None
        line = await process.stdout.readline()
        if not line:
            raise RuntimeError("the boards process did not start (see its error output)")
        return cls(process, list(json.loads(line)["paths"]))

    def go(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(b"go\n")

    def cpu_seconds(self) -> float:
        return process_cpu_seconds(self.process.pid)

    def pause(self) -> None:
        """Freezes the boards (SIGSTOP): their connections stay open, nothing more comes."""
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(signal.SIGSTOP)

    def cpu_wait_seconds(self) -> float:
        return cpu_wait_seconds(self.process.pid)

    async def stop(self) -> None:
        if self.process.returncode is None:
            self.process.kill()
        await self.process.wait()


def free_ptys() -> int | None:
    """Pseudo-terminals the kernel still allows (None where it does not say: not Linux)."""
    try:
        most = int(Path("/proc/sys/kernel/pty/max").read_text())
        used = int(Path("/proc/sys/kernel/pty/nr").read_text())
    except (OSError, ValueError):
        return None
    return most - used


def boards_transport(n: int, args: argparse.Namespace) -> str:
    """``pty`` or ``tcp``: how the boards process serves the boards of a hall of ``n``
    tables (``auto``: ptys while ``n`` of them fit, with :data:`PTY_MARGIN` to spare)."""
    if args.boards_transport != "auto":
        return str(args.boards_transport)
    free = free_ptys()
    return "pty" if free is None or n + PTY_MARGIN <= free else "tcp"


def raise_open_files_limit() -> None:
    """Open files up to the hard limit: a board is a file (a pty, or a listening socket and
    a connection), and thousands of them pass a soft limit of 1,024."""
    with contextlib.suppress(ValueError, OSError):
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def split_cpus(allowed: set[int]) -> tuple[set[int], set[int]]:
    """The service's CPU and the CPUs its helper processes (boards, spectator) run on, out of
    the ``allowed`` ones: the lowest for the service, the rest for the others (the same one
    when there is only one)."""
    cpus = sorted(allowed)
    return {cpus[0]}, set(cpus[1:]) or {cpus[0]}


def pin(cpus: str) -> None:
    """Pins this process to ``cpus`` (``--on-cpus``, a comma-separated list; empty: left
    where it is)."""
    if cpus:
        with contextlib.suppress(AttributeError, OSError, ValueError):
            os.sched_setaffinity(0, {int(cpu) for cpu in cpus.split(",")})


def on_cpus_arguments() -> list[str]:
    """``--on-cpus`` for a child of the service's process: the CPUs other than the service's
    that the bench was started with (:data:`OTHER_CPUS`).  A child asking for its own
    affinity would only see the service's CPU, which it inherits."""
    return ["--on-cpus", ",".join(map(str, sorted(OTHER_CPUS)))] if OTHER_CPUS else []


OTHER_CPUS: set[int] = set()
"""The CPUs for the bench's child processes, noted by :func:`pin_service`."""


def pin_service() -> None:
    """Pins this process (the service's) to one CPU and notes the others for its children
    (:data:`OTHER_CPUS`) first: a child inherits the pin, and asking for its own affinity
    would find the service's CPU alone (before 2026-11-27 the boards and the spectator
    took it, and shared the service's core at every N)."""
    with contextlib.suppress(AttributeError, OSError):
        service, others = split_cpus(os.sched_getaffinity(0))
        OTHER_CPUS.update(others)
        os.sched_setaffinity(0, service)


async def serve_boards(n: int, args: argparse.Namespace) -> int:
    """The child of ``--boards-process``: N virtual boards on pseudo-terminals (or TCP
    ports, ``--boards-transport tcp``); prints their paths (or ``socket://`` URLs) as one
    JSON line, waits for ``go`` on stdin, then replays games on every board until stdin
    closes."""
    raise_open_files_limit()
    rng = random.Random(args.seed)
    extra = [str(LICHESS_GAMES)]
    games = load_games(extra)
    server_class = TcpEmulatorServer if args.boards_transport == "tcp" else EmulatorServer
    servers = [
        server_class(VirtualBoard(serial=f"{i % 100000:05d}"), seed=rng.randrange(1 << 30))
        for i in range(1, n + 1)
    ]
    paths = [await server.start() for server in servers]
    print(json.dumps({"paths": paths}), flush=True)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    await reader.readline()

    async def replay_forever(server: EmulatorServer, first: int, seed: int) -> None:
        own = random.Random(seed)
        await asyncio.sleep(own.uniform(0.0, args.stagger))
        index = first
        while True:
            game = games[index % len(games)]
            index += 1
            await replay_games(  # type: ignore[arg-type]
                server, [game], board=server.device, speed=args.speed, rng=own, pause=2.0
            )

    tasks = [
        asyncio.create_task(replay_forever(server, i, rng.randrange(1 << 30)))
        for i, server in enumerate(servers)
    ]
    try:
        await reader.read()  # until the parent closes stdin or kills this process
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for server in servers:
            await server.close()
    return 0


async def staggered(delay: float, coro: Coroutine[Any, Any, T]) -> T:
    """``coro`` started ``delay`` seconds from now: boards that all began their first game
    in the same instant would move in step for their first moves, a burst that a hall
    (players arriving, thinking, at different points of their games) does not see."""
    await asyncio.sleep(delay)
    return await coro


STARVED = 0.1
"""Share of the time a process may wait for its CPU (:func:`cpu_wait_seconds`) before its
figures are said to be those of a core it did not have to itself."""

OVERLOAD_LATE = 60.0
"""Seconds the event loop may be late for the bench's timer before the run is called
overloaded and ended (:class:`LoopWatch`)."""


class LoopWatch(threading.Thread):
    """Ends a run whose event loop no longer comes back to the bench (see the module text).

    The loop says when it expects to be back (:meth:`due`, before each of the bench's long
    sleeps) and that it is (:meth:`back`).  Every second the thread notes the process's CPU
    time and the inputs the hall's tables counted (plain integers, read as they are); once
    the loop is :data:`OVERLOAD_LATE` seconds late it prints what the service handled over
    the last samples, kills ``children`` and ends the process (status 3)."""

    def __init__(self, n: int, hall: Hall, children: list[int]) -> None:
        super().__init__(name="hall bench overload watch", daemon=True)
        self.n = n
        self.hall = hall
        self.children = children
        self._due: float | None = None
        self._phase = ""
        self._stop = threading.Event()
        self._samples: collections.deque[tuple[float, float, float, int]] = collections.deque(
            maxlen=30
        )

    def due(self, seconds: float, phase: str) -> None:
        self._phase = phase
        self._due = time.monotonic() + seconds

    def back(self) -> None:
        self._due = None

    def stop(self) -> None:
        self._stop.set()

    def _inputs(self) -> int:
        return sum(runner.inputs for runner in list(self.hall.runners.values()))

    def run(self) -> None:
        while not self._stop.wait(1.0):
            now = time.monotonic()
            self._samples.append((now, cpu_seconds(), cpu_wait_seconds(), self._inputs()))
            due = self._due
            if due is None or now - due < OVERLOAD_LATE:
                continue
            (t0, cpu0, wait0, in0), (t1, cpu1, wait1, in1) = self._samples[0], self._samples[-1]
            handled = (in1 - in0) / max(t1 - t0, 1e-9)
            cpu = (cpu1 - cpu0) / max(t1 - t0, 1e-9)
            waited = (wait1 - wait0) / max(t1 - t0, 1e-9)
            each = (cpu1 - cpu0) / max(in1 - in0, 1) * 1e6
            print(
                f"N={self.n}: overloaded: the event loop is {now - due:.0f} s late for the "
                f"end of the {self._phase}; over the last {t1 - t0:.0f} s it handled "
                f"{handled:,.0f} inputs/s at {cpu * 100:.0f}% CPU ({each:.0f} us per input) "
                f"and waited {waited * 100:.0f}% of the time for its CPU, held by other "
                f"processes (load average {os.getloadavg()[0]:.1f}): "
                + (
                    "the core was not its own, so this says little of the service's limit"
                    if waited >= STARVED
                    else "the service cannot keep up with its boards"
                )
                + "; no latency figures: ending the run",
                flush=True,
            )
            for pid in self.children:
                with contextlib.suppress(OSError):
                    os.kill(pid, 9)
            os._exit(3)


def boards_apart(n: int, args: argparse.Namespace) -> bool:
    """Whether the boards of a hall of ``n`` tables run in a process of their own."""
    if args.boards_process is None:
        return n >= BOARDS_PROCESS_FROM
    return bool(args.boards_process)


async def measure(n: int, args: argparse.Namespace, games: list[Any]) -> dict[str, Any]:
    split = CpuSplit()
    undo = charge_emulators(split)
    meter = StageMeter(sampled=args.sampled_stages) if args.stages else None
    if meter is not None:
        meter.install()
    try:
        return await _measure(n, args, games, split, meter)
    finally:
        if meter is not None:
            meter.uninstall()
        undo()


async def _measure(
    n: int, args: argparse.Namespace, games: list[Any], split: CpuSplit, meter: StageMeter | None
) -> dict[str, Any]:
    transport = boards_transport(n, args) if boards_apart(n, args) else "in-process"
    boards = None if transport == "in-process" else await BoardsProcess.start(n, args, transport)
    with tempfile.TemporaryDirectory(prefix="dgt-hall-") as tmp:
        store = Store(Path(args.keep_db) if args.keep_db else Path(tmp) / "hall.db")
        traced = Traced() if args.trace_memory else None
        if traced is not None:
            traced.start()
        rss_before = rss_bytes()
        rss_at: dict[str, int] = {}
        started = time.monotonic()

        def phase(name: str) -> None:
            rss_at[name] = rss_bytes()
            if n >= BOARDS_PROCESS_FROM or args.memory:  # as it goes: that can take minutes
                grown = (rss_at[name] - rss_before) / n / 1e3
                print(
                    f"N={n}: {name} after {time.monotonic() - started:.0f} s, resident set "
                    f"+{grown:.1f} kB per table",
                    flush=True,
                )

        board_poll, board_poll_longest = board_poll_ms(n, args)
        hall = Hall(store, board_poll_ms=board_poll, board_poll_longest_ms=board_poll_longest)
        admin = hall.admin if meter is None else meter.admin(hall.admin)
        hall.admin = not_charged(split, admin)  # type: ignore[method-assign]
        if boards is None:
            runners = emulated_tables(hall, n, rules="casual")
        else:
            settings = {"event": "hall bench", "round": "1", "rules": "casual"}
            runners = [
                (hall.add_table(TableConfig(str(i), path, None, settings)), None)
                for i, path in enumerate(boards.paths, 1)
            ]
        server = WebServer(hall, "hall-bench-token", port=0, expose_timing=True)
        url = await server.start()
        built = time.monotonic()
        phase("built")
        # The spectator's process is started before the boards are opened: with thousands
        # of boards open, the loop's file descriptors are past what uvloop can spawn a
        # process with ("Unknown error -1" at N = 4,000).
        outside = None if args.spectator_inside else await SpectatorProcess.start(url)
        try:
            CollectorPacer.settled()  # as dgt-service run does before its hall starts
            await hall.start()
            ready = sum(await asyncio.gather(*(runner.wait_ready(60) for runner, _ in runners)))
        except BaseException:
            if outside is not None:
                await outside.stop()
            raise
        connected = time.monotonic() - built
        phase("connected")
        spectator = Spectator()
        follower = None
        if args.spectator_inside:
            follower = asyncio.create_task(split.task(spectator.follow(url)))
        rng = random.Random(args.seed)
        players = [
            asyncio.create_task(split.task(staggered(
                rng.uniform(0.0, args.stagger),
                play(hall, runner, line, games, first=i, speed=args.speed,
                     rng=random.Random(rng.randrange(1 << 30)), pause=2.0),
            )))
            for i, (runner, line) in enumerate(runners)
            if line is not None
        ]  # fmt: skip
        if boards is not None:
            boards.go()
        watch = GcWatch()
        children = [p.process.pid for p in (boards, outside) if p is not None]
        overload = LoopWatch(n, hall, children)
        overload.start()
        try:
            overload.due(args.warmup, "warm-up")
            await asyncio.sleep(args.warmup)
            overload.back()
            phase("warmed up")
            spectator.measuring = True
            if outside is not None:
                outside.measure()
            watch.__enter__()
            watch.on = True
            inputs0 = sum(runner.inputs for runner in hall.runners.values())
            merged_before = server.hub.merged
            child0 = boards.cpu_seconds() if boards is not None else 0.0
            child_wait0 = boards.cpu_wait_seconds() if boards is not None else 0.0
            if meter is not None:
                meter.reset()
                meter.on = True
            cpu0, wall0, bench0, wait0 = (
                cpu_seconds(), time.monotonic(), split.bench, cpu_wait_seconds()
            )  # fmt: skip
            wakes0 = wake_ups()
            polls0 = hall.board_poller.polls if hall.board_poller is not None else 0
            overload.due(args.duration, "window")
            await asyncio.sleep(args.duration)
            overload.back()
            cpu1, wall1, bench1, wait1 = (
                cpu_seconds(), time.monotonic(), split.bench, cpu_wait_seconds()
            )  # fmt: skip
            wakes = wake_ups() - wakes0
            polls = (hall.board_poller.polls if hall.board_poller is not None else 0) - polls0
            if meter is not None:
                meter.on = False
            child1 = boards.cpu_seconds() if boards is not None else 0.0
            child_wait1 = boards.cpu_wait_seconds() if boards is not None else 0.0
            inputs = sum(runner.inputs for runner in hall.runners.values()) - inputs0
            watch.on = False
            spectator.measuring = False
            merged = server.hub.merged - merged_before
            phase("end of window")
            if boards is not None:
                # Nothing more to measure: a hall that was behind its boards would otherwise
                # go on working through their backlog while the spectator's figures come in
                # and the hall closes (minutes at N = 5,000).
                boards.pause()
            if outside is not None:
                spectator = await outside.result()
            rss_after = rss_at["end of window"]
            rows = store.rows_written
            memory = None
            if args.memory:
                memory = where_memory_goes(n, hall, server, runners, rss_before, rss_at, traced)
        finally:
            overload.stop()
            with contextlib.suppress(ValueError):
                watch.__exit__()
            others = [*players] if follower is None else [*players, follower]
            for task in others:
                task.cancel()
            await asyncio.gather(*others, return_exceptions=True)
            if outside is not None:
                await outside.stop()
            await server.close()
            await hall.close()
            store.close()
            if boards is not None:
                await boards.stop()
    lat = [x * 1000 for x in spectator.latencies]
    return {
        "boards_cpu": (child1 - child0) / (wall1 - wall0) if boards is not None else None,
        "boards_wait": (child_wait1 - child_wait0) / (wall1 - wall0),
        "cpu_wait": (wait1 - wait0) / (wall1 - wall0),
        "wake_ups": wakes / (wall1 - wall0),
        "board_poll": board_poll,
        "board_poll_longest": board_poll_longest,
        "polls": polls / (wall1 - wall0),
        "transport": transport,
        "spectator_inside": args.spectator_inside,
        "n": n,
        "connect_s": connected,
        "ready": ready,
        "p50": statistics.median(lat) if lat else float("nan"),
        "p99": percentile(lat, 0.99),
        "max": max(lat) if lat else float("nan"),
        "cpu": (cpu1 - cpu0) / (wall1 - wall0),
        "cpu_bench": (bench1 - bench0) / (wall1 - wall0),
        "cpu_service": (cpu1 - cpu0 - (bench1 - bench0)) / (wall1 - wall0),
        "mb_per_table": (rss_after - rss_before) / n / 1e6,
        "updates": spectator.updates,
        "moves": spectator.moves,
        "merged": merged,
        "window": wall1 - wall0,
        "rows": rows,
        "inputs": inputs,
        "us_per_input": (cpu1 - cpu0 - (bench1 - bench0)) / max(inputs, 1) * 1e6,
        "gc_full": watch.full,
        "gc_longest": watch.longest,
        "gc_share": watch.total / (wall1 - wall0),
        "memory": memory,
        "stages": None
        if meter is None
        else report(meter, (cpu1 - cpu0 - (bench1 - bench0)) * 1e9, inputs, args.stage_overhead),
    }


def where_memory_goes(
    n: int,
    hall: Hall,
    server: WebServer,
    runners: list[Any],
    rss_before: int,
    rss_at: dict[str, int],
    traced: Traced | None,
) -> list[str]:
    """``--memory``: the resident set's growth per table by phase, what one table owns by
    attribute and type, tracemalloc's growth by file and line (``--trace-memory``), and the
    garbage cycles the collector pacer held frozen (see :mod:`bench._memory`)."""
    lines = ["  resident set growth per table: " + ", ".join(
        f"{phase} {(rss - rss_before) / n / 1e3:.1f} kB" for phase, rss in rss_at.items()
    )]  # fmt: skip
    tables = [runner for runner, _ in runners]
    walked = tables[:6]
    loop = asyncio.get_running_loop()
    modules = [vars(module) for module in list(sys.modules.values()) if hasattr(module, "__dict__")]
    stop: list[object] = [hall, server, hall.store, loop, hall.runners, *tables[6:], *modules]
    lines += table_breakdown(walked, stop)
    owners: dict[str, object] = {"hall": hall, "web server": server, "store": hall.store}
    lines += shared_per_table(owners, [loop, *tables, *modules], n)
    if traced is not None:
        lines += traced.lines(n)
    found, freed = garbage_held()
    lines.append(
        f"  garbage cycles held frozen by the collector pacer until its thaw: "
        f"{found / n:.1f} objects per table"
        + (f", {freed / n / 1e3:.1f} kB per table (traced)" if traced is not None else "")
        + f"; resident set after collecting them {(rss_bytes() - rss_before) / n / 1e3:.1f} kB "
        "per table"
    )
    if traced is not None:
        traced.stop()
    return lines


def bench_part(r: dict[str, Any]) -> str:
    """The bench's own share of the figure line."""
    inside = r["spectator_inside"]
    if r["boards_cpu"] is None:
        if inside:
            return f"emulated boards, replay and spectator {r['cpu_bench'] * 100:.0f}%"
        return f"emulated boards and replay {r['cpu_bench'] * 100:.0f}%"
    over = "TCP, socket:// URLs" if r["transport"] == "tcp" else "ptys"
    return (
        (f"spectator {r['cpu_bench'] * 100:.0f}%; " if inside else "")
        + f"boards process {r['boards_cpu'] * 100:.0f}% of another CPU (waited "
        f"{r['boards_wait'] * 100:.0f}% for it), boards over {over}"
    )


def poll_wait(r: dict[str, Any]) -> str:
    """What the latency figures leave out under a board poller: they run from the service's
    read of a board's bytes, which then waited in the kernel for the next poll (up to the
    longest period, on average half of the mean time between polls)."""
    if not r["board_poll"]:
        return ""
    longest = r["board_poll_longest"]  # (board_poll_ms: never below the period)
    half = 500 / r["polls"] if r["polls"] else longest / 2
    return (
        f" from the read (the bytes wait up to {longest:g} ms before it, {half:.1f} on "
        f"average: p50 ~{r['p50'] + half:.1f}, p99 <= {r['p99'] + longest:.1f} ms from "
        "the board)"
    )


def board_poll_part(r: dict[str, Any]) -> str:
    """How the service read its boards, for the figure line."""
    if not r["board_poll"]:
        return "board poll off (--board-poll 0: each board wakes the loop)"
    every = f"{r['board_poll']:g}"
    if r["board_poll_longest"] > r["board_poll"]:
        every += f"-{r['board_poll_longest']:g}"
    return f"board poll {every} ms ({r['polls']:,.0f} polls/s)"


def board_poll_ms(n: int, args: argparse.Namespace) -> tuple[float, float]:
    """The hall's ``board_poll_ms`` and ``board_poll_longest_ms`` at N: ``--board-poll``
    (the reads do not stretch apart), else what the service's config gives a hall of N
    boards on serial ports (:data:`service.config.BIG_HALL_POLL_MS` stretching to
    :data:`~service.config.BIG_HALL_POLL_LONGEST_MS` from
    :data:`~service.config.BIG_HALL_BOARDS` up) when they run apart, else 0."""
    if args.board_poll is not None:
        return float(args.board_poll), float(args.board_poll)
    if n >= BIG_HALL_BOARDS and boards_apart(n, args):
        return BIG_HALL_POLL_MS, BIG_HALL_POLL_LONGEST_MS
    return 0.0, 0.0


def check_board_poll(args: argparse.Namespace) -> str | None:
    """What is wrong with ``--board-poll`` for these sizes (None: nothing)."""
    low, high = BOARD_POLL_MS
    if args.board_poll is None:
        return None
    if not low <= args.board_poll <= high:
        return f"--board-poll: {args.board_poll:g} is not a number of milliseconds from 0 to 50"
    inside = [n for n in args.sizes if not boards_apart(n, args)]
    if args.board_poll and inside:
        return (
            f"--board-poll: the boards of N={inside[0]} run in the service's process (no "
            "port to poll): add --boards-process"
        )
    return None


async def main_async(args: argparse.Namespace) -> int:
    if args.serve_boards:
        return await serve_boards(args.serve_boards, args)
    extra = [str(LICHESS_GAMES)]
    games = load_games(extra)
    args.stage_overhead = (
        StageMeter.overhead_ns(sampled=args.sampled_stages) if args.stages else 0.0
    )
    print(f"games: {len(games)} real games replayed with human timing (speed x{args.speed:g}); "
          f"boards start within {args.stagger:g} s; window {args.duration:g} s after "
          f"{args.warmup:g} s warm-up; one CPU; event loop "
          f"{type(asyncio.get_running_loop()).__module__.split('.')[0]}; the code of "
          f"{SERVICE_CODE} (this bench's own checkout: "
          f"to measure another, run its copy of the bench)")  # fmt: skip
    for n in args.sizes:
        r = await measure(n, args, games)
        print(
            f"N={r['n']}: latency p50 {r['p50']:.1f} ms, p99 {r['p99']:.1f} ms, "
            f"max {r['max']:.1f} ms{poll_wait(r)}; CPU {r['cpu'] * 100:.0f}%; "
            f"{r['mb_per_table']:.2f} MB/table; service CPU {r['cpu_service'] * 100:.0f}% "
            f"({bench_part(r)}); "
            f"{r['updates'] / r['window']:,.0f} updates/s, "
            f"{r['moves'] / r['window']:,.1f} move events/s, {r['merged']:,} merged; "
            f"connect {r['connect_s']:.1f} s"
            + ("" if r["ready"] == r["n"] else f" ({r['ready']:,} boards ready in 60 s)")
            + f"; {r['rows']:,} log rows",
            flush=True,
        )
        print(
            f"N={r['n']}: service CPU per input {r['us_per_input']:.0f} us "
            f"({r['inputs'] / r['window']:,.0f} inputs/s); cycle collector "
            f"{r['gc_share'] * 100:.1f}% of the time, {r['gc_full']} full collections, "
            f"longest {r['gc_longest'] * 1000:.0f} ms; waited {r['cpu_wait'] * 100:.0f}% of "
            f"the window for its CPU; {r['wake_ups']:,.0f} wake-ups/s "
            f"({r['inputs'] / max(r['wake_ups'] * r['window'], 1):.1f} inputs per wake-up); "
            f"{board_poll_part(r)}; load average {os.getloadavg()[0]:.1f}",
            flush=True,
        )
        if r["memory"] is not None:
            print(f"N={r['n']}: memory (--memory):", *r["memory"], sep="\n", flush=True)
        if r["stages"] is not None:
            how = "sampled" if args.sampled_stages else "timed"
            print(
                f"N={r['n']}: stages (CPU per input, {how}; the wrappers cost "
                f"~{args.stage_overhead / 1000:.2f} us per call, included; --no-stages "
                "for the bare figure):",
                *r["stages"],
                sep="\n",
                flush=True,
            )
    print(
        "goal (issue 20): 2,000 tables at <= 80 us of service CPU per input; 5,000 tables "
        "on one core, p99 < 50 ms, <= 0.1 MB/table"
    )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 500, 1000])
    parser.add_argument("--duration", type=float, default=30.0, help="measuring window, s")
    parser.add_argument("--warmup", type=float, default=12.0, help="seconds before measuring")
    parser.add_argument(
        "--stagger",
        type=float,
        default=6.0,
        help="each board starts its first game at a random moment within this many seconds "
        "(0: all at once)",
    )
    parser.add_argument("--speed", type=float, default=1.0, help="replay speed-up (1 = human)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="N = 20 for 4 s (CI smoke run)")
    parser.add_argument(
        "--boards-process",
        action="store_true",
        default=None,
        help="run the emulated boards in a second process, on pseudo-terminals (the default "
        f"from N = {BOARDS_PROCESS_FROM:,} on)",
    )
    parser.add_argument(
        "--boards-inside",
        dest="boards_process",
        action="store_false",
        help="run the emulated boards in the service's process, whatever N",
    )
    parser.add_argument(
        "--no-stages",
        dest="stages",
        action="store_false",
        help="do not time the stages (bench/_stages.py) and print no split by stage",
    )
    parser.add_argument(
        "--sampled-stages",
        action="store_true",
        help="sample the stage on top with a profiling timer instead of reading the CPU clock "
        "at every wrapped call (~0.3 us a call instead of ~2, but time spent in C code is "
        "charged to the Python code that runs next, and a window holds a few thousand samples)",
    )
    parser.add_argument(
        "--spectator-inside",
        action="store_true",
        help="follow the stream from inside the service's process (its CPU then shares the "
        "service's core) instead of from a process of its own",
    )
    parser.add_argument(
        "--keep-db",
        default="",
        help="keep the hall's database at this path (one size only): a recorded log for "
        "bench/replay_cost.py",
    )
    parser.add_argument(
        "--boards-transport",
        choices=("auto", "pty", "tcp"),
        default="auto",
        help="how the boards process serves the boards: a pseudo-terminal each, or a TCP port "
        "of 127.0.0.1 each opened as a socket:// URL (auto, the default: ptys while N fits in "
        "the ones the kernel has free, /proc/sys/kernel/pty/max, else TCP)",
    )
    parser.add_argument(
        "--memory",
        action="store_true",
        help="after the window, print where the memory goes: the resident set's growth per "
        "table by phase, what one table's objects hold by attribute and type, and the garbage "
        "cycles the collector pacer keeps frozen (bench/_memory.py)",
    )
    parser.add_argument(
        "--trace-memory",
        action="store_true",
        help="with --memory: also tracemalloc's growth by file and line (slows the service "
        "down; its own memory counts in the resident set)",
    )
    parser.add_argument(
        "--board-poll",
        type=float,
        default=None,
        metavar="MS",
        help="the hall reads its boards' ports together every MS milliseconds (0-50; the "
        "config's board_poll_ms, dgt.transports.poller); 0: each board wakes the event loop "
        "itself.  By default as the service's config: 5, stretching to 20 while few boards "
        "speak, from 100 boards up when they run in a process of their own, else 0.  "
        "Above 0 it needs the boards in a process of their own (--boards-process)",
    )
    parser.add_argument("--serve-boards", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--spectate", default="", help=argparse.SUPPRESS)
    parser.add_argument("--on-cpus", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.memory = args.memory or args.trace_memory
    pin(args.on_cpus)
    if args.spectate:
        return event_loop.run(spectate(args.spectate))
    if args.serve_boards:
        return event_loop.run(main_async(args))
    if args.quick:
        args.sizes, args.duration, args.warmup, args.stagger = [20], 4.0, 2.0, 1.0
    problem = check_board_poll(args)
    if problem is not None:
        parser.error(problem)
    pin_service()
    raise_open_files_limit()
    return event_loop.run(main_async(args))  # the loop the service runs on


if __name__ == "__main__":
    sys.exit(main())
