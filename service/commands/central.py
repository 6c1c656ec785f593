"""``dgt-service central``: the centre of several edge halls (``run --central``), in one
process: the aggregator reads the log stream of every edge, in order, into the centre's
database (:mod:`service.scaleout.aggregator`) and hands each committed batch to a read
replica of every table (:class:`service.scaleout.replica.ReplicaHall`), served on the web as
a hall's tables are, with the edges' heartbeats and admin commands forwarded to the owning
edge (:func:`service.commands.central_web.serve_replica`).  ``nats`` is imported only by
this command and ``central-web --nats``."""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path

from service import event_loop
from service.commands.central_web import WebOptions, add_web_options, serve_replica, web_options
from service.config import shown_url
from service.errors import UsageError
from service.scaleout.central_store import CentralStore, CentralStoreError
from service.scaleout.replica import ReplicaHall

DEFAULT_CENTRAL_DB = "dgt-central.db"


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "central",
        help="the centre of several halls: every edge's log, in order, from a NATS broker, "
        "and the web of all their tables",
        description="Read the log every edge ('run --central') forwards to the NATS JetStream "
        "broker, in order and exactly once, into the centre's database, and serve every "
        "edge's tables on the web (admin commands go to the owning edge).",
    )
    p.add_argument("--nats", required=True, metavar="URL", help="the broker, nats://HOST:PORT")
    p.add_argument("--db", metavar="FILE", help=f"the centre's database ({DEFAULT_CENTRAL_DB})")
    add_web_options(p)
    p.add_argument("--seconds", type=float, metavar="N", help="stop after N seconds")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    options = web_options(args, Path(args.db or DEFAULT_CENTRAL_DB))
    try:
        store = CentralStore(options.db)
    except CentralStoreError as exc:
        raise UsageError(str(exc)) from None
    try:
        with contextlib.suppress(KeyboardInterrupt):
            event_loop.run(_serve(options, store, args.seconds))
    finally:
        store.close()
    return 0


async def _serve(options: WebOptions, store: CentralStore, seconds: float | None) -> None:
    from service.scaleout.aggregator import Aggregator  # imports nats

    assert options.nats is not None
    url = options.nats

    async def aggregate(replica: ReplicaHall) -> None:
        print(f"dgt-service central: reading {shown_url(url)} into {store.path}", flush=True)
        await Aggregator(url, store, on_rows=replica.on_rows).run()

    await serve_replica(options, aggregate, seconds)
