"""``service.scaleout.edge_forwarder``: an edge's committed log, forwarded to the centre
exactly once and in order.

The store's ``log`` table is the outbox: the forwarder sends the committed rows after the
last one the stream holds, one batch in flight (:mod:`service.scaleout.log_wire`).  Each
batch is published with the stream sequence of the edge's previous message as the expected
last sequence of its subject, so the broker takes it only after that one: a batch sent again
after a lost acknowledgement is *refused*, not stored twice.  On start, and after any error
or refusal, the forwarder asks the stream for the last message on its subject and goes on
after the row it carries: nothing is kept anywhere else, so a crash of the edge, of the
broker or of the link loses nothing and repeats nothing.  A stream that holds none of the
edge's rows (the broker's storage wiped) gets the whole log again, from its first row.

While the broker cannot be reached the hall goes on as ever (the rows wait in the store); the
log gets one warning a cut, and one line when the rows flow again.  Nothing here imports
``nats``: the broker is a :class:`LogPublisher` (:mod:`service.scaleout.jetstream_log`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Protocol

from dgt.tasks import cancelling
from service.scaleout.log_wire import Batch, WireError, decode_batch, encode_batch, take_batch
from service.store import LogRow, StoreError

logger = logging.getLogger(__name__)

POLL = 0.1
"""Seconds between looks at the log when nothing woke the forwarder (rows only the log sees,
like a clock report that changed nothing shown, wake nobody)."""

RETRY_FIRST = 0.25
RETRY_MAX = 5.0
"""Back-off between attempts while the broker cannot be reached (doubling)."""


class Refused(Exception):
    """The broker refused a batch: the subject's last message is not the one expected."""


class Unreachable(Exception):
    """The broker did not answer (a cut, a timeout, a broker down); the message says why."""


class ForwarderError(Exception):
    """The stream holds rows this database cannot continue (another database ran under the
    same edge id); the forwarder stops, the hall goes on."""


class LogPublisher(Protocol):
    """The broker's side of an edge's log."""

    async def publish(self, subject: str, payload: bytes, expected_last: int) -> int:
        """Store ``payload`` unless the last message on ``subject`` is not at stream
        sequence ``expected_last`` (0: none); returns its stream sequence.  Raises
        :class:`Refused` or :class:`Unreachable`."""
        ...

    async def last(self, subject: str) -> tuple[int, bytes] | None:
        """The stream sequence and payload of the last message on ``subject`` (None: there
        is none).  Raises :class:`Unreachable`."""
        ...


class Outbox(Protocol):
    """The store's side (:class:`service.store.Store` fits)."""

    def log_rows(self, after: int | None = None, limit: int = 1000) -> list[LogRow]: ...

    def last_seq(self) -> int | None: ...


