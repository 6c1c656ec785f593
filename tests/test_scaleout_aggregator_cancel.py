"""The centre's reader ends when it is cancelled, even when the NATS client's wait swallowed
the cancel (Python 3.11's ``asyncio.wait_for`` can lose one: the scale-out bench once hung at
its stop). The client is a stand-in here: the swallowed cancel cannot be provoked on purpose
with a real ``nats-server``."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import nats.errors

from service.scaleout.aggregator import Aggregator
from service.scaleout.central_store import CentralStore


class SwallowingSubscription:
    """A pull subscription whose fetch waits, loses the first cancel that reaches it, and
    then reports that nothing came, as a client with 3.11's ``wait_for`` inside may do."""

    def __init__(self) -> None:
        self.fetches = 0
        self.swallowed = 0
        self.fetched_twice = asyncio.Event()

    async def fetch(self, batch: int, timeout: float) -> list[Any]:  # noqa: ASYNC109 (nats-py's signature)
        self.fetches += 1
        if self.fetches == 2:
            self.fetched_twice.set()
        try:
            await asyncio.sleep(0.02)
        except asyncio.CancelledError:
            if self.swallowed:
                raise
            self.swallowed += 1
        raise nats.errors.TimeoutError

    async def unsubscribe(self) -> None:
        pass


class StandInJetStream:
    def __init__(self, sub: SwallowingSubscription) -> None:
        self.sub = sub

    async def stream_info(self, stream: str) -> Any:
        return SimpleNamespace(created=None, state=SimpleNamespace(last_seq=0))

    async def pull_subscribe(self, subjects: Any, stream: str, config: Any) -> Any:
        return self.sub


async def test_a_cancel_the_client_swallowed_still_ends_the_reader(tmp_path: Path) -> None:
    central = CentralStore(tmp_path / "centre.db")
    try:
        sub = SwallowingSubscription()
        client = SimpleNamespace(stats={"reconnects": 0})
        aggregator = Aggregator("nats://127.0.0.1:1", central)
        reader = asyncio.create_task(aggregator._read(client, StandInJetStream(sub)))  # type: ignore[arg-type]
        await asyncio.wait_for(sub.fetched_twice.wait(), 2.0)
        reader.cancel()
        done, _ = await asyncio.wait({reader}, timeout=2.0)
        if not done:  # the old code loops on: stop it for good before failing
            reader.cancel()
            await asyncio.wait({reader}, timeout=1.0)
        assert sub.swallowed == 1, "the stand-in fetch did not swallow the cancel"
        assert done == {reader}, "the reader went on fetching after it was cancelled"
        assert reader.cancelled()
        assert aggregator.caught_up.is_set()
    finally:
        central.close()
