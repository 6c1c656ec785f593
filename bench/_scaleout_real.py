"""``bench/scaleout.py --real``: the issue's set-up with real processes.

``--edges`` edges, each ``dgt-service demo --boards N --speed S --central ...`` (emulated
boards replaying games at human speed when S is 1; tables numbered per edge), each reaching
the broker through a TCP proxy of its own (to cut its link); the broker (``nats-server``,
file storage); the centre (``dgt-service central``: the aggregator and its web) and
``--webs`` web processes (``dgt-service central-web --nats``).

1. A quiet phase (no fault): the latency from a board event at an edge (the ``time`` of the
   move it made, the edge's wall clock) to its update on the centre's ``/api/stream`` and
   on each web process's, p50 and p99; and how far each web process's update of a move
   comes after the centre's web's (what following the database adds, less at the mercy of
   the machine's load than the whole latency).
2. Faults at ``--faults`` random moments: kill -9 of the broker (started again 0.5-2 s
   later), of an edge (started again on its database), of the centre, of a web process
   (its come-up time printed), a network cut of ``--cut-min`` to ``--cut-max`` seconds at
   an edge's proxy, the next 1-3 acknowledgements of the log stream to an edge thrown away
   by its proxy (it reads the broker's messages to the edge: the batch is stored, the edge
   hears nothing, asks the stream after its time-out and goes on, no row sent twice); the
   catch-up after each (until the centre's database holds every row the edges had
   committed when it ended).  ``--kinds`` may add ``wipe``: the broker killed and started
   again with its storage wiped (the centre and the edges find the stream made anew and
   send and read every log again, storing no row twice).
3. The edges stop (SIGTERM: their last rows go out), the centre catches up, and every edge's
   log is compared with the centre's copy: rows committed, lost, changed; duplicated is
   counted on the stream itself (rows of an edge in more than one message).

Everything runs in a temporary directory; every process is stopped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from _figures import percentile
from nats_broker import Broker, free_port, server_binary

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "bench-token-0123456789"
ENV = {**os.environ, "DGT_ADMIN_TOKEN": TOKEN, "PYTHONPATH": str(ROOT)}


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


@dataclass
class Process:
    """A ``dgt-service`` process that can be killed and started again."""

    name: str
    args: list[str]
    work: Path
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0

    def start(self) -> None:
        self.starts += 1
        out = (self.work / f"{self.name}.{self.starts}.out").open("wb")
        err = (self.work / f"{self.name}.{self.starts}.err").open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "service.cli", *self.args],
            env=ENV,
            cwd=ROOT,
            stdout=out,
            stderr=err,
        )

    def kill(self) -> None:
        if self.process is not None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)
            self.process = None

    def stop(self) -> int | None:
        if self.process is None:
            return None
        self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait(10)
        self.process = None
        return code

    async def stop_async(self, seconds: float = 60.0) -> int | None:
        """SIGTERM, waiting on the loop (the proxies in this process keep relaying)."""
        if self.process is None:
            return None
        self.process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + seconds
        while self.process.poll() is None and time.monotonic() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.05)
        if self.process.poll() is None:
            self.process.kill()
        code = self.process.wait(10)
        self.process = None
        return code

    def said(self) -> str:
        return (self.work / f"{self.name}.{self.starts}.out").read_text(errors="replace")

    def errors(self) -> list[str]:
        lines = []
        for start in range(1, self.starts + 1):
            text = (self.work / f"{self.name}.{start}.err").read_text(errors="replace")
            lines += [line for line in text.splitlines() if "ERROR" in line or "Traceback" in line]
        return lines


@dataclass
class Stream:
    """An ``/api/stream`` reader: each move's latency from its board event."""

    url: str
    latencies: list[float] = field(default_factory=list)
    arrivals: dict[tuple[str, float], float] = field(default_factory=dict)
    """When each move (its table and board event time) came, while taking."""
    taking: bool = True
    task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.task = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        import aiohttp

        timeout = aiohttp.ClientTimeout(total=None, sock_connect=5)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            while True:
                try:
                    async with session.get(f"http://{self.url}/api/stream") as response:
                        async for line in response.content:
                            if not line.startswith(b"data:") or not self.taking:
                                continue
                            now = time.time()
                            self._take(line[5:], now)
                except (TimeoutError, aiohttp.ClientError, OSError):
                    pass
                await asyncio.sleep(0.2)

    def _take(self, data: bytes, now: float) -> None:
        try:
            body = json.loads(data)
        except ValueError:
            return
        for event in body.get("events") or ():
            if event.get("type") == "move" and "time" in event:
                self.latencies.append(now - float(event["time"]))
                self.arrivals[(str(body.get("table")), float(event["time"]))] = now

    async def close(self) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task


