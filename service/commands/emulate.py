"""``dgt-service emulate``: serve a virtual DGT board on a pseudo-terminal.

The first line of output is the device path to open (a stable symlink to the current
``/dev/pts/N``).  Then it runs until interrupted (Ctrl-C exits quietly with status 0),
reading console commands from standard input (``help`` lists them); replies go to
standard output, one line each (``show`` prints the board).  At the end of standard input
it keeps running while replaying games, and exits otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import random
import signal
import sys
import threading
from pathlib import Path

from dgt.emulator.board import Quirk, VirtualBoard
from dgt.emulator.bus import BusLine, make_bus
from dgt.emulator.console import Console
from dgt.emulator.pty import EmulatorServer
from dgt.emulator.replay import replay_games

log = logging.getLogger(__name__)


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "emulate",
        help="serve a virtual DGT board on a pseudo-terminal",
        description=(
            "Serve a virtual DGT board (with a DGT 3000 clock) on a pseudo-terminal. The "
            "first line of output is the device path. Commands on standard input: lift e2, "
            "place e4 P, move e2e4, lever, button N, unplug, plug, garbage N, show, help."
        ),
    )
    p.add_argument("--replay", metavar="GAMES.pgn", type=Path, help="play these games on it")
    p.add_argument("--pegasus", action="store_true", help="a DGT Pegasus (presence only)")
    p.add_argument("--reversed", action="store_true", help="the board is turned round")
    p.add_argument("--bus", metavar="N", type=int, help="N addressed boards on one bus line")
    p.add_argument("--link", metavar="PATH", help="stable path (symlink) to publish")
    p.add_argument("--speed", metavar="X", type=float, default=1.0, help="replay speed factor")
    p.add_argument("--seed", type=int, help="seed for human timing and line noise")
    p.add_argument("--repeat", action="store_true", help="replay the games over and over")
    p.add_argument("--serial", default="12345", help="serial number (5 digits)")
    p.add_argument(
        "--quirk",
        action="append",
        default=[],
        choices=[quirk.value for quirk in Quirk],
        help="play a board that is not quite DGT: ten-character-serial (answers the serial "
        "request with 10 characters), drops-on-memory-request (drops the link on 0x49); "
        "may be given twice",
    )
    p.set_defaults(run=run)


def _device(args: argparse.Namespace) -> VirtualBoard | BusLine:
    from service.errors import UsageError

    if args.speed <= 0:
        raise UsageError("--speed must be positive")
    if args.bus is not None:
        if args.pegasus:
            raise UsageError("a Pegasus has no bus mode: drop --pegasus or --bus")
        if not 1 <= args.bus <= 100:
            raise UsageError("--bus takes 1..100 boards")
        if args.quirk:
            raise UsageError("--quirk plays one board: drop --quirk or --bus")
        return make_bus(args.bus, reversed=args.reversed)
    if args.replay is not None and not args.replay.is_file():
        raise UsageError(f"no such PGN file: {args.replay}")
    try:
        return VirtualBoard(
            pegasus=args.pegasus, reversed=args.reversed, serial=args.serial, quirks=args.quirk
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    device = _device(args)
    try:
        return asyncio.run(_serve(args, device))
    except KeyboardInterrupt:
        return 0


def _stdin_lines(loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[str | None]) -> None:
    """Read standard input in a daemon thread (works for ttys, pipes and files alike)."""

    def reader() -> None:
        try:
            for line in sys.stdin:
                loop.call_soon_threadsafe(queue.put_nowait, line)
        except (OSError, ValueError):
            pass
        with contextlib.suppress(RuntimeError):  # the loop may be closed already
            loop.call_soon_threadsafe(queue.put_nowait, None)

    threading.Thread(target=reader, name="emulate-stdin", daemon=True).start()


async def _serve(args: argparse.Namespace, device: VirtualBoard | BusLine) -> int:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    rng = random.Random(args.seed)
    server = EmulatorServer(device, link=args.link, seed=args.seed)
    path = await server.start()
    print(path, flush=True)
    console = Console(server, rng=rng, speed=args.speed)
    tasks: list[asyncio.Task[object]] = []
    replay: asyncio.Task[int] | None = None
    if args.replay is not None:
        replay = asyncio.create_task(
            replay_games(server, args.replay, speed=args.speed, rng=rng, repeat=args.repeat)
        )
        tasks.append(replay)
    queue: asyncio.Queue[str | None] = asyncio.Queue()
    _stdin_lines(loop, queue)

    async def console_loop() -> None:
        while True:
            line = await queue.get()
            if line is None:
                if replay is None:
                    stop.set()
                return
            reply = await console.execute(line)
            if reply:
                print(reply, flush=True)

    tasks.append(asyncio.create_task(console_loop()))
    stopper = asyncio.create_task(stop.wait())
    try:
        await stopper
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                try:
                    await task
                except Exception:  # a replay that failed: report it, one line
                    log.exception("emulator task failed")
        await server.close()
    return 0
