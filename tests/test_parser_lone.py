"""The parser's shortcuts for a read that is one frame alone (``FrameParser.lone_times``,
``lone_update``) give exactly what :meth:`FrameParser.feed` gives for it, and nothing when it
would give something else; and a board fed such reads (the shortcut) emits the same events
as one fed the same bytes a byte at a time (the parser's loop)."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dgt import Board
from dgt.board import BoardState
from dgt.emulator.board import start_squares
from dgt.events import BoardEvent
from dgt.protocol import BoardDump, ClockTimes, FieldUpdate, FrameParser, MessageId
from dgt.transports.emulator import EmulatorTransport

HEADER = bytes((MessageId.BWTIME, 0, 10))


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=7, max_size=7), st.booleans())
def test_lone_times_is_what_feed_gives(payload: bytes, with_header: bool) -> None:
    data = (HEADER if with_header else b"\x8d\x00\x0b") + payload
    raw = FrameParser().lone_times(data)
    fed = FrameParser().feed(data)
    if raw is not None:
        assert fed == [ClockTimes(raw)]
        assert type(raw) is bytes
    else:  # garbage, an acknowledgement, not a times frame: the loop has it
        assert not fed or type(fed[0]) is not ClockTimes


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=1, max_size=12))
def test_lone_update_is_what_feed_gives(data: bytes) -> None:
    update = FrameParser().lone_update(data)
    if update is not None:
        assert FrameParser().feed(data) == [update]
        assert type(update) is FieldUpdate


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=64, max_size=64), st.sampled_from([b"\x86\x00\x43", b"\x86\x00\x44"]))
def test_lone_dump_is_what_feed_gives(fields: bytes, header: bytes) -> None:
    data = header + fields
    dump = FrameParser().lone_dump(data)
    if dump is not None:
        assert FrameParser().feed(data) == [dump]
        assert type(dump) is BoardDump
    elif header[2] == 67 and fields.isascii():
        pytest.fail("a whole dump was not taken")


def test_no_shortcut_while_a_frame_is_pending_or_for_other_bytes() -> None:
    times = HEADER + ClockTimes.build(60, 59, running=True).raw
    update = bytes((MessageId.FIELD_UPDATE, 0, 5, 12, 1))
    parser = FrameParser()
    assert parser.lone_times(times) == times[3:]
    assert parser.lone_update(update) == FieldUpdate(12, 1)
    # a bytearray (what a caller's own buffer may be) goes to the loop, which copies it
    assert parser.lone_times(bytearray(times)) is None
    assert parser.lone_update(bytearray(update)) is None
    assert FrameParser().feed(bytearray(update)) == [FieldUpdate(12, 1)]
    ack = HEADER + bytes((0x0A, 0x02, 0x10, 0x0A, 0, 0, 0))
    assert parser.lone_times(ack) is None
    parser.feed(times[:4])
    assert parser.lone_times(times) is None
    assert parser.lone_update(update) is None


def _untimed(events: list[BoardEvent]) -> list[BoardEvent]:
    return [dataclasses.replace(e, time=0.0) for e in events]


async def test_a_board_gives_the_same_events_either_way() -> None:
    reads = []
    for second in range(30):
        lever_right = second % 7 > 3
        reads.append(
            HEADER
            + ClockTimes.build(
                300 - second, 280, running=True, right_high=lever_right, left_running=True
            ).raw
        )
        reads.append(bytes((MessageId.FIELD_UPDATE, 0, 5, second % 64, second % 13)))
        if second % 10 == 9:  # a settle re-dump: the mirror corrected back to the start
            reads.append(BoardDump.from_pieces(start_squares()).to_bytes())
    reads.append(HEADER + ClockTimes.build(0, 0, no_clock=True).raw)
    reads.append(HEADER + ClockTimes.build(10, 10).raw)
    loop = asyncio.get_running_loop()
    got: dict[str, list[BoardEvent]] = {"whole": [], "bytewise": []}
    boards = {name: _ready_board(loop, got[name].append) for name in got}
    try:
        for data in reads:
            boards["whole"]._on_data(data)
            for i in range(len(data)):
                boards["bytewise"]._on_data(data[i : i + 1])
        assert len(got["whole"]) > 60
        assert _untimed(got["whole"]) == _untimed(got["bytewise"])
        assert boards["whole"].squares == boards["bytewise"].squares == start_squares()
        assert boards["whole"].corrections == boards["bytewise"].corrections > 0
    finally:
        for board in boards.values():
            await board.close()


def _ready_board(loop: asyncio.AbstractEventLoop, consumer: Callable[[BoardEvent], None]) -> Board:
    """A board as it stands after its handshake (start position), never opened."""
    board = Board(EmulatorTransport(), liveness_idle=0, reconnect=False)
    board._loop = loop
    board.state = BoardState.READY
    board._mirror_valid = True
    board.mirror.load(start_squares(), time.monotonic())
    board.consume(consumer)
    return board