def max_seq(db: Path) -> int:
    with contextlib.closing(sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)) as c:
        return int(c.execute("SELECT coalesce(max(seq), 0) FROM log").fetchone()[0])


def central_last(db: Path) -> dict[str, int]:
    if not db.exists():
        return {}
    try:
        with contextlib.closing(sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)) as c:
            return dict(c.execute("SELECT edge, last FROM edges").fetchall())
    except sqlite3.OperationalError:
        return {}


def rows_of(db: Path, query: str, *params: str) -> list[tuple[object, ...]]:
    with contextlib.closing(sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)) as c:
        return c.execute(query, params).fetchall()


async def stream_repeats(url: str) -> tuple[int, int]:
    """Messages on the log stream and rows of an edge found in more than one of them."""
    from nats.aio.client import Client

    from service.scaleout.log_wire import LOG_STREAM, LOG_SUBJECTS, WireError, decode_batch

    client = Client()
    await client.connect(url)
    seen: Counter[tuple[str, int]] = Counter()
    messages = 0
    try:
        js = client.jetstream()
        sub = await js.subscribe(LOG_SUBJECTS, stream=LOG_STREAM, ordered_consumer=True)
        pending = (await js.stream_info(LOG_STREAM)).state.messages
        while messages < pending:
            message = await sub.next_msg(timeout=10)
            messages += 1
            with contextlib.suppress(WireError):
                batch = decode_batch(message.data)
                for row in batch.rows:
                    seen[(batch.edge, row.seq)] += 1
        await sub.unsubscribe()
    finally:
        await client.close()
    return messages, sum(n - 1 for n in seen.values() if n > 1)


async def run_real(args: argparse.Namespace, proxy_class: type) -> int:  # type: ignore[type-arg]
    """The run; whatever happens (an error, a time-out cancelling it), every process it
    started is killed at the end."""
    started: list[Process | Broker] = []
    try:
        return await _run_real(args, proxy_class, started)
    finally:
        for thing in started:
            thing.kill()  # nothing when it stopped already


