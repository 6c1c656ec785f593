"""FrameParser and BusFrameParser on hand-written streams: whole frames, one byte at a
time, several frames per chunk, garbage first, truncated and impossible frames.

Facts: docs/protocol.md §3.1 (framing), §2.1 (bus replies), §8 (framing
resync).  The randomised versions of these tests are in test_parser_properties.py.
"""

from __future__ import annotations

import pytest

from dgt.protocol import (
    BatteryStatus,
    BoardDump,
    BusFrameParser,
    BusMessage,
    BusMessageId,
    ClockAck,
    ClockTimes,
    EEMoves,
    EEPieceChange,
    FieldUpdate,
    FrameParser,
    LongSerialNumber,
    Message,
    MessageId,
    SerialNumber,
    Trademark,
    Unknown,
    Version,
)
from dgt.protocol.messages import SIZES


def start_dump() -> BoardDump:
    """The start position, raw codes in field order (0 = a8)."""
    return BoardDump(
        bytes((8, 9, 10, 12, 11, 10, 9, 8)) + b"\x07" * 8 + bytes(32) + b"\x01" * 8
        + bytes((2, 3, 4, 6, 5, 4, 3, 2))
    )  # fmt: skip


SESSION: list[Message] = [
    Version(3, 10),
    SerialNumber("01025"),
    start_dump(),
    ClockAck(0x10, 0x09, 0x20, 0x00),
    ClockTimes.build(180, 180, left_running=True),
    FieldUpdate(52, 0),  # e2 lifted
    ClockTimes.build(179, 180, running=True, left_running=True),
    FieldUpdate(36, 1),  # e4 placed
    ClockTimes.build(178, 180, running=True, right_high=True, left_running=False),
    FieldUpdate(11, 0),
    FieldUpdate(27, 7),
    ClockAck(0x10, 0x88, 0x05, 0x33),
    BatteryStatus(88, (5, 10), (0, 30), (2, 3, 4), 0),
    LongSerialNumber("3.25012345"),
    Trademark("DGT Projects - This DGT board is produced by DGT Projects.\n"),
    EEMoves(bytes.fromhex("7f 7f 7f 6a 41 34 6b")),
    Unknown(0xA3, b"\x00"),
    FieldUpdate(63, 0),
]
"""A handshake and the first moves of a game, as a board in update mode sends them."""
STREAM = b"".join(m.to_bytes() for m in SESSION)


def feed_all(parser: FrameParser | BusFrameParser, chunks: list[bytes]) -> list[object]:
    """Feed the chunks in order and collect everything that comes out."""
    out: list[object] = []
    for chunk in chunks:
        out.extend(parser.feed(chunk))
    return out


