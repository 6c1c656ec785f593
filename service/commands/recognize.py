"""``dgt-service recognize``: a recorded session (a log, or a raw byte stream) replayed
through the table the live service runs -- :class:`service.table.Table`, or
:class:`service.table.RealtimeTable` for realtime chess -- so that offline and live
tell the same story.  Prints the table's PGN (every game of the session), or with ``--json``
every event the table emitted, one JSON object a line.

The replay feeds the table as a hall does: each board event at its time, and a tick every
:data:`service.hall.TICK_INTERVAL` seconds of the log's time between them (settle delays,
arrivals, a flag falling without a clock).  The clock orders the table issues go nowhere:
the recorded clock was not driven by it.  A log's header gives the wall-clock time the
recording began, so the PGN's ``Date`` is the day each game began.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from dgt.events import BoardEvent, ClockUpdate
from dgt.offline import events_from_chunks, events_from_raw
from dgt.recording import Chunk, read_record
from service.arbiter import RULE_SETS
from service.errors import UsageError
from service.hall import TICK_INTERVAL
from service.table import RealtimeTable, Table, TableError, TableEvent, TableLike, TableSettings
from service.time_control import TimeControl, TimeControlError
from service.variants import VARIANTS

logger = logging.getLogger(__name__)

REALTIME = "realtime"
TAIL = 10.0
"""Seconds of the log's time the replay goes on after the last event (a move settles,
a realtime piece under way arrives)."""
AUTO = "auto"
"""``--time-control`` default: the clock's time at its first report, else none."""


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "recognize",
        help="replay a recorded session through a table and print the game",
        description=(
            "Replay a recorded session through the table the service runs and print its "
            "games as PGN (or, with --json, every event of the table as one JSON object a "
            "line)."
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
        help="the table's variant: what a classical start position means (other starts "
        "are recognised by shape); realtime replays through the realtime table",
    )
    p.add_argument(
        "--options",
        metavar="TEXT",
        help="the variant's options as a table takes them (twenty-chess: "
        "'schedule=12,13 cast stand-ins=special')",
    )
    p.add_argument(
        "--tick",
        type=float,
        metavar="SECONDS",
        help="realtime chess: seconds per tick, 0.1 to 1 (rule 6; default 1)",
    )
    p.add_argument(
        "--fen",
        metavar="FEN",
        help="the position the recording starts from (a set-up position: the game starts "
        "from it once the board is read, as the table's start setting does)",
    )
    p.add_argument(
        "--rules",
        default="casual",
        choices=sorted(RULE_SETS),
        help="the rule set the table's arbiter applies (default: casual); with --json its "
        "irregularity, claim, ruling, clock and score events are printed too",
    )
    p.add_argument(
        "--time-control",
        default=AUTO,
        metavar="TC",
        help="the table's time control, PGN style (300+2; - for none); default: the "
        "clock's time at its first report in the log (no increment), - without a clock",
    )
    p.add_argument(
        "--presence-only",
        action="store_true",
        default=None,
        help="decode the bytes as from a board that reports occupancy only (Pegasus); "
        "default: tell from the data",
    )
    p.add_argument(
        "--promotion",
        default="q",
        choices=("q", "r", "b", "n"),
        help="the piece a promotion becomes on a presence-only board (default: queen; "
        "another is the arbiter's correction of the move, as at a table)",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    events, started = _events(args)
    if not events:
        raise UsageError("no board events in the input: is it a dgt-service log or raw stream?")
    epoch = None if started is None else started - events[0].time
    table = _table(args, _time_control(args.time_control, events), epoch)
    produced, games = replay(table, events, promotion=args.promotion)
    if args.json:
        lines = [item for item in produced if item.type != "board"]  # the input itself
        lines.sort(key=lambda item: item.time)  # stable: in the table's order at equal times
        for item in lines:
            print(json.dumps({"type": item.type, "time": item.time, **item.data},
                             separators=(",", ":")))  # fmt: skip
        return 0
    if not games:
        print("no game found: the board never showed a start position", file=sys.stderr)
        return 1
    print("\n".join(games), end="")
    return 0


def replay(
    table: TableLike, events: list[BoardEvent], *, promotion: str = "q"
) -> tuple[list[TableEvent], list[str]]:
    """Feed ``events`` (in time order) to ``table`` as a hall does, ticking every
    :data:`TICK_INTERVAL` seconds between them and for :data:`TAIL` seconds after the
    last.  ``promotion``: the piece a presence-only board's promotions become (another
    than a queen is the arbiter's ``correct`` command, as at a table).  Returns everything
    the table emitted and the PGN of every game it held, oldest first (the last one only
    if a game began)."""
    out: list[TableEvent] = []
    games: list[str] = []
    ticks = events[0].time + TICK_INTERVAL
    for event in [*events, None]:
        until = event.time if event is not None else events[-1].time + TAIL
        while ticks < until or (event is None and ticks <= until):
            out += _promoted(table, table.tick(ticks), promotion)
            ticks += TICK_INTERVAL
        if event is not None:
            out += _promoted(table, table.feed(event), promotion)
        table.take_clock_orders()  # the recorded clock was not driven by this table
        games += table.take_ended_games()
    if table.phase != "setup":
        games.append(table.pgn())
    return out, games


def _promoted(table: TableLike, out: list[TableEvent], piece: str) -> list[TableEvent]:
    """``out``, and after each completed promotion to a queen on a presence-only board the
    arbiter's correction to ``piece`` (when that is not a queen)."""
    if piece == "q" or not table.presence_only:
        return out
    corrected: list[TableEvent] = []
    for item in out:
        corrected.append(item)
        uci = item.data.get("uci")
        if item.type != "move" or not item.data.get("final") or not isinstance(uci, str):
            continue
        if len(uci) == 5 and uci[4] == "q":
            args = {"ply": item.data["ply"], "uci": uci[:4] + piece}
            try:
                corrected += table.admin("correct", args, item.time)
            except TableError as exc:
                logger.warning("the promotion at ply %s stays a queen: %s", args["ply"], exc)
    return corrected


def _time_control(text: str, events: list[BoardEvent]) -> str:
    if text == AUTO:
        first = next((e for e in events if isinstance(e, ClockUpdate)), None)
        seconds = 0 if first is None else round(max(first.left, first.right))
        text = str(seconds) if seconds > 0 else "-"
    try:
        TimeControl.parse(text)
    except TimeControlError as exc:
        raise UsageError(str(exc)) from None
    return text


def _table(args: argparse.Namespace, time_control: str, epoch: float | None) -> TableLike:
    """The table a hall would run for these settings."""
    try:
        if args.variant == REALTIME:
            if args.options:
                raise TableError("variant realtime takes no options")
            settings: dict[str, Any] = {
                "rules": args.rules, "time_control": time_control, "start": args.fen,
            }  # fmt: skip
            if args.tick is not None:
                settings["tick"] = args.tick
            return RealtimeTable("offline", settings, epoch=epoch)
        if args.tick is not None:
            raise TableError(f"--tick is for realtime chess, not {args.variant}")
        return Table(
            "offline",
            TableSettings(
                rules=args.rules, variant=args.variant, time_control=time_control,
                start=args.fen, options=args.options,
            ),
            epoch=epoch,
        )  # fmt: skip
    except TableError as exc:
        raise UsageError(str(exc)) from None


def _events(args: argparse.Namespace) -> tuple[list[BoardEvent], float | None]:
    """The board events of the input and the UNIX time its first one was recorded (None
    when the input does not say)."""
    if args.raw is not None:
        data = _read_bytes(args.raw)
        return list(events_from_raw(data, presence_only=args.presence_only)), None
    path = Path(args.log)
    if not path.is_file():
        raise UsageError(f"no such log: {path}")
    items = list(read_record(path))
    started = _started(path)
    events = [item for item in items if not isinstance(item, Chunk)]
    if events:
        return events, started
    # A log of bytes only (written by another tool): decode them as the driver would.
    chunks = [(c.time, c.data) for c in items if isinstance(c, Chunk) and c.direction == "rx"]
    return list(events_from_chunks(chunks, presence_only=args.presence_only)), started


def _started(path: Path) -> float | None:
    """The UNIX time in the log's header (``started``), if it has one that reads."""
    try:
        with path.open(encoding="utf-8") as stream:
            header = json.loads(stream.readline())
        if not isinstance(header, Mapping) or header.get("type") != "header":
            return None
        return datetime.fromisoformat(str(header["started"])).timestamp()
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _read_bytes(name: str) -> bytes:
    try:
        return Path(name).read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {name}: {exc.strerror}") from None
