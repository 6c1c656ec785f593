"""service.scaleout.replica: a read replica rebuilt from an edge's log rows shows what the
edge's hall shows (state JSON, games, PGN feeds: the same bytes through the same web app);
admin commands go to the owning edge (503 with a reason when it cannot be reached); table
ids clashing across edges are refused; the edges and their heartbeats are listed."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import chess
import pytest
from conftest import ErrorLog
from replica_rows import batches, edge_rows

from dgt.emulator.board import VirtualBoard
from dgt.transports.emulator import EmulatorTransport
from service.commands.demo import TransportLine
from service.config import TableConfig
from service.hall import Hall, HallError, Update, default_table_factory
from service.scaleout.replica import EdgeBeat, EdgeUnreachable, ReplicaHall
from service.scaleout.rows import REGISTRATION, LogRow
from service.store import Store, output_json
from service.web import WebServer

TOKEN = "replica-test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}

PAGES = (
    "/api/tables",
    "/api/games",
    "/games.pgn",
    "/games.pgn?feed=lichess",
    "/rounds/1.pgn",
    "/games/1-1.pgn",
    "/games/1-2.pgn",
    "/games/2-1.pgn",
    "/api/status",
)
"""Answers that must be the same bytes at the edge and on the replica (``connection``
aside: the link is the edge's to report)."""


def per_table(table_id: str) -> tuple[str, ...]:
    return (
        f"/api/tables/{table_id}",
        f"/api/tables/{table_id}/corrections",
        f"/api/tables/{table_id}/log?limit=5000",
    )


@asynccontextmanager
async def web(source: Any) -> AsyncIterator[tuple[str, aiohttp.ClientSession]]:
    server = WebServer(source, TOKEN, port=0)
    url = (await server.start()).rstrip("/")
    try:
        async with aiohttp.ClientSession() as session:
            yield url, session
    finally:
        await server.close()


async def answers(url: str, session: aiohttp.ClientSession, paths: list[str]) -> dict[str, Any]:
    """Each path's answer: JSON without the links, or the text."""
    out: dict[str, Any] = {}
    for path in paths:
        async with session.get(url + path) as response:
            assert response.status == 200, (path, await response.text())
            text = await response.text()
        if response.content_type == "application/json":
            out[path] = without_links(json.loads(text))
        else:
            out[path] = text
    return out


def without_links(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_links(v) for k, v in value.items() if k != "connection"}
    if isinstance(value, list):
        return [without_links(v) for v in value]
    return value


def make_move(line: TransportLine, uci: str) -> None:
    move = chess.Move.from_uci(uci)
    piece = line.device.squares[move.from_square]
    line.act(lambda now: line.device.lift(move.from_square, now))
    line.act(lambda now: line.device.place(move.to_square, piece, now))


async def until_moves(hall: Hall, table_id: str, count: int) -> None:
    deadline = time.monotonic() + 8
    while len(hall.runners[table_id].table.moves()) < count:
        assert time.monotonic() < deadline, f"table {table_id}: {count} moves not made"
        await asyncio.sleep(0.02)


async def play_a_hall(db: Path) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """A hall of three emulated boards plays (moves, players, a game ended and a new one
    started); returns its web answers and each table's link, as of its last commit."""
    store = Store(db)
    hall = Hall(store, tick_interval=0.1)
    lines = {}
    for table_id in ("1", "2", "3"):
        transport = EmulatorTransport(VirtualBoard(now=time.monotonic()), name=f"emu-{table_id}")
        settings = {"white": "Ann", "black": "Bob", "round": "1", "rules": "casual"}
        if table_id == "2":
            settings = {"event": "Open", "round": "1", "time_control": "600+5"}
        hall.add_table(TableConfig(table_id, transport.name, None, settings), transport)
        lines[table_id] = TransportLine(transport)
    await hall.start()
    try:
        for runner in hall.runners.values():
            assert await runner.wait_ready(5)
        await hall.admin("1", "players", {"white": "Carl", "black": "Dora"})
        for number, uci in enumerate(("e2e4", "e7e5", "g1f3", "b8c6"), 1):
            make_move(lines["1"], uci)
            await until_moves(hall, "1", number)
        for number, uci in enumerate(("d2d4", "g8f6"), 1):
            make_move(lines["2"], uci)
            await until_moves(hall, "2", number)
        await hall.admin("2", "players", {"white": "Eve", "black": "Fay"})
        await hall.admin("1", "end", {"result": "1-0", "reason": "resignation"})
        await hall.admin("1", "start", {"round": "2"})
        await asyncio.sleep(0.3)  # clock reports and ticks
        links = {table_id: hall.state(table_id)["connection"] for table_id in hall.runners}
    finally:
        await hall.close()
    try:  # every row is stored now: the web shows the last of them
        assert len(hall.runners["1"].games) == 2
        paths = [*PAGES, *(p for t in hall.runners for p in per_table(t))]
        async with web(hall) as (url, session):
            seen = await answers(url, session, paths)
    finally:
        store.close()
    return seen, links


class Directory:
    """The edges' status as a test sets it."""

    def __init__(self) -> None:
        self.beat: dict[str, EdgeBeat] = {}
        self.links: dict[tuple[str, str], dict[str, Any]] = {}

    def beats(self) -> Mapping[str, EdgeBeat]:
        return self.beat

    def connection(self, edge_id: str, table_id: str) -> dict[str, Any] | None:
        return self.links.get((edge_id, table_id))


@pytest.mark.slow
async def test_the_replica_shows_what_the_edge_showed(tmp_path: Path) -> None:
    db = tmp_path / "edge.db"
    seen, links = await play_a_hall(db)
    rows = edge_rows(db)
    assert any(row.role == "echo" for row in rows)
    assert any(row.kind == "admin" for row in rows)

    directory = Directory()
    replica = ReplicaHall(directory=directory)
    updates: list[Update] = []
    replica.subscribe(updates.append)
    parts = batches(rows, (1, 7, 3, 50))
    for part in parts:
        replica.on_rows("hall-a", part)
    replica.on_rows("hall-a", parts[-1])  # a repeat changes nothing
    assert {runner.divergences for runner in replica.runners.values()} == {0}
    assert replica.table_ids() == ["1", "2", "3"]
    assert {u.table_id for u in updates} == {"1", "2", "3"}

    async with web(replica) as (url, session):
        assert await answers(url, session, list(seen)) == seen
        # the link is what the edge reports
        directory.links[("hall-a", "1")] = links["1"]
        async with session.get(url + "/api/tables/1") as response:
            assert (await response.json())["connection"] == links["1"]
        async with session.get(url + "/api/tables/2") as response:
            link = (await response.json())["connection"]
        assert link["state"] == "connecting"
        assert "no link status from edge hall-a" in link["error"]


@pytest.mark.slow
async def test_rows_in_one_batch_or_row_by_row_give_the_same_tables(tmp_path: Path) -> None:
    db = tmp_path / "edge.db"
    await play_a_hall(db)
    rows = edge_rows(db)
    whole, single = ReplicaHall(), ReplicaHall()
    whole.on_rows("e", rows)
    for part in batches(rows, (1,)):
        single.on_rows("e", part)
    for table_id in whole.runners:
        assert whole.state(table_id) == single.state(table_id)
        assert whole.outputs(table_id, after=0, limit=10**6) == single.outputs(
            table_id, after=0, limit=10**6
        )


def registration(
    seq: int, table_id: str, settings: dict[str, Any] | None = None, board: int | None = None
) -> LogRow:
    data = json.dumps({"settings": settings or {"round": "1"}, "board": board})
    return LogRow(seq, table_id, REGISTRATION, REGISTRATION, 1000.0, data)


def admin_row(seq: int, table_id: str, white: str) -> list[LogRow]:
    """A ``players`` command on a table just registered, with the outputs it gave."""
    t = 1001.0 + seq
    args = {"white": white}
    data = json.dumps({"command": "players", "args": args})
    table = default_table_factory(table_id, {"round": "1"})
    outs = [output_json(o) for o in table.admin("players", args, t)]
    return [
        LogRow(seq, table_id, "in", "admin", t, data),
        *(
            LogRow(seq + n, table_id, "out", o["type"], t, json.dumps(o))
            for n, o in enumerate(outs, 1)
        ),
    ]


async def test_a_table_id_two_edges_register_is_refused(error_log: ErrorLog) -> None:
    replica = ReplicaHall()
    replica.on_rows("hall-a", [registration(1, "7"), *admin_row(2, "7", "Ann")])
    replica.on_rows("hall-b", [registration(1, "7"), *admin_row(9, "7", "Zed")])
    error_log.expect("table 7 is registered by edges hall-a and hall-b")
    assert replica.state("7")["settings"]["white"] == "Ann"
    edges = {edge["id"]: edge for edge in replica.edges()}
    assert edges["hall-a"]["tables"] == 1
    assert edges["hall-b"]["tables"] == 0
    assert "ids must be unique across edges" in edges["hall-b"]["refused"][0]


async def test_rows_before_their_registration_wait_for_it() -> None:
    replica = ReplicaHall()
    replica.on_rows("hall-a", admin_row(2, "7", "Ann"))
    assert not replica.has_table("7")
    replica.on_rows("hall-a", [registration(10, "7")])
    assert replica.state("7")["settings"]["white"] == "Ann"


async def test_admin_commands_go_to_the_owning_edge() -> None:
    asked: list[tuple[str, str, str, dict[str, Any]]] = []
    mode = "answer"

    async def forward(edge: str, table: str, command: str, args: dict[str, Any]) -> list[Any]:
        asked.append((edge, table, command, args))
        if mode == "slow":
            await asyncio.sleep(5)
        if mode == "down":
            raise EdgeUnreachable("no responders on dgt.admin.hall-b.7")
        if mode == "refused":
            raise HallError("players takes white and/or black", 400)
        return [{"type": "players", "time": 1.0, "data": args}]

    directory = Directory()
    replica = ReplicaHall(admin=forward, directory=directory, admin_timeout=0.2)
    replica.on_rows("hall-b", [registration(1, "7")])
    directory.beat["hall-b"] = EdgeBeat(time.time() - 2.0, skew=0.004)
    directory.beat["hall-c"] = EdgeBeat(time.time() - 30.0)
    async with web(replica) as (url, session):
        path = url + "/api/admin/tables/7/players"
        body = json.dumps({"white": "Ann"})
        async with session.post(path, data=body, headers=AUTH) as response:
            assert response.status == 200
            assert (await response.json())["events"][0]["data"] == {"white": "Ann"}
        assert asked == [("hall-b", "7", "players", {"white": "Ann"})]
        expected = {
            "slow": "edge hall-b did not answer within 0.2 s",
            "down": "edge hall-b is not reachable: no responders on dgt.admin.hall-b.7",
            "refused": "players takes white and/or black",
        }
        for mode, error in expected.items():
            async with session.post(path, data=body, headers=AUTH) as response:
                assert response.status == (400 if mode == "refused" else 503)
                assert (await response.json()) == {"error": error}
        async with session.post(url + "/api/admin/tables/8/players", data=body, headers=AUTH) as r:
            assert r.status == 404
        async with session.get(url + "/api/edges") as response:
            edges = (await response.json())["edges"]
    assert [edge["id"] for edge in edges] == ["hall-b", "hall-c"]
    assert edges[0]["skew"] == 0.004
    assert 1.5 < edges[0]["age"] < 10
    assert edges[0]["tables"] == 1
    assert edges[1]["tables"] == 0


async def test_without_an_admin_link_a_command_is_a_503() -> None:
    replica = ReplicaHall()
    replica.on_rows("hall-b", [registration(1, "7")])
    with pytest.raises(HallError) as refused:
        await replica.admin("7", "players", {"white": "Ann"})
    assert refused.value.status == 503
    assert str(refused.value) == "edge hall-b is not reachable from here (no admin link)"


async def next_state(response: aiohttp.ClientResponse) -> dict[str, Any]:
    """The data of the stream's next ``state`` event."""
    while True:
        line = (await asyncio.wait_for(response.content.readline(), 5)).decode()
        if line.startswith("data: "):
            return dict(json.loads(line[6:]))


async def test_a_replica_streams_the_rows_it_is_fed() -> None:
    replica = ReplicaHall()
    replica.on_rows("hall-a", [registration(1, "7")])
    async with (
        web(replica) as (url, session),
        session.get(url + "/api/stream?table=7") as response,
    ):
        first = await next_state(response)
        assert first["state"]["settings"]["white"] == "?"
        replica.on_rows("hall-a", admin_row(2, "7", "Ann"))
        second = await next_state(response)
        assert second["state"]["settings"]["white"] == "Ann"
    async with (
        web(replica) as (url, session),
        session.get(url + "/api/stream") as response,  # the overview's
    ):
        first = await next_state(response)
        assert first["table"] == "7"
        replica.on_rows("hall-b", [registration(0, "8")])  # a table registered later
        second = await next_state(response)
        assert second["table"] == "8"
        assert second["state"]["white"] == "?"


async def test_a_hall_of_its_own_has_no_edges(tmp_path: Path) -> None:
    store = Store(tmp_path / "h.db")
    hall = Hall(store, tick_interval=0)
    try:
        async with web(hall) as (url, session), session.get(url + "/api/edges") as response:
            assert await response.json() == {"edges": None}
    finally:
        await hall.close()
        store.close()
