"""``dgt-service run``: the tournament service: many boards, the store, the web mirror.

Boards come from the command line (``dgt-service run /dev/ttyACM0 /dev/ttyACM1``: tables 1,
2, ...) or from a TOML config (``--config hall.toml``, see :mod:`service.config`).  The web
server binds to 127.0.0.1:8080 unless told otherwise.  The admin token comes from
``--admin-token``, ``--admin-token-file`` or the ``DGT_ADMIN_TOKEN`` environment variable;
without any, one is generated and printed once.  ``--play`` (or ``[service] play``) also
serves the DGT LiveChess API on 127.0.0.1:1982 for the hall's boards, so that lichess's and
chess.com's DGT pages can play online from them (:mod:`service.play.hall_feed`, imported
only then).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import secrets
import signal
import sys
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dgt.tasks import cancel_and_wait
from service import event_loop
from service.broadcast.folder import FolderWriter
from service.broadcast.hall_feeds import hall_feeds
from service.broadcast.push import LichessClient, Pusher, read_token
from service.collector_pacer import CollectorPacer
from service.config import (
    DEFAULT_PLAY_PORT,
    MAX_ROUND,
    BroadcastConfig,
    ServiceConfig,
    TableConfig,
    check_central_url,
    check_edge_id,
    check_origin,
    check_setting,
    load_config,
    shown_url,
)
from service.errors import UsageError
from service.hall import CentralLink, Hall, HallError
from service.pairings import Round, load_pairings
from service.pairings.hall_import import desk, import_round
from service.store import Store, StoreError, check_database
from service.store_lock import StoreLock, StoreLockError
from service.web import WebServer

if TYPE_CHECKING:
    from service.play.hall_feed import HallPlay

log = logging.getLogger(__name__)

TOKEN_ENV = "DGT_ADMIN_TOKEN"
DEFAULT_DB = "dgt-service.db"


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "run",
        help="serve many boards: store, live web pages, PGN feeds, admin API",
        description="Serve the boards of a hall: every event stored (SQLite), games mirrored "
        "live on the web, PGN feeds, a JSON and admin API.",
    )
    p.add_argument(
        "ports",
        nargs="*",
        metavar="PORT",
        help="board ports (serial path, pyserial URL, ble:ADDRESS), tables 1, 2, ...",
    )
    p.add_argument("--config", metavar="FILE", help="TOML config with the tables")
    p.add_argument(
        "--pairings",
        metavar="FILE",
        help="seat a round's pairings at the tables by board number: a FIDE TRF file "
        "(with --round N) or a pairings CSV (README, 'Pairings')",
    )
    add_service_options(p)
    add_play_options(p)
    add_central_options(p)
    for key, default in (
        ("event", None),
        ("site", None),
        ("round", None),
        ("time-control", None),
        ("rules", None),
        ("variant", None),
    ):
        p.add_argument(f"--{key}", default=default, help=f"{key.replace('-', ' ')} of every table")
    p.set_defaults(run=run)


def add_service_options(p: argparse.ArgumentParser) -> None:
    """Options ``run`` and ``demo`` share."""
    p.add_argument("--bind", default=None, help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=None, help="web port (default 8080; 0 = any)")
    p.add_argument("--db", metavar="FILE", help=f"the store (default {DEFAULT_DB})")
    p.add_argument("--admin-token", metavar="TOKEN", help=f"admin token (or ${TOKEN_ENV})")
    p.add_argument(
        "--admin-token-file",
        metavar="FILE",
        help="read the admin token from FILE (created with a new token if missing)",
    )
    p.add_argument("--seconds", type=float, metavar="N", help="stop after N seconds")
    p.add_argument(
        "--pgn-dir",
        metavar="DIR",
        help="keep DIR in the DGT LiveChess layout (round-N/game-M.pgn, round-N/games.pgn, "
        "index.json) for the lichess Broadcaster app and other tools",
    )
    p.add_argument(
        "--durable",
        action="store_true",
        help="write the store with SQLite synchronous=FULL: every committed move survives a "
        "power cut or OS crash, at the cost of slower writes (default NORMAL: survives a crash "
        "of the service, may lose the last moments on a power cut)",
    )


def add_central_options(p: argparse.ArgumentParser) -> None:
    """``--central`` and ``--edge-id`` (``run`` and ``demo``)."""
    g = p.add_argument_group(
        "an edge of a central service",
        "forward the log (every table, exactly once, in order) to a central service over a "
        "NATS JetStream broker; the hall runs as ever when the broker cannot be reached",
    )
    g.add_argument("--central", metavar="URL", help="the broker, nats://HOST:PORT")
    g.add_argument("--edge-id", metavar="ID", help="this hall's id there (kept in the database)")


def add_play_options(p: argparse.ArgumentParser) -> None:
    """The play API's options (``run`` and ``demo``)."""
    g = p.add_argument_group(
        "play online from the boards",
        "serve the DGT LiveChess API lichess's and chess.com's DGT pages open "
        f"(ws://127.0.0.1:{DEFAULT_PLAY_PORT}/api/v1.0), one board per table",
    )
    g.add_argument("--play", action="store_true", help="serve it (or [service] play = PORT)")
    g.add_argument(
        "--play-port",
        type=int,
        metavar="PORT",
        help=f"its port (default {DEFAULT_PLAY_PORT}; 0 = any); implies --play",
    )
    g.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="also allow pages of ORIGIN (e.g. http://myhost:8000) to open it; allowed "
        "always: lichess.org, www.chess.com, localhost",
    )


