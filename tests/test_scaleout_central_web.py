"""service.scaleout.central_db and ``dgt-service central-web``: a web process follows the
centre's database that another process writes (new rows polled by rowid), in order, edge by
edge, a batch never ending inside an input; its replica shows what the edges showed."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from replica_rows import batches, edge_rows, write_central
from test_scaleout_replica import admin_row, answers, play_a_hall, registration, web

from service.scaleout.central_db import CentralTail
from service.scaleout.replica import ReplicaHall
from service.scaleout.rows import LogRow

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
async def test_a_tail_feeds_the_replica_what_the_edge_stored(tmp_path: Path) -> None:
    edge_db = tmp_path / "edge.db"
    seen, _links = await play_a_hall(edge_db)
    rows = edge_rows(edge_db, boards={"1": 1, "2": 2, "3": 3})
    central = tmp_path / "central.db"
    replica = ReplicaHall()
    fed: list[tuple[str, list[LogRow]]] = []

    def sink(edge: str, part: Any) -> None:
        fed.append((edge, list(part)))
        replica.on_rows(edge, part)

    tail = CentralTail(central, sink, batch=7)
    replica.use_log(tail)
    assert tail.poll() == 0  # no file yet
    parts = batches(rows, (20, 3))
    other = [registration(1, "b1", board=4), *admin_row(2, "b1", "Zoe")]
    write_central(central, "hall-b", other[:1])
    for part in parts[: len(parts) // 2]:
        write_central(central, "hall-a", part)
    write_central(central, "hall-b", other[1:])
    for part in parts[len(parts) // 2 :]:
        write_central(central, "hall-a", part)
    while tail.poll():
        pass
    try:
        assert [row for edge, part in fed if edge == "hall-a" for row in part] == rows
        read = [part for edge, part in fed if edge == "hall-a"]
        assert max(len(part) for part in read) <= 7  # at most 7 at once, and as every
        assert all(after[0].role != "out" for after in read[1:])  # read was cut at 7, it
        # ended before an input, never inside one
        assert {r.divergences for r in replica.runners.values()} == {0}
        assert replica.state("b1")["settings"]["white"] == "Zoe"
        async with web(replica) as (url, session):
            shown = await answers(url, session, list(seen))
        # the overview also lists hall-b's table
        tables = shown.pop("/api/tables")["tables"]
        assert [t["id"] for t in tables] == ["1", "2", "3", "b1"]  # by board number
        assert tables[:3] == seen.pop("/api/tables")["tables"]
        for every in ("/api/games", "/games.pgn", "/rounds/1.pgn"):
            assert shown.pop(every) != seen.pop(every)  # hall-b's game too
        assert shown == seen
    finally:
        tail.close()


async def central_web(central: Path, *extra: str) -> tuple[asyncio.subprocess.Process, str, str]:
    """``dgt-service central-web`` on ``central``: the process, its URL and what it said
    before it."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DGT_ADMIN_TOKEN": "central-token-123"}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "service.cli", "central-web", "--db", str(central),
        "--listen", "127.0.0.1:0", "--seconds", "30", *extra,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env=env,
    )  # fmt: skip
    assert process.stdout is not None
    said = ""
    while True:
        line = (await asyncio.wait_for(process.stdout.readline(), 20)).decode()
        assert line, f"central-web ended before it served: {said}"
        said += line
        if line.startswith("open "):
            return process, line.split()[1].rstrip("/"), said


async def stop(process: asyncio.subprocess.Process) -> None:
    process.terminate()
    await asyncio.wait_for(process.communicate(), 10)


@pytest.mark.slow  # processes of their own
async def test_central_web_serves_the_rows_another_process_writes(tmp_path: Path) -> None:
    central = tmp_path / "central.db"
    snapshot = tmp_path / "central.db.snapshot"
    process, url, said = await central_web(central, "--snapshot-every", "0.1")
    try:
        assert "tables from" not in said  # no snapshot yet
        write_central(central, "hall-a", [registration(1, "7")])
        async with aiohttp.ClientSession() as session:

            async def white() -> str | None:
                async with session.get(url + "/api/tables") as response:
                    tables = (await response.json())["tables"]
                return str(tables[0]["white"]) if tables else None

            deadline = time.monotonic() + 10
            while await white() != "?":
                assert time.monotonic() < deadline, "the table did not come"
                await asyncio.sleep(0.05)
            write_central(central, "hall-a", admin_row(2, "7", "Ann"))
            while await white() != "Ann":
                assert time.monotonic() < deadline, "the command did not come"
                await asyncio.sleep(0.05)
            headers = {"Authorization": "Bearer central-token-123"}
            path = url + "/api/admin/tables/7/players"
            async with session.post(path, json={"white": "Bo"}, headers=headers) as response:
                assert response.status == 503
                assert (await response.json())["error"] == (
                    "edge hall-a is not reachable from here (no admin link)"
                )
            async with session.get(url + "/api/tables/7/log") as response:
                events = (await response.json())["events"]
            assert [e["type"] for e in events] == ["players"]
            while not snapshot.exists():
                assert time.monotonic() < deadline, "no snapshot written"
                await asyncio.sleep(0.05)
    finally:
        await stop(process)
    process, url, said = await central_web(central)
    try:
        assert "1 tables from" in said
        async with aiohttp.ClientSession() as session:
            deadline = time.monotonic() + 10
            while True:  # from the snapshot, and the rows after it if any
                async with session.get(url + "/api/tables") as response:
                    tables = (await response.json())["tables"]
                if [t["white"] for t in tables] == ["Ann"]:
                    break
                assert time.monotonic() < deadline, tables
                await asyncio.sleep(0.05)
    finally:
        await stop(process)


async def test_a_commit_notice_wakes_the_tail_at_once(tmp_path: Path) -> None:
    """Told that notices come (its slow look then only a fallback), the tail reads the
    database at each notice, not at its next look."""
    central = tmp_path / "central.db"
    fed: list[LogRow] = []
    tail = CentralTail(central, lambda _edge, rows: fed.extend(rows))
    tail.listening(fallback=60.0)
    task = asyncio.get_running_loop().create_task(tail.run())
    try:
        await asyncio.sleep(0.05)  # its first look: no file yet
        write_central(central, "hall-a", [registration(1, "1", board=1)])
        await asyncio.sleep(0.2)
        assert fed == []  # the next look is a minute away
        tail.committed(1)
        deadline = asyncio.get_running_loop().time() + 5
        while not fed:
            assert asyncio.get_running_loop().time() < deadline, "the notice woke nothing"
            await asyncio.sleep(0.01)
        assert [row.seq for row in fed] == [1]
        assert tail.notices == 1
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        tail.close()
