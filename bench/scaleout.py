"""Several halls over NATS: every committed row reaches the centre once, in order, through
faults.  Bounded in time.

Runs a real ``nats-server`` (JetStream, file storage) and, in this process, ``--edges``
stand-in edges and the centre's reader:

* each edge is a real :class:`service.store.Store` (claimed as an edge, tables registered)
  into which a writer commits an input and its output ``--rate`` times a second, and the real
  :class:`~service.scaleout.edge_forwarder.LogForwarder` on its own connection, through a TCP
  proxy of its own (to cut its link), over a publisher that throws away ``--ack-loss`` of the
  broker's acknowledgements after the broker stored the batch;
* the centre is the real :class:`~service.scaleout.aggregator.Aggregator` with its
  :class:`~service.scaleout.central_store.CentralStore`.

(Not the full issue's set-up: no emulated boards, halls or web processes; the rows are the
store's rows all the same.)  Faults at ``--faults`` random moments: kill -9 of the broker
(started again 0.5-2 s later), an edge's forwarder killed and started again on its store,
the reader killed and started again on its database, a network cut of ``--cut-min`` to
``--cut-max`` seconds at an edge's proxy.  Then the writers stop and the centre catches up.

Prints rows committed, lost, duplicated and changed (goal 0, 0, 0; exit status 1 otherwise),
catch-up time after each fault (until the centre holds every row committed when the fault
ended), and the latency from an edge's commit to the rows handed to ``on_rows`` while
nothing is failing (p50, p99).

    .venv/bin/python bench/scaleout.py                  # 4 edges, 120 s, 20 faults
    .venv/bin/python bench/scaleout.py --quick          # 2 edges, 12 s, 4 short faults

With ``--real`` the edges are ``dgt-service demo --central`` processes on ``--boards``
emulated boards at human speed, with the centre (``dgt-service central``) and ``--webs``
``central-web`` processes, the latency taken from a board event to the central pages'
``/api/stream``, and acknowledgements thrown away by the edge's proxy (:class:`AckFilter`)
as a fault of its own, ``acks`` (:mod:`_scaleout_real`)::

    .venv/bin/python bench/scaleout.py --real --edges 2 --boards 20 --duration 60
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import random
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))

from _figures import percentile  # noqa: E402
from nats.aio.client import Client  # noqa: E402
from nats_broker import Broker, free_port, server_binary  # noqa: E402

from service.scaleout.aggregator import Aggregator  # noqa: E402
from service.scaleout.central_store import CentralStore  # noqa: E402
from service.scaleout.edge_forwarder import LogForwarder, Unreachable  # noqa: E402
from service.scaleout.jetstream_log import NATS_ERRORS, JetStreamLog, connect  # noqa: E402
from service.scaleout.log_wire import LOG_STREAM, log_subject  # noqa: E402
from service.store import LogRow, Store  # noqa: E402

VERBOSE = False


def say(text: str) -> None:
    if VERBOSE:
        print(text, file=sys.stderr, flush=True)


def log_ack(payload: bytes) -> bool:
    """Whether ``payload`` is the broker's acknowledgement of a message it stored on the
    log stream (``{"stream":"DGT_LOG", "seq":N}``)."""
    if not payload.startswith(b'{"stream":'):
        return False
    try:
        ack = json.loads(payload)
    except ValueError:
        return False
    return isinstance(ack, dict) and ack.get("stream") == LOG_STREAM and "seq" in ack


class AckFilter:
    """The broker's side of a NATS connection read message by message (its protocol's
    ``MSG``/``HMSG`` with their payloads, every other line as it is), passing everything on
    but the acknowledgements of the log stream it is told to throw away."""

    def __init__(self, proxy: Proxy) -> None:
        self.proxy = proxy
        self.buffer = b""

    def feed(self, data: bytes) -> bytes:
        """What of ``data`` (and what was held of the data before) goes on now."""
        self.buffer += data
        out = []
        while True:
            end = self.buffer.find(b"\r\n")
            if end < 0:
                break
            line = self.buffer[:end]
            if line.startswith((b"MSG ", b"HMSG ")):
                size = int(line.rsplit(b" ", 1)[1])  # the last field: the whole payload
                whole = end + 2 + size + 2
                if len(self.buffer) < whole:
                    break  # the payload is still coming
                payload = self.buffer[end + 2 : end + 2 + size]
                if not (line.startswith(b"MSG ") and self.proxy.drops(payload)):
                    out.append(self.buffer[:whole])
                self.buffer = self.buffer[whole:]
            else:
                out.append(self.buffer[: end + 2])
                self.buffer = self.buffer[end + 2 :]
        return b"".join(out)


class Proxy:
    """A TCP proxy to the broker that can cut every link through it for a while, and throw
    away the broker's acknowledgements of messages stored on the log stream: the edge
    hears nothing of a batch the broker stored (it asks again after its time-out)."""

    def __init__(self, upstream: int) -> None:
        self.upstream = upstream
        self.port = free_port()
        self.cut_until = 0.0
        self.to_drop = 0
        """Acknowledgements of the log stream still to throw away."""
        self.dropped = 0
        self._writers: set[asyncio.StreamWriter] = set()
        self._server: asyncio.Server | None = None

    def drop_acks(self, count: int) -> None:
        """Throw away the next ``count`` acknowledgements of the log stream."""
        self.to_drop += count

    def drops(self, payload: bytes) -> bool:
        if self.to_drop <= 0 or not log_ack(payload):
            return False
        self.to_drop -= 1
        self.dropped += 1
        return True

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)

    def cut(self, seconds: float) -> None:
        self.cut_until = time.monotonic() + seconds
        for writer in list(self._writers):
            writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if time.monotonic() < self.cut_until:
            writer.close()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream)
        except OSError:
            writer.close()
            return
        self._writers |= {writer, up_writer}

        async def pipe(
            src: asyncio.StreamReader, dst: asyncio.StreamWriter, acks: AckFilter | None
        ) -> None:
            with contextlib.suppress(OSError, asyncio.IncompleteReadError):
                while data := await src.read(65536):
                    dst.write(data if acks is None else acks.feed(data))
                    await dst.drain()
            dst.close()

        await asyncio.gather(
            pipe(reader, up_writer, None), pipe(up_reader, writer, AckFilter(self))
        )
        self._writers -= {writer, up_writer}

    async def close(self) -> None:
        for writer in list(self._writers):
            writer.close()
        if self._server is not None:
            self._server.close()


class LosingAcks:
    """A publisher that throws away a share of the acknowledgements (the batch is stored)."""

    def __init__(self, inner: JetStreamLog, share: float, rng: random.Random) -> None:
        self.inner, self.share, self.rng = inner, share, rng
        self.lost = 0

    async def publish(self, subject: str, payload: bytes, expected_last: int) -> int:
        seq = await self.inner.publish(subject, payload, expected_last)
        if self.rng.random() < self.share:
            self.lost += 1
            raise Unreachable("acknowledgement thrown away")
        return seq

    async def last(self, subject: str) -> tuple[int, bytes] | None:
        return await self.inner.last(subject)


@dataclass
class Edge:
    edge_id: str
    store: Store
    proxy: Proxy
    committed_at: dict[int, float] = field(default_factory=dict)
    client: Client | None = None
    forwarder: LogForwarder | None = None
    task: asyncio.Task[None] | None = None
    refused: int = 0
    lost_acks: int = 0

    async def start(self, share: float, rng: random.Random) -> None:
        self.client = await connect(f"nats://127.0.0.1:{self.proxy.port}", self.edge_id, self.up)
        db = self.store.edge_db
        assert db is not None
        self.publisher = LosingAcks(JetStreamLog(self.client.jetstream()), share, rng)
        self.forwarder = LogForwarder(
            self.store, self.publisher, self.edge_id, db, log_subject(self.edge_id)
        )
        self.task = asyncio.get_running_loop().create_task(self.forwarder.run())

    def up(self) -> None:
        if self.forwarder is not None:
            self.forwarder.link_up()

    async def kill(self) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task
        if self.forwarder is not None:
            self.refused += self.forwarder.refused
            self.lost_acks += self.publisher.lost
        if self.client is not None:
            with contextlib.suppress(*NATS_ERRORS):
                await self.client.close()


class Centre:
    def __init__(self, url: str, path: Path) -> None:
        self.url, self.path = url, path
        self.handed: Counter[tuple[str, int]] = Counter()
        self.rows: dict[tuple[str, int], LogRow] = {}
        self.latencies: list[float] = []
        self.quiet = True
        """Whether latencies are taken (the quiet phase)."""
        self.edges: dict[str, Edge] = {}
        self.store: CentralStore | None = None
        self.task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.store = CentralStore(self.path)
        self.aggregator = Aggregator(self.url, self.store, self.on_rows)
        self.task = asyncio.get_running_loop().create_task(self.aggregator.run())

    def on_rows(self, edge_id: str, rows: list[LogRow]) -> None:
        now = time.monotonic()
        committed = self.edges[edge_id].committed_at
        for row in rows:
            self.handed[(edge_id, row.seq)] += 1
            self.rows[(edge_id, row.seq)] = row
            if self.quiet and row.seq in committed:
                self.latencies.append(now - committed[row.seq])

    def holds(self, targets: dict[str, int]) -> bool:
        if self.store is None:
            return False
        edges = self.store.edges()
        return all(e in edges and edges[e].last >= last for e, last in targets.items())

    async def kill(self) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task
        if self.store is not None:
            self.store.close()
            self.store = None


async def write(edge: Edge, rate: float, stop: asyncio.Event) -> None:
    n = 0
    while not stop.is_set():
        t = time.time()
        edge.store.append("1", "tick", t, {}, [{"time": t, "type": "tick", "n": n}])
        edge.store.commit()
        now = time.monotonic()
        last = edge.store.last_seq()
        assert last is not None
        edge.committed_at[last - 1] = now
        edge.committed_at[last] = now
        if edge.forwarder is not None:
            edge.forwarder.wake()
        n += 1
        await asyncio.sleep(1 / rate)


async def run(args: argparse.Namespace) -> int:
    binary = server_binary()
    if binary is None:
        print("no nats-server binary (./setup.sh test installs one)")
        return 1
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="scaleout-"))
    broker = Broker(binary, work / "nats")
    broker.start()
    centre = Centre(broker.url, work / "central.db")
    edges: list[Edge] = []
    for i in range(args.edges):
        store = Store(work / f"edge-{i}.db")
        store.claim_edge(f"e{i}")
        store.register_table("1", {"white": f"W{i}"}, time.time(), board=1)
        proxy = Proxy(broker.port)
        await proxy.start()
        edge = Edge(f"e{i}", store, proxy)
        await edge.start(args.ack_loss, rng)
        edges.append(edge)
        centre.edges[edge.edge_id] = edge
    centre.start()
    stop = asyncio.Event()
    writers = [asyncio.get_running_loop().create_task(write(e, args.rate, stop)) for e in edges]
    print(
        f"{args.edges} edges x {args.rate:g} inputs/s, {args.quiet:g} s quiet, then "
        f"{args.duration:g} s with {args.faults} faults and {args.ack_loss:.0%} of acks "
        "thrown away",
        flush=True,
    )
    # A quiet phase first (no fault, no ack thrown away): the latency.
    for edge in edges:
        edge.publisher.share = 0.0
    await asyncio.sleep(args.quiet)
    centre.quiet = False
    for edge in edges:
        edge.publisher.share = args.ack_loss
    start = time.monotonic()
    moments = sorted(rng.uniform(0.05, 0.8) * args.duration for _ in range(args.faults))
    catch_ups: list[tuple[str, float]] = []
    pending: list[asyncio.Task[None]] = []

    async def measure(kind: str) -> None:
        targets = {e.edge_id: e.store.last_seq() or 0 for e in edges}
        began = time.monotonic()
        while not centre.holds(targets):  # noqa: ASYNC110 - polled: a bench
            await asyncio.sleep(0.05)
        catch_ups.append((kind, time.monotonic() - began))

    for moment in moments:
        await asyncio.sleep(max(0.0, start + moment - time.monotonic()))
        kind = rng.choice(args.kinds.split(","))
        say(f"{time.monotonic() - start:6.1f} s: {kind}")
        if kind == "broker":
            broker.kill()
            await asyncio.sleep(rng.uniform(0.5, 2.0))
            broker.start()
        elif kind == "edge":
            edge = rng.choice(edges)
            await edge.kill()
            await edge.start(args.ack_loss, rng)
        elif kind == "centre":
            await centre.kill()
            centre.start()
        else:
            edge = rng.choice(edges)
            seconds = rng.uniform(args.cut_min, args.cut_max)
            seconds = min(seconds, max(0.5, start + args.duration - time.monotonic()))
            edge.proxy.cut(seconds)
            await asyncio.sleep(seconds)
            kind = f"cut {seconds:.0f} s"
        pending.append(asyncio.get_running_loop().create_task(measure(kind)))
    await asyncio.sleep(max(0.0, start + args.duration - time.monotonic()))
    say("stopping the writers")
    stop.set()
    await asyncio.gather(*writers)
    say("catching up")
    targets = {e.edge_id: e.store.last_seq() or 0 for e in edges}
    deadline = time.monotonic() + args.catch_up
    while not centre.holds(targets) and time.monotonic() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(0.1)
    if pending:  # each fault's own catch-up is met by now: let its watch see it (~0.05 s)
        await asyncio.wait(pending, timeout=1.0)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)

    committed = lost = changed = 0
    for edge in edges:
        rows = edge.store.log_rows(None, limit=10_000_000)
        committed += len(rows)
        for row in rows:
            got = centre.rows.get((edge.edge_id, row.seq))
            if got is None:
                lost += 1
            elif got != row:
                changed += 1
    duplicated = sum(n - 1 for n in centre.handed.values() if n > 1)
    say("closing")
    for edge in edges:
        await edge.kill()
    await centre.kill()
    for edge in edges:
        await edge.proxy.close()
        edge.store.close()
    broker.stop()

    print(f"rows committed: {committed:,}")
    print(f"rows lost: {lost} (goal 0)")
    print(f"rows duplicated: {duplicated} (goal 0)")
    print(f"rows changed: {changed} (goal 0)")
    refused = sum(e.refused for e in edges)
    lost_acks = sum(e.lost_acks for e in edges)
    print(f"acks thrown away: {lost_acks}, repeats refused by the broker: {refused}")
    for kind, seconds in catch_ups:
        print(f"catch-up after {kind}: {seconds:.2f} s")
    if catch_ups:
        worst = max(seconds for _kind, seconds in catch_ups)
        print(f"catch-up: {len(catch_ups)} faults, longest {worst:.2f} s")
    if centre.latencies:
        p50 = percentile(centre.latencies, 0.5) * 1000
        p99 = percentile(centre.latencies, 0.99) * 1000
        print(
            f"commit -> centre, quiet phase ({len(centre.latencies):,} rows): p50 {p50:.1f} ms  "
            f"p99 {p99:.1f} ms (goal p99 < 100 ms)"
        )
    return 0 if lost == duplicated == changed == 0 else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edges", type=int, default=4)
    parser.add_argument("--rate", type=float, default=20.0, help="inputs a second per edge")
    parser.add_argument("--duration", type=float, default=120.0)
    parser.add_argument("--faults", type=int, default=20)
    parser.add_argument("--cut-min", type=float, default=5.0)
    parser.add_argument("--cut-max", type=float, default=20.0)
    parser.add_argument("--ack-loss", type=float, default=0.05)
    parser.add_argument("--catch-up", type=float, default=60.0, help="seconds at most")
    parser.add_argument("--quiet", type=float, default=10.0, help="seconds without faults first")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--kinds", default="broker,edge,centre,cut", help="the faults to choose from"
    )
    parser.add_argument("--quick", action="store_true")
    real = parser.add_argument_group(
        "real processes (--real): demo edges on emulated boards, the centre, web processes"
    )
    real.add_argument("--real", action="store_true", help="edges as dgt-service processes")
    real.add_argument("--boards", type=int, default=20, help="emulated boards an edge")
    real.add_argument("--speed", type=float, default=1.0, help="demo --speed (1: human)")
    real.add_argument("--webs", type=int, default=2, help="central-web processes")
    real.add_argument("--warm-up", type=float, default=15.0, help="seconds before the quiet")
    parser.add_argument("--verbose", action="store_true", help="each fault on stderr")
    args = parser.parse_args()
    if args.real and args.kinds == parser.get_default("kinds"):
        args.kinds = "broker,edge,centre,web,cut,acks"
    if args.quick:
        args.edges, args.duration, args.faults = 2, 12.0, 4
        args.cut_min, args.cut_max, args.catch_up, args.quiet = 1.0, 2.0, 30.0, 3.0
    logging.basicConfig(level=logging.CRITICAL)
    global VERBOSE
    VERBOSE = args.verbose
    return asyncio.run(bounded(args))


async def bounded(args: argparse.Namespace) -> int:
    """The run, stopped (exit status 1, every task's stack on stderr) if it overstays."""
    limit = args.quiet + args.duration + args.catch_up + 60
    if args.real:
        from _scaleout_real import run_real

        limit += args.warm_up + 120
        task = asyncio.get_running_loop().create_task(run_real(args, Proxy))
    else:
        task = asyncio.get_running_loop().create_task(run(args))
    done, _ = await asyncio.wait({task}, timeout=limit)
    if task in done:
        return task.result()
    print(f"TIMEOUT: the run took more than {limit:g} s", flush=True)
    for other in asyncio.all_tasks():
        other.print_stack(file=sys.stderr)
    task.cancel()  # its processes are stopped on the way out
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task
    return 1


if __name__ == "__main__":
    sys.exit(main())
