"""``dgt-service demo``: the tournament service on emulated boards replaying real games.

Nothing to plug in: N virtual DGT boards with DGT 3000 clocks (in-process by default, or
each on its own pseudo-terminal with ``--pty``, opened through the serial code a USB board
goes through) play the games of ``dgt/emulator/data/demo.pgn`` (and of ``--games FILE``)
with human timing, and the service stores and mirrors them live.  It prints where to open
the page.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import copy
import logging
import random
import tempfile
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path

import chess.pgn

from dgt.emulator.board import VirtualBoard
from dgt.emulator.pty import EmulatorServer
from dgt.emulator.replay import read_games, replay_games
from dgt.transports.emulator import EmulatorTransport
from service.commands.run import (
    Outputs,
    add_central_options,
    add_play_options,
    add_service_options,
    central_option,
    check_listen,
    check_pgn_dir,
    play_option,
    resolve_token,
    serve,
)
from service.config import ServiceConfig, TableConfig
from service.errors import UsageError
from service.hall import Hall, HallError, HallTable
from service.time_control import TimeControl, TimeControlError

log = logging.getLogger(__name__)

MAX_BOARDS = 1000
READY_TIMEOUT = 20.0
"""Seconds a replay waits for its board to be connected before it starts anyway."""
TIME_CONTROL = "420+17"
"""The time control of every demo table: the clocks are set to it and the PGN says it."""


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "demo",
        help="the service on emulated boards replaying real games (nothing to plug in)",
        description="Run the tournament service on emulated boards that replay real games; "
        "open the printed address in a browser.",
    )
    p.add_argument("--boards", type=int, default=4, help="number of emulated boards (default 4)")
    p.add_argument(
        "--first",
        type=int,
        default=1,
        metavar="N",
        help="number of the first table (default 1): each edge of a centre its own range",
    )
    p.add_argument("--speed", type=float, default=1.0, help="replay this many times faster")
    p.add_argument("--games", metavar="FILE", action="append", help="more PGN games to replay")
    p.add_argument(
        "--pty", action="store_true", help="serve each board on a pseudo-terminal (else in-process)"
    )
    p.add_argument("--seed", type=int, help="seed of the human-handling model")
    p.add_argument("--rules", default="casual", help="rule set of every table (default casual)")
    p.add_argument(
        "--time-control",
        default=TIME_CONTROL,
        help=f"base+increment seconds of every table, set on its clock (default {TIME_CONTROL})",
    )
    add_service_options(p)
    add_play_options(p)
    add_central_options(p)
    p.set_defaults(run=run)


def demo_pgn() -> Path:
    """The games shipped with the emulator."""
    return Path(str(resources.files("dgt.emulator") / "data" / "demo.pgn"))


def load_games(extra: list[str] | None) -> list[chess.pgn.Game]:
    """The demo's games: the shipped ones and those of ``extra`` files."""
    games = list(read_games(demo_pgn()))
    for name in extra or ():
        path = Path(name)
        if not path.is_file():
            raise UsageError(f"--games {name}: no such file")
        games.extend(read_games(path))
    if not games:
        raise UsageError("no games to replay")
    return games


def check_time_control(text: str) -> str:
    """``text`` if it is a time control the demo's clocks can be set to: base+increment
    seconds (one period), or ``-`` for none."""
    try:
        control = TimeControl.parse_playable(text)
    except TimeControlError as exc:
        raise UsageError(f"--time-control: {exc}") from None
    if len(control.periods) > 1 or (control.periods and control.periods[0].moves is not None):
        raise UsageError("--time-control: the demo sets base+increment seconds, e.g. 420+17")
    return control.text


def under_time_control(game: chess.pgn.Game, control: str) -> chess.pgn.Game:
    """``game`` replayed under the table's time control: the replay sets the board's clock
    from the ``TimeControl`` tag, so the clock and the table's record say the same (an
    untimed table: no tag, the clock is left alone).  The game itself is not changed."""
    replayed = copy.copy(game)
    replayed.headers = game.headers.copy()
    if TimeControl.parse(control).timed:
        replayed.headers["TimeControl"] = control
    else:
        replayed.headers.pop("TimeControl", None)
    return replayed


class TransportLine:
    """The emulator's :class:`~dgt.emulator.console.Line` over an in-process
    :class:`EmulatorTransport`: what the virtual board answers goes to the host."""

    def __init__(self, transport: EmulatorTransport) -> None:
        self.transport = transport
        self.device = transport.board

    def now(self) -> float:
        return time.monotonic()

    def act(self, action: Callable[[float], bytes]) -> bytes:
        data = action(time.monotonic())
        self.transport.inject(data)
        return data

    def garbage(self, count: int) -> bytes:
        data = random.randbytes(count)
        self.transport.inject(data)
        return data

    def unplug(self) -> None:
        self.transport.unplug()

    def plug(self) -> str:
        self.transport.plug()
        return self.transport.name


