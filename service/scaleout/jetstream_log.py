"""``service.scaleout.jetstream_log``: the NATS side of the edges' log (imports ``nats``;
only ``run --central`` and ``central`` import it).

:func:`connect` opens a connection that reconnects on its own, for ever, logging a cut as one
warning (never a traceback); :class:`JetStreamLog` is the edge's
:class:`~service.scaleout.edge_forwarder.LogPublisher` on the stream
:data:`~service.scaleout.log_wire.LOG_STREAM` (file storage, made when missing).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

import nats
import nats.errors
import nats.js.errors
from nats.aio.client import Client
from nats.js import JetStreamContext
from nats.js.api import StorageType, StreamConfig

from service.config import shown_url
from service.scaleout.edge_forwarder import Refused, Unreachable
from service.scaleout.log_wire import (
    EXPECTED_LAST_SUBJECT_SEQ,
    LOG_STREAM,
    LOG_SUBJECTS,
    STATUS_BUCKET,
    SUBJECTS_OVERLAP,
    WRONG_LAST_SEQUENCE,
)

logger = logging.getLogger(__name__)

RECONNECT_WAIT = 1.0
"""Seconds between attempts to reach the broker."""

REQUEST_TIMEOUT = 3.0
"""Seconds to wait for the broker's answer to a publish or a read."""

CLOSE_WAIT = 2.0
"""Seconds a connection has to close at a stop."""

STREAM_LOOKS = 5
STREAM_LOOK_WAIT = 0.2
"""How often, and how many seconds apart, the log stream is looked for again when making it
clashed with a stream on its subjects (a broker that has just started may answer before it
has read its streams back from its files)."""

NATS_ERRORS: tuple[type[BaseException], ...] = (nats.errors.Error, OSError, TimeoutError)
"""What a call to the broker raises when it cannot be reached or does not answer."""


class LinkLog:
    """Logs the link's cuts and returns: one warning a cut, the client's own errors only at
    debug level (the client would log each attempt with a traceback)."""

    def __init__(self, who: str, url: str, on_up: Callable[[], None] | None = None) -> None:
        self.who = who
        self.url = url
        self.on_up = on_up
        self.cut = False
        self.connected = False

    async def error(self, exc: Exception) -> None:
        if not self.cut:
            self.cut = True
            logger.warning(
                "%s: cannot reach the broker %s (%s); trying again every %.0f s",
                self.who,
                self.url,
                _one_line(exc),
                RECONNECT_WAIT,
            )
        else:
            logger.debug("%s: broker %s: %s", self.who, self.url, _one_line(exc))

    async def disconnected(self) -> None:
        self.connected = False
        if not self.cut:
            self.cut = True
            logger.warning("%s: cut from the broker %s; reconnecting", self.who, self.url)

    async def reconnected(self) -> None:
        self.connected = True
        if self.on_up is not None:
            self.on_up()
        if self.cut:
            self.cut = False
            logger.warning("%s: the broker %s is back", self.who, self.url)


async def connect(url: str, who: str, on_up: Callable[[], None] | None = None) -> Client:
    """A connection to the broker at ``url``; waits (for ever) until it is reachable.
    ``on_up()`` is called whenever the link is back after a cut."""
    link = LinkLog(who, shown_url(url), on_up)
    client = await nats.connect(
        url,
        name=who,
        allow_reconnect=True,
        max_reconnect_attempts=-1,
        reconnect_time_wait=RECONNECT_WAIT,
        connect_timeout=2,
        error_cb=link.error,
        disconnected_cb=link.disconnected,
        reconnected_cb=link.reconnected,
    )
    await link.reconnected()
    return client


async def close_client(client: Client, seconds: float = CLOSE_WAIT) -> None:
    """Close a connection, waiting at most ``seconds``: the client's own close can wait for
    ever on a link cut at that moment (and then fail as the loop ends)."""
    with contextlib.suppress(*NATS_ERRORS, RuntimeError):
        await asyncio.wait_for(client.close(), seconds)


class StreamClash(nats.errors.Error):
    """Another stream holds the log's subjects: the log stream cannot be made."""


async def ensure_log_stream(js: JetStreamContext) -> None:
    """Make the log stream (file storage) unless it exists.

    A broker just started may say the stream is missing and then refuse to make it because
    its subjects are taken: it was reading the stream back from its files.  The stream is
    looked for again a few times before another stream is blamed (:class:`StreamClash`).
    """
    for look in range(STREAM_LOOKS):
        try:
            await js.stream_info(LOG_STREAM)
            return
        except nats.js.errors.NotFoundError:
            pass
        try:
            await js.add_stream(
                StreamConfig(name=LOG_STREAM, subjects=[LOG_SUBJECTS], storage=StorageType.FILE)
            )
            return
        except nats.js.errors.BadRequestError as exc:
            if exc.err_code != SUBJECTS_OVERLAP:
                raise
        if look < STREAM_LOOKS - 1:
            await asyncio.sleep(STREAM_LOOK_WAIT)
    try:
        owner = await js.find_stream_name_by_subject(LOG_SUBJECTS)
    except NATS_ERRORS:
        owner = "another stream"
    else:
        owner = f"the stream {owner!r}"
    raise StreamClash(
        f"the log's subjects {LOG_SUBJECTS} belong to {owner} on the broker, not to "
        f"{LOG_STREAM}: delete that stream or give the log a broker of its own"
    )


async def ensure_status_bucket(js: JetStreamContext) -> None:
    """Make the edges' status bucket unless it exists (the centre does, so that an edge
    needs no right to make streams)."""
    try:
        await js.key_value(STATUS_BUCKET)
    except nats.js.errors.BucketNotFoundError:
        await js.create_key_value(bucket=STATUS_BUCKET, history=1)


class JetStreamLog:
    """Publishes an edge's batches on the log stream (:class:`LogPublisher`)."""

    def __init__(self, js: JetStreamContext) -> None:
        self.js = js
        self._stream_known = False

    async def publish(self, subject: str, payload: bytes, expected_last: int) -> int:
        try:
            if not self._stream_known:
                await ensure_log_stream(self.js)
                self._stream_known = True
            ack = await self.js.publish(
                subject,
                payload,
                timeout=REQUEST_TIMEOUT,
                headers={EXPECTED_LAST_SUBJECT_SEQ: str(expected_last)},
            )
        except nats.js.errors.APIError as exc:
            if exc.err_code == WRONG_LAST_SEQUENCE:
                raise Refused(str(exc.description)) from None
            self._stream_known = False
            raise Unreachable(_one_line(exc)) from None
        except NATS_ERRORS as exc:
            self._stream_known = False
            raise Unreachable(_one_line(exc)) from None
        return int(ack.seq)

    async def last(self, subject: str) -> tuple[int, bytes] | None:
        try:
            if not self._stream_known:
                await ensure_log_stream(self.js)
                self._stream_known = True
            message = await self.js.get_last_msg(LOG_STREAM, subject)
        except nats.js.errors.NotFoundError:
            return None
        except NATS_ERRORS as exc:  # an APIError is a nats.errors.Error
            self._stream_known = False
            raise Unreachable(_one_line(exc)) from None
        return int(message.seq or 0), bytes(message.data or b"")


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]
