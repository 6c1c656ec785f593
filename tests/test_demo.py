"""``dgt-service demo`` and ``dgt-service run`` as a user runs them (subprocesses): the page
comes up with emulated boards playing, a kill -9 loses or changes no move that was shown,
bad input gets one clear line and the service keeps running."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import random
import re
import signal
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "demo-test-token-42"


def load_bench(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "bench" / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fetch(url: str, *, data: bytes | None = None, token: str | None = None) -> tuple[int, Any]:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


async def start(*args: str) -> tuple[asyncio.subprocess.Process, str]:
    """Start ``dgt-service ARGS`` and return it with its page address."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "service.cli", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=ROOT,
    )  # fmt: skip
    assert proc.stdout is not None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = await asyncio.wait_for(proc.stdout.readline(), 30)
        assert line, "the service ended before printing its address"
        match = re.match(rb"open (http://127\.0\.0\.1:\d+/) ", line)
        if match:
            return proc, match.group(1).decode()
    raise AssertionError("no address printed")


async def poll(predicate: Any, seconds: float = 20.0) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = await asyncio.to_thread(predicate)
        if value:
            return value
        await asyncio.sleep(0.2)
    raise AssertionError("timed out")


async def test_demo_serves_emulated_boards_playing_real_games(tmp_path: Path) -> None:
    proc, url = await start("demo", "--boards", "3", "--speed", "10", "--port", "0",
                            "--seconds", "20", "--db", str(tmp_path / "d.db"))  # fmt: skip
    try:
        status, tables = await asyncio.to_thread(fetch, url + "api/tables")
        assert status == 200
        assert [t["id"] for t in tables["tables"]] == ["1", "2", "3"]

        def some_moves() -> bool:
            _, state = fetch(url + "api/tables/1")
            return len(state["moves"]) >= 2 and state["connection"]["state"] == "up"

        await poll(some_moves)
        _, state = await asyncio.to_thread(fetch, url + "api/tables/1")
        assert state["settings"]["white"] != "?"  # the game's players, set through the log
        status, _ = await asyncio.to_thread(fetch, url + "api/tables/1/log")
        assert status == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        _out, err = await asyncio.wait_for(proc.communicate(), 20)
    assert proc.returncode == 0, err
    assert b"Traceback" not in err


async def test_kill_9_loses_and_changes_no_shown_move(tmp_path: Path) -> None:
    crash = load_bench("crash")
    db = tmp_path / "k.db"
    for round_ in range(2):
        proc, url = await start("demo", "--boards", "2", "--speed", "10", "--port", "0",
                                "--db", str(db), "--admin-token", TOKEN,
                                "--seed", str(round_))  # fmt: skip
        shown: dict[str, list[Any]] = {}
        followers = [asyncio.create_task(crash.follow(url, t, shown)) for t in ("1", "2")]
        try:
            wanted = 3 + round_
            await poll(lambda s=shown, w=wanted: sum(len(m) for m in s.values()) >= w)
            await asyncio.sleep(0.1 + 0.37 * round_)
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            await proc.wait()
            for task in followers:
                task.cancel()
            await asyncio.gather(*followers, return_exceptions=True)
        assert proc.returncode == -signal.SIGKILL
        games, divergences = crash.rebuilt_games(db, ["1", "2"])
        assert divergences == 0
        for table_id, moves in shown.items():
            assert moves, table_id
            assert crash.compare(moves, games[table_id]) == (0, 0), (moves, games[table_id])


