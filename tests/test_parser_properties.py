"""Properties of the frame parsers, checked exhaustively on a realistic stream and with
hypothesis on random ones.

What the parsers promise (dgt/protocol/parser.py, docs/protocol.md §3.1 and §8):

* pure and incremental: the same bytes split into chunks anywhere give the same messages
  (and the same diagnostics counters) as the bytes fed at once;
* never raise, whatever the input;
* resync after damage.  "Recovered" here means, precisely: call a frame *intact* when its
  bytes reach the parser unchanged and contiguous.  Then

  1. every intact frame that starts after the last damaged byte is decoded, in order, and
     nothing else comes out after the damage: the output *ends with exactly* the messages
     of those frames.  (Every frame starts with the only byte of it that has bit 7 set, so
     these frames are exactly the frames that start after the last damaged byte and after
     the next byte with bit 7 set: whatever state the damage left the parser in, it
     resyncs at that byte at the latest.)
  2. the intact frames before the first damaged byte come out first, unchanged;
  3. in fact every intact frame anywhere in the stream is decoded: their messages form a
     subsequence of the output.  Damaged bytes may produce extra messages (a damaged frame
     can still be a plausible frame), never fewer.

  For the bus parser the same holds with its frames.  The command parser (host to board)
  has no resync marker for single-board commands, so only purity and "never raises" are
  claimed for it.
* a header whose length is impossible for a known id is rejected; an unknown id with a
  plausible size (3..512) becomes ``Unknown``.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dgt.protocol import (
    BatteryStatus,
    BoardDump,
    BusAddress,
    BusFrameParser,
    BusMessage,
    ClockAck,
    ClockTimes,
    CommandParser,
    EEClockTime,
    EEMoves,
    EEPieceChange,
    EETag,
    EETagRecord,
    FieldUpdate,
    FrameParser,
    HardwareVersion,
    LongSerialNumber,
    Message,
    MessageId,
    SerialNumber,
    StateByte,
    Trademark,
    Unknown,
    Version,
)
from dgt.protocol.bus import BUS_SIZES
from dgt.protocol.messages import SIZES

T = TypeVar("T")

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
"""Enough examples to find framing bugs; the whole file stays within a few seconds."""

# --- strategies: valid messages ---------------------------------------------------------

LOW = st.integers(0, 0x7F)
BYTE = st.integers(0, 0xFF)
ASCII = st.characters(min_codepoint=0, max_codepoint=0x7F)
UNKNOWN_IDS = sorted(set(range(0x80, 0x100)) - set(SIZES))


def low_bytes(min_size: int = 0, max_size: int = 40) -> st.SearchStrategy[bytes]:
    """Bytes with bit 7 clear: what a payload may hold."""
    return st.binary(min_size=min_size, max_size=max_size).map(lambda b: bytes(x & 0x7F for x in b))


def ascii_text(min_size: int, max_size: int) -> st.SearchStrategy[str]:
    return st.text(alphabet=ASCII, min_size=min_size, max_size=max_size)


clock_seconds = st.integers(0, 9 * 3600 + 59 * 60 + 59)
ee_records = st.one_of(
    st.builds(EEPieceChange, st.integers(0, 63), st.integers(0, 15), st.booleans()),
    st.builds(EEClockTime, st.booleans(), clock_seconds),
    st.builds(EETagRecord, st.sampled_from(list(EETag))),
)


def _not_an_ack(raw: bytes) -> bool:
    return (raw[0] & 0x0F) != 0x0A and (raw[3] & 0x0F) != 0x0A


messages: st.SearchStrategy[Message] = st.one_of(
    st.builds(FieldUpdate, st.integers(0, 63), LOW),
    low_bytes(64, 64).map(BoardDump),
    st.builds(
        ClockTimes.build,
        clock_seconds,
        clock_seconds,
        running=st.booleans(),
        right_high=st.booleans(),
        left_running=st.sampled_from([None, True, False]),
        battery_low=st.booleans(),
        no_clock=st.booleans(),
        left_flag=st.booleans(),
        right_flag=st.booleans(),
    ),
    low_bytes(7, 7).filter(_not_an_ack).map(ClockTimes),
    st.builds(ClockAck, BYTE, BYTE, BYTE, BYTE),
    low_bytes(0, 60).map(EEMoves),
    st.lists(ee_records, max_size=20).map(EEMoves.from_records),
    st.builds(BusAddress, st.integers(0, 0x3FFF)),
    st.one_of(ascii_text(5, 5), ascii_text(9, 9), ascii_text(10, 10)).map(SerialNumber),
    ascii_text(10, 10).map(LongSerialNumber),
    ascii_text(0, 256).map(Trademark),
    st.builds(Version, LOW, LOW),
    st.builds(HardwareVersion, LOW, LOW),
    st.builds(
        BatteryStatus,
        LOW,
        st.tuples(LOW, LOW),
        st.tuples(LOW, LOW),
        st.tuples(LOW, LOW, LOW),
        LOW,
    ),
    st.builds(StateByte, st.sampled_from([MessageId.LOCK_STATE, MessageId.DEVKEY_STATE]), LOW),
    st.builds(Unknown, st.sampled_from(UNKNOWN_IDS), low_bytes(0, 60)),
    st.builds(
        Unknown,
        st.just(MessageId.FIELD_UPDATE),
        st.tuples(st.integers(64, 127), LOW).map(bytes),
    ),
)
"""Every kind of board message, each built so that it round-trips."""

ADDRESS = st.integers(0, 0x3FFF)
bus_messages: st.SearchStrategy[BusMessage] = st.one_of(
    [
        st.builds(BusMessage, st.just(msg_id), ADDRESS, low_bytes(size - 6, size - 6))
        for msg_id, sizes in BUS_SIZES.items()
        if sizes is not None
        for size in sorted(sizes)
    ]
    + [
        st.builds(BusMessage, st.just(msg_id), ADDRESS, low_bytes(0, 30))
        for msg_id, sizes in BUS_SIZES.items()
        if sizes is None
    ]
)
"""Bus replies of every id, with data of an allowed size."""


# --- helpers ----------------------------------------------------------------------------


def cut(data: bytes, points: Sequence[int]) -> list[bytes]:
    """``data`` split at the given offsets (any order, duplicates allowed)."""
    bounds = [0, *sorted(p % (len(data) + 1) for p in points), len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds)]


def feed_chunks(
    parser: FrameParser | BusFrameParser | CommandParser, chunks: list[bytes]
) -> list[object]:
    """Feed the chunks in order and collect everything that comes out."""
    out: list[object] = []
    for chunk in chunks:
        out.extend(parser.feed(chunk))
    return out


def is_subsequence(needles: Sequence[T], haystack: Sequence[T]) -> bool:
    """Whether ``needles`` appear in ``haystack`` in order (not necessarily adjacent)."""
    it = iter(haystack)
    return all(any(x == y for y in it) for x in needles)


def encode(msgs: Sequence[Message | BusMessage]) -> bytes:
    """The frames of the messages, back to back."""
    return b"".join(m.to_bytes() for m in msgs)


# --- exhaustive splits of a realistic stream --------------------------------------------


def realistic_stream() -> tuple[bytes, list[Message]]:
    """A board in update mode: handshake, dump, clock once a second, the moves e4 e5 Nf3,
    a clock ack and a button, with a line glitch (garbage and a cut-off dump) in the middle.
    Returns the bytes and the messages a parser must find in them."""
    dump = BoardDump(
        bytes((8, 9, 10, 12, 11, 10, 9, 8)) + b"\x07" * 8 + bytes(32) + b"\x01" * 8
        + bytes((2, 3, 4, 6, 5, 4, 3, 2))
    )  # fmt: skip
    before: list[Message] = [
        Version(3, 10),
        SerialNumber("01025"),
        dump,
        ClockAck(0x10, 0x09, 0x20, 0),
        ClockTimes.build(180, 180, left_running=False, right_high=True),
        FieldUpdate(52, 0),
        FieldUpdate(36, 1),
        ClockTimes.build(180, 179, running=True, left_running=False, right_high=True),
    ]
    after: list[Message] = [
        FieldUpdate(12, 0),
        ClockTimes.build(178, 179, running=True, left_running=True),
        FieldUpdate(28, 7),
        FieldUpdate(62, 0),
        FieldUpdate(45, 3),
        ClockAck(0x10, 0x88, 0x09, 0x32),
        BatteryStatus(77, (3, 20), (1, 5), (4, 2, 1), 2),
        ClockTimes.build(176, 178, running=True, left_running=False, right_high=True),
    ]
    glitch = b"\x13\x7f\xc4\x01" + dump.to_bytes()[:30]
    return encode(before) + glitch + encode(after), before + after


def test_every_single_split_point_gives_the_same_messages() -> None:
    data, expected = realistic_stream()
    whole = FrameParser()
    assert whole.feed(data) == expected
    for point in range(len(data) + 1):
        parser = FrameParser()
        assert feed_chunks(parser, cut(data, [point])) == expected, point
        assert (parser.discarded, parser.pending) == (whole.discarded, whole.pending), point


def test_every_pair_of_split_points_gives_the_same_messages() -> None:
    data, _ = realistic_stream()
    window = data[80:240]  # the glitch and the frames around it, cut anywhere
    whole = FrameParser()
    expected = whole.feed(window)
    assert len(expected) > 5
    for a in range(len(window) + 1):
        for b in range(a, len(window) + 1):
            parser = FrameParser()
            assert feed_chunks(parser, cut(window, [a, b])) == expected, (a, b)
            assert parser.discarded == whole.discarded, (a, b)


def test_one_byte_at_a_time_and_every_chunk_size() -> None:
    data, expected = realistic_stream()
    for size in range(1, 70):
        chunks = [data[i : i + size] for i in range(0, len(data), size)]
        assert feed_chunks(FrameParser(), chunks) == expected, size


# --- hypothesis: clean streams ----------------------------------------------------------


@FAST
@given(messages)
def test_every_message_round_trips(msg: Message) -> None:
    assert FrameParser().feed(msg.to_bytes()) == [msg]


@FAST
@given(st.lists(messages, max_size=12), st.lists(st.integers(0, 10_000), max_size=12))
def test_random_splits_give_the_same_messages(msgs: list[Message], points: list[int]) -> None:
    data = encode(msgs)
    parser = FrameParser()
    assert feed_chunks(parser, cut(data, points)) == msgs
    assert parser.pending == 0
    assert parser.discarded == 0


@FAST
@given(st.lists(messages, min_size=1, max_size=8))
def test_random_stream_one_byte_at_a_time(msgs: list[Message]) -> None:
    data = encode(msgs)
    assert feed_chunks(FrameParser(), [data[i : i + 1] for i in range(len(data))]) == msgs


@pytest.mark.slow
@FAST
@given(st.binary(max_size=60), st.lists(messages, min_size=1, max_size=8), st.data())
def test_garbage_first(garbage: bytes, msgs: list[Message], data: st.DataObject) -> None:
    stream = garbage + encode(msgs)
    out = FrameParser().feed(stream)
    assert out[len(out) - len(msgs) :] == msgs
    points = data.draw(st.lists(st.integers(0, len(stream)), max_size=6))
    assert feed_chunks(FrameParser(), cut(stream, points)) == out


# --- hypothesis: damage -----------------------------------------------------------------


@dataclass(frozen=True)
class Damaged:
    """A stream with damage, and what a parser must still find in it."""

    data: bytes
    head: list[object]  # messages of the intact frames before the first damaged byte
    intact: list[object]  # messages of every intact frame, in order
    tail: list[object]  # messages of the intact frames after the last damaged byte


DAMAGE = ("flip", "truncate", "delete", "insert", "garbage", "splice", "high_bit")


def damage_frame(draw: st.DrawFn, raw: bytes, kind: str, other: bytes) -> bytes:
    """One frame's bytes damaged the given way (``other`` is a frame to splice in)."""
    damaged = bytearray(raw)
    n = len(raw)
    if kind == "flip":
        for _ in range(draw(st.integers(1, 3))):
            damaged[draw(st.integers(0, n - 1))] ^= 1 << draw(st.integers(0, 7))
    elif kind == "truncate":
        del damaged[draw(st.integers(0, n - 1)) :]
    elif kind == "delete":
        start = draw(st.integers(0, n - 1))
        del damaged[start : start + draw(st.integers(1, n - start))]
    elif kind == "insert":
        at = draw(st.integers(1, n - 1))
        damaged[at:at] = draw(st.binary(min_size=1, max_size=8))
    elif kind == "splice":
        damaged = damaged[: draw(st.integers(0, n))] + other[draw(st.integers(0, len(other))) :]
    elif kind == "high_bit":  # a payload or length byte with bit 7 set
        damaged[draw(st.integers(1, n - 1))] |= 0x80
    return bytes(damaged)


