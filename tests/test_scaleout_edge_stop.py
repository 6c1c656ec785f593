"""A stop of an edge's log forwarder, or of its heartbeat, ends it, even when the broker's
client turns the cancel into an error of its own (the NATS client does when the cancel meets
a connection being closed or re-made): their retry loops must not take it for a cut and go
on, or the edge never stops (a SIGTERM then waits for ever)."""

from __future__ import annotations

import asyncio
from typing import Any

import nats.errors

from service.scaleout.edge import Edge
from service.scaleout.edge_forwarder import LogForwarder, Unreachable
from service.store import LogRow


class EmptyOutbox:
    """A store with no rows yet."""

    def log_rows(self, after: int | None = None, limit: int = 1000) -> list[LogRow]:
        return []

    def last_seq(self) -> int | None:
        return None


class CancelToError:
    """A broker that never answers, whose client answers a cancel with its own error."""

    def __init__(self) -> None:
        self.asked = 0
        self.turned = 0
        self.waiting = asyncio.Event()

    async def publish(self, subject: str, payload: bytes, expected_last: int) -> int:
        raise AssertionError("nothing to publish: the outbox is empty")

    async def last(self, subject: str) -> tuple[int, bytes] | None:
        self.asked += 1
        if self.turned:  # (ends a forwarder that went on, so the test fails, not hangs)
            raise RuntimeError("asked the broker again after the cancel")
        try:
            self.waiting.set()
            await asyncio.Event().wait()  # no answer
        except asyncio.CancelledError:
            self.turned += 1
            raise Unreachable("connection closed") from None
        raise AssertionError("unreachable")


async def test_a_forwarder_stops_when_its_broker_client_turns_the_cancel_into_an_error() -> None:
    publisher = CancelToError()
    forwarder = LogForwarder(EmptyOutbox(), publisher, "a", "db1", "log.a", poll=0.01)
    task = asyncio.get_running_loop().create_task(forwarder.run())
    await asyncio.wait_for(publisher.waiting.wait(), 2.0)
    task.cancel()
    done, _ = await asyncio.wait([task], timeout=2.0)
    assert done, "the forwarder did not end"
    assert task.cancelled(), f"the forwarder went on after it was cancelled: {task.exception()}"
    assert publisher.turned == 1
    assert publisher.asked == 1  # it did not ask the broker again


class CancelToClosed:
    """A JetStream context that never answers, whose client answers a cancel with its own
    error (as :class:`CancelToError`)."""

    def __init__(self) -> None:
        self.asked = 0
        self.turned = 0
        self.waiting = asyncio.Event()

    def jetstream(self) -> CancelToClosed:
        return self

    async def key_value(self, bucket: str) -> Any:
        self.asked += 1
        if self.turned:
            raise RuntimeError("asked the broker again after the cancel")
        try:
            self.waiting.set()
            await asyncio.Event().wait()  # no answer
        except asyncio.CancelledError:
            self.turned += 1
            raise nats.errors.ConnectionClosedError from None
        raise AssertionError("unreachable")


async def test_an_edge_s_heartbeat_stops_when_the_client_turns_the_cancel_into_an_error() -> None:
    client = CancelToClosed()
    edge = Edge("nats://127.0.0.1:1", "a", "db1", heartbeat_interval=0.01)
    edge.client = client  # type: ignore[assignment]
    task = asyncio.get_running_loop().create_task(edge._beat(None))  # type: ignore[arg-type]
    await asyncio.wait_for(client.waiting.wait(), 2.0)
    task.cancel()
    done, _ = await asyncio.wait([task], timeout=2.0)
    assert done, "the heartbeat did not end"
    assert task.cancelled(), f"the heartbeat went on after it was cancelled: {task.exception()}"
    assert (client.turned, client.asked) == (1, 1)
