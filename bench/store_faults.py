"""Store faults figure: the store when the world goes wrong, one printed row per case: the
attack, what the service answered, whether the service was still up afterwards, and the
shown moves lost.

Cases (each on its own database, the service on 127.0.0.1 with a random port):

* full disk, SIGTERM / kill -9: ``dgt-service demo`` plays on a database in a 2 MB tmpfs;
  after a while the disk is filled up; play goes on; then the service is stopped with
  SIGTERM (or killed with SIGKILL), the disk freed, and the tables rebuilt from the store
  (a recovery file left by the stop is folded in, as the next start does);
* read-only: a database on a tmpfs remounted read-only;
* two services: a second service started on the database of a running one;
* surrogate: admin requests with a lone surrogate (``"\\ud800"``) as a player's name, while
  the boards play;
* damaged page, rows not JSON: a start on a damaged database.

"Shown" counts the completed moves a spectator's live stream showed and, separately, what
``GET /api/tables/ID`` (what a page opened then shows) and each table's PGN
(``/games/ID-N.pgn``) showed just before the stop, while the store could not write; "lost"
is a shown move missing from the game rebuilt from the store.  The full-disk rows also say
what the service said meanwhile: ``GET /api/status`` (the rows kept in memory, the tables
shown as of their last commit) and whether the live stream's ``status`` event (the pages'
banner) came.  Needs root for the tmpfs cases (skipped with the reason otherwise).
Bounded: about a minute (``--quick``: half).

    .venv/bin/python bench/store_faults.py
    .venv/bin/python bench/store_faults.py --quick
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import aiohttp
from crash import Move, compare, final_moves, pgn_moves, rebuilt_games

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "store-faults-bench-token"
BOARDS = 2


@contextlib.contextmanager
def small_disk(where: Path) -> Iterator[Path | None]:
    """A 2 MB tmpfs (None when it cannot be mounted); always unmounted at the end."""
    target = where / "mnt"
    target.mkdir(parents=True)
    mounted = (
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(target)],
            capture_output=True,
            check=False,
        ).returncode
        == 0
    )
    try:
        yield target if mounted else None
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(target)], capture_output=True, check=False)


def fill(disk: Path) -> Path:
    filler = disk / "filler"
    with filler.open("wb", buffering=0) as handle:
        for size in (65536, 512):
            with contextlib.suppress(OSError):
                while True:
                    handle.write(b"\0" * size)
    return filler


def one_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return "(nothing)"
    last = lines[-1]
    more = f" [+{len(lines) - 1} line(s)]" if len(lines) > 1 else ""
    return (last if len(last) <= 110 else last[:107] + "...") + more


def fetch(url: str, *, data: bytes | None = None) -> tuple[int, Any]:
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"}
    request = urllib.request.Request(url, data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        body = exc.read()
        try:
            return exc.code, json.loads(body)
        except ValueError:
            return exc.code, body.decode(errors="replace")
    except (OSError, ValueError) as exc:
        return 0, str(exc)


def cli(*args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "service.cli", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
        check=False,
    )


async def follow(
    url: str, table_id: str, shown: dict[str, list[Move]], said: list[dict[str, Any]]
) -> None:
    """Record the completed moves of every state the table's stream shows, and every
    ``status`` event (the store's state) it carries."""
    timeout = aiohttp.ClientTimeout(total=None, sock_read=None)
    async with (
        aiohttp.ClientSession(timeout=timeout) as session,
        session.get(f"{url}api/stream?table={table_id}") as response,
    ):
        event = "message"
        async for raw in response.content:
            line = raw.decode(errors="replace").rstrip("\r\n")
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                body = json.loads(line[6:])
                if event == "status":
                    said.append(body["store"])
                elif event == "state":
                    moves = final_moves(body["state"])
                    if moves or table_id not in shown:
                        shown[table_id] = moves
            elif not line:
                event = "message"


class Demo:
    """``dgt-service demo`` on ``db``, its streams followed."""

    def __init__(self, db: Path, speed: float) -> None:
        self.db = db
        self.speed = speed
        self.proc: asyncio.subprocess.Process | None = None
        self.url = ""
        self.shown: dict[str, list[Move]] = {}
        self.said: list[dict[str, Any]] = []
        """The ``status`` events the streams carried."""
        self.followers: list[asyncio.Task[None]] = []
        self.tables = [str(i) for i in range(1, BOARDS + 1)]

    async def start(self) -> bool:
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "service.cli", "demo", "--boards", str(BOARDS),
            "--speed", str(self.speed), "--port", "0", "--db", str(self.db),
            "--admin-token", TOKEN, "--seed", "1",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=ROOT,
        )  # fmt: skip
        assert self.proc.stdout is not None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                line = await asyncio.wait_for(self.proc.stdout.readline(), 60)
            except TimeoutError:
                return False
            if not line:
                return False
            match = re.match(rb"open (http://\S+/) ", line)
            if match:
                self.url = match.group(1).decode()
                self.followers = [
                    asyncio.create_task(follow(self.url, t, self.shown, self.said))
                    for t in self.tables
                ]
                return True
        return False

    def api_shown(self) -> dict[str, list[Move]]:
        shown: dict[str, list[Move]] = {}
        for table_id in self.tables:
            status, state = fetch(f"{self.url}api/tables/{table_id}")
            if status == 200 and isinstance(state, dict):
                shown[table_id] = final_moves(state)
        return shown

    def pgn_shown(self) -> dict[str, list[Move]]:
        """The moves of each table's newest game with moves, as its PGN shows them."""
        shown: dict[str, list[Move]] = {}
        status, listing = fetch(f"{self.url}api/games")
        if status != 200 or not isinstance(listing, dict):
            return shown
        for game in listing["games"]:
            request = urllib.request.Request(f"{self.url.rstrip('/')}{game['pgn']}")
            with contextlib.suppress(OSError), urllib.request.urlopen(request, timeout=5) as got:
                moves = pgn_moves(got.read().decode())
                if moves:
                    shown[str(game["table"])] = moves
        return shown

    def store_status(self) -> str:
        """What ``GET /api/status`` says, in a few words."""
        status, body = fetch(f"{self.url}api/status")
        if status != 200 or not isinstance(body, dict):
            return f"/api/status: {status}"
        store = body["store"]
        behind = ",".join(store.get("tables_behind") or []) or "none"
        return f"/api/status {store['state']}, {store['unstored']} kept, tables behind: {behind}"

    def up(self) -> bool:
        return fetch(f"{self.url}api/tables")[0] == 200

    async def stop(self, sig: signal.Signals) -> tuple[int, str]:
        assert self.proc is not None
        with contextlib.suppress(ProcessLookupError):
            self.proc.send_signal(sig)
        try:
            _, err = await asyncio.wait_for(self.proc.communicate(), 30)
        except TimeoutError:
            self.proc.kill()
            _, err = await self.proc.communicate()
        for task in self.followers:
            task.cancel()
        await asyncio.gather(*self.followers, return_exceptions=True)
        return int(self.proc.returncode or 0), err.decode(errors="replace")


