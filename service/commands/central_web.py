"""``dgt-service central-web``: a web process on a read replica of every edge's tables.

It follows the centre's database (written by the aggregator of ``dgt-service central``,
another process: :mod:`service.scaleout.central_db`) and serves the same pages, JSON,
stream and PGN feeds as a hall's web, for every edge's tables
(:class:`service.scaleout.replica.ReplicaHall`).  Several such processes can serve the same
file.  With ``--nats URL`` it also links to the broker (:mod:`service.scaleout.central_link`):
admin commands are forwarded to the owning edge, the edges' heartbeats shown, and the
aggregator's commit notices wake the database's tail (it reads new rows at once, and looks
at the file only every quarter second besides); without it the tail looks every 20 ms, and
admin commands answer 503 (send them to the centre or to the edge's own page).  The
admin token comes as for ``run``.

It comes up from the last snapshot (``--snapshot``, by default beside the database) and the
rows after it, and writes one every ``--snapshot-every`` seconds while rows come
(:mod:`service.scaleout.snapshot`).  :func:`serve_replica` is also the web of ``dgt-service
central`` (the aggregator then feeds the replica itself).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from service import event_loop
from service.commands.run import TOKEN_ENV, resolve_token
from service.config import check_central_url
from service.errors import UsageError
from service.scaleout.central_db import CentralError, CentralTail
from service.scaleout.edge_directory import HeartbeatDirectory
from service.scaleout.replica import ReplicaHall
from service.scaleout.snapshot import coming_up, keep_snapshots, read_snapshot
from service.web import WebServer

logger = logging.getLogger(__name__)

DEFAULT_LISTEN = "127.0.0.1:8080"
SNAPSHOT_EVERY = 60.0
ADMIN_TIMEOUT = 4.0
"""Seconds an edge has to answer a forwarded admin command (the replica waits a little more)."""
STOP_WAIT = 5.0
"""Seconds the tasks have to end at a stop."""
EDGE_CHECK = 1.0
"""Seconds between two looks for edges fallen silent (their tables shown down)."""

Feed = Callable[[ReplicaHall], Coroutine[Any, Any, None]]
"""What feeds the replica its rows after it caught up with the database (runs until
cancelled): the aggregator in ``central``, the database's tail in ``central-web``."""


class Output(Protocol):
    """Something started on the replica once it caught up (the centre's lichess pusher)."""

    async def close(self) -> None: ...


Outputs = Callable[[ReplicaHall], list[Output]]
"""Starts the outputs of a replica that caught up with the database (before the pages are
served, so the feeds' order starts with the games rebuilt)."""


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "central-web",
        help="serve the web pages of every edge's tables from the centre's database",
        description="Serve the pages, JSON, stream and PGN feeds of every edge's tables, "
        "rebuilt from the centre's database (written by 'dgt-service central').",
    )
    p.add_argument("--db", metavar="FILE", required=True, help="the centre's database")
    p.add_argument(
        "--nats",
        metavar="URL",
        help="the broker, nats://HOST:PORT: forward admin commands to the edges and show "
        "their heartbeats (without it admin commands answer 503)",
    )
    add_web_options(p)
    p.add_argument("--seconds", type=float, metavar="N", help="stop after N seconds")
    p.set_defaults(run=run)


def add_web_options(p: argparse.ArgumentParser) -> None:
    """The options of a central web (``central-web`` and ``central``)."""
    p.add_argument(
        "--listen",
        metavar="HOST:PORT",
        default=DEFAULT_LISTEN,
        help=f"address and port of the web server (default {DEFAULT_LISTEN}; port 0 = any)",
    )
    p.add_argument("--admin-token", metavar="TOKEN", help=f"admin token (or ${TOKEN_ENV})")
    p.add_argument(
        "--admin-token-file",
        metavar="FILE",
        help="read the admin token from FILE (created with a new token if missing)",
    )
    p.add_argument(
        "--snapshot",
        metavar="FILE",
        help="the replica's snapshot to come up from and keep (default: the database's "
        "name with .snapshot)",
    )
    p.add_argument(
        "--snapshot-every",
        type=float,
        default=SNAPSHOT_EVERY,
        metavar="SECONDS",
        help=f"write the snapshot this often while rows come (default {SNAPSHOT_EVERY:g}; "
        "0: never)",
    )
    p.add_argument("--hosts", nargs="*", default=(), metavar="NAME", help="Host names served")


def parse_listen(value: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:8080`` for an IPv6 address) as its host and port."""
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise UsageError(f"--listen {value}: give HOST:PORT, like 127.0.0.1:8080")
    host = host.removeprefix("[").removesuffix("]") or "127.0.0.1"
    return host, int(port)


@dataclass(frozen=True, slots=True)
class WebOptions:
    """A central web's options, checked."""

    db: Path
    bind: str
    port: int
    token: str
    generated: bool
    hosts: tuple[str, ...]
    snapshot: Path | None
    snapshot_every: float
    nats: str | None