@dataclass(frozen=True, slots=True)
class CentralOption:
    """The central service this hall is an edge of: the broker, the edge id, and the board
    numbers of the tables (for the registrations of tables made before)."""

    url: str
    edge_id: str
    boards: tuple[tuple[str, int | None], ...] = ()


def central_option(
    args: argparse.Namespace, config: ServiceConfig, tables: list[TableConfig]
) -> CentralOption | None:
    """``--central`` / ``--edge-id`` (or ``[service] central`` / ``edge_id``; the command line
    wins), or None for a hall of its own."""
    url = getattr(args, "central", None) or config.central
    edge_id = getattr(args, "edge_id", None) or config.edge_id
    if url is None:
        if edge_id is not None:
            raise UsageError("--edge-id names this hall at a central service: add --central URL")
        return None
    if edge_id is None:
        raise UsageError("--central needs --edge-id ID: this hall's id at the centre")
    try:
        url = check_central_url(url)
        edge_id = check_edge_id(edge_id)
    except ValueError as exc:
        raise UsageError(f"--central: {exc}") from None
    return CentralOption(url, edge_id, tuple((t.id, t.board) for t in tables))


@dataclass(frozen=True, slots=True)
class PlayOption:
    """The play API to serve beside the hall: its port and the origins allowed besides
    the sites and localhost."""

    port: int
    origins: tuple[str, ...] = ()


def play_option(args: argparse.Namespace, config: ServiceConfig) -> PlayOption | None:
    """The play API asked for by the command line or the config (the command line wins),
    or None."""
    wanted = args.play or args.play_port is not None or config.play is not None
    if not wanted:
        if args.allow_origin:
            raise UsageError("--allow-origin is an origin of the play API: add --play")
        return None
    port = args.play_port if args.play_port is not None else config.play
    port = DEFAULT_PLAY_PORT if port is None else port
    if not 0 <= port <= 65535:
        raise UsageError(f"--play-port {port} is not a port number 0-65535")
    origins = list(config.play_origins)
    for origin in args.allow_origin:
        try:
            origins.append(check_origin(origin))
        except ValueError as exc:
            raise UsageError(f"--allow-origin: {exc}") from None
    return PlayOption(port, tuple(origins))


def resolve_token(args: argparse.Namespace, config_file: Path | None = None) -> tuple[str, bool]:
    """The admin token and whether it was generated here (then it is printed once)."""
    if args.admin_token:
        token = str(args.admin_token).strip()
        if len(token) < 8:
            raise UsageError("--admin-token must have at least 8 characters")
        return token, False
    path = Path(args.admin_token_file) if args.admin_token_file else config_file
    if path is not None:
        try:
            token = path.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            token = secrets.token_urlsafe(24)
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    handle.write(token + "\n")
            except OSError as exc:
                raise UsageError(f"cannot write the token file {path}: {exc.strerror}") from None
            return token, True
        except OSError as exc:
            raise UsageError(f"cannot read the token file {path}: {exc.strerror}") from None
        if len(token) < 8:
            raise UsageError(f"{path}: the admin token must have at least 8 characters")
        return token, False
    env = os.environ.get(TOKEN_ENV, "").strip()
    if env:
        if len(env) < 8:
            raise UsageError(f"${TOKEN_ENV} must have at least 8 characters")
        return env, False
    return secrets.token_urlsafe(24), True