def lost_moves(db: Path, tables: list[str], shown: dict[str, list[Move]]) -> tuple[int, int]:
    """(shown, lost) of ``shown`` against the tables rebuilt from ``db``."""
    games, _ = rebuilt_games(db, tables)
    total = lost = 0
    for table_id, moves in shown.items():
        total += len(moves)
        lost += compare(moves, games.get(table_id, [[]]))[0]
    return total, lost


Row = tuple[str, str, str, str]


async def full_disk(args: argparse.Namespace, tmp: Path, sig: signal.Signals) -> Row:
    attack = f"full disk (2 MB tmpfs), then {sig.name}"
    with small_disk(tmp / sig.name) as disk:
        if disk is None:
            return attack, "skipped: cannot mount a tmpfs (needs root)", "-", "-"
        db = disk / "hall.db"
        demo = Demo(db, args.speed)
        if not await demo.start():
            await demo.stop(signal.SIGKILL)
            return attack, "did not start", "no", "-"
        await asyncio.sleep(args.play)
        filler = fill(disk)
        await asyncio.sleep(args.play)
        api = demo.api_shown()
        pgn = demo.pgn_shown()
        said = demo.store_status()
        up = demo.up()
        status, err = await demo.stop(sig)
        failed = "cannot write the log" in err
        filler.unlink()
        stream_total, stream_lost = lost_moves(db, demo.tables, demo.shown)
        api_total, api_lost = lost_moves(db, demo.tables, api)
        pgn_total, pgn_lost = lost_moves(db, demo.tables, pgn)
        banner = sum(1 for s in demo.said if s.get("state") == "failing")
        answer = f"exit {status}; " + (
            "store failed; " if failed else "store never failed (WAL had room); "
        )
        answer += f"{said}; stream status events 'failing': {banner}; "
        answer += one_line(err) if status else "no message"
        return (
            attack,
            answer,
            "yes" if up else "no",
            f"stream {stream_lost}/{stream_total}, page {api_lost}/{api_total}, "
            f"pgn {pgn_lost}/{pgn_total}",
        )


async def read_only(args: argparse.Namespace, tmp: Path) -> Row:
    attack = "read-only database (tmpfs remounted ro)"
    with small_disk(tmp / "ro") as disk:
        if disk is None:
            return attack, "skipped: cannot mount a tmpfs (needs root)", "-", "-"
        db = disk / "hall.db"
        cli("run", "emulator", "--port", "0", "--seconds", "0.5", "--db", str(db),
            "--admin-token", TOKEN)  # fmt: skip
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)  # noqa: ASYNC221
        done = cli("run", "emulator", "--port", "0", "--seconds", "3", "--db", str(db),
                   "--admin-token", TOKEN)  # fmt: skip
        up = "refused at start" if done.returncode else "ran"
        return attack, f"exit {done.returncode}; {one_line(done.stderr)}", up, "0 (never ran)"


