"""``dgt-service central-web``: a web process on a read replica of every edge's tables.

It follows the centre's database (written by the aggregator of ``dgt-service central``,
another process: :mod:`service.scaleout.central_db`) and serves the same pages, JSON,
stream and PGN feeds as a hall's web, for every edge's tables
(:class:`service.scaleout.replica.ReplicaHall`).  Several such processes can serve the same
file.  Admin commands answer 503 here (no link to the edges: send them to the centre or to
the edge's own page).  The admin token comes as for ``run``.

It comes up from the last snapshot (``--snapshot``, by default beside the database) and the
rows after it, and writes one every ``--snapshot-every`` seconds while rows come
(:mod:`service.scaleout.snapshot`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
import time
from pathlib import Path

from service import event_loop
from service.commands.run import TOKEN_ENV, resolve_token
from service.errors import UsageError
from service.scaleout.central_db import CentralTail
from service.scaleout.replica import ReplicaHall
from service.scaleout.snapshot import keep_snapshots, read_snapshot
from service.web import WebServer

DEFAULT_LISTEN = "127.0.0.1:8080"
SNAPSHOT_EVERY = 60.0


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "central-web",
        help="serve the web pages of every edge's tables from the centre's database",
        description="Serve the pages, JSON, stream and PGN feeds of every edge's tables, "
        "rebuilt from the centre's database (written by 'dgt-service central').",
    )
    p.add_argument("--db", metavar="FILE", required=True, help="the centre's database")
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
    p.add_argument("--seconds", type=float, metavar="N", help="stop after N seconds")
    p.set_defaults(run=run)


def parse_listen(value: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:8080`` for an IPv6 address) as its host and port."""
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise UsageError(f"--listen {value}: give HOST:PORT, like 127.0.0.1:8080")
    host = host.removeprefix("[").removesuffix("]") or "127.0.0.1"
    return host, int(port)


def run(args: argparse.Namespace) -> int:
    bind, port = parse_listen(args.listen)
    token, generated = resolve_token(args)
    snapshot = Path(args.snapshot or f"{args.db}.snapshot")
    if args.snapshot_every < 0:
        raise UsageError("--snapshot-every must be 0 (never) or more seconds")
    with contextlib.suppress(KeyboardInterrupt):
        event_loop.run(
            _serve(
                args.db,
                bind,
                port,
                token,
                generated,
                tuple(args.hosts),
                args.seconds,
                snapshot,
                args.snapshot_every,
            )
        )
    return 0


async def _serve(
    db: str,
    bind: str,
    port: int,
    token: str,
    generated: bool,
    hosts: tuple[str, ...],
    seconds: float | None,
    snapshot: Path | None = None,
    snapshot_every: float = 0.0,
) -> None:
    replica = ReplicaHall()
    tail = CentralTail(db, replica.on_rows)
    replica.use_log(tail)
    if snapshot is not None:
        started = time.monotonic()
        state = read_snapshot(snapshot)
        if state is not None:
            replica.restore(state)
            tail.resume(replica.last_seq)
            print(
                f"dgt-service: {len(replica.runners)} tables from {snapshot} "
                f"in {time.monotonic() - started:.2f} s",
                flush=True,
            )
    server = WebServer(replica, token, bind=bind, port=port, hosts=hosts)
    try:
        url = await server.start()
    except OSError as exc:
        raise UsageError(str(exc)) from None
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    following = loop.create_task(tail.run(), name="central tail")
    keeping: asyncio.Task[None] | None = None
    if snapshot is not None and snapshot_every > 0:
        keeping = loop.create_task(
            keep_snapshots(replica, snapshot, snapshot_every), name="snapshots"
        )
    try:
        print(f"dgt-service: central web on {db}", flush=True)
        print(f"open {url} (a page per table at {url}tables/ID)", flush=True)
        if generated:
            print(f"admin token (shown once): {token}", flush=True)
        if bind not in ("127.0.0.1", "localhost", "::1"):
            print(f"listening on {bind}: the pages are visible on the network", file=sys.stderr)
        if seconds is None:
            await stop.wait()
        else:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), seconds)
    finally:
        for task in (following, keeping):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        await server.close()
        tail.close()
