"""service.scaleout.edge_directory and admin_forward: the edges' heartbeats (age, clock
skew, each table's link, a changed link published) and admin commands by request and reply
(an id per command; the edge's refusal passed on; no answer or no edge: a 503 with why)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

import pytest
from nats_broker import Broker

from service.hall import HallError, Update
from service.scaleout.admin_forward import forward_by_request
from service.scaleout.edge_directory import HeartbeatDirectory
from service.scaleout.replica import ReplicaHall
from service.scaleout.rows import REGISTRATION, LogRow


def registration(seq: int, table_id: str) -> LogRow:
    data = json.dumps({"board": None, "settings": {"round": "1"}})
    return LogRow(seq, table_id, REGISTRATION, REGISTRATION, 1000.0, data)


def heartbeat(time: float, link: str) -> dict[str, Any]:
    return {
        "edge": "hall-a",
        "time": time,
        "interval": 2.0,
        "store": {"state": "ok", "unstored": 0},
        "forwarded": 10,
        "waiting": 3,
        "tables": {"1": {"state": link, "port": "/dev/ttyACM0", "error": None}},
    }


def test_heartbeats_give_the_edges_and_the_links() -> None:
    now = [1000.0]
    replica = ReplicaHall(wall_clock=lambda: now[0])
    directory = HeartbeatDirectory(on_link=replica.link_changed)
    replica.directory = directory
    replica.on_rows("hall-a", [registration(0, "1")])
    updates: list[Update] = []
    replica.subscribe(updates.append)
    directory.note(heartbeat(1000.25, "up"), received=1000.0)
    assert replica.state("1")["connection"] == {
        "state": "up",
        "port": "/dev/ttyACM0",
        "error": None,
    }
    assert [u.events[0]["type"] for u in updates] == ["connection"]
    directory.note(heartbeat(1002.25, "up"), received=1002.0)
    assert len(updates) == 1  # the same link: nothing published
    directory.note(heartbeat(1004.25, "reconnecting"), received=1004.0)
    assert updates[-1].events[0]["state"] == "reconnecting"
    now[0] = 1006.5
    (edge,) = replica.edges()
    assert edge["id"] == "hall-a"
    assert edge["heartbeat"] == 1004.0
    assert edge["age"] == 2.5
    assert edge["late"] is False
    assert edge["skew"] == 0.25
    assert edge["interval"] == 2.0
    assert edge["store"] == "ok"
    assert edge["waiting"] == 3
    assert edge["tables"] == 1


def test_a_heartbeat_without_an_edge_is_dropped() -> None:
    directory = HeartbeatDirectory()
    directory.note({"time": 1.0}, received=1.0)
    assert directory.beats() == {}


async def test_admin_by_request_and_reply() -> None:
    sent: list[tuple[str, dict[str, Any], float]] = []
    answers: list[Any] = []

    async def request(subject: str, payload: bytes, timeout: float) -> bytes:  # noqa: ASYNC109
        body = json.loads(payload)
        sent.append((subject, body, timeout))
        answer = answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        if callable(answer):
            answer = answer(body)
        return json.dumps(answer).encode()

    replica = ReplicaHall(admin=forward_by_request(request, 1.0), admin_timeout=2.0)
    replica.on_rows("hall-a", [registration(0, "1")])
    events = [{"type": "players", "time": 5.0, "data": {"white": "Ann"}}]
    answers.append(lambda body: {"id": body["id"], "status": 200, "body": {"events": events}})
    assert await replica.admin("1", "players", {"white": "Ann"}) == events
    subject, body, timeout = sent[0]
    assert subject == "dgt.admin.hall-a.command"
    assert body["table"] == "1"
    assert body["command"] == "players"
    assert body["args"] == {"white": "Ann"}
    assert len(body["id"]) == 32
    assert timeout == 1.0

    answers.append(lambda body: {"id": body["id"], "status": 400, "body": {"error": "no claim 3"}})
    with pytest.raises(HallError) as refused:
        await replica.admin("1", "rule", {"claim": 3, "decision": "accept"})
    assert (refused.value.status, str(refused.value)) == (400, "no claim 3")

    answers.append(TimeoutError())
    with pytest.raises(HallError) as late:
        await replica.admin("1", "players", {"white": "Bo"})
    assert (late.value.status, str(late.value)) == (503, "edge hall-a did not answer within 2 s")

    answers.append(OSError("nats: no responders available for request"))
    with pytest.raises(HallError) as down:
        await replica.admin("1", "players", {"white": "Bo"})
    assert down.value.status == 503
    assert str(down.value) == (
        "edge hall-a is not reachable: nats: no responders available for request"
    )

    answers.append({"id": "someone else's", "status": 200, "body": {}})
    with pytest.raises(HallError) as wrong:
        await replica.admin("1", "players", {"white": "Bo"})
    assert wrong.value.status == 503
    assert "answered what is no answer" in str(wrong.value)
    assert len({body["id"] for _, body, _ in sent}) == len(sent)  # an id per command


def test_the_tables_of_a_silent_edge_are_shown_down() -> None:
    now = [1000.0]
    replica = ReplicaHall(wall_clock=lambda: now[0])
    directory = HeartbeatDirectory(on_link=replica.link_changed)
    replica.directory = directory
    replica.on_rows("hall-a", [registration(0, "1")])
    directory.note(heartbeat(1000.0, "up"), received=1000.0)
    updates: list[Update] = []
    replica.subscribe(updates.append)
    now[0] = 1005.0
    replica.check_edges()
    assert replica.state("1")["connection"]["state"] == "up"
    assert updates == []
    now[0] = 1007.0  # three intervals of 2 s without a heartbeat
    replica.check_edges()
    link = replica.state("1")["connection"]
    assert link["state"] == "down"
    assert link["error"].startswith("edge hall-a is silent: no heartbeat since ")
    assert [u.events[0]["state"] for u in updates] == ["down"]
    assert replica.edges()[0]["late"] is True
    replica.check_edges()
    assert len(updates) == 1  # told once
    directory.note(heartbeat(1007.5, "up"), received=1007.5)
    replica.check_edges()
    assert [u.events[0]["state"] for u in updates] == ["down", "up"]
    assert replica.edges()[0]["late"] is False


async def test_a_central_link_watches_heartbeats_and_says_why_an_edge_is_not_reached(
    nats_broker: Broker,
) -> None:
    """service.scaleout.central_link against a real broker: the heartbeats in the bucket
    reach the directory (an old one as old as the broker stored it); a command with no link
    yet, or no edge listening, is a 503 with the reason."""
    import nats

    from service.scaleout.central_link import CentralLink
    from service.scaleout.log_wire import STATUS_BUCKET

    directory = HeartbeatDirectory()
    link = CentralLink(nats_broker.url, directory, wall_clock=lambda: 4_000_000_000.0)
    replica = ReplicaHall(admin=forward_by_request(link.request, 2.0), directory=directory)
    directory.on_link = replica.link_changed
    replica.on_rows("hall-a", [registration(0, "1")])
    with pytest.raises(HallError, match="edge hall-a is not reachable: no link to the broker"):
        await replica.admin("1", "players", {"white": "Ann"})
    client = await nats.connect(nats_broker.url)
    js = client.jetstream()
    bucket = await js.create_key_value(bucket=STATUS_BUCKET, history=1)
    await bucket.put("hall-a", json.dumps(heartbeat(1000.0, "up")).encode())
    task = asyncio.get_running_loop().create_task(link.run())
    try:
        deadline = asyncio.get_running_loop().time() + 10
        while "hall-a" not in directory.beats():
            assert asyncio.get_running_loop().time() < deadline, "no heartbeat"
            await asyncio.sleep(0.02)
        beat = directory.beats()["hall-a"]
        assert beat.at < 4_000_000_000.0  # the broker's time stamp: it is not new
        assert directory.connection("hall-a", "1") == {
            "state": "up",
            "port": "/dev/ttyACM0",
            "error": None,
        }
        await bucket.put("hall-a", json.dumps(heartbeat(1001.0, "down")).encode())
        while (directory.connection("hall-a", "1") or {}).get("state") != "down":
            assert asyncio.get_running_loop().time() < deadline, "no second heartbeat"
            await asyncio.sleep(0.02)
        with pytest.raises(HallError, match="not connected to the broker") as refused:
            await replica.admin("1", "players", {"white": "Ann"})
        assert refused.value.status == 503
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await client.close()
