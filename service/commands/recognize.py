"""``dgt-service recognize``: the whole recognition pipeline offline, on a recorded log or
a raw byte stream; prints the game as PGN or every emitted event as JSON lines."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from dgt.events import BoardEvent
from dgt.offline import events_from_chunks, events_from_raw
from dgt.recording import Chunk, read_record
from service.arbiter import RULE_SETS
from service.errors import UsageError
from service.recognize import DEFAULT_SETTLE, game_pgn, recognize
from service.table import Table, TableError, TableEvent, TableSettings
from service.time_control import TimeControl, TimeControlError
from service.variants import VARIANTS


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "recognize",
        help="read the moves of a recorded session and print the game",
        description=(
            "Run a recorded session through move recognition and print the game as PGN "
            "(or, with --json, every recognised event as one JSON object a line)."
        ),
    )
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("log", nargs="?", help="a log written by 'dgt-service monitor --record'")
    source.add_argument("--raw", metavar="FILE", help="a byte stream exactly as a board sent it")
    p.add_argument("--json", action="store_true", help="print every event as a JSON line")
    p.add_argument(
        "--variant",
        default="standard",
        choices=sorted(VARIANTS),
        help="what a classical start position means (other starts are recognised by shape)",
    )
    p.add_argument(
        "--rules",
        default="casual",
        choices=sorted(RULE_SETS),
        help="the rule set the arbiter applies (default: casual); with --json its "
        "irregularity, claim, ruling, clock and score events are printed too",
    )
    p.add_argument(
        "--time-control",
        default="-",
        metavar="TC",
        help="time control for the arbiter, PGN style (300+0; default: - for none)",
    )
    p.add_argument(
        "--presence-only",
        action="store_true",
        default=None,
        help="the board reports occupancy only (Pegasus); default: tell from the data",
    )
    p.add_argument(
        "--promotion",
        default="q",
        choices=("q", "r", "b", "n"),
        help="the piece a promotion becomes on a presence-only board (default: queen)",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        TimeControl.parse(args.time_control)
    except TimeControlError as exc:
        raise UsageError(str(exc)) from None
    events = list(_events(args))
    if not events:
        raise UsageError("no board events in the input: is it a dgt-service log or raw stream?")
    emitted, games = recognize(
        events,
        variant=args.variant,
        presence_only=args.presence_only,
        promotion=args.promotion,
    )
    if args.json:
        lines = [(event.time, event.to_json()) for event in emitted]
        lines += _arbiter_lines(events, args)
        lines.sort(key=lambda item: item[0])  # stable: recogniser events first at equal times
        for _, data in lines:
            print(json.dumps(data, separators=(",", ":")))
    else:
        if not games:
            print("no game found: the board never showed a start position", file=sys.stderr)
            return 1
        print("\n".join(game_pgn(game) for game in games), end="")
    return 0


ARBITER_TYPES = frozenset({"irregularity", "claim", "ruling", "clock", "score"})


def _arbiter_lines(
    events: list[BoardEvent], args: argparse.Namespace
) -> list[tuple[float, dict[str, Any]]]:
    """Run the log through a :class:`~service.table.Table` and keep what the arbiter and the
    clock add to the recogniser's events."""
    try:
        table = Table(
            "offline",
            TableSettings(rules=args.rules, variant=args.variant, time_control=args.time_control),
        )
    except TableError as exc:
        raise UsageError(str(exc)) from None
    out: list[TableEvent] = []
    for event in events:
        out += table.tick(event.time)
        out += table.feed(event)
    if events:
        out += table.tick(events[-1].time + DEFAULT_SETTLE)
    lines = []
    for item in out:
        if item.type in ARBITER_TYPES:
            data = item.to_json()
            lines.append((item.time, {"type": data.pop("type"), **data}))
    return lines


def _events(args: argparse.Namespace) -> Iterable[BoardEvent]:
    if args.raw is not None:
        data = _read_bytes(args.raw)
        return list(events_from_raw(data, presence_only=args.presence_only))
    path = Path(args.log)
    if not path.is_file():
        raise UsageError(f"no such log: {path}")
    items = list(read_record(path))
    events = [item for item in items if not isinstance(item, Chunk)]
    if events:
        return events
    # A log of bytes only (written by another tool): decode them as the driver would.
    chunks = [(c.time, c.data) for c in items if isinstance(c, Chunk) and c.direction == "rx"]
    return list(events_from_chunks(chunks, presence_only=args.presence_only))


def _read_bytes(name: str) -> bytes:
    try:
        return Path(name).read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {name}: {exc.strerror}") from None
