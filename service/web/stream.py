"""The live stream: Server-Sent Events fed by the hall's updates.

Each update the hall publishes (always after its commit) is turned into the table's state
*at that moment*, serialised once per kind of subscriber, and queued for each client.  A
client that reads slowly only ever holds the newest state of each table (older ones are
replaced), so memory stays bounded whatever it does.

Besides the tables' ``state`` events, a ``status`` event carries the store's state
(``{"store": ...}``, as ``GET /api/status``): sent when a stream opens while the store
cannot write, and to every stream whenever that changes (the pages show a banner while it
is not ``ok``).  While the store is writing, a stream carries nothing of it.

A table page's stream may ask for diffs (``?table=ID&diff=1``): its first ``state`` event
carries the whole state, each later change only a ``diff`` event with what changed since
the last event this stream sent (:mod:`service.web.state_diff`: keys set or gone, and the
move list from its first changed move), so a long game's move list is not sent again with
every clock report.  A slow reader's waiting diff is replaced by one from the same base to
the newest state.  In this form both events also carry ``start`` (the FEN the game began
from: None where the game is not chess python-chess plays) and ``pgn`` (the address of the
game's PGN), a diff only when they changed, and no ``events``.

Each message is held as the bytes of its whole SSE frame (``event: ...`` and ``data: ...``),
made once per update and kind of stream (summaries, whole states, a diff from one base) and
shared by every stream that gets it (the overview's and the table pages' frames carry the
same ``events`` and ``server_time``), and what waits for a stream goes out in one write:
every frame of a commit in one system call.  An update is looked at only by the streams that
follow its table (the hub keeps them by table), so a hall's many table pages cost an update
nothing but its own table's.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Any

import orjson

from service.hall import Update
from service.json_text import ORJSON_OPTIONS, dumps
from service.table.settings import DETAIL_KEYS
from service.web.source import HallSource
from service.web.start_fen import StartFens
from service.web.state_diff import state_diff

logger = logging.getLogger(__name__)

HEARTBEAT = 15.0
"""Seconds of quiet after which a stream carries a keep-alive comment."""

HEARTBEAT_CHECK = 1.0
"""Seconds between two looks for quiet streams (one timer for them all, rather than one
set and cancelled at every write of every stream): a quiet stream's keep-alive comes
:data:`HEARTBEAT` to :data:`HEARTBEAT` + this seconds after its last write."""

MAX_CLIENTS = 500
"""Streams served at once; more are refused with 503."""

MAX_CLIENTS_PER_ADDRESS = 50
"""Streams served at once to one client address (a venue behind one router opens one a
screen); more are refused with 503, so one client cannot take every stream."""

RETRY = b"retry: 2000\n"
"""What every stream opens with: the browser reconnects 2 s after losing it."""

KEEP_ALIVE = b": keep-alive\n\n"
"""The comment an idle stream carries every :data:`HEARTBEAT` seconds."""


class Event(bytes, Enum):
    """The SSE event names a stream sends, as the start of their frame."""

    STATE = b"event: state\ndata: "
    DIFF = b"event: diff\ndata: "
    STATUS = b"event: status\ndata: "


_END = b"\n\n"
_STATE = Event.STATE.value


def json_bytes(value: Any) -> bytes:
    """:func:`service.json_text.dumps` as UTF-8 bytes (orjson's own bytes where it can; a
    character UTF-8 cannot write, a lone surrogate, is replaced).  orjson is asked first
    without its options: they change only how a key that is not a string is written (which
    it then refuses), and cost a third of the time of a table's summary."""
    try:
        return orjson.dumps(value)
    except TypeError:
        pass
    try:
        return orjson.dumps(value, option=ORJSON_OPTIONS)
    except TypeError:
        return dumps(value).encode("utf-8", "replace")


def frame(event: Event, data: bytes) -> bytes:
    """One SSE message: the event's name and its JSON ``data`` line."""
    return b"".join((event.value, data, _END))


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
    details = {k: settings[k] for k in DETAIL_KEYS if settings.get(k) is not None}
    if details:  # a pairing's players' details and board (shown only when known)
        out["details"] = details
    if "next_players" in state:  # players named for the next game, while they wait
        out["next_players"] = state["next_players"]
    return out