def check_pgn_dir(value: str | None) -> Path | None:
    """``--pgn-dir``: a directory, or a path one can be made at."""
    if value is None:
        return None
    path = Path(value)
    if path.exists() and not path.is_dir():
        raise UsageError(f"--pgn-dir {value}: exists and is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--pgn-dir {value}: cannot make it: {exc.strerror or exc}") from None
    return path


def _tables_from_args(args: argparse.Namespace) -> list[TableConfig]:
    settings: dict[str, str] = {}
    for key in ("event", "site", "round", "time_control", "rules", "variant"):
        value = getattr(args, key, None)
        if value is not None:
            try:
                settings[key] = check_setting(key, value)
            except ValueError as exc:
                raise UsageError(f"--{key.replace('_', '-')}: {exc}") from None
    return [TableConfig(str(i), port, None, dict(settings)) for i, port in enumerate(args.ports, 1)]


def run(args: argparse.Namespace) -> int:
    config = ServiceConfig()
    if args.config:
        config = load_config(args.config)
        if args.ports:
            raise UsageError("give board ports either on the command line or in --config")
        tables = list(config.tables)
    else:
        tables = _tables_from_args(args)
    if not tables:
        raise UsageError("no boards: give PORTs or --config FILE (or try 'dgt-service demo')")
    db = Path(args.db) if args.db else (config.database or Path(DEFAULT_DB))
    token, generated = resolve_token(args, config.admin_token_file)
    bind = args.bind or config.bind
    port = config.port if args.port is None else args.port
    check_listen(bind, port, args.seconds)
    play = play_option(args, config)
    pgn_dir = check_pgn_dir(args.pgn_dir)
    lichess_token = read_token(config.broadcast) if config.broadcast is not None else None
    pairings = pairings_option(args, config)
    central = central_option(args, config, tables)

    async def setup(hall: Hall) -> None:
        for table in tables:
            hall.add_table(table)
        if pairings is not None:
            print(pairings_line(await import_round(hall, pairings, at_start=True)), flush=True)

    return serve(
        db,
        setup,
        token=token,
        generated=generated,
        bind=bind,
        port=port,
        seconds=args.seconds,
        what=f"{len(tables)} table(s)",
        durable=args.durable,
        hosts=config.hosts,
        play=play,
        outputs=Outputs(pgn_dir, config.broadcast, lichess_token),
        central=central,
        board_poll_ms=config.board_poll_ms,
        board_poll_longest_ms=config.board_poll_longest_ms,
    )


def pairings_option(args: argparse.Namespace, config: ServiceConfig) -> Round | None:
    """The round to seat at start: ``--pairings FILE`` (its round ``--round N``) or the
    config's ``[pairings]``; None without either.  Raises :class:`UsageError` (a bad file:
    one line naming the file and line)."""
    if args.pairings is None and config.pairings is None:
        return None
    number = config.pairings.round if config.pairings is not None else None
    if args.round is not None:
        text = str(args.round).strip()
        if not text.isdigit() or not 1 <= int(text) <= MAX_ROUND:
            raise UsageError(f"--round {text[:20]!r}: a round of a pairings file is 1-{MAX_ROUND}")
        number = int(text)
    if args.pairings is not None:
        return load_pairings(args.pairings, number)
    assert config.pairings is not None
    return load_pairings(config.pairings.file, number)


