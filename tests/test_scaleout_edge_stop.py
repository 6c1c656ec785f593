"""A stop of an edge's log forwarder, or of its heartbeat, ends it, even when the broker's
client turns the cancel into an error of its own (the NATS client does when the cancel meets
a connection being closed or re-made): their retry loops must not take it for a cut and go
on, or the edge never stops (a SIGTERM then waits for ever)."""

from __future__ import annotations

import asyncio
from typing import Any, NoReturn

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


class NoAnswer:
    """A broker that never answers, whose client answers a cancel with ``error`` (as the
    NATS client does)."""

    def __init__(self, error: Exception) -> None:
        self.error = error
        self.asked = 0
        self.turned = 0
        self.waiting = asyncio.Event()

    async def no_answer(self) -> NoReturn:
        self.asked += 1
        if self.turned:  # (ends a loop that went on, so the test fails, not hangs)
            raise RuntimeError("asked the broker again after the cancel")
        try:
            self.waiting.set()
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.turned += 1
            raise self.error from None
        raise AssertionError("unreachable")

    async def stopped(self, task: asyncio.Task[None]) -> None:
        """Cancel ``task`` once it waits for this broker; check that it ended, cancelled,
        without asking again."""
        await asyncio.wait_for(self.waiting.wait(), 2.0)
        task.cancel()
        done, _ = await asyncio.wait([task], timeout=2.0)
        assert done, "the task did not end"
        assert task.cancelled(), f"the task went on after it was cancelled: {task.exception()}"
        assert (self.turned, self.asked) == (1, 1)


class CancelToUnreachable(NoAnswer):
    """The log's side of such a broker (a :class:`LogPublisher`)."""

    def __init__(self) -> None:
        super().__init__(Unreachable("connection closed"))

    async def publish(self, subject: str, payload: bytes, expected_last: int) -> int:
        raise AssertionError("nothing to publish: the outbox is empty")

    async def last(self, subject: str) -> tuple[int, bytes] | None:
        await self.no_answer()


class CancelToClosed(NoAnswer):
    """The client and JetStream context of such a broker, as the heartbeat uses them."""

    def __init__(self) -> None:
        super().__init__(nats.errors.ConnectionClosedError())

    def jetstream(self) -> CancelToClosed:
        return self

    async def key_value(self, bucket: str) -> Any:
        await self.no_answer()


async def test_a_forwarder_stops_when_its_broker_client_turns_the_cancel_into_an_error() -> None:
    publisher = CancelToUnreachable()
    forwarder = LogForwarder(EmptyOutbox(), publisher, "a", "db1", "log.a", poll=0.01)
    await publisher.stopped(asyncio.get_running_loop().create_task(forwarder.run()))


async def test_an_edge_s_heartbeat_stops_when_the_client_turns_the_cancel_into_an_error() -> None:
    client = CancelToClosed()
    edge = Edge("nats://127.0.0.1:1", "a", "db1", heartbeat_interval=0.01)
    edge.client = client  # type: ignore[assignment]
    await client.stopped(asyncio.get_running_loop().create_task(edge._beat(None)))  # type: ignore[arg-type]
