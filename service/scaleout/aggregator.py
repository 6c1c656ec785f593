"""``service.scaleout.aggregator``: the centre's reader of the log stream.

It reads the stream in order from its own stored position (an ephemeral pull consumer that
starts at the message after it, with no acknowledgements: the position committed with the
rows is the only record of what was read), hands each fetched run of messages to the
:class:`~service.scaleout.central_store.CentralStore` (rows and position in one
transaction), and then calls ``on_rows(edge_id, rows)`` for each edge's new rows (the
:class:`~service.store.LogRow` tuples as the edge's store keeps them, in the order of its
log: registrations, inputs, outputs; what :func:`service.store.row_inputs` groups into the
inputs :func:`service.store.rebuild` replays).

After each commit that stored rows it sends a notice with the stream position committed on
:data:`~service.scaleout.log_wire.COMMITTED_SUBJECT` (core NATS: nothing kept, nothing
waited for), so the web processes following the database read it at once instead of at
their next look.

The stream is known by when the broker made it.  A stream made anew (the broker's storage
wiped, or the stream deleted and made again: another time of making, or fewer messages
than the position read) is a warning in the log and read from its start: the edges send
their logs again from their first row, and the rows already stored are dropped as repeats
(:meth:`~service.scaleout.central_store.CentralStore.take`), so nothing is refused and
nothing stored twice.

A gap (rows of an edge missing before a message, or the stream's sequence jumping) is an
alarm in the log and a re-read from the stored position after a pause, never a skip; a
repeat is dropped.  A cut from the broker, or a broker restarted, ends the consumer: the
reader makes a new one from its position once the broker is back.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

import nats.errors
from nats.aio.client import Client
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

from dgt.tasks import cancelling
from service.scaleout.central_store import CentralStore, CentralStoreError, Gap
from service.scaleout.jetstream_log import (
    NATS_ERRORS,
    StreamClash,
    close_client,
    connect,
    ensure_log_stream,
    ensure_status_bucket,
)
from service.scaleout.log_wire import (
    COMMITTED_SUBJECT,
    LOG_STREAM,
    LOG_SUBJECTS,
    Batch,
    WireError,
    decode_batch,
)
from service.scaleout.rows import RowSink

logger = logging.getLogger(__name__)


FETCH = 256
"""Messages fetched at a time."""

FETCH_WAIT = 1.0
"""Seconds a fetch waits for a message."""

RETRY_FIRST = 0.25
RETRY_MAX = 5.0
"""Pause before a re-read after a gap or an error (doubling)."""


class Aggregator:
    """Reads the log stream at ``url`` into ``store``."""

    def __init__(
        self,
        url: str,
        store: CentralStore,
        on_rows: RowSink | None = None,
        *,
        fetch: int = FETCH,
    ) -> None:
        self.url = url
        self.store = store
        self.on_rows = on_rows
        self.fetch = fetch
        self.client: Client | None = None
        self.gaps = 0
        self.rows = 0
        self.streams_made_anew = 0
        self.caught_up = asyncio.Event()
        """Set whenever a fetch found nothing more to read."""
        self._retry = RETRY_FIRST
        self._link_up = asyncio.Event()

    async def run(self) -> None:
        """Read until cancelled."""
        client = self.client = await connect(self.url, "centre", self._link_up.set)
        try:
            js = client.jetstream()
            while True:
                try:
                    await ensure_log_stream(js)
                    await ensure_status_bucket(js)
                    await self._read(client, js)
                    continue  # the link was cut and is back: a new consumer at once
                except Gap as gap:
                    self.gaps += 1
                    logger.warning(
                        "ALARM: %s; nothing of it is stored: re-reading the stream from message %d",
                        gap,
                        self.store.position() + 1,
                    )
                except StreamClash as exc:
                    logger.warning("centre: %s; trying again", exc)
                except NATS_ERRORS as exc:
                    if cancelling():
                        raise asyncio.CancelledError from None
                    logger.debug("centre: reading the stream: %s", exc)
                except CentralStoreError as exc:
                    logger.warning("centre: %s; trying again", exc)
                self._link_up.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._link_up.wait(), self._retry)
                self._retry = min(RETRY_MAX, self._retry * 2)
        finally:
            self.client = None
            await close_client(client)

    async def _read(self, client: Client, js: JetStreamContext) -> None:
        info = await js.stream_info(LOG_STREAM)
        if info.created is not None:
            self._check_stream(info.created.isoformat(), int(info.state.last_seq))
        start = self.store.position() + 1
        config = ConsumerConfig(
            deliver_policy=DeliverPolicy.BY_START_SEQUENCE,
            opt_start_seq=start,
            ack_policy=AckPolicy.NONE,
            inactive_threshold=60.0,
            mem_storage=True,
        )
        reconnects = client.stats["reconnects"]
        sub = await js.pull_subscribe(LOG_SUBJECTS, stream=LOG_STREAM, config=config)
        try:
            while True:
                if cancelling():  # a cancel the client's wait swallowed (Python 3.11's
                    raise asyncio.CancelledError  # wait_for can lose one): end all the same
                try:
                    messages = await sub.fetch(self.fetch, timeout=FETCH_WAIT)
                except nats.errors.TimeoutError:
                    self.caught_up.set()
                    if client.stats["reconnects"] != reconnects:
                        return  # the consumer may be gone with the broker: a new one
                    continue
                batches: list[tuple[int, Batch | None]] = []
                for message in messages:
                    try:
                        batch: Batch | None = decode_batch(message.data)
                    except WireError as exc:
                        logger.warning("ALARM: stream message is no batch of log rows: %s", exc)
                        batch = None
                    batches.append((message.metadata.sequence.stream, batch))
                self.caught_up.clear()
                taken = self.store.take(batches)
                self._retry = RETRY_FIRST
                if taken.foreign:
                    logger.warning(
                        "ALARM: %d message(s) of another database under a known edge id (two "
                        "edges with one id?): kept aside, not stored",
                        taken.foreign,
                    )
                for edge, rows in taken.rows:
                    self.rows += len(rows)
                    if self.on_rows is not None:
                        try:
                            self.on_rows(edge, rows)
                        except Exception:
                            logger.exception("centre: on_rows failed for edge %s", edge)
                if taken.rows:
                    await self._notify(client)
                if taken.gap is not None:
                    raise taken.gap
        finally:
            with contextlib.suppress(*NATS_ERRORS):
                await sub.unsubscribe()

    def _check_stream(self, made: str, last: int) -> None:
        """Go back to the start of a stream made anew (see the module docstring)."""
        known = self.store.stream_made()
        position = self.store.position()
        if known == made:
            return
        if known is None and position <= last:  # the first look (or a database before it)
            self.store.new_stream(made, restart=False)
            return
        if known is not None:
            why = f"made {made}, the one read up to message {position} was made {known}"
        else:
            why = f"it ends at message {last}, the centre read up to message {position}"
        logger.warning(
            "centre: the broker's log stream %s is not the one read so far (%s): its storage "
            "was wiped or the stream made again; reading the new one from its start (the "
            "edges send their logs again from their first row; rows already stored are "
            "dropped as repeats)",
            LOG_STREAM,
            why,
        )
        self.store.new_stream(made, restart=True)
        self.streams_made_anew += 1

    async def _notify(self, client: Client) -> None:
        """Tell the web processes that rows were committed (a lost notice only delays them
        until their next look at the database)."""
        with contextlib.suppress(*NATS_ERRORS):
            await client.publish(COMMITTED_SUBJECT, str(self.store.position()).encode())
