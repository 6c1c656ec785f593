"""The live stream: Server-Sent Events fed by the hall's updates.

Each update the hall publishes (always after its commit) is turned into the table's state
*at that moment*, serialised once per kind of subscriber, and queued for each client.  A
client that reads slowly only ever holds the newest state of each table (older ones are
replaced), so memory stays bounded whatever it does.

Besides the tables' ``state`` events, a ``status`` event carries the store's state
(``{"store": ...}``, as ``GET /api/status``): sent when a stream opens while the store
cannot write, and to every stream whenever that changes (the pages show a banner while it
is not ``ok``).  While the store is writing, a stream carries nothing of it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable
from typing import Any

from service.hall import Update
from service.json_text import dumps
from service.web.source import HallSource

logger = logging.getLogger(__name__)

HEARTBEAT = 15.0
"""Seconds between keep-alive comments on an idle stream."""

MAX_CLIENTS = 500
"""Streams served at once; more are refused with 503."""

MAX_CLIENTS_PER_ADDRESS = 50
"""Streams served at once to one client address (a venue behind one router opens one a
screen); more are refused with 503, so one client cannot take every stream."""


def summary(state: dict[str, Any]) -> dict[str, Any]:
    """The part of a table's state the overview page shows."""
    settings = state.get("settings") or {}
    keys = (
        "id",
        "phase",
        "fen",
        "board",
        "orientation",
        "last_move",
        "clocks",
        "scores",
        "result",
        "reason",
        "link",
        "connection",
    )
    out = {key: state.get(key) for key in keys}
    if "set_right" in state:  # turn-based tables: where the board differs from the game
        out["set_right"] = state["set_right"]
    out["white"] = settings.get("white", "?")
    out["black"] = settings.get("black", "?")
    out["round"] = settings.get("round", "?")
    out["event"] = settings.get("event", "?")
    out["variant"] = settings.get("variant", "standard")
    moves = state.get("moves") or []
    out["ply"] = len(moves)
    out["claims"] = len(state.get("claims") or state.get("pending_claims") or [])
    out["irregularities"] = len(state.get("irregularities") or [])
    return out


class StreamClient:
    """One open stream: which tables it follows and what waits to be sent."""

    def __init__(
        self, tables: frozenset[str] | None, full: bool, address: str | None = None
    ) -> None:
        self.tables = tables
        self.full = full
        self.address = address
        """The client's address (None where unknown)."""
        self.pending: dict[str, str] = {}
        self.status: str | None = None
        """The store's newest status not sent yet (a ``status`` event's data)."""
        self.wake = asyncio.Event()
        self.closed = False

    def wants(self, table_id: str) -> bool:
        return self.tables is None or table_id in self.tables


class StreamHub:
    """Fans the hall's updates out to the open streams."""

    def __init__(self, hall: HallSource, *, expose_timing: bool = False) -> None:
        self.hall = hall
        self.expose_timing = expose_timing
        self.clients: set[StreamClient] = set()
        self.sent = 0
        self.merged = 0
        """Updates replaced by a newer one of the same table before a slow reader got them."""
        hall.subscribe(self.on_update)
        hall.subscribe_status(self.on_status)

    def close(self) -> None:
        self.hall.unsubscribe(self.on_update)
        self.hall.unsubscribe_status(self.on_status)
        for client in self.clients:
            client.closed = True
            client.wake.set()

    def payload(self, table_id: str, full: bool, update: Update | None = None) -> str:
        """One ``data:`` line for a table, as it stands now.  The overview's summary comes
        from the table's own (no move list, claims or settings built for it) where the
        table has one."""
        shown = None if full else self.hall.summary(table_id)
        if shown is None:
            state = self.hall.state(table_id)
            shown = state if full else summary(state)
        body: dict[str, Any] = {
            "table": table_id,
            "state": shown,
            "server_time": time.time(),
        }
        if update is not None:
            body["events"] = update.events
            if self.expose_timing and update.source_time is not None:
                body["t_in"] = update.source_time
        return dumps(body)

    def on_update(self, update: Update) -> None:
        """Called by the hall right after a commit."""
        if not self.clients:
            return
        cache: dict[bool, str] = {}
        for client in self.clients:
            if not client.wants(update.table_id):
                continue
            text = cache.get(client.full)
            if text is None:
                text = cache[client.full] = self.payload(update.table_id, client.full, update)
            if update.table_id in client.pending:
                self.merged += 1
            client.pending[update.table_id] = text
            client.wake.set()

    def status_payload(self) -> str | None:
        """The ``status`` event's data for a stream opening now (None while the store
        writes: a stream then carries nothing of it)."""
        if self.hall.store_healthy():
            return None
        return dumps({"store": self.hall.store_status()})

    def on_status(self, status: dict[str, Any]) -> None:
        """Called by the hall when the store's state (or, while it fails, the count of rows
        kept in memory) changed."""
        text = dumps({"store": status})
        for client in self.clients:
            client.status = text
            client.wake.set()

    def open(
        self, tables: Iterable[str] | None, full: bool, address: str | None = None
    ) -> StreamClient:
        client = StreamClient(None if tables is None else frozenset(tables), full, address)
        self.clients.add(client)
        return client

    def refusal(self, address: str | None) -> str | None:
        """Why a new stream for a client at ``address`` is refused (None: it is not)."""
        if len(self.clients) >= MAX_CLIENTS:
            return "too many open streams; try again later"
        if address is not None:
            mine = sum(1 for client in self.clients if client.address == address)
            if mine >= MAX_CLIENTS_PER_ADDRESS:
                return (
                    f"too many open streams from one address ({MAX_CLIENTS_PER_ADDRESS}); "
                    "close one or try again later"
                )
        return None

    def hang_up(self, client: StreamClient) -> None:
        """The client's connection was lost: its stream ends at once (not at the next
        write, which may be a heartbeat away) and frees its place."""
        client.closed = True
        client.wake.set()
        self.clients.discard(client)

    def drop(self, client: StreamClient) -> None:
        client.closed = True
        self.clients.discard(client)

    async def next_batch(self, client: StreamClient) -> list[tuple[str, str]] | None:
        """The messages waiting for ``client``, each an event name (``state`` or
        ``status``) and its data (an empty list after :data:`HEARTBEAT` quiet seconds; None
        once the hub closed)."""
        if not client.pending and client.status is None and not client.closed:
            try:
                await asyncio.wait_for(client.wake.wait(), HEARTBEAT)
            except TimeoutError:
                return []
        client.wake.clear()
        if client.closed:
            return None
        items, client.pending = client.pending, {}
        self.sent += len(items)
        batch = [("state", text) for text in items.values()]
        if client.status is not None:
            batch.append(("status", client.status))
            client.status = None
        return batch
