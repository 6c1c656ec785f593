"""The stream's CPU per published update, replaying a recorded hall log (no event loop, no
boards): the hall of :mod:`bench.replay_cost` with a :class:`~service.web.stream.StreamHub`
subscribed and one overview stream (``?``: every table's summary, as bench/hall.py's
spectator follows), its frames taken after every commit.  Printed: updates published, CPU per
update in :meth:`StreamHub.on_update` (summary, JSON, frame, queueing), and a digest of every
frame (the server time fixed) to compare two versions byte for byte.

    .venv/bin/python bench/publish_cost.py COPY-OF-hall.db [--limit 100000] [--batch 20]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import heapq
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

from _hall_log import rebuilt_tables

import service.hall as hall_module
import service.web.stream as stream_module
from dgt.recording import event_from_json
from service.hall import Hall
from service.store import Store, output_json
from service.table.admin import replayed_admin_args
from service.table_runner import InputKind, TableInput
from service.web.stream import StreamClient, StreamHub

_cpu = time.process_time_ns


class _FixedTime:
    """``time`` for the stream module with a fixed ``time()``, and the hall's monotonic time
    fixed (frames comparable from run to run)."""

    @staticmethod
    def time() -> float:
        return 1_800_000_000.25


async def amain() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("db")
    parser.add_argument("--limit", type=int, default=0, help="inputs at most (0: all)")
    parser.add_argument("--batch", type=int, default=20, help="inputs per commit")
    parser.add_argument("--no-stream", action="store_true", help="no hub (to subtract)")
    parser.add_argument("--frames", help="write every frame to this file (to compare)")
    args = parser.parse_args()
    stream_module.time = _FixedTime  # type: ignore[assignment]
    hall_module.time.monotonic = _FixedTime.time  # type: ignore[assignment]  # this process
    source = sqlite3.connect(f"file:{args.db}?mode=ro", uri=True)
    tmp = tempfile.TemporaryDirectory(prefix="publish-cost-")
    store = Store(Path(tmp.name) / "r.db")
    hall = Hall(store)
    _, streams = rebuilt_tables(source, hall)
    hub = StreamHub(hall)  # type: ignore[arg-type]
    if args.no_stream:
        hub.close()
    client = StreamClient(None, False)
    hub.add(client)
    spent = [0, 0]
    on_update = hub.on_update

    def timed(update: Any) -> None:
        t0 = _cpu()
        on_update(update)
        spent[0] += _cpu() - t0
        spent[1] += 1

    if not args.no_stream:
        hall.unsubscribe(on_update)
        hall.subscribe(timed)
    digest = hashlib.sha256()
    out = open(args.frames, "wb") if args.frames else None  # noqa: SIM115, ASYNC230
    frames = 0

    def drain() -> None:
        nonlocal frames
        for table_id in sorted(client.pending):
            digest.update(client.pending[table_id])
            if out is not None:
                out.write(client.pending[table_id])
            frames += 1
        client.pending.clear()

    total = 0
    for _, _, runner, item in heapq.merge(*streams, key=lambda x: (x[0], x[1])):
        if item.kind == "board":
            fed = runner.feed(event_from_json(item.t, item.data), item.t)
            if fed is not None:
                hall.table_input(runner, fed)
        elif item.kind == "tick":
            produced = runner.tick(item.t)
            if produced:
                hall.table_input(runner, TableInput(InputKind.TICK, item.t, produced))
        else:
            command = str(item.data["command"])
            args_ = replayed_admin_args(command, item.data.get("args", {}), item.outputs)
            produced = runner.admin(command, args_, item.t)
            outs = [output_json(o) for o in produced]
            hall._log(runner, "admin", item.t,
                      {"command": command, "args": item.data.get("args", {})}, outs)  # fmt: skip
            hall._queue(runner, outs, None)
        total += 1
        if total % args.batch == 0:
            hall._flush()
            drain()
        if args.limit and total >= args.limit:
            break
    hall._flush()
    drain()
    store.close()
    tmp.cleanup()
    if out is not None:
        out.close()
    n = max(spent[1], 1)
    us = spent[0] / n / 1000
    print(f"inputs {total}, updates {spent[1]}, frames {frames}, "
          f"stream us/update {us:.2f}, digest {digest.hexdigest()[:16]}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(amain()))
