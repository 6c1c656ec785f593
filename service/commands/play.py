"""``dgt-service play``: play online from the board.

Serves the local WebSocket API that lichess's and chess.com's DGT pages speak (the one DGT
LiveChess serves, ``ws://localhost:1982/api/v1.0``) for the boards given: a USB or
Bluetooth classic port (``/dev/ttyACM0``, ``/dev/rfcomm0``), a Pegasus (``ble:ADDRESS``,
``ble:`` for the first in reach) or ``emulator`` (the in-process virtual board, to try it).
See :mod:`service.play`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys

from dgt.board import Board
from service import event_loop
from service.errors import UsageError
from service.play.server import (
    DEFAULT_HOST,
    DEFAULT_ORIGINS,
    DEFAULT_PORT,
    PLAY_SETTLE,
    BoardLink,
    OriginPolicy,
    PlayServer,
)

log = logging.getLogger(__name__)


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "play",
        help="play online (lichess, chess.com) from the board: the DGT LiveChess local API",
        description="Serve the local WebSocket API lichess's and chess.com's DGT pages speak "
        f"(ws://{DEFAULT_HOST}:{DEFAULT_PORT}/api/v1.0, as DGT LiveChess does) for the boards "
        "given, with our driver and move recognition.",
    )
    p.add_argument(
        "boards",
        nargs="+",
        metavar="PORT",
        help="serial port (USB, /dev/rfcomm*), pyserial URL, ble:ADDRESS (Pegasus) or 'emulator'",
    )
    p.add_argument("--bind", default=DEFAULT_HOST, help=f"address (default {DEFAULT_HOST})")
    p.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0 = any)"
    )
    p.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="also allow pages of ORIGIN (e.g. http://myhost:8000) to open the socket; "
        f"allowed always: {', '.join(DEFAULT_ORIGINS)}",
    )
    p.add_argument(
        "--settle",
        type=float,
        default=PLAY_SETTLE,
        metavar="SECONDS",
        help="without a clock, a move is sent once the board stood still this long "
        f"(default {PLAY_SETTLE:g}; a clock press sends it at once)",
    )
    p.add_argument("--seconds", type=float, metavar="N", help="stop after N seconds")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be 0..65535, got {args.port}")
    if not 0.2 <= args.settle <= 10:
        raise UsageError(f"--settle must be 0.2..10 seconds, got {args.settle}")
    if args.seconds is not None and args.seconds <= 0:
        raise UsageError("--seconds must be positive")
    if len(set(args.boards)) != len(args.boards):
        raise UsageError("a board is given twice")
    for origin in args.allow_origin:
        if origin != "localhost" and "://" not in origin:
            raise UsageError(f"--allow-origin takes an origin like https://example.org: {origin}")
    with contextlib.suppress(KeyboardInterrupt):
        event_loop.run(_serve(args))
    return 0


async def _serve(args: argparse.Namespace) -> None:
    async with contextlib.AsyncExitStack() as stack:
        links: list[BoardLink] = []
        for port in args.boards:
            board = Board(port)
            await board.open()
            stack.push_async_callback(board.close)
            links.append(BoardLink(board, settle=args.settle))
        serials = [link.serialnr for link in links]
        if len(set(serials)) != len(serials):
            raise UsageError(f"two boards have the same serial number: {', '.join(serials)}")
        origins = OriginPolicy([*DEFAULT_ORIGINS, *args.allow_origin])
        server = PlayServer(links, host=args.bind, port=args.port, origins=origins)
        address = await server.start()
        stack.push_async_callback(server.close)
        print(f"dgt-service play: serving {address}", flush=True)
        for link in links:
            family = "presence-only" if link.eboard.presence_only else "piece-identity"
            leds = ", LEDs" if link.board.info.leds is not None else ""
            print(f"  board {link.serialnr} on {link.board.name} ({family}{leds})", flush=True)
        print("Open https://lichess.org/dgt (or chess.com's DGT page); Ctrl-C stops.", flush=True)
        if args.bind not in (DEFAULT_HOST, "localhost", "::1"):
            log.warning("listening on %s: other machines can reach the board", args.bind)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, stop.set)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), args.seconds)
        print("dgt-service play: stopped", file=sys.stderr, flush=True)
