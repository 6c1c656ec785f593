"""A board fed random streams of frames (clock reports of running clocks, acknowledgements,
square updates, dumps, garbage), one read a frame (the short paths of ``Board._on_data``)
gives the same events, mirror and clock state as a board fed the same bytes in random
pieces (the parser's loop and the general paths)."""

from __future__ import annotations

import asyncio
import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st
from test_parser_lone import _ready_board

from dgt.emulator.board import start_squares
from dgt.events import BoardEvent
from dgt.protocol import BoardDump, ClockTimes, MessageId

HEADER = bytes((MessageId.BWTIME, 0, 10))


@st.composite
def _reads(draw: st.DrawFn) -> list[bytes]:
    left, right = draw(st.integers(0, 600)), draw(st.integers(0, 600))
    reads: list[bytes] = []
    for _ in range(draw(st.integers(1, 60))):
        kind = draw(st.sampled_from(["tick", "tick", "tick", "clock", "update", "dump", "junk"]))
        if kind == "tick":  # a running clock's next second, the same status
            if draw(st.booleans()):
                left = max(left - 1, 0)
            else:
                right = max(right - 1, 0)
            lever = draw(st.booleans())
            reads.append(HEADER + ClockTimes.build(left, right, running=True, right_high=lever).raw)
        elif kind == "clock":
            reads.append(HEADER + draw(st.binary(min_size=7, max_size=7)))
        elif kind == "update":
            index, code = draw(st.integers(0, 63)), draw(st.integers(0, 13))
            reads.append(bytes((MessageId.FIELD_UPDATE, 0, 5, index, code)))
        elif kind == "dump":
            reads.append(BoardDump.from_pieces(start_squares()).to_bytes())
        else:
            reads.append(draw(st.binary(min_size=1, max_size=12)))
    return reads


def _untimed(events: list[BoardEvent]) -> list[BoardEvent]:
    return [dataclasses.replace(e, time=0.0) for e in events]


@settings(max_examples=150, deadline=None)
@given(_reads(), st.data())
def test_short_paths_give_what_the_loop_gives(reads: list[bytes], data: st.DataObject) -> None:
    loop = asyncio.new_event_loop()
    try:
        got: dict[str, list[BoardEvent]] = {"whole": [], "pieces": []}
        whole = _ready_board(loop, got["whole"].append)
        pieces = _ready_board(loop, got["pieces"].append)
        stream = b"".join(reads)
        for read in reads:
            whole._on_data(read)
        i = 0
        while i < len(stream):
            n = data.draw(st.integers(1, 12))
            pieces._on_data(stream[i : i + n])
            i += n
        assert whole._parser.discarded == pieces._parser.discarded
        assert _untimed(got["whole"]) == _untimed(got["pieces"])
        assert whole.squares == pieces.squares
        for name in ("left", "right", "running", "lever", "connected", "turn_bit_left"):
            assert getattr(whole.clock.state, name) == getattr(pieces.clock.state, name), name
    finally:
        loop.close()