def pairings_line(report: dict[str, Any]) -> str:
    """What the import of a round did, on one line."""
    tables = report["tables"]
    seated = sum(1 for t in tables if "error" not in t)
    already = sum(1 for t in tables if t.get("applies") == "already")
    later = [t["table"] for t in tables if t.get("applies") == "later round"]
    seated -= len(later)
    parts = [f"{seated} table(s) seated" + (f" ({already} already)" if already else "")]
    if later:
        parts.append(f"a later round at table(s) {', '.join(later)}: left as it is")
    waiting = [t["table"] for t in tables if t.get("applies") == "next game"]
    if waiting:
        parts.append(f"at the next game at table(s) {', '.join(waiting)}")
    failed = [f"table {t['table']}: {t['error']}" for t in tables if "error" in t]
    parts += failed
    if report["no_table"]:
        boards = ", ".join(str(p["board"]) for p in report["no_table"])
        parts.append(f"no table for board(s) {boards}")
    if report["byes"]:
        parts.append(f"{len(report['byes'])} bye(s)")
    if report["unpaired_tables"]:
        unpaired = ", ".join(t["table"] for t in report["unpaired_tables"])
        parts.append(f"no game at table(s) {unpaired}")
    number = report["round"]
    what = f"round {number} " if number is not None else ""
    return f"pairings {what}from {report['source']}: " + "; ".join(parts)


def check_listen(bind: str, port: int, seconds: float | None) -> None:
    if not 0 <= port <= 65535:
        raise UsageError(f"--port {port} is not a port number 0-65535")
    if seconds is not None and seconds <= 0:
        raise UsageError("--seconds must be positive")


def serve(
    db: Path,
    setup: Callable[[Hall], Awaitable[None]],
    *,
    token: str,
    generated: bool,
    bind: str,
    port: int,
    seconds: float | None,
    what: str,
    after_start: Callable[[Hall], Coroutine[Any, Any, None]] | None = None,
    durable: bool = False,
    hosts: tuple[str, ...] = (),
    play: PlayOption | None = None,
    outputs: Outputs | None = None,
    central: CentralOption | None = None,
    board_poll_ms: float = 0.0,
    board_poll_longest_ms: float = 0.0,
) -> int:
    """Hold the database (one service per database), open the store (``durable``:
    synchronous=FULL; refused when it is damaged or cannot be written), build the hall,
    serve until Ctrl-C, SIGTERM or ``seconds`` (with ``play``: the play API too;
    ``board_poll_ms`` > 0: the serial boards read together that often, up to
    ``board_poll_longest_ms`` while few of them speak).  Returns
    1 when the store could not commit everything at the end (the message says how many rows
    and where they went)."""
    try:
        lock = StoreLock.acquire(db)
    except StoreLockError as exc:
        raise UsageError(str(exc)) from None
    try:
        try:
            check_database(db)
            store = Store(db, durable=durable)
        except StoreError as exc:
            raise UsageError(str(exc)) from None
        link: CentralLink | None = None
        if central is not None:
            try:
                link = edge_link(store, central)
            except StoreError as exc:
                store.close()
                raise UsageError(str(exc)) from None
        try:
            with contextlib.suppress(KeyboardInterrupt):
                event_loop.run(
                    _serve(
                        store,
                        setup,
                        token,
                        generated,
                        bind,
                        port,
                        seconds,
                        what,
                        after_start,
                        durable,
                        hosts,
                        play,
                        outputs or Outputs(),
                        link,
                        board_poll_ms,
                        board_poll_longest_ms,
                    )
                )
        except StoreError as exc:  # a damaged row found while rebuilding the tables
            with contextlib.suppress(StoreError):
                store.close()
            raise UsageError(str(exc)) from None
        try:
            store.close()
        except StoreError as exc:
            print(f"dgt-service: {exc}", file=sys.stderr, flush=True)
            return 1
    finally:
        lock.release()
    return 0


@dataclass(frozen=True, slots=True)
class Outputs:
    """Where the games go besides the web: the LiveChess folder, the lichess pushes."""

    pgn_dir: Path | None = None
    broadcast: BroadcastConfig | None = None
    lichess_token: str | None = field(default=None, repr=False)

    def start(self, hall: Hall) -> list[FolderWriter | Pusher]:
        running: list[FolderWriter | Pusher] = []
        if self.pgn_dir is not None:
            writer = FolderWriter(hall, self.pgn_dir)
            writer.start()
            running.append(writer)
            print(f"PGN folder (LiveChess layout): {self.pgn_dir}", flush=True)
        if self.broadcast is not None and self.lichess_token is not None:
            client = LichessClient(self.broadcast.url, self.lichess_token)
            pusher = Pusher(hall, self.broadcast, client)
            pusher.start()
            running.append(pusher)
            rounds = ", ".join(  # as applied: the admin page's last changes over the config
                f"{r['round']} -> {r['lichess_id']}" + (" (off)" if r["state"] == "off" else "")
                for r in pusher.status()["rounds"]
            )
            print(f"pushing to {self.broadcast.url}: round {rounds}", flush=True)
        return running


