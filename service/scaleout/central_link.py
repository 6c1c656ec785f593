"""``service.scaleout.central_link``: a central web process's link to the edges through the
broker (imports ``nats``; only ``central`` and ``central-web --nats`` import it).

One connection, made in the background (the web serves meanwhile; admin commands answer
503 until it is up), that

* carries admin commands to the owning edge by request and reply (:meth:`CentralLink.request`,
  the ``request`` of :func:`service.scaleout.admin_forward.forward_by_request`), and
* hands the aggregator's commit notices (:data:`~service.scaleout.log_wire.COMMITTED_SUBJECT`)
  to :class:`CommitNotices` (the web process's
  :class:`~service.scaleout.central_db.CentralTail`, which then reads the new rows at once),
  and
* watches the edges' heartbeats in the key-value bucket
  :data:`~service.scaleout.log_wire.STATUS_BUCKET`, handing each to the
  :class:`~service.scaleout.edge_directory.HeartbeatDirectory`.

A heartbeat arrives at the centre's wall-clock time, or at the time the broker stored it
when that is earlier (a new watcher first gets every edge's last heartbeat, however old: an
edge gone for an hour is not shown as just heard).  The watcher is made again when the link
is back after a cut, and after :data:`WATCH_SILENCE` seconds without a heartbeat.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import json
import logging
import time
from collections.abc import Callable
from typing import Any, Protocol

import nats.errors
import nats.js.errors
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js.kv import KeyValue

from dgt.tasks import cancelling
from service.scaleout.edge_directory import HeartbeatDirectory
from service.scaleout.jetstream_log import NATS_ERRORS, close_client, connect
from service.scaleout.log_wire import COMMITTED_SUBJECT, STATUS_BUCKET
from service.scaleout.replica import EdgeUnreachable

logger = logging.getLogger(__name__)

WATCH_SILENCE = 6.0
"""Seconds without a heartbeat after which the watcher is made again (and at once when the
link to the broker is back after a cut: a broker restarted takes its watchers with it)."""
POLL = 0.5
"""Seconds between two looks whether the watcher must be made again."""

RETRY = 1.0
"""Seconds before trying again when the bucket cannot be watched."""


class CommitNotices(Protocol):
    """Who wants the aggregator's commit notices."""

    def committed(self, position: int) -> None:
        """The aggregator committed the stream up to ``position``."""
        ...

    def listening(self) -> None:
        """The notices come from now on (the link re-subscribes on its own after a cut)."""
        ...


class CentralLink:
    """The link of a central web process to the broker at ``url``."""

    def __init__(
        self,
        url: str,
        directory: HeartbeatDirectory,
        *,
        who: str = "centre web",
        wall_clock: Callable[[], float] = time.time,
        notices: CommitNotices | None = None,
    ) -> None:
        self.url = url
        self.directory = directory
        self.notices = notices
        self.who = who
        self.wall_clock = wall_clock
        self.client: Client | None = None
        self.heartbeats = 0
        self._relinked = False

    def _link_up(self) -> None:
        self._relinked = True

    async def request(self, subject: str, payload: bytes, timeout: float) -> bytes:  # noqa: ASYNC109 - the Request signature
        """A request and its reply's payload; :class:`EdgeUnreachable` when there is no
        link to the broker or no edge listening, ``TimeoutError`` when no answer came."""
        client = self.client
        if client is None or not client.is_connected:
            raise EdgeUnreachable(f"no link to the broker {self.url} yet")
        try:
            reply = await client.request(subject, payload, timeout=timeout)
        except nats.errors.NoRespondersError:
            raise EdgeUnreachable("it is not connected to the broker") from None
        except nats.errors.TimeoutError:
            raise TimeoutError from None
        except NATS_ERRORS as exc:
            raise EdgeUnreachable(f"the broker: {exc}") from None
        return bytes(reply.data)

    async def run(self) -> None:
        """Connect (waiting as long as it takes), then watch the heartbeats until cancelled."""
        self.client = await connect(self.url, self.who, self._link_up)
        try:
            if self.notices is not None:
                await self._listen(self.client, self.notices)
            await self._watch(self.client)
        finally:
            client, self.client = self.client, None
            await close_client(client)

    async def _listen(self, client: Client, notices: CommitNotices) -> None:
        async def committed(message: Msg) -> None:
            try:
                position = int(message.data)
            except ValueError:
                logger.debug("%s: a commit notice %r: not a position", self.who, message.data)
                return
            notices.committed(position)

        while True:
            try:
                await client.subscribe(COMMITTED_SUBJECT, cb=committed)
            except NATS_ERRORS as exc:
                if cancelling():
                    raise asyncio.CancelledError from None
                logger.debug("%s: subscribing to the commit notices: %r", self.who, exc)
                await asyncio.sleep(RETRY)
                continue
            notices.listening()
            return

    async def _watch(self, client: Client) -> None:
        js = client.jetstream()
        while True:
            watcher: KeyValue.KeyWatcher | None = None
            try:
                bucket = await js.key_value(STATUS_BUCKET)
                self._relinked = False
                watcher = await bucket.watchall()
                heard = time.monotonic()
                while not self._relinked and time.monotonic() - heard < WATCH_SILENCE:
                    try:
                        entry = await watcher.updates(timeout=POLL)  # type: ignore[no-untyped-call]
                    except nats.errors.TimeoutError:
                        continue
                    heard = time.monotonic()
                    if entry is not None and entry.value:
                        self._note(entry)
            except nats.js.errors.BucketNotFoundError:
                logger.debug("%s: no bucket %s yet", self.who, STATUS_BUCKET)
            except NATS_ERRORS as exc:
                if cancelling():
                    raise asyncio.CancelledError from None
                logger.debug("%s: watching the heartbeats: %r", self.who, exc)
            else:
                continue  # a silence or the link back: a new watcher at once
            finally:
                if watcher is not None:
                    with contextlib.suppress(*NATS_ERRORS):
                        await watcher.stop()  # type: ignore[no-untyped-call]
            await asyncio.sleep(RETRY)

    def _note(self, entry: KeyValue.Entry) -> None:
        try:
            heartbeat: Any = json.loads(entry.value or b"")
        except ValueError:
            heartbeat = None
        if not isinstance(heartbeat, dict):
            logger.warning("%s: heartbeat %r is no JSON object: dropped", self.who, entry.key)
            return
        received = self.wall_clock()
        stored: object = entry.created  # the broker's time stamp (typed int, a datetime)
        if isinstance(stored, datetime.datetime):
            received = min(received, stored.timestamp())
        self.heartbeats += 1
        self.directory.note(heartbeat, received)
