"""Lichess pushes and relay feeds under the demo: N emulated boards replaying real games at
human speed, the service pushing round 1 to a stand-in of lichess's push endpoint on
127.0.0.1 (Bearer check, 512 KiB limit, an answer per game) and a poller reading
``/rounds/1.pgn?feed=lichess`` every few seconds as lichess's relay would.

Prints pushes per minute, bytes per push, the time from a change's commit to the push
carrying it leaving (p50, p99; commit -> push includes the wait for the push interval, 3 s
by default), and the feed reorders (goal 0): poll to poll, or push to push, a game seen
before moved relative to another, or a new game came in before one already shown.

    .venv/bin/python bench/broadcast.py --boards 100 --seconds 300
    .venv/bin/python bench/broadcast.py --quick
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import random
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _figures import percentile  # noqa: E402

from service import event_loop  # noqa: E402
from service.broadcast.hall_feeds import hall_feeds  # noqa: E402
from service.broadcast.push import LichessClient, Pusher  # noqa: E402
from service.commands.demo import emulated_tables, load_games, play  # noqa: E402
from service.config import BroadcastConfig, BroadcastRound  # noqa: E402
from service.hall import Hall  # noqa: E402
from service.store import Store  # noqa: E402
from service.web import WebServer  # noqa: E402

TOKEN = "lip_bench_token"
GAME_ID = re.compile(r'^\[GameId "([^"]+)"\]$', re.MULTILINE)
MAX_BODY = 512 * 1024


def reorders(before: list[str], after: list[str]) -> int:
    """Games of ``before`` that moved in ``after`` (relative order), plus new games that
    came in ahead of one already shown."""
    seen = set(before)
    common_after = [g for g in after if g in seen]
    common_before = [g for g in before if g in set(after)]
    moved = sum(1 for a, b in zip(common_before, common_after, strict=True) if a != b)
    last_old = max((i for i, g in enumerate(after) if g in seen), default=-1)
    inserted = sum(1 for i, g in enumerate(after) if g not in seen and i < last_old)
    return moved + inserted


class StandIn:
    """lichess's push endpoint, counting what it gets."""

    def __init__(self) -> None:
        self.pushes: list[tuple[float, int, list[str]]] = []
        self.refused = 0
        self.runner: web.AppRunner | None = None

    async def start(self) -> str:
        app = web.Application(client_max_size=2 * MAX_BODY)
        app.router.add_post("/api/broadcast/round/{id}/push", self.push)
        self.runner = web.AppRunner(app, access_log=None)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None
        return f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"  # type: ignore[union-attr]

    async def push(self, request: web.Request) -> web.Response:
        if request.headers.get("Authorization") != f"Bearer {TOKEN}":
            return web.json_response({"error": "No such token"}, status=401)
        body = await request.read()
        if len(body) > MAX_BODY:
            self.refused += 1
            return web.json_response({"error": "too large"}, status=413)
        ids = GAME_ID.findall(body.decode())
        self.pushes.append((time.monotonic(), len(body), ids))
        return web.json_response({"games": [{"tags": {"GameId": g}, "moves": 1} for g in ids]})

    async def close(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()


async def poll(url: str, every: float, orders: list[list[str]], stop: asyncio.Event) -> None:
    etag = None
    async with aiohttp.ClientSession() as session:
        while not stop.is_set():
            headers = {"Accept-Encoding": "gzip"} | ({"If-None-Match": etag} if etag else {})
            async with session.get(f"{url}rounds/1.pgn?feed=lichess", headers=headers) as r:
                if r.status == 200:
                    etag = r.headers.get("ETag")
                    orders.append(GAME_ID.findall(await r.text()))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), every)