def damaged_streams(
    frames: st.SearchStrategy[Message] | st.SearchStrategy[BusMessage],
) -> st.SearchStrategy[Damaged]:
    """Streams of frames, some left intact, some damaged, with garbage in between."""

    @st.composite
    def build(draw: st.DrawFn) -> Damaged:
        msgs = draw(st.lists(frames, min_size=1, max_size=10))
        segments: list[tuple[bytes, object | None]] = []  # (bytes, message if intact)
        for msg in msgs:
            raw = msg.to_bytes()
            kind = draw(st.sampled_from(("intact", "intact", "intact", *DAMAGE)))
            if kind == "intact":
                segments.append((raw, msg))
            elif kind == "garbage":
                segments.append((draw(st.binary(min_size=1, max_size=20)), None))
                segments.append((raw, msg))
            else:
                other = draw(frames).to_bytes()
                segments.append((damage_frame(draw, raw, kind, other), None))
        damaged = [i for i, (_, msg) in enumerate(segments) if msg is None]
        first = damaged[0] if damaged else len(segments)
        last = damaged[-1] if damaged else -1
        return Damaged(
            data=b"".join(raw for raw, _ in segments),
            head=[msg for _, msg in segments[:first]],
            intact=[msg for _, msg in segments if msg is not None],
            tail=[msg for _, msg in segments[last + 1 :]],
        )

    return build()