@dataclass(frozen=True, slots=True)
class Sent:
    """A table's state as a diff stream last sent (or is about to send) it."""

    version: int
    """Which state of the hub this is (a diff from one version to another is made once
    for every stream holding the first)."""
    state: dict[str, Any]
    extras: dict[str, Any]


class StreamClient:
    """One open stream: which tables it follows and what waits to be sent."""

    def __init__(
        self,
        tables: frozenset[str] | None,
        full: bool,
        address: str | None = None,
        *,
        diff: bool = False,
    ) -> None:
        self.tables = tables
        self.full = full
        self.diff = diff
        """Whether this stream sends diffs after its first state (see the module)."""
        self.sent: dict[str, Sent] = {}
        """Per table, the state the client holds (diff streams)."""
        self.next_sent: dict[str, Sent] = {}
        """Per table, the state it holds once its waiting diff is sent."""
        self.address = address
        """The client's address (None where unknown)."""
        self.pending: dict[str, bytes] = {}
        """Per table, the frame waiting to be sent (the newest: it replaces an older one)."""
        self.status: bytes | None = None
        """The store's newest status not sent yet (a ``status`` frame)."""
        self.wake = asyncio.Event()
        self.closed = False
        self.quiet_since = 0.0
        """When (the event loop's time) the stream was last handed something to write."""

    def wants(self, table_id: str) -> bool:
        return self.tables is None or table_id in self.tables


