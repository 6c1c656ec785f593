"""``dgt-service central``: the centre of several edge halls (``run --central``): reads the
log stream of every edge, in order, into its own database (:mod:`service.scaleout.aggregator`).
``nats`` is imported only by this command."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
from pathlib import Path

from service import event_loop
from service.config import check_central_url, shown_url
from service.errors import UsageError
from service.scaleout.central_store import CentralStore, CentralStoreError

DEFAULT_CENTRAL_DB = "dgt-central.db"


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "central",
        help="the centre of several halls: every edge's log, in order, from a NATS broker",
        description="Read the log every edge ('run --central') forwards to the NATS JetStream "
        "broker, in order and exactly once, into the centre's database.",
    )
    p.add_argument("--nats", required=True, metavar="URL", help="the broker, nats://HOST:PORT")
    p.add_argument("--db", metavar="FILE", help=f"the centre's database ({DEFAULT_CENTRAL_DB})")
    p.add_argument("--seconds", type=float, metavar="N", help="stop after N seconds")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        url = check_central_url(args.nats)
    except ValueError as exc:
        raise UsageError(f"--nats: {exc}") from None
    if args.seconds is not None and args.seconds <= 0:
        raise UsageError("--seconds must be positive")
    db = Path(args.db or DEFAULT_CENTRAL_DB)
    try:
        store = CentralStore(db)
    except CentralStoreError as exc:
        raise UsageError(str(exc)) from None
    try:
        with contextlib.suppress(KeyboardInterrupt):
            event_loop.run(_serve(url, store, args.seconds))
    finally:
        store.close()
    return 0


async def _serve(url: str, store: CentralStore, seconds: float | None) -> None:
    from service.scaleout.aggregator import Aggregator  # imports nats

    aggregator = Aggregator(url, store)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    task = loop.create_task(aggregator.run(), name="aggregator")
    print(f"dgt-service central: reading {shown_url(url)} into {store.path}", flush=True)
    try:
        if seconds is None:
            await stop.wait()
        else:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), seconds)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
