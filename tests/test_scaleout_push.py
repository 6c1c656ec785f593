"""The lichess push from the centre: a read replica fed with an edge's rows pushes the
round with the same games, byte for byte, as the edge's own pusher
(:class:`service.broadcast.push.Pusher` on any :class:`~service.broadcast.push.PushSource`),
against the lichess stand-in; ``POST /api/admin/broadcast`` changes the centre's rounds
(kept beside the centre's database) and answers 409 on a replica without pushes; the
``[broadcast]`` of ``central --config``, and the centre pushing an edge's games as
processes on a real broker."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from broadcast_stand_in import LichessStandIn, ScriptTable
from nats_broker import Broker
from replica_rows import batches, edge_rows

from dgt.transports.emulator import EmulatorTransport
from service.broadcast.push import LichessClient, Pusher, PushSource, pusher_of
from service.commands.central import broadcast_config
from service.config import BroadcastConfig, BroadcastRound, ConfigError, TableConfig
from service.hall import Hall
from service.scaleout.replica import ReplicaHall
from service.scaleout.rows import LogRow
from service.store import Store
from service.web import WebServer

TOKEN = "test-token-0123456789"
LICHESS_TOKEN = "lip_standin0123"
INTERVAL = 0.1
BOARDS = {str(n): 10 + n for n in range(1, 5)}


class Recorded:
    """A push client that keeps each body it sends to the stand-in."""

    def __init__(self, url: str) -> None:
        self.inner = LichessClient(url, LICHESS_TOKEN)
        self.bodies: list[bytes] = []

    async def push(self, lichess_id: str, body: bytes) -> list[dict[str, Any]]:
        answers = await self.inner.push(lichess_id, body)
        self.bodies.append(body)
        return answers

    async def close(self) -> None:
        await self.inner.close()


async def until(check: Callable[[], bool], within: float = 5.0) -> None:
    deadline = time.monotonic() + within
    while not check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


def config(url: str, lichess_id: str) -> BroadcastConfig:
    return BroadcastConfig((BroadcastRound("1", lichess_id, 0.0),), url, None, "T", INTERVAL)


def start(source: PushSource, url: str, lichess_id: str, database: Path | None) -> Recorded:
    client = Recorded(url)
    Pusher(source, config(url, lichess_id), client, database=database).start()
    return client


async def edge_hall(store: Store) -> Hall:
    hall = Hall(store, table_factory=ScriptTable, tick_interval=0)
    for n in range(1, 5):
        table = TableConfig(str(n), f"emu-{n}", None, {"round": "1"}, board=BOARDS[str(n)])
        hall.add_table(table, EmulatorTransport(name=f"emu-{n}"))
        await hall.admin(str(n), "players", {"white": f"White {n}", "black": f"Black {n}"})
    return hall


async def close(source: PushSource) -> None:
    pusher = pusher_of(source)
    assert pusher is not None
    await pusher.close()


async def test_a_replica_pushes_the_round_the_edge_pushes(tmp_path: Path) -> None:
    lichess = LichessStandIn(token=LICHESS_TOKEN)
    await lichess.start()
    store = Store(tmp_path / "edge.db")
    hall = await edge_hall(store)
    replica = ReplicaHall(table_factory=ScriptTable)
    try:
        edge = start(hall, lichess.url, "EdgeRound", None)
        for table, san in [("2", "e4"), ("4", "d4"), ("2", "e5"), ("3", "Nf3")]:
            await hall.admin(table, "move", {"san": san})
        await hall.admin("3", "end", {"result": "1/2-1/2"})
        await hall.admin("3", "next", {})
        await hall.admin("3", "move", {"san": "c4"})
        hall.settle()
        rows = edge_rows(store.path, BOARDS)
        half = len(rows) // 2
        fed = 0

        def feed(part: list[LogRow]) -> None:
            for batch in batches(part, [3, 1, 5]):
                replica.on_rows("hall-a", batch)

        feed(rows[:half])  # what the centre had when it came up
        centre = start(replica, lichess.url, "CentreRound", tmp_path / "central.db")
        feed(rows[half:])  # then the rest, batch by batch
        fed = len(rows)
        await until(lambda: bool(edge.bodies) and b"c4" in edge.bodies[-1])
        await until(lambda: bool(centre.bodies) and centre.bodies[-1] == edge.bodies[-1])
        last = lichess.pushes[-1].games
        assert [g["tags"]["GameId"] for g in last] == ["1-1", "2-1", "3-1", "4-1", "3-2"]
        assert {g["tags"]["GameId"]: g["moves"] for g in last}["2-1"] == 2
        # the rows after: the centre goes on pushing what the edge pushes
        await hall.admin("1", "move", {"san": "Nf3"})
        await hall.admin("4", "next", {})
        await hall.admin("4", "move", {"san": "b3"})
        hall.settle()
        more = edge_rows(store.path, BOARDS)[fed:]
        assert more
        feed(more)
        await until(lambda: b"b3" in edge.bodies[-1])
        await until(lambda: centre.bodies[-1] == edge.bodies[-1])
        by_round = {p.round_id for p in lichess.pushes}
        assert by_round == {"EdgeRound", "CentreRound"}
        assert [g["tags"]["GameId"] for g in lichess.pushes[-1].games][-1] == "4-2"
        assert replica.broadcast_status()["rounds"][0]["lichess_id"] == "CentreRound"
        assert replica.broadcast_status()["rounds"][0]["state"] == "ok"
    finally:
        for source in (hall, replica):
            if pusher_of(source) is not None:
                await close(source)
        await hall.close()
        store.close()
        await lichess.close()


async def test_the_admin_changes_a_centres_rounds(tmp_path: Path) -> None:
    lichess = LichessStandIn(token=LICHESS_TOKEN)
    await lichess.start()
    store = Store(tmp_path / "edge.db")
    hall = await edge_hall(store)
    hall.settle()
    replica = ReplicaHall(table_factory=ScriptTable)
    replica.on_rows("hall-a", edge_rows(store.path, BOARDS))
    bare = ReplicaHall(table_factory=ScriptTable)  # a web process: no pushes
    servers = [WebServer(replica, TOKEN, port=0), WebServer(bare, TOKEN, port=0)]
    headers = {"Authorization": f"Bearer {TOKEN}"}
    database = tmp_path / "central.db"
    try:
        start(replica, lichess.url, "CentreRound", database)
        url, bare_url = [(await s.start()).rstrip("/") for s in servers]
        change = {"round": "1", "enabled": False}
        async with aiohttp.ClientSession() as session:
            async with session.post(
                bare_url + "/api/admin/broadcast", json=change, headers=headers
            ) as response:
                assert response.status == 409
                assert "no lichess pushes here" in (await response.json())["error"]
            async with session.post(
                url + "/api/admin/broadcast", json=change, headers=headers
            ) as response:
                assert response.status == 200
                assert (await response.json())["rounds"][0]["state"] == "off"
            async with session.get(url + "/api/broadcast", headers=headers) as response:
                assert (await response.json())["rounds"][0]["state"] == "off"
        kept = json.loads((tmp_path / "central.db.broadcast.json").read_text())
        assert kept["rounds"] == [
            {"round": "1", "lichess_id": "CentreRound", "enabled": False, "delay": 0.0}
        ]
    finally:
        for server in servers:
            await server.close()
        await close(replica)
        await hall.close()
        store.close()
        await lichess.close()


def test_the_centres_config_gives_its_broadcast(tmp_path: Path) -> None:
    path = tmp_path / "central.toml"
    path.write_text(
        '[broadcast]\ntoken_env = "LICHESS_TOKEN"\n'
        '[[broadcast.round]]\nround = "1"\nid = "AbCd1234"\n'
    )
    got = broadcast_config(path)
    assert [(r.round, r.lichess_id) for r in got.rounds] == [("1", "AbCd1234")]
    path.write_text("[service]\nport = 8080\n")
    with pytest.raises(ConfigError, match="no \\[broadcast\\]"):
        broadcast_config(path)
    with pytest.raises(ConfigError, match="no such config file"):
        broadcast_config(tmp_path / "missing.toml")


@pytest.mark.slow
async def test_the_centre_pushes_an_edges_games_as_processes(
    nats_broker: Broker, tmp_path: Path
) -> None:
    """``dgt-service run --central`` with two named tables, and ``dgt-service central
    --config`` with ``[broadcast]`` (the token from the environment): the centre pushes the
    edge's games to the lichess stand-in."""
    lichess = LichessStandIn(token=LICHESS_TOKEN)
    await lichess.start()
    table = '[[table]]\nport = "emulator"\nwhite = "Ann Alder"\nblack = "Bob Birch"\n'
    hall = tmp_path / "hall.toml"
    hall.write_text(f'{table}round = "1"\nboard = 1\n{table}round = "1"\nboard = 2\n')
    central = tmp_path / "central.toml"
    central.write_text(
        f'[broadcast]\nurl = "{lichess.url}"\ntoken_env = "TEST_LICHESS"\ninterval = 2\n'
        '[[broadcast.round]]\nround = "1"\nid = "Centre12"\n'
    )
    env = {**os.environ, "DGT_ADMIN_TOKEN": "x" * 12, "TEST_LICHESS": LICHESS_TOKEN}
    cli = (sys.executable, "-m", "service.cli")
    centre = await asyncio.create_subprocess_exec(
        *cli, "central", "--nats", nats_broker.url, "--config", str(central),
        *("--db", str(tmp_path / "central.db"), "--seconds", "10", "--listen", "127.0.0.1:0"),
        env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    edge = await asyncio.create_subprocess_exec(
        *cli, "run", "--config", str(hall), "--port", "0", "--db", str(tmp_path / "edge.db"),
        *("--seconds", "4", "--central", nats_broker.url, "--edge-id", "hall-a"),
        env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        _out, edge_err = await asyncio.wait_for(edge.communicate(), 60)
        assert edge.returncode == 0, edge_err.decode()
        out, err = await asyncio.wait_for(centre.communicate(), 60)
        assert centre.returncode == 0, err.decode()
        assert b"pushing to " in out
        assert b"round 1 -> Centre12" in out
        assert b"ERROR" not in err
        assert lichess.pushes
        assert {p.round_id for p in lichess.pushes} == {"Centre12"}
        last = lichess.pushes[-1].games
        assert [(g["tags"]["GameId"], g["tags"]["Board"]) for g in last] == [
            ("1-1", "1"),
            ("2-1", "2"),
        ]
        assert all(g["tags"]["White"] == "Ann Alder" and g["error"] is None for g in last)
    finally:
        for process in (edge, centre):
            if process.returncode is None:
                process.kill()
                await process.wait()
        await lichess.close()
