"""``dgt-service central``: the centre of several edge halls (``run --central``), in one
process: the aggregator reads the log stream of every edge, in order, into the centre's
database (:mod:`service.scaleout.aggregator`) and hands each committed batch to a read
replica of every table (:class:`service.scaleout.replica.ReplicaHall`), served on the web as
a hall's tables are, with the edges' heartbeats and admin commands forwarded to the owning
edge (:func:`service.commands.central_web.serve_replica`).  ``nats`` is imported only by
this command and ``central-web --nats``.

With ``--config FILE`` holding a ``[broadcast]`` section (as ``run``'s config), the centre
pushes the rounds to lichess from the replica: every edge's games, in one order
(:mod:`service.broadcast.push`; the token read from the file or environment variable the
section names, the admin page's round changes kept beside the centre's database as
``DB.broadcast.json``).  Push an event from the centre only, not also from its edges."""

from __future__ import annotations

import argparse
import contextlib
from dataclasses import dataclass, field
from pathlib import Path

from service import event_loop
from service.broadcast.push import LichessClient, Pusher, read_token
from service.commands.central_web import (
    Output,
    WebOptions,
    add_web_options,
    serve_replica,
    web_options,
)
from service.config import BroadcastConfig, ConfigError, parse_config, shown_url
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
    p.add_argument(
        "--config",
        metavar="FILE",
        help="TOML config whose [broadcast] (as for run) pushes every edge's games to "
        "lichess from here; its other sections are not read",
    )
    add_web_options(p)
    p.add_argument("--seconds", type=float, metavar="N", help="stop after N seconds")
    p.set_defaults(run=run)


@dataclass(frozen=True, slots=True)
class CentralPushes:
    """The centre's lichess pushes: the ``[broadcast]`` section and its token."""

    config: BroadcastConfig
    token: str = field(repr=False)
    database: Path
    """Beside it the admin page's round changes are kept."""

    def start(self, replica: ReplicaHall) -> list[Output]:
        client = LichessClient(self.config.url, self.token)
        pusher = Pusher(replica, self.config, client, database=self.database)
        pusher.start()
        rounds = ", ".join(  # as applied: the admin page's last changes over the config
            f"{r['round']} -> {r['lichess_id']}" + (" (off)" if r["state"] == "off" else "")
            for r in pusher.status()["rounds"]
        )
        print(f"pushing to {self.config.url}: round {rounds}", flush=True)
        return [pusher]


def broadcast_config(path: Path) -> BroadcastConfig:
    """The ``[broadcast]`` section of the config ``path`` (its other sections are checked
    as ``run`` checks them, not used).  Raises :class:`ConfigError` (one line)."""
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such config file") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text: save the file as UTF-8") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    config = parse_config(text, path).broadcast
    if config is None:
        raise ConfigError(
            f"{path}: no [broadcast]: the centre reads only the lichess pushes from its config"
        )
    return config


def run(args: argparse.Namespace) -> int:
    options = web_options(args, Path(args.db or DEFAULT_CENTRAL_DB))
    pushes = None
    if args.config is not None:
        broadcast = broadcast_config(Path(args.config))
        pushes = CentralPushes(broadcast, read_token(broadcast), options.db)
    try:
        store = CentralStore(options.db)
    except CentralStoreError as exc:
        raise UsageError(str(exc)) from None
    try:
        with contextlib.suppress(KeyboardInterrupt):
            event_loop.run(_serve(options, store, args.seconds, pushes))
    finally:
        store.close()
    return 0


async def _serve(
    options: WebOptions,
    store: CentralStore,
    seconds: float | None,
    pushes: CentralPushes | None = None,
) -> None:
    from service.scaleout.aggregator import Aggregator  # imports nats

    assert options.nats is not None
    url = options.nats

    async def aggregate(replica: ReplicaHall) -> None:
        print(f"dgt-service central: reading {shown_url(url)} into {store.path}", flush=True)
        await Aggregator(url, store, on_rows=replica.on_rows).run()

    await serve_replica(options, aggregate, seconds, pushes.start if pushes else None)