async def two_services(args: argparse.Namespace, tmp: Path) -> Row:
    db = tmp / "two.db"
    demo = Demo(db, args.speed)
    if not await demo.start():
        await demo.stop(signal.SIGKILL)
        return "second service on one database", "first did not start", "no", "-"
    second = await asyncio.to_thread(
        cli, "demo", "--boards", "1", "--port", "0", "--seconds", "3", "--db", str(db),
        "--admin-token", TOKEN,
    )  # fmt: skip
    await asyncio.sleep(args.play)
    up = demo.up()
    api = demo.api_shown()
    status, _ = await demo.stop(signal.SIGTERM)
    total, lost = lost_moves(db, demo.tables, api)
    return (
        "second service on one database",
        f"second: exit {second.returncode}; {one_line(second.stderr)}; first: exit {status}",
        "yes" if up else "no",
        f"page {lost}/{total}",
    )


async def surrogate(args: argparse.Namespace, tmp: Path) -> Row:
    db = tmp / "surrogate.db"
    demo = Demo(db, args.speed)
    if not await demo.start():
        await demo.stop(signal.SIGKILL)
        return "lone surrogate in a player name", "did not start", "no", "-"
    answers: dict[int, int] = {}
    for _ in range(args.requests):
        status, _ = await asyncio.to_thread(
            fetch, f"{demo.url}api/admin/tables/1/players", data=b'{"white": "\\ud800"}'
        )
        answers[status] = answers.get(status, 0) + 1
        await asyncio.sleep(args.play / args.requests)
    await asyncio.sleep(1.0)
    up = demo.up()
    api = demo.api_shown()
    status, err = await demo.stop(signal.SIGTERM)
    total, lost = lost_moves(db, demo.tables, api)
    statuses = ", ".join(f"{n}x {code}" for code, n in sorted(answers.items()))
    edge = " (refused at the edge)" if set(answers) == {400} else ""
    return (
        f"lone surrogate in a player name x{args.requests}",
        f"{statuses}{edge}; exit {status}" + ("; traceback logged" if "Traceback" in err else ""),
        "yes" if up else "no",
        f"page {lost}/{total}",
    )


def make_store(db: Path) -> None:
    done = cli("run", "emulator", "--port", "0", "--seconds", "0.5", "--db", str(db),
               "--admin-token", TOKEN)  # fmt: skip
    assert done.returncode == 0, done.stderr
    connection = sqlite3.connect(db)
    with connection:
        connection.executemany(
            "INSERT INTO log (table_id, role, kind, t, data) VALUES ('1', 'out', 'x', 1, ?)",
            [(json.dumps({"padding": "x" * 200, "n": n}),) for n in range(3000)],
        )
    connection.close()


async def damaged(args: argparse.Namespace, tmp: Path, kind: str) -> Row:
    db = tmp / f"damaged-{kind}.db"
    make_store(db)
    if kind == "page":
        data = db.read_bytes()
        page = data.index(b'"n": 1500}') // 4096
        with db.open("r+b") as handle:
            handle.seek(page * 4096)
            handle.write(bytes(range(256)) * 16)
        attack = "damaged page"
    else:
        connection = sqlite3.connect(db)
        with connection:
            connection.execute(
                "INSERT INTO log (table_id, role, kind, t, data) VALUES ('1','in','tick',2,'{x')"
            )
        connection.close()
        attack = "rows that are not JSON"
    done = cli("run", "emulator", "--port", "0", "--seconds", "3", "--db", str(db),
               "--admin-token", TOKEN)  # fmt: skip
    traceback = "Traceback" in done.stderr
    answer = (
        f"exit {done.returncode}; " + ("TRACEBACK; " if traceback else "") + one_line(done.stderr)
    )
    checked = cli("store", "check", str(db))
    recovered = cli("store", "recover", str(db), str(tmp / f"recovered-{kind}.db"))
    answer += f"; store check exit {checked.returncode}, recover exit {recovered.returncode}"
    return attack, answer, "refused at start", "-"


async def main_async(args: argparse.Namespace) -> int:
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="dgt-store-faults-") as name:
        tmp = Path(name)
        rows.append(await full_disk(args, tmp, signal.SIGTERM))
        rows.append(await full_disk(args, tmp, signal.SIGKILL))
        rows.append(await read_only(args, tmp))
        rows.append(await two_services(args, tmp))
        rows.append(await surrogate(args, tmp))
        rows.append(await damaged(args, tmp, "page"))
        rows.append(await damaged(args, tmp, "json"))
    for attack, answer, up, lost in rows:
        print(f"{attack} | answer: {answer} | up: {up} | shown moves lost: {lost}")
    print("goal: 0 shown moves lost in every case, no traceback, one line at a refused start")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="shorter play (for CI)")
    parser.add_argument("--speed", type=float, default=8.0, help="replay speed-up")
    args = parser.parse_args()
    args.play = 2.0 if args.quick else 5.0
    args.requests = 5 if args.quick else 20
    if os.geteuid() != 0:
        print("note: not root: the tmpfs cases are skipped", file=sys.stderr)
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    sys.exit(main())