def check_recovery(out: list[object], damaged: Damaged) -> None:
    """The three recovery properties of the module docstring."""
    assert out[: len(damaged.head)] == damaged.head
    assert out[len(out) - len(damaged.tail) :] == damaged.tail
    assert is_subsequence(damaged.intact, out)


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(damaged_streams(messages), st.lists(st.integers(0, 10_000), max_size=8))
def test_damaged_stream_never_raises_and_recovers(damaged: Damaged, points: list[int]) -> None:
    whole = FrameParser()
    out = whole.feed(damaged.data)
    check_recovery(out, damaged)
    split = FrameParser()
    assert feed_chunks(split, cut(damaged.data, points)) == out
    assert (split.discarded, split.pending) == (whole.discarded, whole.pending)


@FAST
@given(damaged_streams(messages), st.lists(messages, min_size=1, max_size=4))
def test_frames_after_the_damage_are_recovered_in_a_later_feed(
    damaged: Damaged, later: list[Message]
) -> None:
    """Damage left at the end of one read (a frame cut off, a false header waiting for
    its payload) does not hold back the frames of the next read."""
    parser = FrameParser()
    parser.feed(damaged.data)
    assert parser.feed(encode(later)) == later


@FAST
@given(st.binary(max_size=400), st.lists(st.integers(0, 10_000), max_size=10))
def test_arbitrary_bytes_never_raise_and_split_anywhere(data: bytes, points: list[int]) -> None:
    whole = FrameParser()
    out = whole.feed(data)
    assert feed_chunks(FrameParser(), cut(data, points)) == out
    assert whole.pending <= len(data)
    for msg in out:  # whatever comes out is a well-formed frame again
        raw = msg.to_bytes()
        assert raw[0] >= 0x80
        assert all(b < 0x80 for b in raw[1:])