def web_options(args: argparse.Namespace, db: Path) -> WebOptions:
    """The options of :func:`add_web_options` (and ``--nats``), checked; UsageError."""
    bind, port = parse_listen(args.listen)
    nats = args.nats
    if nats is not None:
        try:
            nats = check_central_url(nats)
        except ValueError as exc:
            raise UsageError(f"--nats: {exc}") from None
    if args.snapshot_every < 0:
        raise UsageError("--snapshot-every must be 0 (never) or more seconds")
    if args.seconds is not None and args.seconds <= 0:
        raise UsageError("--seconds must be positive")
    token, generated = resolve_token(args)
    return WebOptions(
        db,
        bind,
        port,
        token,
        generated,
        tuple(args.hosts),
        Path(args.snapshot or f"{db}.snapshot"),
        args.snapshot_every,
        nats,
    )


def run(args: argparse.Namespace) -> int:
    options = web_options(args, Path(args.db))
    with contextlib.suppress(KeyboardInterrupt):
        event_loop.run(serve_replica(options, None, args.seconds))
    return 0


async def serve_replica(
    options: WebOptions,
    feed: Feed | None,
    seconds: float | None,
    outputs: Outputs | None = None,
) -> None:
    """Bring a replica up from the snapshot and the database, start its ``outputs``, serve
    it on the web (and link it to the broker with ``options.nats``), then keep it fed by
    ``feed`` (None: the database's tail) until SIGTERM/SIGINT or ``seconds``."""
    db = options.db
    directory = HeartbeatDirectory()
    link = None
    forward = None
    if options.nats is not None:
        from service.scaleout.admin_forward import forward_by_request
        from service.scaleout.central_link import CentralLink  # imports nats

        link = CentralLink(options.nats, directory)
        forward = forward_by_request(link.request, ADMIN_TIMEOUT)
    replica = ReplicaHall(admin=forward, directory=directory)
    directory.on_link = replica.link_changed
    tail = CentralTail(db, replica.on_rows)
    replica.use_log(tail)
    if link is not None and feed is None:
        link.notices = tail  # it reads at each of the aggregator's commit notices
    snapshot = options.snapshot
    started = time.monotonic()
    cpu = time.process_time()
    if snapshot is not None:
        state = read_snapshot(snapshot)
        if state is not None:
            replica.restore(state)
            tail.resume(replica.last_seq)
            print(
                f"dgt-service: {len(replica.runners)} tables from {snapshot} "
                f"in {time.monotonic() - started:.2f} s",
                flush=True,
            )
    try:
        with coming_up():
            while tail.poll():  # caught up with what is stored before the pages are served
                pass
    except CentralError as exc:
        raise UsageError(str(exc)) from None
    running = outputs(replica) if outputs is not None else []
    server = WebServer(
        replica, options.token, bind=options.bind, port=options.port, hosts=options.hosts
    )
    try:
        url = await server.start()
    except OSError as exc:
        for output in running:
            await output.close()
        raise UsageError(str(exc)) from None
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    tasks = [
        loop.create_task(tail.run() if feed is None else feed(replica), name="central rows"),
        loop.create_task(_check_edges(replica), name="edge check"),
    ]
    if link is not None:
        tasks.append(loop.create_task(link.run(), name="central link"))
    if snapshot is not None and options.snapshot_every > 0:
        tasks.append(
            loop.create_task(
                keep_snapshots(replica, snapshot, options.snapshot_every), name="snapshots"
            )
        )
    try:
        print(
            f"dgt-service: central web on {db} ({len(replica.runners)} tables, "
            f"{time.monotonic() - started:.2f} s to come up, "
            f"{time.process_time() - cpu:.2f} s of CPU)",
            flush=True,
        )
        print(f"open {url} (a page per table at {url}tables/ID)", flush=True)
        if options.generated:
            print(f"admin token (shown once): {options.token}", flush=True)
        if options.bind not in ("127.0.0.1", "localhost", "::1"):
            print(
                f"listening on {options.bind}: the pages are visible on the network",
                file=sys.stderr,
            )
        if seconds is None:
            await stop.wait()
        else:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), seconds)
    finally:
        for task in tasks:
            task.cancel()
        _done, stuck = await asyncio.wait(tasks, timeout=STOP_WAIT)
        for task in stuck:
            logger.warning("%s did not stop within %g s: left behind", task.get_name(), STOP_WAIT)
        await server.close()
        for output in running:
            await output.close()
        tail.close()


async def _check_edges(replica: ReplicaHall) -> None:
    while True:
        await asyncio.sleep(EDGE_CHECK)
        replica.check_edges()
