"""A hall as an edge (``run --central``) against a real ``nats-server``: its log reaches the
centre, its heartbeat is in the status bucket, admin requests by request/reply are applied
once per id, and a cut from the broker changes nothing at the hall (the rows go out after)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import nats
import pytest
from hall_stand_in import EchoTable
from nats_broker import Broker, server_binary

from dgt.protocol import Piece
from dgt.transports.emulator import EmulatorTransport
from service.config import TableConfig
from service.hall import Hall
from service.scaleout.aggregator import Aggregator
from service.scaleout.central_store import CentralStore
from service.scaleout.edge import Edge, claim
from service.scaleout.log_wire import STATUS_BUCKET, admin_subject
from service.store import REGISTRATION, LogRow, Store


async def wait_for(predicate: Callable[[], bool], seconds: float = 30.0) -> None:
    deadline = asyncio.get_running_loop().time() + seconds
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.02)


class EdgeHall:
    """A hall of two stand-in tables on emulated boards, an edge of the broker at ``url``."""

    def __init__(self, url: str, path: Path, edge_id: str = "a") -> None:
        self.store = Store(path)
        db = claim(self.store, edge_id, {"1": 1, "2": 2})
        self.edge = Edge(url, edge_id, db, heartbeat_interval=0.2)
        self.hall = Hall(self.store, table_factory=EchoTable, tick_interval=0, central=self.edge)
        self.transports = [EmulatorTransport(name=f"emu-edge-{i}") for i in (1, 2)]
        for i, transport in enumerate(self.transports, 1):
            self.hall.add_table(TableConfig(str(i), transport.name, None, {}, board=i), transport)

    async def start(self) -> None:
        await self.hall.start()
        for runner in self.hall.runners.values():
            assert await runner.wait_ready(5)

    def move(self, table: int, square: int) -> None:
        transport = self.transports[table - 1]
        transport.lift(8 + square % 8)
        transport.place(16 + square % 32, Piece.WPAWN)

    async def close(self) -> None:
        await self.hall.close()
        self.store.close()


class Centre:
    def __init__(self, url: str, path: Path) -> None:
        self.store = CentralStore(path)
        self.handed: list[LogRow] = []
        self.aggregator = Aggregator(url, self.store, lambda _e, rows: self.handed.extend(rows))
        self.task = asyncio.get_running_loop().create_task(self.aggregator.run())

    async def close(self) -> None:
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task
        self.store.close()


async def test_an_edge_forwards_its_log_beats_and_answers_admin_once_per_id(
    nats_broker: Broker, tmp_path: Path
) -> None:
    edge = EdgeHall(nats_broker.url, tmp_path / "edge.db")
    centre = Centre(nats_broker.url, tmp_path / "centre.db")
    client = await nats.connect(nats_broker.url)
    try:
        await edge.start()
        for square in range(5):
            edge.move(1, square)
            edge.move(2, square)
        await wait_for(lambda: all(len(r.table.moves()) == 5 for r in edge.hall.runners.values()))
        edge.hall.settle()
        await wait_for(lambda: len(centre.handed) == edge.store.count())
        assert centre.handed == edge.store.log_rows(None, limit=10_000)
        registrations = [r for r in centre.handed if r.role == REGISTRATION]
        assert [(r.table_id, json.loads(r.data)["board"]) for r in registrations] == [
            ("1", 1),
            ("2", 2),
        ]
        # admin by request/reply: a repeated id is answered from memory, applied once
        request = json.dumps(
            {"id": "r-1", "table": "1", "command": "players", "args": {"white": "Ann"}}
        ).encode()
        first = json.loads((await client.request(admin_subject("a"), request, 5)).data)
        again = json.loads((await client.request(admin_subject("a"), request, 5)).data)
        assert first == again
        assert first["status"] == 200
        assert first["body"]["table"] == "1"
        assert first["body"]["command"] == "players"
        assert edge.edge.desk is not None
        assert edge.edge.desk.applied == 1
        assert edge.edge.desk.repeats == 1
        admin_rows = [r for r in edge.store.log_rows(None, 10_000) if r.kind == "admin"]
        assert len(admin_rows) == 1
        unknown = json.dumps({"id": "r-2", "table": "9", "command": "players", "args": {}})
        answer = json.loads((await client.request(admin_subject("a"), unknown.encode(), 5)).data)
        assert answer["status"] == 404
        assert "no table" in answer["body"]["error"]
        # the args cleaned as the hall's web cleans them: what it refuses is refused here
        applied = edge.edge.desk.applied
        for args, error in (
            ({"White": "x"}, "bad key 'White'"),
            ({"white": "x" * 300}, "white"),
            ({"note": "a\u0000b"}, "note"),
            ({"rules": "nonsense"}, "rules"),
        ):
            bad = json.dumps({"id": f"r-{error}", "table": "1", "command": "players", "args": args})
            refused = json.loads((await client.request(admin_subject("a"), bad.encode(), 5)).data)
            assert refused["status"] == 400, refused
            assert error in refused["body"]["error"]
        assert edge.edge.desk.applied == applied
        # the heartbeat: the edge's clock and its tables' links
        await wait_for(lambda: edge.edge.heartbeats >= 2)
        bucket = await client.jetstream().key_value(STATUS_BUCKET)
        beat = json.loads((await bucket.get("a")).value or b"{}")
        assert beat["edge"] == "a"
        assert set(beat["tables"]) == {"1", "2"}
        assert beat["tables"]["1"]["state"] == "up"
        assert beat["store"]["state"] == "ok"
        await wait_for(lambda: len(centre.handed) == edge.store.count())
        assert centre.handed == edge.store.log_rows(None, limit=10_000)
    finally:
        await client.close()
        await centre.close()
        await edge.close()


@pytest.mark.slow  # a second or more: kept out of the quick loop
async def test_a_cut_from_the_broker_changes_nothing_at_the_hall(
    nats_broker: Broker, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    edge = EdgeHall(nats_broker.url, tmp_path / "edge.db")
    try:
        await edge.start()
        edge.move(1, 0)
        await wait_for(lambda: edge.edge.forwarder is not None and edge.edge.forwarder.rows > 0)
        nats_broker.kill()
        with caplog.at_level(logging.WARNING):
            for square in range(1, 6):
                edge.move(1, square)
            await wait_for(lambda: len(edge.hall.runners["1"].table.moves()) == 6)
            outs = await edge.hall.admin("2", "players", {"white": "Bo"})  # local admin
            assert outs
            edge.hall.settle()
            assert edge.store.pending == 0
            await asyncio.sleep(0.5)
        cut = [r for r in caplog.records if r.name.startswith("service.scaleout")]
        assert cut
        assert all(r.levelno == logging.WARNING and r.exc_info is None for r in cut)
        assert all("\n" not in r.getMessage() for r in cut)
        nats_broker.start()
        centre = Centre(nats_broker.url, tmp_path / "centre.db")
        try:
            await wait_for(lambda: len(centre.handed) == edge.store.count(), seconds=30)
            assert centre.handed == edge.store.log_rows(None, limit=10_000)
        finally:
            await centre.close()
    finally:
        await edge.close()


@pytest.mark.slow  # a second or more: kept out of the quick loop
async def test_an_edge_started_while_the_broker_is_down_catches_up(
    nats_broker: Broker, tmp_path: Path
) -> None:
    nats_broker.kill()
    edge = EdgeHall(nats_broker.url, tmp_path / "edge.db")
    try:
        await edge.start()
        edge.move(2, 3)
        await wait_for(lambda: len(edge.hall.runners["2"].table.moves()) == 1)
        nats_broker.start()
        centre = Centre(nats_broker.url, tmp_path / "centre.db")
        try:
            edge.hall.settle()
            await wait_for(lambda: len(centre.handed) == edge.store.count(), seconds=30)
            assert centre.handed == edge.store.log_rows(None, limit=10_000)
        finally:
            await centre.close()
    finally:
        await edge.close()


PERMISSIONS = """
authorization {
  users = [
    {user: "hall-a", password: "pa", permissions: {
      publish: ["dgt.log.hall-a", "$KV.dgt_edges.hall-a", "$JS.API.STREAM.INFO.*",
                "$JS.API.STREAM.MSG.GET.DGT_LOG", "_INBOX.>"],
      subscribe: ["dgt.admin.hall-a.>", "_INBOX.>"]}}
    {user: "centre", password: "pc"}
  ]
}
"""


@pytest.mark.slow  # a second or more: kept out of the quick loop
async def test_an_edge_needs_no_right_but_its_own_subjects(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The README's per-edge permissions: the centre makes the stream and the bucket; an
    edge publishes its log and its heartbeat, reads its last message, answers its admin
    subject, and can write nowhere else."""
    binary = server_binary()
    if binary is None:
        pytest.skip("no nats-server binary (./setup.sh test installs it)")
    broker = Broker(binary, tmp_path / "nats", config=PERMISSIONS)
    broker.start()
    centre_url = f"nats://centre:pc@127.0.0.1:{broker.port}"
    edge_url = f"nats://hall-a:pa@127.0.0.1:{broker.port}"
    centre = Centre(centre_url, tmp_path / "centre.db")
    edge = EdgeHall(edge_url, tmp_path / "edge.db", "hall-a")
    try:
        await wait_for(lambda: centre.aggregator.client is not None)
        await asyncio.sleep(0.3)  # the stream and the bucket are made
        await edge.start()
        edge.move(1, 1)
        await wait_for(lambda: len(edge.hall.runners["1"].table.moves()) == 1)
        edge.hall.settle()
        await wait_for(lambda: len(centre.handed) == edge.store.count())
        await wait_for(lambda: edge.edge.heartbeats >= 1)
        client = await nats.connect(centre_url)
        try:
            request = json.dumps({"id": "x", "table": "2", "command": "players", "args": {}})
            reply = await client.request(admin_subject("hall-a"), request.encode(), 5)
            assert json.loads(reply.data)["status"] == 200
        finally:
            await client.close()
        intruder = await nats.connect(edge_url, error_cb=_quiet)
        try:
            with pytest.raises(Exception):  # noqa: B017, PT011 - refused, or no answer
                await intruder.jetstream().publish("dgt.log.hall-b", b"{}", timeout=1)
        finally:
            await intruder.close()
        assert centre.store.edges().keys() == {"hall-a"}
        assert "pa@" not in caplog.text
        assert "pc@" not in caplog.text
    finally:
        await edge.close()
        await centre.close()
        broker.stop()


async def _quiet(_exc: Exception) -> None:
    pass


def test_a_database_never_runs_under_another_edge_id(tmp_path: Path) -> None:
    store = Store(tmp_path / "edge.db")
    claim(store, "hall-a", {})
    claim(store, "hall-a", {})  # the same id again: fine
    with pytest.raises(Exception, match="is the store of edge 'hall-a', not 'hall-b'"):
        claim(store, "hall-b", {})
    store.close()


@pytest.mark.slow
def test_a_club_hall_never_imports_nats(tmp_path: Path) -> None:
    code = f"""
import sys
from service.cli import build_parser
from service.hall import Hall
from service.store import Store
from service.config import TableConfig
build_parser()
hall = Hall(Store({str(tmp_path / "club.db")!r}))
hall.add_table(TableConfig("1", "emulator"))
assert "nats" not in sys.modules, sorted(m for m in sys.modules if m.startswith("nats"))
print("ok")
"""
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.stdout.strip() == "ok", result.stderr