async def _run_real(
    args: argparse.Namespace,
    proxy_class: type,  # type: ignore[type-arg]
    started: list[Process | Broker],
) -> int:
    binary = server_binary()
    if binary is None:
        print("no nats-server binary (./setup.sh test installs one)")
        return 1
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="scaleout-real-"))
    broker = Broker(binary, work / "nats")
    started.append(broker)
    broker.start()
    central_db = work / "central.db"
    centre_port = free_port()
    centre = Process(
        "centre",
        [
            "central",
            "--nats",
            broker.url,
            "--db",
            str(central_db),
            "--listen",
            f"127.0.0.1:{centre_port}",
        ],
        work,
    )
    started.append(centre)
    centre.start()
    web_ports = [free_port() for _ in range(args.webs)]
    webs = [
        Process(
            f"web{i}",
            [
                "central-web",
                "--db",
                str(central_db),
                "--nats",
                broker.url,
                "--listen",
                f"127.0.0.1:{port}",
                "--snapshot-every",
                "10",
            ],
            work,
        )
        for i, port in enumerate(web_ports)
    ]
    started.extend(webs)
    for web in webs:
        web.start()
    proxies = []
    edges: list[Process] = []
    dbs: dict[str, Path] = {}
    for i in range(args.edges):
        proxy = proxy_class(broker.port)
        await proxy.start()
        proxies.append(proxy)
        edge_id = f"e{i}"
        dbs[edge_id] = work / f"{edge_id}.db"
        edges.append(
            Process(
                edge_id,
                [
                    "demo",
                    "--boards",
                    str(args.boards),
                    "--first",
                    str(i * args.boards + 1),
                    "--speed",
                    str(args.speed),
                    "--seed",
                    str(args.seed + i),
                    "--port",
                    "0",
                    "--db",
                    str(dbs[edge_id]),
                    "--central",
                    f"nats://127.0.0.1:{proxy.port}",
                    "--edge-id",
                    edge_id,
                ],
                work,
            )
        )
    started.extend(edges)
    for edge in edges:
        edge.start()
    streams = [Stream(f"127.0.0.1:{port}") for port in (centre_port, *web_ports)]
    for stream in streams:
        stream.start()
    print(
        f"{args.edges} edges x {args.boards} emulated boards (demo --speed {args.speed:g}), "
        f"the centre and {args.webs} web processes; {args.quiet:g} s quiet, then "
        f"{args.duration:g} s with {args.faults} faults",
        flush=True,
    )
    await asyncio.sleep(args.warm_up)
    for stream in streams:
        stream.latencies.clear()
        stream.arrivals.clear()
    await asyncio.sleep(args.quiet)
    quiet = [list(stream.latencies) for stream in streams]
    behind = [
        [at - streams[0].arrivals[key] for key, at in stream.arrivals.items()
         if key in streams[0].arrivals]
        for stream in streams[1:]
    ]  # fmt: skip
    for stream in streams:
        stream.taking = False

    start = time.monotonic()
    moments = sorted(rng.uniform(0.05, 0.8) * args.duration for _ in range(args.faults))
    catch_ups: list[tuple[str, float]] = []
    pending: list[asyncio.Task[None]] = []
    come_ups: list[str] = []

    async def measure(kind: str) -> None:
        targets = {edge_id: max_seq(db) for edge_id, db in dbs.items() if db.exists()}
        began = time.monotonic()
        while True:
            stored = central_last(central_db)
            if all(stored.get(e, -1) >= last for e, last in targets.items()):
                break
            await asyncio.sleep(0.1)
        catch_ups.append((kind, time.monotonic() - began))

    async def web_up(web: Process) -> None:
        out = web.work / f"{web.name}.{web.starts}.out"  # this start's (it may be killed again)
        for _ in range(600):
            said = out.read_text(errors="replace")
            if "to come up" in said:
                line = next(x for x in said.splitlines() if "to come up" in x)
                come_ups.append(line.split("(", 1)[1].rstrip(")"))
                return
            await asyncio.sleep(0.05)

    for moment in moments:
        await asyncio.sleep(max(0.0, start + moment - time.monotonic()))
        kind = rng.choice(args.kinds.split(","))
        say(f"{time.monotonic() - start:6.1f} s: {kind}")
        if kind == "broker":
            broker.kill()
            await asyncio.sleep(rng.uniform(0.5, 2.0))
            broker.start()
        elif kind == "wipe":  # not among the faults: give it with --kinds
            broker.kill()
            shutil.rmtree(broker.store_dir)
            broker.start()
        elif kind == "edge":
            edge = rng.choice(edges)
            edge.kill()
            edge.start()
        elif kind == "centre":
            centre.kill()
            centre.start()
        elif kind == "web":
            web = rng.choice(webs)
            web.kill()
            web.start()
            pending.append(asyncio.get_running_loop().create_task(web_up(web)))
        elif kind == "acks":
            index = rng.randrange(len(proxies))
            count = rng.randint(1, 3)
            proxies[index].drop_acks(count)
            kind = f"the next {count} acks of e{index} thrown away"
        else:
            index = rng.randrange(len(proxies))
            seconds = rng.uniform(args.cut_min, args.cut_max)
            seconds = min(seconds, max(0.5, start + args.duration - time.monotonic()))
            proxies[index].cut(seconds)
            await asyncio.sleep(seconds)
            kind = f"cut {seconds:.0f} s of e{index}"
        pending.append(asyncio.get_running_loop().create_task(measure(kind)))
    await asyncio.sleep(max(0.0, start + args.duration - time.monotonic()))
    # the centre catches up with the edges still running, then they stop
    say("catching up")
    targets = {edge_id: max_seq(db) for edge_id, db in dbs.items()}
    began = time.monotonic()
    while time.monotonic() < began + args.catch_up:
        stored = central_last(central_db)
        if all(stored.get(e, -1) >= last for e, last in targets.items()):
            catch_ups.append(("the faults (edges running)", time.monotonic() - began))
            break
        await asyncio.sleep(0.2)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    say("stopping the edges")
    stopped = await asyncio.gather(*(edge.stop_async() for edge in edges))
    codes = {edge.name: code for edge, code in zip(edges, stopped, strict=True)}
    targets = {edge_id: max_seq(db) for edge_id, db in dbs.items()}
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        stored = central_last(central_db)
        if all(stored.get(e, -1) >= last for e, last in targets.items()):
            break
        await asyncio.sleep(0.2)
    committed = lost = changed = waiting = 0
    for edge_id, db in dbs.items():
        mine = rows_of(db, "SELECT seq, table_id, role, kind, t, data FROM log ORDER BY seq")
        theirs = {
            row[0]: row
            for row in rows_of(
                central_db,
                "SELECT seq, table_id, role, kind, t, data FROM rows WHERE edge=? ORDER BY seq",
                edge_id,
            )
        }
        top = max(theirs, default=None)
        committed += len(mine)
        for row in mine:
            got = theirs.get(row[0])
            if got is None and (top is None or row[0] > top):
                waiting += 1  # not forwarded at the stop: goes out at the edge's next start
            elif got is None:
                lost += 1
                say(f"{edge_id}: row {row[0]} not at the centre (its last: {top}): {row[:4]}")
            elif got != row:
                changed += 1
    messages, duplicated = await stream_repeats(broker.url)
    for stream in streams:
        await stream.close()
    for web in webs:
        web.stop()
    centre.stop()
    for proxy in proxies:
        await proxy.close()
    broker.stop()
    boards = args.edges * args.boards
    print(f"rows committed: {committed:,} ({boards} boards, {messages:,} stream messages)")
    print(f"rows lost: {lost} (goal 0)")
    print(f"rows still waiting at a stopped edge (they go at its next start): {waiting}")
    print(f"rows duplicated on the stream: {duplicated} (goal 0)")
    print(f"rows changed: {changed} (goal 0)")
    dropped = sum(proxy.dropped for proxy in proxies)
    print(f"acks of the log stream thrown away at the edges' proxies: {dropped}")
    for kind, seconds in catch_ups:
        print(f"catch-up after {kind}: {seconds:.2f} s")
    for line in come_ups:
        print(f"a web process killed and started again: {line}")
    names = ["the centre's web"] + [f"web process {i + 1}" for i in range(args.webs)]
    for name, values in zip(names, quiet, strict=True):
        if values:
            p50 = percentile(values, 0.5) * 1000
            p99 = percentile(values, 0.99) * 1000
            print(
                f"board event -> {name}'s /api/stream, quiet ({len(values):,} moves): "
                f"p50 {p50:.0f} ms  p99 {p99:.0f} ms (goal p99 < 100 ms)"
            )
        else:
            print(f"board event -> {name}'s /api/stream: no move seen")
    for name, values in zip(names[1:], behind, strict=True):
        if values:  # the same moves on both: what the web process adds (the load aside)
            p50 = percentile(values, 0.5) * 1000
            p99 = percentile(values, 0.99) * 1000
            print(
                f"{name} behind the centre's web, the same {len(values):,} moves: "
                f"p50 {p50:.0f} ms  p99 {p99:.0f} ms"
            )
    print(f"edges stopped with exit status {codes}")
    errors = [line for p in (centre, *webs, *edges) for line in p.errors()]
    bad_stops = {name: code for name, code in codes.items() if code not in (0, None)}
    if errors or bad_stops:
        print(f"ERRORS ({len(errors)}; edges stopped with {bad_stops}): see {work}")
        for line in errors[:10]:
            print(f"  {line}")
    return 0 if lost == duplicated == changed == 0 and not errors else 1