# --- hypothesis: sizes ------------------------------------------------------------------

FIXED = {i: sizes for i, sizes in SIZES.items() if sizes is not None}


@FAST
@given(
    st.sampled_from(sorted(FIXED)),
    st.integers(0, 300) | st.integers(0, 0x3FFF),
    st.randoms(use_true_random=False),
    messages,
)
def test_impossible_sizes_for_known_ids_are_rejected(
    msg_id: int, size: int, rng: random.Random, good: Message
) -> None:
    """A header with a size the id cannot have, followed by as many payload bytes as it
    claims (at most 300), then a good frame: only the good frame comes out."""
    sizes = FIXED[msg_id]
    if size in sizes:
        size = max(sizes) + 1
    header = bytes((msg_id, size >> 7, size & 0x7F))
    payload = bytes(rng.randrange(0x80) for _ in range(min(max(size - 3, 0), 300)))
    assert FrameParser().feed(header + payload + good.to_bytes()) == [good]


@FAST
@given(st.sampled_from(UNKNOWN_IDS), low_bytes(0, 509))
def test_unknown_ids_with_plausible_sizes_become_unknown(msg_id: int, payload: bytes) -> None:
    size = len(payload) + 3
    header = bytes((msg_id, size >> 7, size & 0x7F))
    assert FrameParser().feed(header + payload) == [Unknown(msg_id, payload)]


