"""``service.scaleout.edge``: a hall as an edge of a central service (``run --central
nats://HOST:PORT --edge-id ID``), the hall's :class:`~service.hall.CentralLink`.

Once the hall has started, one task connects to the broker (waiting as long as it takes; the
hall does not wait) and then runs side by side: the log forwarder
(:mod:`service.scaleout.edge_forwarder`), the heartbeat in the status bucket
(:mod:`service.scaleout.edge_status`) and the admin desk answering requests on
``dgt.admin.<edge>.>`` (:mod:`service.scaleout.edge_admin`).  Nothing of it touches the hall
but through its public reads and :meth:`~service.hall.Hall.admin`: a broker that is cut off
changes nothing at the hall.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

from nats.aio.client import Client
from nats.aio.msg import Msg

from dgt.tasks import cancelling
from service.hall import Hall, Update
from service.json_text import dumps
from service.scaleout.edge_admin import AdminDesk
from service.scaleout.edge_forwarder import LogForwarder
from service.scaleout.edge_status import HEARTBEAT_INTERVAL, heartbeat
from service.scaleout.jetstream_log import (
    NATS_ERRORS,
    JetStreamLog,
    close_client,
    connect,
    ensure_status_bucket,
)
from service.scaleout.log_wire import STATUS_BUCKET, admin_subjects, log_subject
from service.store import Store, StoreError
from service.table import AdminCommand

logger = logging.getLogger(__name__)

DRAIN_SECONDS = 2.0
"""At a stop, how long the edge may still forward the last commits."""


def claim(store: Store, edge_id: str, boards: dict[str, int | None]) -> str:
    """Make ``store`` the store of edge ``edge_id`` (:meth:`service.store.Store.claim_edge`,
    which raises StoreError for another edge's database); returns its database name."""
    store.claim_edge(edge_id, boards)
    db = store.edge_db
    assert db is not None
    return db


class Edge:
    """The link of one hall to the centre."""

    def __init__(
        self,
        url: str,
        edge_id: str,
        db: str,
        *,
        heartbeat_interval: float = HEARTBEAT_INTERVAL,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.url = url
        self.edge_id = edge_id
        self.db = db
        self.heartbeat_interval = heartbeat_interval
        self.wall_clock = wall_clock
        self.forwarder: LogForwarder | None = None
        self.desk: AdminDesk | None = None
        self.client: Client | None = None
        self.heartbeats = 0
        self._hall: Hall | None = None
        self._task: asyncio.Task[None] | None = None
        self._tasks: list[asyncio.Task[Any]] = []

    async def start(self, hall: Hall) -> None:
        self._hall = hall
        self.desk = AdminDesk(hall, frozenset(str(c) for c in AdminCommand))
        self._task = asyncio.get_running_loop().create_task(
            self._run(hall), name=f"edge {self.edge_id}"
        )

    async def close(self) -> None:
        if self._hall is not None:
            self._hall.unsubscribe(self._woken)
        tasks = [t for t in (self._task, *self._tasks) if t is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []
        if self.forwarder is not None and self.client is not None and self.client.is_connected:
            await self.forwarder.drain(DRAIN_SECONDS)
        if self.client is not None:
            await close_client(self.client)
            self.client = None

    def _link_up(self) -> None:
        if self.forwarder is not None:
            self.forwarder.link_up()

    def _woken(self, _update: Update) -> None:
        if self.forwarder is not None:
            self.forwarder.wake()

    async def _run(self, hall: Hall) -> None:
        client = self.client = await connect(self.url, f"edge {self.edge_id}", self._link_up)
        js = client.jetstream()
        forwarder = self.forwarder = LogForwarder(
            hall.store, JetStreamLog(js), self.edge_id, self.db, log_subject(self.edge_id)
        )
        hall.subscribe(self._woken)
        await client.subscribe(admin_subjects(self.edge_id), cb=self._admin)
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(forwarder.run(), name=f"edge {self.edge_id} log"),
            loop.create_task(self._beat(hall), name=f"edge {self.edge_id} heartbeat"),
        ]
        try:
            await asyncio.gather(*self._tasks)
        except Exception:  # a bug: said loudly, but the hall goes on
            logger.exception("edge %s: the link to the centre stopped", self.edge_id)

    async def _admin(self, message: Msg) -> None:
        assert self.desk is not None
        answer = await self.desk.answer(message.data)
        if message.reply:
            with contextlib.suppress(*NATS_ERRORS):
                await message.respond(answer)

    async def _beat(self, hall: Hall) -> None:
        assert self.client is not None
        js = self.client.jetstream()
        bucket = None
        while True:
            if cancelling():  # a cancel lost on the way (see cancelling): stop all the same
                raise asyncio.CancelledError
            try:
                if bucket is None:
                    await ensure_status_bucket(js)
                    bucket = await js.key_value(STATUS_BUCKET)
                await bucket.put(self.edge_id, self._status(hall))
                self.heartbeats += 1
            except NATS_ERRORS as exc:
                if cancelling():  # the client's error for a cancel: not a failed beat
                    raise asyncio.CancelledError from None
                bucket = None
                logger.debug("edge %s: heartbeat not sent: %s", self.edge_id, exc)
            except StoreError as exc:
                logger.debug("edge %s: heartbeat not sent: %s", self.edge_id, exc)
            await asyncio.sleep(self.heartbeat_interval)

    def _status(self, hall: Hall) -> bytes:
        forwarder = self.forwarder
        return dumps(
            heartbeat(
                self.edge_id,
                self.wall_clock(),
                hall.runners,
                hall.store_status(),
                forwarder.forwarded if forwarder is not None else None,
                forwarder.waiting() if forwarder is not None else 0,
                self.heartbeat_interval,
            )
        ).encode()
