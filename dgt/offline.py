"""Board events from bytes recorded earlier: the driver's reading of a stream, without a
port, timers or a live board.

Used by ``dgt-service recognize`` for a log that holds only raw chunks, and for a raw byte
stream exactly as a board sent it (``--raw``).  The mirror and the clock state are the same
pure pieces :class:`dgt.Board` uses; what a live board adds (re-dumps on doubt, liveness,
reconnects) needs a board to talk to and has no offline counterpart.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator

from dgt.clock import ClockState
from dgt.events import BoardEvent, BoardFamily, BoardMemory
from dgt.mirror import Mirror
from dgt.protocol import BoardDump, ClockAck, ClockTimes, EEMoves, FieldUpdate, FrameParser

log = logging.getLogger(__name__)

RAW_SPACING = 0.25
"""Seconds between consecutive messages of a raw stream, which carries no times: about one
sensor scan of a real board."""


def looks_presence_only(dump: BoardDump) -> bool:
    """A dump holding only codes 0 and 1, with more than eight 1s, cannot come from a
    piece-identity board (there are at most eight white pawns): it is an occupancy map."""
    codes = set(dump.fields)
    return codes <= {0, 1} and dump.fields.count(1) > 8


def events_from_chunks(
    chunks: Iterable[tuple[float, bytes]], *, presence_only: bool | None = None
) -> Iterator[BoardEvent]:
    """Decode timed chunks of received bytes into board events.  ``presence_only`` None:
    tell the family from the first dump.  Field updates before the first dump cannot be
    placed on a board and are skipped (with one warning)."""
    parser = FrameParser()
    clock = ClockState()
    mirror: Mirror | None = None
    skipped = 0
    for time, data in chunks:
        for message in parser.feed(data):
            if isinstance(message, BoardDump):
                if mirror is None:
                    family = presence_only
                    if family is None:
                        family = looks_presence_only(message)
                    mirror = Mirror(
                        BoardFamily.PRESENCE_ONLY if family else BoardFamily.PIECE_IDENTITY
                    )
                    mirror.load(message.pieces(mirror.presence_only), time)
                    yield mirror.snapshot(time, "connect")
                else:
                    yield from mirror.apply_dump(message, time)
            elif isinstance(message, FieldUpdate):
                if mirror is None:
                    skipped += 1
                    continue
                event = mirror.apply_update(message, time)
                if event is not None:
                    yield event
            elif isinstance(message, ClockTimes | ClockAck):
                yield from clock.feed(message, time)
            elif isinstance(message, EEMoves):
                yield BoardMemory(time, message.records)
    if skipped:
        log.warning("%d field updates came before the first board dump and were skipped", skipped)


def events_from_raw(
    data: bytes, *, presence_only: bool | None = None, spacing: float = RAW_SPACING
) -> Iterator[BoardEvent]:
    """Decode a raw byte stream, giving message number ``i`` the time ``i * spacing``."""
    return events_from_chunks(
        ((i * spacing, frame.to_bytes()) for i, frame in enumerate(FrameParser().feed(data))),
        presence_only=presence_only,
    )
