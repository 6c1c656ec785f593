"""``ClockState.same_status`` (the short path of a report that only moves the times) gives
exactly what the general path gives: the same events and the same state after, for random
streams of times frames (running clocks counting down, levers, flags, garbage digits, the
null frame, no clock)."""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from dgt.clock import ClockState
from dgt.events import BoardEvent
from dgt.protocol import ClockTimes

_STATE = (
    "left", "right", "running", "lever", "connected", "version", "turn_bit_left", "_status",
    "_prev_left", "_prev_right", "_turn", "_updated", "_left_flag", "_right_flag",
    "_battery_low",
)  # fmt: skip


def _general(state: ClockState, raw: bytes, now: float) -> list[BoardEvent]:
    return state._feed_raw(raw, now)  # what feed_raw did before its short path


def _times(
    left: int, right: int, running: bool, right_high: bool, left_running: bool | None,
    battery_low: bool, left_flag: bool, right_flag: bool,
) -> bytes:  # fmt: skip
    return ClockTimes.build(
        left, right, running=running, right_high=right_high, left_running=left_running,
        battery_low=battery_low, left_flag=left_flag, right_flag=right_flag,
    ).raw  # fmt: skip


_frame = st.one_of(
    st.builds(
        _times,
        st.integers(0, 3 * 3600),
        st.integers(0, 3 * 3600),
        st.booleans(),
        st.booleans(),
        st.sampled_from([None, True, False]),
        st.booleans(),
        st.booleans(),
        st.booleans(),
    ),
    st.binary(min_size=7, max_size=7),
    st.just(bytes(7)),
    st.just(ClockTimes.build(0, 0, no_clock=True).raw),
)


def _stream(data: st.DataObject) -> list[bytes]:
    """Frames, often a running clock's seconds one after another."""
    out: list[bytes] = []
    for _ in range(data.draw(st.integers(1, 40))):
        reading = ClockTimes(out[-1]).read_valid() if out else None
        if reading is not None and data.draw(st.booleans()):
            left, right, status = reading[:3]
            step = data.draw(st.sampled_from([(1, 0), (0, 1), (0, 0), (1, 1)]))
            raw = ClockTimes.build(max(left - step[0], 0), max(right - step[1], 0)).raw
            out.append(raw[:6] + bytes((status,)))
        else:
            out.append(data.draw(_frame))
    return out


def _run(frames: list[bytes]) -> int:
    """Feed both ways, compare; the reports the short path took."""
    short, general = ClockState(), ClockState()
    taken = 0
    for i, raw in enumerate(frames):
        now = float(i)
        if copy.copy(short).same_status(raw, now) is not None:  # does the short path take it?
            taken += 1
        assert short.feed_raw(raw, now) == _general(general, raw, now)
        assert [getattr(short, n) for n in _STATE] == [getattr(general, n) for n in _STATE]
        assert short.last_update == general.last_update
    return taken


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_short_path_is_the_general_one(data: st.DataObject) -> None:
    _run(_stream(data))


def test_a_running_clock_takes_the_short_path() -> None:
    frames = [
        ClockTimes.build(300 - s, 280, running=True, left_running=True).raw for s in range(20)
    ]
    frames += [
        ClockTimes.build(281, 280 - s, running=True, left_running=False).raw for s in range(20)
    ]
    frames += [ClockTimes.build(281, 200, left_flag=True, battery_low=True).raw] * 3
    assert _run(frames) >= 35
