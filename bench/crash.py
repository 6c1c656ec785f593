"""Kill -9 figure: ``dgt-service demo`` killed with SIGKILL at random moments and restarted
on the same store each time; moves shown before each kill are compared with the tables the
store rebuilds.

Each round: start the demo (N emulated boards, replay sped up) on one database, follow every
table's live stream (what a spectator saw), kill the process with SIGKILL at a random moment
(0-4 s after the start, so some kills hit start-up and the rebuild), then rebuild every table
from the store the way a restart does (``Hall.add_table``) and compare:

* lost: a completed move that was shown and is missing from the rebuilt game;
* changed: a completed move that was shown and reads differently in the rebuilt game.

The next round restarts the demo on the same store (its start rebuilds the tables again and
the boards re-sync).  Prints the figure lines; ``--quick`` does 3 kills for CI.

    .venv/bin/python bench/crash.py            # 100 kills
    .venv/bin/python bench/crash.py --quick
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import chess.pgn

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from service.config import TableConfig  # noqa: E402
from service.hall import Hall  # noqa: E402
from service.store import Store  # noqa: E402

START_LIMIT = 60.0
"""Seconds the demo has to put its page up before the round counts as a failed start."""

Move = tuple[int, str, str]
"""(ply, san, uci) of a completed move."""


def final_moves(state: dict[str, Any]) -> list[Move]:
    """The completed moves of a table state, in order."""
    return [(m["ply"], m["san"], m["uci"]) for m in state.get("moves", []) if m.get("final")]


def pgn_moves(text: str) -> list[Move]:
    """The moves of a PGN game as (ply, san, uci)."""
    game = chess.pgn.read_game(__import__("io").StringIO(text))
    if game is None:
        return []
    board = game.board()
    out: list[Move] = []
    for ply, move in enumerate(game.mainline_moves(), 1):
        out.append((ply, board.san(move), move.uci()))
        board.push(move)
    return out


def compare(shown: list[Move], candidates: list[list[Move]]) -> tuple[int, int]:
    """(lost, changed) of the ``shown`` moves against the best-matching rebuilt game."""
    if not shown:
        return 0, 0
    best: tuple[int, int] | None = None
    for rebuilt in candidates:
        by_ply = {ply: (san, uci) for ply, san, uci in rebuilt}
        lost = sum(1 for ply, _, _ in shown if ply not in by_ply)
        changed = sum(1 for ply, san, uci in shown if ply in by_ply and by_ply[ply] != (san, uci))
        if best is None or lost + changed < sum(best):
            best = (lost, changed)
    assert best is not None
    return best


def rebuilt_games(db: Path, tables: list[str]) -> tuple[dict[str, list[list[Move]]], int]:
    """Every table rebuilt from the store as a restart does: its current game and the
    games it finished; and the number of inputs whose replay differed from the log."""
    store = Store(db)
    hall = Hall(store)
    games: dict[str, list[list[Move]]] = {}
    divergences = 0
    try:
        for table_id in tables:
            if store.settings(table_id) is None:
                games[table_id] = [[]]
                continue
            runner = hall.add_table(TableConfig(table_id, "emulator", None, {}))
            divergences += runner.replay_divergences
            found = [final_moves(runner.table.state())]
            found += [pgn_moves(entry.pgn) for entry in runner.games if entry.pgn]
            games[table_id] = found
    finally:
        store.close()
    return games, divergences


async def follow(url: str, table_id: str, shown: dict[str, list[Move]]) -> None:
    """Record the completed moves of every state the table's stream shows."""
    timeout = aiohttp.ClientTimeout(total=None, sock_read=None)
    async with (
        aiohttp.ClientSession(timeout=timeout) as session,
        session.get(f"{url}api/stream?table={table_id}") as response,
    ):
        async for raw in response.content:
            line = raw.decode(errors="replace")
            if line.startswith("data: "):
                state = json.loads(line[6:])["state"]
                moves = final_moves(state)
                if moves or table_id not in shown:
                    shown[table_id] = moves