class LogForwarder:
    """Sends an edge's committed log rows to its subject of the log stream."""

    def __init__(
        self,
        outbox: Outbox,
        publisher: LogPublisher,
        edge_id: str,
        db: str,
        subject: str,
        *,
        poll: float = POLL,
    ) -> None:
        self.outbox = outbox
        self.publisher = publisher
        self.edge_id = edge_id
        self.db = db
        self.subject = subject
        self.poll = poll
        self.forwarded: int | None = None
        """The seq of the last row known to be on the stream (None: none)."""
        self._subject_seq = 0
        """The stream sequence of the edge's last message (0: none)."""
        self.synced = False
        self.batches = 0
        self.rows = 0
        self.refused = 0
        self._wake = asyncio.Event()
        self._link_up = asyncio.Event()
        self._cut_since: float | None = None
        self._retry = RETRY_FIRST

    def wake(self) -> None:
        """New rows are committed: look now."""
        self._wake.set()

    def link_up(self) -> None:
        """The broker is reachable again: try now, not at the end of the back-off."""
        self._link_up.set()

    def waiting(self) -> int:
        """Rows committed and not on the stream yet (as far as the forwarder knows)."""
        last = self.outbox.last_seq()
        if last is None:
            return 0
        return max(0, last - (self.forwarded or 0))

    async def run(self) -> None:
        """Forward until cancelled (or until :class:`ForwarderError`, logged)."""
        try:
            while True:
                if cancelling():  # a cancel lost on the way (see cancelling): stop all the same
                    raise asyncio.CancelledError
                try:
                    sent = await self.step()
                except (Unreachable, StoreError) as exc:
                    if cancelling():  # the client's error for a cancel: not a cut
                        raise asyncio.CancelledError from None
                    self._note_cut(str(exc))
                    self._link_up.clear()
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._link_up.wait(), self._retry)
                    self._retry = min(RETRY_MAX, self._retry * 2)
                    continue
                if sent:
                    continue
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), self.poll)
        except ForwarderError as exc:
            logger.error("edge %s: the log is not forwarded: %s", self.edge_id, exc)

    async def drain(self, seconds: float) -> None:
        """Forward what is committed, for at most ``seconds`` (a stop: what does not go now
        goes at the next start)."""
        with contextlib.suppress(TimeoutError, Unreachable, ForwarderError, StoreError):
            async with asyncio.timeout(seconds):
                while await self.step():
                    pass

    async def step(self) -> bool:
        """Send the next batch (resyncing first when needed); returns whether one went.
        Raises :class:`Unreachable` or :class:`~service.store.StoreError`."""
        if not self.synced:
            await self.resync()
        rows = take_batch(self.outbox.log_rows(self.forwarded, limit=1000))
        if not rows:
            return False
        batch = Batch(self.edge_id, self.db, self.forwarded, tuple(rows))
        try:
            seq = await self.publisher.publish(self.subject, encode_batch(batch), self._subject_seq)
        except Refused:
            self.refused += 1
            self.synced = False
            logger.info(
                "edge %s: the broker refused a batch after row %s (already stored?): resyncing",
                self.edge_id,
                self.forwarded,
            )
            return True
        except Unreachable:
            self.synced = False
            raise
        self._subject_seq = seq
        self.forwarded = batch.last
        self.batches += 1
        self.rows += len(rows)
        self._note_flowing()
        return True

    async def resync(self) -> None:
        """Ask the stream where this edge's log stands."""
        last = await self.publisher.last(self.subject)
        if last is None:
            if self.forwarded is not None:
                logger.warning(
                    "edge %s: the stream holds none of this edge's rows, though rows up to %d "
                    "went out (the broker's storage wiped?): sending the whole log again from "
                    "its first row (the centre drops what it has)",
                    self.edge_id,
                    self.forwarded,
                )
            self._subject_seq, self.forwarded = 0, None
        else:
            seq, payload = last
            try:
                batch = decode_batch(payload)
            except WireError as exc:
                why = f"the last message on {self.subject} is unreadable: {exc}"
                raise ForwarderError(why) from None
            if batch.db != self.db:
                raise ForwarderError(
                    f"{self.subject} holds the rows of another database run as edge "
                    f"{self.edge_id!r}: give this database another --edge-id"
                )
            top = self.outbox.last_seq()
            if top is None or batch.last > top:
                raise ForwarderError(
                    f"{self.subject} holds rows up to {batch.last}, the store only up to {top}"
                )
            self._subject_seq, self.forwarded = seq, batch.last
        self.synced = True

    def _note_cut(self, why: str) -> None:
        if self._cut_since is None:
            self._cut_since = asyncio.get_running_loop().time()
            logger.warning(
                "edge %s: cannot forward the log (%s): the rows wait in the store and go out "
                "once the centre is reachable",
                self.edge_id,
                why,
            )

    def _note_flowing(self) -> None:
        self._retry = RETRY_FIRST
        if self._cut_since is not None:
            waited = asyncio.get_running_loop().time() - self._cut_since
            self._cut_since = None
            logger.warning("edge %s: forwarding the log again (after %.1f s)", self.edge_id, waited)