def chunked(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


# --- FrameParser: clean streams ---------------------------------------------------------


def test_whole_frames_one_per_feed() -> None:
    parser = FrameParser()
    for msg in SESSION:
        assert parser.feed(msg.to_bytes()) == [msg]
    assert parser.pending == 0
    assert parser.discarded == 0


def test_one_byte_at_a_time() -> None:
    parser = FrameParser()
    out: list[Message] = []
    for i in range(len(STREAM)):
        got = parser.feed(STREAM[i : i + 1])
        out += got
        assert len(got) <= 1
    assert out == SESSION


def test_a_message_comes_out_with_its_last_byte_and_not_before() -> None:
    data = ClockTimes.build(10, 20).to_bytes()
    parser = FrameParser()
    for i in range(len(data) - 1):
        assert parser.feed(data[i : i + 1]) == []
        assert parser.pending == i + 1
    assert parser.feed(data[-1:]) == [ClockTimes.build(10, 20)]
    assert parser.pending == 0


def test_several_frames_per_chunk() -> None:
    assert FrameParser().feed(STREAM) == SESSION
    for size in (2, 3, 5, 7, 10, 64, 100):
        assert feed_all(FrameParser(), chunked(STREAM, size)) == SESSION, size


def test_empty_feeds_change_nothing() -> None:
    parser = FrameParser()
    assert parser.feed(b"") == []
    assert parser.feed(STREAM[:4]) == []
    assert parser.feed(b"") == []
    assert parser.feed(STREAM[4:]) == SESSION


def test_reset_drops_a_partial_frame() -> None:
    parser = FrameParser()
    assert parser.feed(STREAM[:20]) == SESSION[:2]
    assert parser.pending > 0
    parser.reset()
    assert parser.pending == 0
    assert parser.feed(FieldUpdate(1, 2).to_bytes()) == [FieldUpdate(1, 2)]


# --- FrameParser: garbage and damage -----------------------------------------------------


@pytest.mark.parametrize(
    "garbage",
    [
        b"\x00\x01\x7f" * 10,  # low bytes: skipped without a look
        b"\xff\xfe\x80\x81",  # high bytes, each a header with an impossible length
        bytes.fromhex("8e 00 05 0c"),  # a field update cut short
        bytes.fromhex("86 00 43") + bytes(30),  # a dump cut short
        bytes.fromhex("8f 3e 03 7f 7f"),  # the start of a full EE memory download
        bytes.fromhex("92 01"),  # half a header
        bytes.fromhex("c0 03 7f 01 02"),  # an unknown id claiming 511 bytes
        bytes(range(256)),
    ],
)
def test_garbage_first(garbage: bytes) -> None:
    """Whatever precedes it, the session comes out whole at the end."""
    out = FrameParser().feed(garbage + STREAM)
    assert out[len(out) - len(SESSION) :] == SESSION
    split = feed_all(FrameParser(), [garbage, *chunked(STREAM, 7)])
    assert split == out


def test_garbage_counts_as_discarded() -> None:
    parser = FrameParser()
    assert parser.feed(b"\x00\x01\x02" + STREAM) == SESSION
    assert parser.discarded == 3


def test_truncated_frame_then_a_whole_one() -> None:
    """A frame cut short is dropped when the next header shows up inside it."""
    cut = start_dump().to_bytes()[:40]
    parser = FrameParser()
    assert parser.feed(cut) == []
    assert parser.feed(FieldUpdate(3, 4).to_bytes()) == [FieldUpdate(3, 4)]
    assert parser.discarded == 40
    assert parser.pending == 0


def test_a_payload_byte_with_bit_7_starts_a_new_frame() -> None:
    damaged = bytearray(ClockTimes.build(60, 60).to_bytes())
    damaged[6] |= 0x80  # now looks like an id
    out = FrameParser().feed(bytes(damaged) + FieldUpdate(5, 5).to_bytes())
    assert out == [FieldUpdate(5, 5)]


@pytest.mark.parametrize("position", [1, 2])
def test_a_length_byte_with_bit_7_starts_a_new_frame(position: int) -> None:
    data = bytearray(FieldUpdate(9, 9).to_bytes() * 2)
    data[position] |= 0x80
    assert FrameParser().feed(bytes(data)) == [FieldUpdate(9, 9)]


def test_a_header_split_between_garbage_and_a_frame() -> None:
    """A garbage id whose length bytes would be the next frame's id: skipped."""
    data = b"\x90\x00" + FieldUpdate(1, 1).to_bytes()
    assert FrameParser().feed(data) == [FieldUpdate(1, 1)]


def test_garbage_that_is_a_whole_frame_comes_out() -> None:
    """Bytes that happen to form a plausible frame are decoded: the parser cannot tell."""
    assert FrameParser().feed(b"\xc1\x00\x04\x05" + STREAM) == [Unknown(0xC1, b"\x05"), *SESSION]


# --- FrameParser: sizes -----------------------------------------------------------------

FIXED_SIZE_IDS = [msg_id for msg_id, sizes in SIZES.items() if sizes is not None]


def allowed_sizes(msg_id: int) -> frozenset[int]:
    sizes = SIZES[msg_id]
    assert sizes is not None
    return sizes


@pytest.mark.parametrize("msg_id", FIXED_SIZE_IDS, ids=hex)
def test_impossible_sizes_for_known_ids_are_rejected(msg_id: int) -> None:
    """Every size not allowed for the id, payload of harmless low bytes, followed by a good
    frame: only the good frame comes out."""
    good = FieldUpdate(20, 2)
    allowed = allowed_sizes(msg_id)
    for size in range(0, 300):
        if size in allowed:
            continue
        data = bytes((msg_id, size >> 7, size & 0x7F)) + b"\x01" * max(0, size - 3)
        out = FrameParser().feed(data + good.to_bytes())
        assert out == [good], (hex(msg_id), size)


@pytest.mark.parametrize("msg_id", FIXED_SIZE_IDS, ids=hex)
def test_allowed_sizes_for_known_ids_are_accepted(msg_id: int) -> None:
    for size in allowed_sizes(msg_id):
        data = bytes((msg_id, size >> 7, size & 0x7F)) + b"\x01" * (size - 3)
        [msg] = FrameParser().feed(data)
        assert msg_id == msg.ID
        if isinstance(msg, BatteryStatus):  # short battery frames are padded out
            assert msg.to_bytes()[3:size] == data[3:]
        else:
            assert msg.to_bytes() == data


@pytest.mark.parametrize(
    ("msg_id", "largest"), [(MessageId.EE_MOVES, 0x1F03), (MessageId.TRADEMARK, 259)]
)
def test_variable_sizes_have_a_limit(msg_id: int, largest: int) -> None:
    for size, ok in ((3, True), (largest, True), (largest + 1, False), (0x3FFF, False)):
        data = bytes((msg_id, size >> 7, size & 0x7F)) + b"\x41" * (size - 3)
        out = FrameParser().feed(data + FieldUpdate(0, 0).to_bytes())
        assert len(out) == (2 if ok else 1), size
        assert out[-1] == FieldUpdate(0, 0)


@pytest.mark.parametrize("msg_id", [0x80, 0x97, 0xA1, 0xA3, 0xE7, 0xFF])
def test_unknown_ids_with_plausible_sizes_become_unknown(msg_id: int) -> None:
    for size in (3, 4, 10, 100, 512):
        payload = bytes(i & 0x7F for i in range(size - 3))
        data = bytes((msg_id, size >> 7, size & 0x7F)) + payload
        assert FrameParser().feed(data) == [Unknown(msg_id, payload)], size


@pytest.mark.parametrize("msg_id", [0x80, 0xA3, 0xFF])
def test_unknown_ids_with_implausible_sizes_are_rejected(msg_id: int) -> None:
    for size in (0, 1, 2, 513, 0x3FFF):
        data = bytes((msg_id, size >> 7, size & 0x7F)) + bytes(max(0, min(size, 600) - 3))
        out = FrameParser().feed(data + FieldUpdate(8, 8).to_bytes())
        assert out == [FieldUpdate(8, 8)], size


# --- BusFrameParser ---------------------------------------------------------------------

BUS: list[BusMessage] = [
    BusMessage(BusMessageId.PING, 1025, b""),
    BusMessage(BusMessageId.VERSION, 1025, b"\x01\x02"),
    BusMessage(BusMessageId.BRD_DUMP, 1025, start_dump().fields),
    BusMessage(BusMessageId.BWTIME, 1025, ClockTimes.build(300, 299, running=True).raw),
    BusMessage(BusMessageId.UPDATE, 7, bytes.fromhex("41 34 40 24")),
    BusMessage(BusMessageId.FROM_START, 0x3FFF, bytes.fromhex("6a 41 00 6b")),
    BusMessage(BusMessageId.START_GAME_WRITTEN, 2, b""),
    BusMessage(BusMessageId.BRD_DUMP_50B, 3, bytes(50)),
    BusMessage(BusMessageId.BWTIME, 9, ClockAck(0x10, 0x0B, 0, 0).to_bytes()[3:]),
]
BUS_STREAM = b"".join(m.to_bytes() for m in BUS)


def test_bus_reply_bytes() -> None:
    """id, length (whole frame), address, data, checksum = sum & 0x7F."""
    assert BusMessage(BusMessageId.PING, (0x10 << 7) | 0x06, b"").to_bytes() == bytes.fromhex(
        "87 00 06 10 06 23"
    )
    dump = BusMessage(BusMessageId.BRD_DUMP, 1, bytes(64)).to_bytes()
    assert dump[:5] == bytes.fromhex("83 00 46 00 01")
    assert dump[-1] == (0x83 + 0x46 + 0x01) & 0x7F


def test_bus_replies_round_trip() -> None:
    for msg in BUS:
        assert BusFrameParser().feed(msg.to_bytes()) == [msg]
    assert BusFrameParser().feed(BUS_STREAM) == BUS


def test_bus_reply_helpers() -> None:
    assert BUS[2].board_dump() == start_dump()
    assert BUS[1].version() == Version(1, 2)
    assert BUS[3].clock() == ClockTimes.build(300, 299, running=True)
    assert BUS[8].clock() == ClockAck(0x10, 0x0B, 0, 0)
    assert BUS[4].records() == (EEPieceChange(52, 1), EEPieceChange(36, 0))
    assert BUS[0].board_dump() is None
    assert BUS[0].clock() is None
    assert BUS[0].version() is None
    assert BUS[0].records() == ()


def test_bus_one_byte_at_a_time_and_every_split() -> None:
    assert feed_all(BusFrameParser(), chunked(BUS_STREAM, 1)) == BUS
    for cut in range(len(BUS_STREAM) + 1):
        assert feed_all(BusFrameParser(), [BUS_STREAM[:cut], BUS_STREAM[cut:]]) == BUS, cut


def test_bus_reply_with_a_bad_checksum_is_dropped() -> None:
    bad = bytearray(BUS[1].to_bytes())
    bad[-1] ^= 0x01
    parser = BusFrameParser()
    assert parser.feed(bytes(bad) + BUS[0].to_bytes()) == [BUS[0]]
    assert parser.bad_checksums == 1


def test_bus_reply_with_damaged_data_is_dropped() -> None:
    bad = bytearray(BUS[3].to_bytes())
    bad[7] ^= 0x04
    parser = BusFrameParser()
    assert parser.feed(bytes(bad) + BUS_STREAM) == BUS
    assert parser.bad_checksums == 1


def test_bus_garbage_first_and_unknown_ids() -> None:
    garbage = bytes.fromhex("00 7f 80 00 06 00 00 06 92 00 09 01 02 03 04 05 06 07")
    parser = BusFrameParser()
    assert parser.feed(garbage + BUS_STREAM) == BUS
    assert parser.discarded == len(garbage)


@pytest.mark.parametrize("size", [0, 5, 7, 12, 14, 69, 71])
def test_bus_impossible_sizes_are_rejected(size: int) -> None:
    data = bytes((BusMessageId.BWTIME, size >> 7, size & 0x7F)) + bytes(max(0, size - 3))
    assert BusFrameParser().feed(data + BUS[0].to_bytes()) == [BUS[0]]