def edge_link(store: Store, central: CentralOption) -> CentralLink:
    """The hall's link to the centre (``nats`` is imported only now): the store is claimed
    for the edge id first (StoreError when it is another edge's)."""
    from service.scaleout.edge import Edge, claim

    db = claim(store, central.edge_id, dict(central.boards))
    print(f"edge {central.edge_id}: forwarding the log to {shown_url(central.url)}", flush=True)
    return Edge(central.url, central.edge_id, db)


async def _retry_store(hall: Hall) -> None:
    """While the store is failing, have the hall commit again whenever the store's back-off
    is over (a commit is otherwise only tried when something new comes in)."""
    store = hall.store
    while True:
        await asyncio.sleep(max(store.retry_in(), 0.05) if not store.healthy else 0.5)
        if not store.healthy and store.unstored and store.retry_in() <= 0:
            hall.settle()


async def _serve(
    store: Store,
    setup: Callable[[Hall], Awaitable[None]],
    token: str,
    generated: bool,
    bind: str,
    port: int,
    seconds: float | None,
    what: str,
    after_start: Callable[[Hall], Coroutine[Any, Any, None]] | None,
    durable: bool = False,
    hosts: tuple[str, ...] = (),
    play: PlayOption | None = None,
    outputs: Outputs | None = None,
    central: CentralLink | None = None,
    board_poll_ms: float = 0.0,
    board_poll_longest_ms: float = 0.0,
) -> None:
    hall = Hall(
        store,
        central=central,
        board_poll_ms=board_poll_ms,
        board_poll_longest_ms=board_poll_longest_ms,
    )
    try:
        await setup(hall)
    except HallError as exc:
        raise UsageError(str(exc)) from None
    outputs = outputs or Outputs()
    hall_feeds(hall)  # the feeds' order starts with the games rebuilt now
    desk(hall)  # the last round of pairings imported, read back for the pages
    server = WebServer(hall, token, bind=bind, port=port, hosts=hosts)
    url = await server.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    play_api: HallPlay | None = None
    play_address = ""
    running: list[FolderWriter | Pusher] = []
    try:
        if play is not None:
            from service.play.hall_feed import HallPlay

            # before the hall opens the boards: each eboard reads its board from the start
            play_api = HallPlay(hall.runners.values(), port=play.port, origins=play.origins)
            play_address = await play_api.start()
        CollectorPacer.settled()  # built: the long collection of start-up comes now
        await hall.start()
        running = outputs.start(hall)
        mode = " (durable: synchronous=FULL)" if durable else ""
        print(f"dgt-service: {what}, store {store.path}{mode}", flush=True)
        print(f"open {url} (a page per table at {url}tables/ID)", flush=True)
        print(f"admin page {url}admin (asks for the admin token)", flush=True)
        if generated:
            print(f"admin token (shown once): {token}", flush=True)
        if play_api is not None:
            print(
                f"play online from the boards: {play_address} (lichess.org/dgt, chess.com)",
                flush=True,
            )
        if bind not in ("127.0.0.1", "localhost", "::1"):
            print(f"listening on {bind}: the pages are visible on the network", file=sys.stderr)
        extra: asyncio.Task[None] | None = None
        if after_start is not None:
            extra = loop.create_task(after_start(hall))
        retry = loop.create_task(_retry_store(hall), name="store retries")
        try:
            if seconds is None:
                await stop.wait()
            else:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), seconds)
        finally:
            await cancel_and_wait(retry)
            await cancel_and_wait(extra)
    finally:
        await server.close()
        if play_api is not None:
            await play_api.close()
        await hall.close()
        for output in running:
            await output.close()