@FAST
@given(st.sampled_from(UNKNOWN_IDS), st.integers(513, 0x3FFF), low_bytes(0, 100), messages)
def test_unknown_ids_with_implausible_sizes_are_rejected(
    msg_id: int, size: int, payload: bytes, good: Message
) -> None:
    header = bytes((msg_id, size >> 7, size & 0x7F))
    assert FrameParser().feed(header + payload + good.to_bytes()) == [good]


# --- bus replies and host commands ------------------------------------------------------


@FAST
@given(st.lists(bus_messages, max_size=10), st.lists(st.integers(0, 10_000), max_size=10))
def test_bus_random_splits(msgs: list[BusMessage], points: list[int]) -> None:
    assert feed_chunks(BusFrameParser(), cut(encode(msgs), points)) == msgs


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(damaged_streams(bus_messages), st.lists(st.integers(0, 10_000), max_size=8))
def test_bus_damaged_stream_recovers(damaged: Damaged, points: list[int]) -> None:
    out = BusFrameParser().feed(damaged.data)
    check_recovery(out, damaged)
    assert feed_chunks(BusFrameParser(), cut(damaged.data, points)) == out


@FAST
@given(st.binary(max_size=300), st.lists(st.integers(0, 10_000), max_size=10))
def test_command_parser_arbitrary_bytes_split_anywhere(data: bytes, points: list[int]) -> None:
    out = CommandParser().feed(data)
    assert feed_chunks(CommandParser(), cut(data, points)) == out


def test_strategies_cover_every_message_type() -> None:
    """Guard against a strategy silently losing a message type."""
    seen: set[str] = set()

    @settings(max_examples=300, database=None, derandomize=True)
    @given(messages)
    def collect(msg: Message) -> None:
        seen.add(type(msg).__name__)

    collect()
    expected = {
        "FieldUpdate", "BoardDump", "ClockTimes", "ClockAck", "EEMoves", "BusAddress",
        "SerialNumber", "LongSerialNumber", "Trademark", "Version", "HardwareVersion",
        "BatteryStatus", "StateByte", "Unknown",
    }  # fmt: skip
    assert seen == expected
