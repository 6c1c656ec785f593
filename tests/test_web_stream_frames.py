"""The stream hub's frames and heartbeat without a server (service.web.stream)."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

from service.hall import Update
from service.listeners import Listeners
from service.web import stream
from service.web.stream import KEEP_ALIVE, StreamHub


class Tables:
    """Just what the hub reads of a hall: a summary per table, and its updates."""

    def __init__(self) -> None:
        self.updates: Listeners[Update] = Listeners(logging.getLogger(__name__), "update")
        self.summaries: dict[str, dict[str, Any]] = {}

    def subscribe(self, callback: Any) -> None:
        self.updates.add(callback)

    def unsubscribe(self, callback: Any) -> None:
        self.updates.remove(callback)

    def subscribe_status(self, callback: Any) -> None: ...

    def unsubscribe_status(self, callback: Any) -> None: ...

    def summary(self, table_id: str) -> dict[str, Any]:
        return self.summaries[table_id]

    def store_healthy(self) -> bool:
        return True


def frames(data: bytes) -> list[tuple[str, dict[str, Any]]]:
    """The (event, data) of each SSE message of a write."""
    out = []
    for message in data.decode().split("\n\n")[:-1]:
        event, body = message.removeprefix("event: ").split("\ndata: ")
        out.append((event, json.loads(body)))
    return out


async def test_a_commits_updates_go_out_as_one_write_of_one_frame_each() -> None:
    tables = Tables()
    hub = StreamHub(tables, expose_timing=True)  # type: ignore[arg-type]
    overview, other = hub.open(None, False), hub.open(["2"], False)
    try:
        for table_id in ("1", "2", "1"):
            tables.summaries[table_id] = {"id": table_id, "moves": len(table_id)}
            events = [{"type": "board", "table": table_id}]
            tables.updates.tell(Update(table_id, events, 12.5))
        data = await asyncio.wait_for(hub.next_write(overview), 1)
        assert data is not None
        got = frames(data)
        assert [(event, body["table"]) for event, body in got] == [("state", "1"), ("state", "2")]
        assert list(got[0][1]) == ["table", "state", "server_time", "events", "t_in"]
        assert got[1][1]["events"] == [{"type": "board", "table": "2"}]
        assert hub.merged == 1  # table 1's first update, replaced before it was written
        alone = await asyncio.wait_for(hub.next_write(other), 1)
        assert alone is not None
        assert alone in data  # the same frame, shared
    finally:
        hub.close()


async def test_a_quiet_stream_gets_a_keep_alive(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stream, "HEARTBEAT", 0.05)
    monkeypatch.setattr(stream, "HEARTBEAT_CHECK", 0.01)
    hub = StreamHub(Tables())  # type: ignore[arg-type]
    client = hub.open(None, False)
    try:
        assert await asyncio.wait_for(hub.next_write(client), 1) == KEEP_ALIVE
        hub.close()
        assert await asyncio.wait_for(hub.next_write(client), 1) is None
    finally:
        hub.close()


async def test_an_update_goes_only_to_the_streams_that_follow_its_table() -> None:
    tables = Tables()
    hub = StreamHub(tables)  # type: ignore[arg-type]
    pages = {table_id: hub.open([table_id], False) for table_id in ("1", "2", "3")}
    both = hub.open(["1", "3"], False)
    overview = hub.open(None, False)
    try:
        for table_id in ("1", "2", "3"):
            tables.summaries[table_id] = {"id": table_id}
        tables.updates.tell(Update("1", [{"type": "board"}]))
        assert list(pages["1"].pending) == list(both.pending) == list(overview.pending) == ["1"]
        assert not pages["2"].pending
        assert not pages["3"].pending
        assert not pages["2"].wake.is_set()
        tables.updates.tell(Update("3", [{"type": "board"}]))
        assert list(both.pending) == list(overview.pending) == ["1", "3"]
        assert list(pages["3"].pending) == ["3"]
        # A stream dropped (or whose connection was lost) is told nothing more; the others
        # of its table still are.
        hub.drop(pages["1"])
        hub.hang_up(both)
        hub.hang_up(both)  # its connection lost, then its handler ending: no harm twice
        hub.drop(both)
        pages["1"].pending.clear()
        both.pending.clear()
        tables.updates.tell(Update("1", [{"type": "board"}]))
        assert not pages["1"].pending
        assert not both.pending
        assert list(overview.pending) == ["1", "3"]
        again = hub.open(["1"], False)  # a new stream of the table is told again
        tables.updates.tell(Update("1", [{"type": "board"}]))
        assert list(again.pending) == ["1"]
        assert hub.clients == {pages["2"], pages["3"], overview, again}
        data = await asyncio.wait_for(hub.next_write(again), 1)
        assert data is not None
        assert [e for e, _ in frames(data)] == ["state"]
    finally:
        hub.close()


async def test_an_overview_of_whole_states_beside_one_of_summaries_gets_whole_states() -> None:
    """The overviews' own way (every stream of every table takes summaries) holds only while
    it is so: a stream of every table's whole state gets whole states, and once it is gone
    the summaries' streams still get theirs."""
    tables = Tables()
    states = {"1": {"id": "1", "moves": ["e4"]}}
    tables.state = lambda table_id: dict(states[table_id])  # type: ignore[attr-defined]
    tables.summaries["1"] = {"id": "1"}
    hub = StreamHub(tables)  # type: ignore[arg-type]
    summaries = hub.open(None, False)
    try:
        tables.updates.tell(Update("1", [{"type": "board"}]))
        assert frames(summaries.pending.pop("1"))[0][1]["state"] == {"id": "1"}
        whole = hub.open(None, True)
        tables.updates.tell(Update("1", [{"type": "board"}]))
        assert frames(whole.pending.pop("1"))[0][1]["state"]["moves"] == ["e4"]
        assert frames(summaries.pending.pop("1"))[0][1]["state"] == {"id": "1"}
        hub.drop(whole)
        assert hub._summaries_only  # the overviews' own way again
        tables.updates.tell(Update("1", [{"type": "board"}]))
        assert frames(summaries.pending.pop("1"))[0][1]["state"] == {"id": "1"}
        assert not whole.pending
    finally:
        hub.close()


async def test_a_stream_is_woken_by_its_first_waiting_frame_and_again_after_each_write() -> None:
    """The hub wakes a stream once for the frames waiting together (they go out in one
    write), and again for the first frame queued after that write: a stream with frames
    waiting is never left asleep."""
    tables = Tables()
    hub = StreamHub(tables)  # type: ignore[arg-type]
    client = hub.open(None, False)
    woken = 0
    real_set = client.wake.set

    def counted_set() -> None:
        nonlocal woken
        woken += 1
        real_set()

    client.wake.set = counted_set  # type: ignore[method-assign]
    try:
        for round_ in range(3):
            for table_id in ("1", "2", "1"):
                tables.summaries[table_id] = {"id": table_id, "round": round_}
                tables.updates.tell(Update(table_id, [{"type": "board"}]))
            assert client.wake.is_set()
            assert woken == round_ + 1  # once for the three frames of the round
            data = await asyncio.wait_for(hub.next_write(client), 1)
            assert data is not None
            assert [body["table"] for _, body in frames(data)] == ["1", "2"]
            assert [body["state"]["round"] for _, body in frames(data)] == [round_, round_]
            assert not client.wake.is_set()
        assert hub.merged == 3  # table 1's older frame replaced in each round
    finally:
        hub.close()
