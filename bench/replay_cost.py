"""The tables' and the store's CPU per input, replaying a recorded hall log (no event loop,
no boards): a steady figure to compare two versions of the table, and a check that they
answer byte for byte what the log holds.

Each table of the log is rebuilt with a fresh table (``default_table_factory`` and the
stored settings), fed the stored inputs one by one; what it answers is turned into rows as
the hall turns it (``Store.append`` into a store in memory, committed every ``--batch``
inputs).  Printed: CPU per input by kind for the table (feed/tick/admin) and for the rows,
and the count of inputs whose output rows differ from the stored ones as text (must be 0).

The cycle collector runs as it does in the service (``--collector paced``, the default:
:class:`service.collector_pacer.CollectorPacer` from when the tables are built, so each
collection walks only what was made since the last one); ``unpaced`` leaves Python's
collector as it comes (its full collections walk every table of the replay: 18-22 us per
input of the 1,000-table log, charged to whichever input sets one off, a cost the service
does not pay), ``off`` disables it.  Printed besides: the collector's CPU per input.

    .venv/bin/python bench/hall.py --sizes 200 --duration 60 --keep-db /tmp/hall.db
    .venv/bin/python bench/replay_cost.py /tmp/hall.db [--limit 100000]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import gc
import heapq
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

from _hall_log import rebuilt_tables

from dgt.recording import event_from_json
from service.collector_pacer import CollectorPacer
from service.hall import Hall
from service.store import Store, output_json
from service.table.admin import replayed_admin_args
from service.table_runner import InputKind, TableInput

_cpu = time.process_time_ns


async def amain() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("db")
    parser.add_argument("--limit", type=int, default=0, help="inputs at most (0: all)")
    parser.add_argument("--batch", type=int, default=200, help="inputs per commit")
    parser.add_argument("--no-check", action="store_true")
    parser.add_argument(
        "--by-table", action="store_true", help="table after table (else interleaved in time)"
    )
    parser.add_argument(
        "--collector",
        choices=("paced", "unpaced", "off"),
        default="paced",
        help="the cycle collector as the service runs it (paced), as Python has it, or off",
    )
    parser.add_argument(
        "--gap",
        type=float,
        default=0.0,
        help="milliseconds the process sleeps after each input (0: none), as a live service "
        "sleeps between the inputs it waits for: the CPU per input of the same work then "
        "includes what an idle pause costs the next input (caches gone cold)",
    )
    parser.add_argument(
        "--gap-every", type=int, default=1, help="with --gap: sleep after every this many inputs"
    )
    args = parser.parse_args()
    gap = args.gap / 1000.0
    source = sqlite3.connect(f"file:{args.db}?mode=ro", uri=True)
    import tempfile

    tmp = tempfile.TemporaryDirectory(prefix="replay-cost-")
    store = Store(Path(tmp.name) / "r.db")
    ns: collections.Counter[tuple[str, str]] = collections.Counter()
    count: collections.Counter[str] = collections.Counter()
    differ = 0
    total = 0
    hall = Hall(store)
    tables, streams = rebuilt_tables(source, hall)
    # the tables' inputs interleaved as the hall took them (in time order)
    merged = heapq.merge(*streams, key=lambda x: (x[0], x[1]))
    if args.collector == "paced":
        CollectorPacer.start()  # the tables are built: as the service runs them
    elif args.collector == "off":
        gc.disable()
    collector = _CollectorTime()
    gc.callbacks.append(collector.callback)
    if args.by_table:
        merged = (x for stream in streams for x in stream)
    for _, _, runner, item in merged:
        kind = item.kind
        if kind == "board":
            kind = {"clock": "clock", "square": "square", "lever": "lever"}.get(
                item.data["event"], "board"
            )
        t0 = _cpu()
        if item.kind == "board":
            event = event_from_json(item.t, item.data)
            t1 = _cpu()
            fed = runner.feed(event, item.t)
            t2 = _cpu()
            if fed is not None:
                hall.table_input(runner, fed)
        elif item.kind == "tick":
            t1 = _cpu()
            produced = runner.tick(item.t)
            t2 = _cpu()
            if produced:
                hall.table_input(runner, TableInput(InputKind.TICK, item.t, produced))
        else:
            command = str(item.data["command"])
            args_ = replayed_admin_args(command, item.data.get("args", {}), item.outputs)
            t1 = _cpu()
            produced = runner.admin(command, args_, item.t)
            t2 = _cpu()
            outs = [output_json(o) for o in produced]
            hall._log(
                runner,
                "admin",
                item.t,
                {"command": command, "args": item.data.get("args", {})},
                outs,
            )
            hall._queue(runner, outs, None)
        t3 = _cpu()
        ns[kind, "parse"] += t1 - t0
        ns[kind, "table"] += t2 - t1
        ns[kind, "rows"] += t3 - t2
        count[kind] += 1
        total += 1
        if total % args.batch == 0:
            t4 = _cpu()
            hall._flush()
            ns["all", "commit"] += _cpu() - t4
        if args.limit and total >= args.limit:
            break
        if gap and total % args.gap_every == 0:
            await asyncio.sleep(gap)  # the loop waits in epoll, as the service's does
    hall._flush()
    store.commit()
    gc.callbacks.remove(collector.callback)
    CollectorPacer.stop()
    gc.enable()
    if not args.no_check:
        differ = _compare(source, store, tables, total)
    store.close()
    tmp.cleanup()
    idle = f", {args.gap:g} ms idle after every {args.gap_every} input(s)" if gap else ""
    print(f"inputs {total}, differing {differ}{idle}")
    kinds = sorted(count, key=lambda k: -count[k])
    for kind in kinds:
        n = count[kind]
        parts = "  ".join(
            f"{stage} {ns[kind, stage] / n / 1000:6.1f}" for stage in ("parse", "table", "rows")
        )
        print(f"{kind:7s} {n:7d}  us/input: {parts}")
    all_ns = sum(v for (k, s), v in ns.items())
    print(
        f"all     {total:7d}  us/input: {all_ns / max(total, 1) / 1000:6.1f} "
        f"(commit {ns['all', 'commit'] / max(total, 1) / 1000:.1f}); cycle collector "
        f"({args.collector}) {collector.ns / max(total, 1) / 1000:.1f} of it"
    )
    return 1 if differ else 0


class _CollectorTime:
    """CPU spent in the cycle collector's passes (``gc.callbacks``)."""

    def __init__(self) -> None:
        self.ns = 0
        self._start = 0

    def callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._start = _cpu()
        else:
            self.ns += _cpu() - self._start


def _compare(source: sqlite3.Connection, store: Store, tables: list[str], total: int) -> int:
    """Rows written here that differ from the recorded ones (as text), table by table, up
    to the inputs replayed."""
    differ = 0
    mine = store._db
    for table_id in tables:
        query = (
            "SELECT role, kind, t, data FROM log WHERE table_id = ? AND role != 'table' "
            "ORDER BY seq"
        )
        got = mine.execute(query, (table_id,)).fetchall()
        want = source.execute(query, (table_id,)).fetchall()[: len(got)]
        for i, (a, b) in enumerate(zip(got, want, strict=False)):
            if a != b:
                differ += 1
                if differ <= 3:
                    print(f"differs: table {table_id} row {i}:\n  {a}\n  {b}", file=sys.stderr)
        if len(got) != len(want):
            differ += 1
    return differ


if __name__ == "__main__":
    sys.exit(asyncio.run(amain()))