async def play(
    hall: Hall,
    runner: HallTable,
    line: TransportLine | EmulatorServer,
    games: list[chess.pgn.Game],
    *,
    first: int = 0,
    speed: float = 1.0,
    rng: random.Random | None = None,
    pause: float = 5.0,
) -> None:
    """Replay ``games`` at ``runner``'s board forever, starting with game ``first``; the
    players of each game are set through the admin API (so they are in the log; named
    while the previous game is the record, they play the next game) and its clock is set
    to the table's time control."""
    rng = rng or random.Random()
    await runner.wait_ready(READY_TIMEOUT)
    index = first
    while True:
        game = games[index % len(games)]
        index += 1
        players = {
            "white": game.headers.get("White", "?")[:100],
            "black": game.headers.get("Black", "?")[:100],
        }
        try:
            await hall.admin(runner.id, "players", players)
        except HallError as exc:
            log.debug("table %s: players not set: %s", runner.id, exc)
        replayed = under_time_control(game, runner.table.settings.time_control)
        await replay_games(line, [replayed], board=line.device, speed=speed, rng=rng, pause=pause)  # type: ignore[arg-type]


def emulated_tables(
    hall: Hall,
    count: int,
    *,
    rules: str = "casual",
    prefix: str = "",
    time_control: str | None = None,
    first: int = 1,
) -> list[tuple[HallTable, TransportLine]]:
    """``count`` tables on in-process emulated boards, added to ``hall`` (``time_control``:
    theirs, the table's default when None), numbered from ``first`` (table and board
    number alike)."""
    out = []
    for i in range(first, first + count):
        transport = EmulatorTransport(
            VirtualBoard(now=time.monotonic(), serial=f"{i % 100000:05d}"),
            name=f"emulator-{prefix}{i}",
        )
        config = TableConfig(
            f"{prefix}{i}",
            transport.name,
            None,
            table_settings(rules, time_control),
            board=i,
        )
        runner = hall.add_table(config, transport)
        out.append((runner, TransportLine(transport)))
    return out


def table_settings(rules: str, time_control: str | None) -> dict[str, str]:
    """The settings of a demo table."""
    settings = {"event": "dgt-service demo", "round": "1", "rules": rules}
    if time_control is not None:
        settings["time_control"] = time_control
    return settings


def run(args: argparse.Namespace) -> int:
    if not 1 <= args.boards <= MAX_BOARDS:
        raise UsageError(f"--boards must be 1..{MAX_BOARDS}")
    if args.speed <= 0:
        raise UsageError("--speed must be positive")
    if not 1 <= args.first <= 1_000_000:
        raise UsageError("--first must be 1..1000000")
    from service.arbiter import RULE_SETS

    if args.rules not in RULE_SETS:
        raise UsageError(f"--rules must be one of {', '.join(RULE_SETS)}")
    time_control = check_time_control(args.time_control)
    games = load_games(args.games)
    port = 8080 if args.port is None else args.port
    bind = args.bind or "127.0.0.1"
    check_listen(bind, port, args.seconds)
    play_api = play_option(args, ServiceConfig())
    central = central_option(args, ServiceConfig(), [])
    token, generated = resolve_token(args)
    pgn_dir = check_pgn_dir(args.pgn_dir)
    rng = random.Random(args.seed)
    tmp: tempfile.TemporaryDirectory[str] | None = None
    if args.db:
        db = Path(args.db)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="dgt-demo-")
        db = Path(tmp.name) / "demo.db"
    servers: list[EmulatorServer] = []
    plays: list[tuple[HallTable, TransportLine | EmulatorServer]] = []

    async def setup(hall: Hall) -> None:
        if args.pty:
            for i in range(args.first, args.first + args.boards):
                server = EmulatorServer(
                    VirtualBoard(serial=f"{i:05d}"), seed=rng.randrange(1 << 30)
                )
                path = await server.start()
                servers.append(server)
                config = TableConfig(
                    str(i),
                    path,
                    None,
                    table_settings(args.rules, time_control),
                    board=i,
                )
                plays.append((hall.add_table(config), server))
        else:
            plays.extend(
                emulated_tables(
                    hall,
                    args.boards,
                    rules=args.rules,
                    time_control=time_control,
                    first=args.first,
                )
            )

    async def start_replays(hall: Hall) -> None:
        tasks = [
            asyncio.create_task(
                play(
                    hall,
                    runner,
                    line,
                    games,
                    first=i,
                    speed=args.speed,
                    rng=random.Random(rng.randrange(1 << 30)),
                )
            )
            for i, (runner, line) in enumerate(plays)
        ]
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if servers:
                # the boards let go of their ports first: a port closing under a board
                # reads as a pulled cable (a warning at every shutdown)
                for runner, _ in plays:
                    await runner.close()
            for server in servers:
                with contextlib.suppress(OSError):
                    await server.close()

    try:
        return serve(
            db,
            setup,
            token=token,
            generated=generated,
            bind=bind,
            port=port,
            seconds=args.seconds,
            what=f"demo on {args.boards} emulated board(s)",
            after_start=start_replays,
            durable=args.durable,
            play=play_api,
            outputs=Outputs(pgn_dir),
            central=central,
        )
    finally:
        if tmp is not None:
            tmp.cleanup()