async def one_round(
    args: argparse.Namespace, db: Path, rng: random.Random, index: int
) -> dict[str, Any]:
    command = [
        sys.executable, "-m", "service.cli", "demo", "--boards", str(args.boards),
        "--speed", str(args.speed), "--port", "0", "--db", str(db),
        "--admin-token", "crash-bench-token", "--seed", str(index),
    ]  # fmt: skip
    started = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        *command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL, cwd=ROOT
    )
    # One kill in five hits the start-up (imports, rebuild from the store, handshakes);
    # the others a random moment of play after the page is up.
    early = rng.random() < args.early
    delay = rng.uniform(0.0, 1.5) if early else rng.uniform(0.2, args.max_delay)
    kill_at = started + delay if early else None
    tables = [str(i) for i in range(1, args.boards + 1)]
    shown: dict[str, list[Move]] = {}
    followers: list[asyncio.Task[None]] = []
    ready: float | None = None
    assert proc.stdout is not None
    try:
        while ready is None:
            limit = (kill_at if kill_at is not None else started + START_LIMIT) - time.monotonic()
            if limit <= 0:
                break
            try:
                line = await asyncio.wait_for(proc.stdout.readline(), limit)
            except TimeoutError:
                break
            if not line:
                break
            match = re.match(rb"open (http://\S+/) ", line)
            if match:
                ready = time.monotonic() - started
                url = match.group(1).decode()
                followers = [asyncio.create_task(follow(url, t, shown)) for t in tables]
        if kill_at is None:
            kill_at = time.monotonic() + delay
        await asyncio.sleep(max(0.0, kill_at - time.monotonic()))
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGKILL)
        await proc.wait()
        for task in followers:
            task.cancel()
        await asyncio.gather(*followers, return_exceptions=True)
    games, divergences = rebuilt_games(db, tables)
    lost = changed = 0
    for table_id, moves in shown.items():
        table_lost, table_changed = compare(moves, games.get(table_id, [[]]))
        if (table_lost or table_changed) and args.verbose:
            print(f"table {table_id}: shown {moves}\n  rebuilt {games.get(table_id)}")
        lost += table_lost
        changed += table_changed
    return {
        "shown": sum(len(m) for m in shown.values()),
        "lost": lost,
        "changed": changed,
        "divergences": divergences,
        "ready": ready,
        "early": early,
        "killed_after": kill_at - started,
    }


async def main_async(args: argparse.Namespace) -> int:
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="dgt-crash-") as tmp:
        db = Path(tmp) / "crash.db"
        rounds = []
        for index in range(args.kills):
            result = await one_round(args, db, rng, index)
            rounds.append(result)
            if args.verbose:
                print(f"kill {index + 1}: {result}", flush=True)
        store = Store(db)
        rows = store.count()
        store.close()
    ready = [r["ready"] for r in rounds if r["ready"] is not None]
    shown_total = sum(r["shown"] for r in rounds)
    print(f"kills: {len(rounds)} (SIGKILL at a random moment: {args.early:.0%} in the first "
          f"1.5 s of start-up, the rest 0.2-{args.max_delay:g} s after the page was up; "
          f"{args.boards} boards, replay x{args.speed:g})")  # fmt: skip
    print(f"kills before the page was up: {sum(1 for r in rounds if r['ready'] is None)}")
    print(
        f"failed starts (no page within {START_LIMIT:g} s, not killed early): "
        f"{sum(1 for r in rounds if r['ready'] is None and not r['early'])}"
    )
    print(f"completed moves shown before the kills: {shown_total}")
    print(f"moves lost: {sum(r['lost'] for r in rounds)}")
    print(f"moves changed: {sum(r['changed'] for r in rounds)}")
    print(f"replay divergences: {sum(r['divergences'] for r in rounds)}")
    print(f"log rows at the end: {rows:,}")
    if ready:
        print(f"start to page up: median {statistics.median(ready):.2f} s, max {max(ready):.2f} s")
    print("goal: 0 lost, 0 changed")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=100)
    parser.add_argument("--boards", type=int, default=4)
    parser.add_argument("--speed", type=float, default=8.0, help="replay speed-up")
    parser.add_argument(
        "--max-delay", type=float, default=4.0, help="latest kill, seconds after the page is up"
    )
    parser.add_argument(
        "--early",
        type=float,
        default=0.2,
        help="share of kills during start-up (0-1.5 s after the start)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="3 kills (CI smoke run)")
    parser.add_argument("--verbose", action="store_true", help="a line per kill")
    args = parser.parse_args()
    if args.quick:
        args.kills = min(args.kills, 3)
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    sys.exit(main())