async def test_run_with_an_unknown_port_keeps_serving(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-board")
    proc, url = await start("run", "emulator", missing, "--port", "0", "--seconds", "15",
                            "--db", str(tmp_path / "r.db"))  # fmt: skip
    try:

        def down() -> dict[str, Any] | None:
            _, state = fetch(url + "api/tables/2")
            return state if state["connection"]["state"] == "down" else None

        state = await poll(down)
        assert "no such port" in state["connection"]["error"]
        _, first = await asyncio.to_thread(fetch, url + "api/tables/1")
        assert first["connection"]["state"] == "up"
        assert first["board"] == "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"
        status, error = await asyncio.to_thread(
            fetch, url + "api/admin/tables/1/players", data=b'{"white": "A"}'
        )
        assert status == 401
        assert error["error"].startswith("admin token missing or wrong")
    finally:
        proc.send_signal(signal.SIGTERM)
        _out, err = await asyncio.wait_for(proc.communicate(), 20)
    assert proc.returncode == 0
    assert b"Traceback" not in err


async def test_run_prints_a_generated_token_once(tmp_path: Path) -> None:
    env_free = {k: v for k, v in os.environ.items() if k != "DGT_ADMIN_TOKEN"}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "service.cli", "run", "emulator", "--port", "0",
        "--seconds", "0.5", "--db", str(tmp_path / "t.db"),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=ROOT, env=env_free,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 0, err
    tokens = re.findall(rb"admin token \(shown once\): (\S+)", out)
    assert len(tokens) == 1
    assert len(tokens[0]) >= 20


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run"], rb"no boards: give PORTs or --config FILE"),
        (["run", "--config", "{cfg}"], rb"bad\.toml:3: \[\[table\]\] table 1: rules must be"),
        (["run", "--config", "{missing}"], rb"nope\.toml: no such config file"),
        (["run", "emulator", "--port", "99999"], rb"--port 99999 is not a port number"),
        (["run", "emulator", "--rules", "blitz"], rb"--rules: rules must be one of"),
        (["run", "emulator", "--admin-token", "short"], rb"--admin-token must have at least 8"),
        (["demo", "--boards", "0"], rb"--boards must be 1\.\.1000"),
        (["run", "emulator", "--db", "{dir}"], rb"cannot open the database"),
    ],
)
def test_bad_command_lines_get_one_line(
    tmp_path: Path, args: list[str], message: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    from service.cli import main

    cfg = tmp_path / "bad.toml"
    cfg.write_text("[[table]]\nport = 'emulator'\nrules = 'lightning'\n")
    filled = [a.format(cfg=cfg, missing=tmp_path / "nope.toml", dir=tmp_path) for a in args]
    assert main([*filled, "--seconds", "1"]) == 2
    err = capsys.readouterr().err.encode()
    assert re.search(message, err), err
    assert err.count(b"\n") == 1


async def test_demo_on_pseudo_terminals_ends_without_link_warnings(tmp_path: Path) -> None:
    """``demo --pty`` lets its boards go before it closes their ports: a port closing under
    a board reads as a pulled cable, which must not be logged at every shutdown."""
    proc, url = await start(
        "demo", "--pty", "--boards", "2", "--port", "0", "--seconds", "4",
        "--db", str(tmp_path / "demo.db"),
    )  # fmt: skip
    status, tables = await asyncio.to_thread(fetch, url + "api/tables")
    assert status == 200
    assert len(tables["tables"]) == 2
    _, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 0
    assert b"link lost" not in err, err.decode(errors="replace")


async def test_the_demo_records_the_time_control_its_clocks_run_and_the_date_played(
    tmp_path: Path,
) -> None:
    """One demo table in-process: the PGN's ``TimeControl`` is the one the board's clock was
    set to (its readings start from 7:00 and gain 17 s a move), ``Date`` the day it began."""
    from datetime import UTC, datetime

    from service.commands.demo import TIME_CONTROL, emulated_tables, load_games, play
    from service.hall import Hall
    from service.store import Store

    assert TIME_CONTROL == "420+17"
    store = Store(tmp_path / "d.db")
    hall = Hall(store, tick_interval=0.2)
    [(runner, line)] = emulated_tables(hall, 1, time_control=TIME_CONTROL)
    await hall.start()
    replay = asyncio.create_task(
        play(hall, runner, line, load_games(None), speed=20, rng=random.Random(3), pause=0.1)
    )
    try:
        deadline = time.monotonic() + 30
        while sum(1 for m in runner.table.moves() if m["final"]) < 6:
            assert time.monotonic() < deadline, "no moves"
            await asyncio.sleep(0.1)
        pgn = runner.table.pgn()
        today = datetime.now(UTC).strftime("%Y.%m.%d")
        assert '[TimeControl "420+17"]' in pgn
        assert f'[Date "{today}"]' in pgn
        clocks = [m["clock_seconds"] for m in runner.table.moves() if m["final"]]
        assert all(300 < c <= 420 + 17 * 3 for c in clocks[:6]), clocks
    finally:
        replay.cancel()
        await asyncio.gather(replay, return_exceptions=True)
        await hall.close()
        store.close()


def test_the_demo_time_control_is_base_plus_increment() -> None:
    from service.commands.demo import check_time_control
    from service.errors import UsageError

    assert check_time_control("300+5") == "300+5"
    assert check_time_control("-") == "-"
    with pytest.raises(UsageError, match=r"^--time-control: the demo sets base\+increment"):
        check_time_control("40/5400+30:1800+30")
    with pytest.raises(UsageError, match=r"^--time-control: bad time control"):
        check_time_control("fast")
