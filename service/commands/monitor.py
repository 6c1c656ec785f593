"""``dgt-service monitor``: one board and its clock, live in the terminal.

On a terminal the picture of the board is redrawn in place; otherwise (a pipe, a file) each
event is printed as a line.  ``--record FILE`` writes every chunk received and every
decoded event to the event log (:mod:`dgt.recording`).  ``--read-memory`` asks for the
board's memory after connecting (off by default: some clone boards drop the link on that
request).  ``--demo`` needs no board: the built-in emulator replays real games on a
pseudo-terminal and the monitor opens it through the same serial code a USB board goes
through.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import sys
from importlib import resources
from pathlib import Path
from typing import IO

from dgt.board import Board
from dgt.emulator.board import VirtualBoard
from dgt.emulator.pty import EmulatorServer
from dgt.emulator.replay import replay_games
from dgt.errors import LinkClosed
from dgt.events import BoardEvent, BoardSnapshot
from dgt.recording import RecordWriter
from dgt.tasks import cancel_and_wait
from dgt.transports import Transport, open_transport
from dgt.transports.tap import TapTransport
from service.errors import UsageError
from service.terminal_view import MonitorView, describe

log = logging.getLogger(__name__)

REDRAW_INTERVAL = 0.1
"""Seconds between redraws on a terminal (events in between are merged)."""

CLEAR = "\x1b[H\x1b[2J"


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "monitor",
        help="show one board and its clock live",
        description="Show one board and its clock live; optionally record the session.",
    )
    p.add_argument(
        "port", nargs="?", help="serial port, pyserial URL, ble:ADDRESS (Pegasus) or 'emulator'"
    )
    p.add_argument(
        "--demo", action="store_true", help="replay real games on the built-in emulated board"
    )
    p.add_argument("--record", metavar="FILE", help="write received bytes and events (JSON lines)")
    p.add_argument("--plain", action="store_true", help="print event lines even on a terminal")
    p.add_argument(
        "--read-memory",
        action="store_true",
        help="ask for the board's memory (its stored moves) after connecting; off by default: "
        "some clone boards drop the link on that request",
    )
    p.add_argument(
        "--seconds",
        type=float,
        metavar="N",
        help="stop after N seconds (default: run until Ctrl-C)",
    )
    p.add_argument("--speed", type=float, default=1.0, help="demo: replay this many times faster")
    p.add_argument("--pegasus", action="store_true", help="demo: a presence-only board")
    p.add_argument("--reversed", action="store_true", help="demo: the board turned round")
    p.add_argument("--seed", type=int, help="demo: seed of the human-handling model")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.demo and args.port:
        raise UsageError("give either a PORT or --demo, not both")
    if not args.demo and not args.port:
        raise UsageError("give a PORT (see 'dgt-service scan'), or --demo to try without a board")
    if args.seconds is not None and args.seconds <= 0:
        raise UsageError("--seconds must be positive")
    if args.speed <= 0:
        raise UsageError("--speed must be positive")
    record: IO[str] | None = None
    if args.record:
        try:
            record = open(args.record, "w", encoding="utf-8")  # noqa: SIM115
        except OSError as exc:
            raise UsageError(f"cannot write {args.record}: {exc.strerror}") from None
    try:
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(_monitor(args, record))
    finally:
        if record is not None:
            record.close()
    return 0


def demo_games() -> Path:
    """The PGN file the demo replays (shipped with the emulator)."""
    return Path(str(resources.files("dgt.emulator") / "data" / "demo.pgn"))


async def _monitor(args: argparse.Namespace, record: IO[str] | None) -> None:
    async with contextlib.AsyncExitStack() as stack:
        replay: asyncio.Task[int] | None = None
        if args.demo:
            device = VirtualBoard(pegasus=args.pegasus, reversed=args.reversed)
            server = EmulatorServer(device, seed=args.seed)
            port = await server.start()
            stack.push_async_callback(server.close)
            title = f"dgt-service monitor: built-in emulated board on {port} (Ctrl-C quits)"
        else:
            port = args.port
            title = f"dgt-service monitor: {port} (Ctrl-C quits)"
        transport: Transport = open_transport(port)
        writer: RecordWriter | None = None
        tap: TapTransport | None = None
        if record is not None:
            writer = RecordWriter(record, source=port)
            chunk = writer.chunk
            transport = tap = TapTransport(transport, lambda t, data, way: chunk(t, data, way))
        board = Board(transport, read_memory=args.read_memory)
        await board.open()
        stack.push_async_callback(board.close)
        if args.demo:
            replay = asyncio.create_task(
                replay_games(server, demo_games(), speed=args.speed, repeat=True, pause=3.0)
            )
            stack.push_async_callback(cancel_and_wait, replay)
        info = board.info
        if info.version is not None:
            title += f"\nboard version {info.version}, serial {info.serial or '?'}"
        view = MonitorView(title=title)
        on_terminal = sys.stdout.isatty() and not args.plain
        consume = _show(board, view, writer, on_terminal)
        if args.seconds is None:
            await consume
        else:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(consume, args.seconds)
            # Stopped by the clock: no more bytes go into the record, and the events of the
            # bytes it holds that were not shown yet are shown and recorded.
            if tap is not None:
                tap.listener = _ignore_chunk
            await _drain(board, view, writer, on_terminal)
        if replay is not None and replay.done() and replay.exception() is not None:
            raise replay.exception()  # type: ignore[misc]


async def _show(
    board: Board, view: MonitorView, writer: RecordWriter | None, on_terminal: bool
) -> None:
    loop = asyncio.get_running_loop()
    last_draw = 0.0
    if on_terminal:
        _draw(view)
    async for event in board.events():
        _take(event, view, writer, on_terminal)
        if on_terminal:
            now = loop.time()
            if now - last_draw >= REDRAW_INTERVAL or board.pending_events() == 0:
                _draw(view)
                last_draw = now


async def _drain(
    board: Board, view: MonitorView, writer: RecordWriter | None, on_terminal: bool
) -> None:
    """The events already queued (none is waited for: the queue is read while it holds
    some, so no new bytes come in meanwhile)."""
    while board.pending_events():
        try:
            event = await board.next_event()
        except LinkClosed:
            break
        _take(event, view, writer, on_terminal)
    if on_terminal:
        _draw(view)


def _take(
    event: BoardEvent, view: MonitorView, writer: RecordWriter | None, on_terminal: bool
) -> None:
    """Record one event and show it."""
    if writer is not None:
        writer.event(event)
    view.apply(event)
    if not on_terminal:
        _print_line(event)


def _ignore_chunk(t: float, data: bytes, way: str) -> None:
    """What the record's tap does once the monitor stopped."""


def _draw(view: MonitorView) -> None:
    sys.stdout.write(CLEAR + view.render() + "\n")
    sys.stdout.flush()


def _print_line(event: BoardEvent) -> None:
    line = f"{event.time:10.3f}  {describe(event)}"
    if isinstance(event, BoardSnapshot):
        from dgt.recording import placement

        line += f": {placement(event.squares)}"
    print(line, flush=True)