class StreamHub:
    """Fans the hall's updates out to the open streams."""

    def __init__(self, hall: HallSource, *, expose_timing: bool = False) -> None:
        self.hall = hall
        self.expose_timing = expose_timing
        self.clients: set[StreamClient] = set()
        self._everyone: dict[StreamClient, None] = {}
        """The open streams of every table, in the order they opened."""
        self._followers: dict[str, dict[StreamClient, None]] = {}
        """The other open streams by the table they follow, in the order they opened: an
        update is looked at only by the streams that follow its table, however many others
        are open (each a table page following its one table)."""
        self._summaries_only = True
        """Whether every stream of :attr:`_everyone` takes summaries (neither whole states
        nor diffs): an update no other stream follows then takes the short way of
        :meth:`on_update`."""
        self.sent = 0
        self.merged = 0
        """Updates replaced by a newer one of the same table before a slow reader got them."""
        self._version = 0
        self._starts = StartFens()
        self._beat_handle: asyncio.TimerHandle | None = None
        hall.subscribe(self.on_update)
        hall.subscribe_status(self.on_status)

    def close(self) -> None:
        if self._beat_handle is not None:
            self._beat_handle.cancel()
            self._beat_handle = None
        self.hall.unsubscribe(self.on_update)
        self.hall.unsubscribe_status(self.on_status)
        for client in self.clients:
            client.closed = True
            client.wake.set()

    def payload(
        self,
        table_id: str,
        full: bool,
        update: Update | None = None,
        now: float | None = None,
        state: dict[str, Any] | None = None,
    ) -> bytes:
        """One ``data:`` line for a table, as it stands now (JSON; ``now``: the server time
        it gives, by default the clock's; ``state``: the table's state now where it was read
        already).  The overview's summary comes from the table's own (no move list, claims
        or settings built for it) where the table has one."""
        shown = None if full else self.hall.summary(table_id)
        if shown is None:
            if state is None:
                state = self.hall.state(table_id)
            shown = state if full else summary(state)
        return json_bytes(self._body(table_id, shown, update, time.time() if now is None else now))

    def _body(
        self, table_id: str, shown: dict[str, Any], update: Update | None, now: float
    ) -> dict[str, Any]:
        """A ``state`` event's data: the table's state or summary ``shown``, the server time
        ``now`` and ``update``'s events (with the time of its input where timing is exposed)."""
        if update is None:
            return {"table": table_id, "state": shown, "server_time": now}
        body = {"table": table_id, "state": shown, "server_time": now, "events": update.events}
        if self.expose_timing and update.source_time is not None:
            body["t_in"] = update.source_time
        return body

    def on_update(self, update: Update) -> None:
        """Called by the hall right after a commit: each kind of stream's frame is made
        once and queued for every stream that follows the table (the others are not
        looked at)."""
        table_id = update.table_id
        mine = self._followers.get(table_id)
        everyone = self._everyone
        if mine is None:
            if not everyone:
                return
            if self._summaries_only:  # the overviews alone (a hall's common case): the
                # summary's frame made once and queued for each, without the steps below
                data = self._summary_frame(update, time.time())
                for client in everyone:
                    self._queue(client, table_id, data)
                return
            group: Iterable[StreamClient] = everyone
        else:
            group = (*everyone, *mine) if everyone else mine
        summaries: bytes | None = None  # the frame of the streams of summaries
        states: bytes | None = None  # ...and of whole states
        whole: dict[str, Any] | None = None  # the table's state, read once for both
        newest: Sent | None = None
        diffs: dict[int, bytes | None] = {}
        now = time.time()
        for client in group:
            if client.diff:
                if newest is None:
                    newest = self._snapshot(table_id, whole)
                    whole = newest.state
                self._queue_diff(client, update, newest, diffs)
                continue
            if client.full:
                if states is None:
                    if whole is None:
                        whole = self.hall.state(table_id)
                    states = b"".join(
                        (_STATE, self.payload(table_id, True, update, now, whole), _END)
                    )
                data = states
            else:
                if summaries is None:
                    summaries = self._summary_frame(update, now)
                data = summaries
            self._queue(client, table_id, data)

    def _summary_frame(self, update: Update, now: float) -> bytes:
        """The frame of ``update``'s table for the streams of summaries (:meth:`payload`'s
        data without its general steps: made at every update of a hall)."""
        table_id = update.table_id
        body = self._body(table_id, self.hall.summary(table_id), update, now)
        return b"".join((_STATE, json_bytes(body), _END))

    def _queue(self, client: StreamClient, table_id: str, data: bytes) -> None:
        """Queue ``data``, the table's newest frame, for ``client`` (in place of an older
        one it has not read yet)."""
        pending = client.pending
        if not pending:  # (else woken already: the frames waiting are taken together)
            client.wake.set()
        elif table_id in pending:
            self.merged += 1
        pending[table_id] = data

    # --- diff streams ---------------------------------------------------------------

    def _snapshot(self, table_id: str, state: dict[str, Any] | None = None) -> Sent:
        """The table's state (``state``, where it was read already) and extras now, as a
        new version."""
        self._version += 1
        if state is None:
            state = self.hall.state(table_id)
        return Sent(self._version, state, self.extras(table_id, state))

    def extras(self, table_id: str, state: dict[str, Any]) -> dict[str, Any]:
        """What a diff stream adds to a table's state: the FEN its game began from (None
        where python-chess does not play it) and the address of its game's PGN (the game
        before while the new one has no move; None before any)."""
        runner = self.hall.shown(table_id)
        start = self._starts.start(table_id, runner.table.history())
        games = runner.games
        index = len(games) - 1
        if index > 0 and not state.get("moves") and state.get("result") in (None, "*"):
            index -= 1
        pgn = f"/games/{table_id}-{games[index].number}.pgn" if games else None
        return {"start": start, "pgn": pgn}

    def _queue_diff(
        self, client: StreamClient, update: Update, newest: Sent, diffs: dict[int, bytes | None]
    ) -> None:
        """Queue for ``client`` what turns the state it holds into ``newest`` (nothing when
        they are the same)."""
        table_id = update.table_id
        base = client.sent.get(table_id)
        if base is None:  # not sent its first state yet: it will be the newest
            return
        if base.version in diffs:
            data = diffs[base.version]
        else:
            diff = state_diff(base.state, newest.state)
            extras = {k: v for k, v in newest.extras.items() if base.extras.get(k) != v}
            if not diff and not extras:
                data = None
            else:
                body: dict[str, Any] = {
                    "table": table_id,
                    "diff": diff,
                    "server_time": time.time(),
                    **extras,
                }
                if self.expose_timing and update.source_time is not None:
                    body["t_in"] = update.source_time
                data = frame(Event.DIFF, json_bytes(body))
            diffs[base.version] = data
        if data is None:  # back to what the client holds: nothing waits
            client.pending.pop(table_id, None)
            client.next_sent.pop(table_id, None)
            return
        client.next_sent[table_id] = newest
        self._queue(client, table_id, data)

    def first_payload(self, client: StreamClient, table_id: str) -> bytes:
        """The ``state`` event's data a stream opens with for ``table_id`` (a diff stream
        then holds it as its base)."""
        if not client.diff:
            return self.payload(table_id, client.full)
        sent = self._snapshot(table_id)
        client.sent[table_id] = sent
        body = {"table": table_id, "state": sent.state, "server_time": time.time()}
        return json_bytes({**body, **sent.extras})

    def opening(self, client: StreamClient, tables: Iterable[str]) -> bytes:
        """What a stream opens with: the reconnection delay, the store's status where it
        does not write, and each of ``tables``' state."""
        status = self.status_payload()
        parts = [RETRY]
        if status is not None:
            parts.append(frame(Event.STATUS, status))
        parts.extend(frame(Event.STATE, self.first_payload(client, tid)) for tid in tables)
        return b"".join(parts)

    def status_payload(self) -> bytes | None:
        """The ``status`` event's data for a stream opening now (None while the store
        writes: a stream then carries nothing of it)."""
        if self.hall.store_healthy():
            return None
        return json_bytes({"store": self.hall.store_status()})

    def on_status(self, status: dict[str, Any]) -> None:
        """Called by the hall when the store's state (or, while it fails, the count of rows
        kept in memory) changed."""
        data = frame(Event.STATUS, json_bytes({"store": status}))
        for client in self.clients:
            client.status = data
            client.wake.set()

    def open(
        self,
        tables: Iterable[str] | None,
        full: bool,
        address: str | None = None,
        *,
        diff: bool = False,
    ) -> StreamClient:
        """A new stream (``diff``: one table page's stream of diffs, see the module)."""
        wanted = None if tables is None else frozenset(tables)
        client = StreamClient(wanted, full, address, diff=diff)
        self.add(client)
        return client

    def add(self, client: StreamClient) -> None:
        """Serve ``client`` (a stream :meth:`open` made, or one made elsewhere)."""
        self.clients.add(client)
        if client.tables is None:
            self._everyone[client] = None
            self._summaries_only = self._summaries_only and not (client.full or client.diff)
        else:
            for table_id in client.tables:
                self._followers.setdefault(table_id, {})[client] = None
        loop = asyncio.get_running_loop()
        client.quiet_since = loop.time()
        if self._beat_handle is None:
            self._beat_handle = loop.call_later(HEARTBEAT_CHECK, self._beat)

    def _forget(self, client: StreamClient) -> None:
        """``client`` is no longer served (nothing when it was not)."""
        if client not in self.clients:
            return
        self.clients.discard(client)
        if client.tables is None:
            self._everyone.pop(client, None)
            self._summaries_only = not any(c.full or c.diff for c in self._everyone)
            return
        followers = self._followers
        for table_id in client.tables:
            group = followers.get(table_id)
            if group is not None:
                group.pop(client, None)
                if not group:
                    del followers[table_id]

    def _beat(self) -> None:
        """Wake the streams quiet for :data:`HEARTBEAT` seconds (each then writes a
        keep-alive comment); look again in :data:`HEARTBEAT_CHECK` seconds while any is
        open."""
        self._beat_handle = None
        if not self.clients:
            return
        loop = asyncio.get_running_loop()
        quiet = loop.time() - HEARTBEAT
        for client in self.clients:
            if client.quiet_since <= quiet:
                client.wake.set()
        self._beat_handle = loop.call_later(HEARTBEAT_CHECK, self._beat)

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
        self._forget(client)

    def drop(self, client: StreamClient) -> None:
        client.closed = True
        self._forget(client)

    async def next_write(self, client: StreamClient) -> bytes | None:
        """What waits for ``client``, its frames (``state``, ``diff``, then ``status``) as
        one write; :data:`KEEP_ALIVE` once it has been quiet for :data:`HEARTBEAT` seconds
        (or when what waited went back to what the client holds); None once the hub
        closed or the stream was dropped."""
        if not client.pending and client.status is None and not client.closed:
            await client.wake.wait()
        client.wake.clear()
        if client.closed:
            return None
        client.quiet_since = asyncio.get_running_loop().time()
        items, client.pending = client.pending, {}
        self.sent += len(items)
        if client.diff:
            client.sent.update(client.next_sent)
            client.next_sent.clear()
        data = b"".join(items.values())
        if client.status is not None:
            data += client.status
            client.status = None
        return data or KEEP_ALIVE