async def run(args: argparse.Namespace) -> int:
    games = load_games(None)
    stand_in = StandIn()
    lichess = await stand_in.start()
    with tempfile.TemporaryDirectory(prefix="dgt-broadcast-") as tmp:
        store = Store(Path(tmp) / "hall.db")
        hall = Hall(store)
        runners = emulated_tables(hall, args.boards, rules="casual")
        hall_feeds(hall)
        server = WebServer(hall, "bench-admin-token", port=0)
        url = await server.start()
        await hall.start()
        await asyncio.gather(*(runner.wait_ready(60) for runner, _ in runners))
        config = BroadcastConfig(
            (BroadcastRound("1", "Bench123", 0.0),), lichess, None, "X", args.interval
        )
        pusher = Pusher(hall, config, LichessClient(lichess, TOKEN))
        pusher.start()
        rng = random.Random(args.seed)

        async def staggered(delay: float, i: int, runner: Any, line: Any) -> None:
            await asyncio.sleep(delay)
            await play(
                hall, runner, line, games, first=i, speed=args.speed,
                rng=random.Random(rng.randrange(1 << 30)), pause=2.0,
            )  # fmt: skip

        players = [
            asyncio.create_task(staggered(rng.uniform(0, 5), i, runner, line))
            for i, (runner, line) in enumerate(runners)
        ]
        orders: list[list[str]] = []
        stop = asyncio.Event()
        poller = asyncio.create_task(poll(url, args.poll, orders, stop))
        started = time.monotonic()
        await asyncio.sleep(args.seconds)
        elapsed = time.monotonic() - started
        stop.set()
        await poller
        for task in players:
            task.cancel()
        await asyncio.gather(*players, return_exceptions=True)
        await pusher.close()
        await server.close()
        await hall.close()
        store.close()
    await stand_in.close()

    pushes = stand_in.pushes
    sizes = [size for _, size, _ in pushes]
    latencies = list(pusher.latencies)
    feed_reorders = sum(reorders(a, b) for a, b in itertools.pairwise(orders))
    whole = [ids for _, size, ids in pushes]
    push_reorders = sum(reorders(a, b) for a, b in itertools.pairwise(whole))
    print(f"{args.boards} boards at speed {args.speed:g}, {elapsed:.0f} s, push interval "
          f"{args.interval:g} s, polls every {args.poll:g} s")  # fmt: skip
    print(f"pushes: {len(pushes):,} ({len(pushes) / elapsed * 60:.1f} per minute)")
    if sizes:
        print(
            f"bytes per push: mean {sum(sizes) / len(sizes):,.0f}  max {max(sizes):,}"
            f"  (limit {MAX_BODY:,}; refused as too large: {stand_in.refused})"
        )
        print(f"games in the last push: {len(pushes[-1][2])}")
    if latencies:
        print(
            f"commit -> push leaving: p50 {percentile(latencies, 0.5) * 1000:,.0f} ms"
            f"  p99 {percentile(latencies, 0.99) * 1000:,.0f} ms  ({len(latencies):,} changes)"
        )
    reads = list(pusher.read_times)
    if reads:
        print(
            f"reading the round on the hall's loop: p50 {percentile(reads, 0.5) * 1000:.1f} ms"
            f"  p99 {percentile(reads, 0.99) * 1000:.1f} ms  ({len(reads):,} reads)"
        )
    print(f"feed polls: {len(orders)}, reorders: {feed_reorders} (goal 0)")
    print(f"push reorders: {push_reorders} (goal 0)")
    return 0 if feed_reorders == 0 and push_reorders == 0 else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--boards", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--speed", type=float, default=1.0, help="replay speed-up (1 = human)")
    parser.add_argument("--interval", type=float, default=3.0, help="seconds between pushes")
    parser.add_argument("--poll", type=float, default=2.0, help="seconds between feed polls")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="6 boards, 8 s, speed 10")
    args = parser.parse_args()
    if args.quick:
        args.boards, args.seconds, args.speed, args.interval, args.poll = 6, 8.0, 10.0, 1.0, 0.5
    return event_loop.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
