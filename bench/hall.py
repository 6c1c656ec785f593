"""Hall figure: N emulated boards in one process on one core, board event to SSE update.

Everything runs in one process pinned to one CPU: N virtual DGT boards with DGT 3000 clocks
(in-process transport), each replaying real games with human timing (a move every 2-6 s,
the clock reporting every second while it runs); the service (``dgt.Board`` per table,
``Table``, the SQLite store with commit-before-publish, the web server) and one spectator
following the overview stream (``/api/stream``, every table) over HTTP on 127.0.0.1.

Reported per N, over a measuring window after a warm-up:

* latency: from the moment the board's bytes were received (the ``dgt.Board`` event time)
  to the moment the spectator parsed the SSE message carrying the table's new state,
  p50 / p99 / max (time is not accelerated: the replay runs at human speed);
* CPU share: CPU seconds of the whole process (emulated boards and replay included) per
  wall second;
* memory per table: growth of the process's resident set from before the tables were
  built to the end of the window, divided by N (emulated boards included);
* updates and moves seen, and how many updates the stream merged for a slow reader.

    .venv/bin/python bench/hall.py                 # N = 100, 500, 1000, 30 s each
    .venv/bin/python bench/hall.py --quick         # N = 20, 4 s (CI smoke run)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from service.commands.demo import emulated_tables, load_games, play  # noqa: E402
from service.hall import Hall  # noqa: E402
from service.store import Store  # noqa: E402
from service.web import WebServer  # noqa: E402

SHARED_GAMES = ROOT.parent / "shared" / "data" / "games" / "lichess-2012-12-31-100.pgn"


def rss_bytes() -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class Spectator:
    """Follows the overview stream and keeps the latency of every update."""

    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.updates = 0
        self.moves = 0
        self.measuring = False

    async def follow(self, url: str) -> None:
        timeout = aiohttp.ClientTimeout(total=None, sock_read=None)
        async with (
            aiohttp.ClientSession(timeout=timeout) as session,
            session.get(url + "api/stream") as response,
        ):
            async for raw in response.content:
                if not raw.startswith(b"data: "):
                    continue
                now = time.monotonic()
                body = json.loads(raw[6:])
                t_in = body.get("t_in")
                if not self.measuring or t_in is None:
                    continue
                self.updates += 1
                self.latencies.append(now - t_in)
                self.moves += sum(1 for e in body.get("events", ()) if e["type"] == "move")


async def measure(n: int, args: argparse.Namespace, games: list[Any]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="dgt-hall-") as tmp:
        store = Store(Path(tmp) / "hall.db")
        rss_before = rss_bytes()
        hall = Hall(store)
        runners = emulated_tables(hall, n, rules="casual")
        server = WebServer(hall, "hall-bench-token", port=0, expose_timing=True)
        url = await server.start()
        built = time.monotonic()
        await hall.start()
        await asyncio.gather(*(runner.wait_ready(60) for runner, _ in runners))
        connected = time.monotonic() - built
        spectator = Spectator()
        follower = asyncio.create_task(spectator.follow(url))
        rng = random.Random(args.seed)
        players = [
            asyncio.create_task(
                play(hall, runner, line, games, first=i, speed=args.speed,
                     rng=random.Random(rng.randrange(1 << 30)), pause=2.0)
            )
            for i, (runner, line) in enumerate(runners)
        ]  # fmt: skip
        try:
            await asyncio.sleep(args.warmup)
            spectator.measuring = True
            merged_before = server.hub.merged
            cpu0, wall0 = cpu_seconds(), time.monotonic()
            await asyncio.sleep(args.duration)
            cpu1, wall1 = cpu_seconds(), time.monotonic()
            spectator.measuring = False
            merged = server.hub.merged - merged_before
            rss_after = rss_bytes()
            rows = store.rows_written
        finally:
            for task in [*players, follower]:
                task.cancel()
            await asyncio.gather(*players, follower, return_exceptions=True)
            await server.close()
            await hall.close()
            store.close()
    lat = [x * 1000 for x in spectator.latencies]
    return {
        "n": n,
        "connect_s": connected,
        "p50": statistics.median(lat) if lat else float("nan"),
        "p99": percentile(lat, 0.99),
        "max": max(lat) if lat else float("nan"),
        "cpu": (cpu1 - cpu0) / (wall1 - wall0),
        "mb_per_table": (rss_after - rss_before) / n / 1e6,
        "updates": spectator.updates,
        "moves": spectator.moves,
        "merged": merged,
        "window": wall1 - wall0,
        "rows": rows,
    }


async def main_async(args: argparse.Namespace) -> int:
    extra = [str(SHARED_GAMES)] if SHARED_GAMES.is_file() else []
    games = load_games(extra)
    print(f"games: {len(games)} real games replayed with human timing (speed x{args.speed:g}); "
          f"window {args.duration:g} s after {args.warmup:g} s warm-up; one CPU")  # fmt: skip
    for n in args.sizes:
        r = await measure(n, args, games)
        print(
            f"N={r['n']}: latency p50 {r['p50']:.1f} ms, p99 {r['p99']:.1f} ms, "
            f"max {r['max']:.1f} ms; CPU {r['cpu'] * 100:.0f}%; "
            f"{r['mb_per_table']:.2f} MB/table; {r['updates'] / r['window']:,.0f} updates/s, "
            f"{r['moves'] / r['window']:,.1f} move events/s, {r['merged']:,} merged; "
            f"connect {r['connect_s']:.1f} s; {r['rows']:,} log rows",
            flush=True,
        )
    print("goal: 1,000 tables on one core, p99 < 50 ms, < 1 MB/table")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 500, 1000])
    parser.add_argument("--duration", type=float, default=30.0, help="measuring window, s")
    parser.add_argument("--warmup", type=float, default=8.0, help="seconds before measuring")
    parser.add_argument("--speed", type=float, default=1.0, help="replay speed-up (1 = human)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="N = 20 for 4 s (CI smoke run)")
    args = parser.parse_args()
    if args.quick:
        args.sizes, args.duration, args.warmup = [20], 4.0, 2.0
    with contextlib.suppress(AttributeError, OSError):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    sys.exit(main())
