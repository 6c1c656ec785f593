"""ClockState and ClockSender: pure, with injected time."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dgt.clock import ACK_TIMEOUT, MAX_TRIES, ClockSender, ClockState, CommandState
from dgt.errors import ClockNotAnswering, LinkClosed
from dgt.events import ButtonPressed, ClockConnection, ClockUpdate, LeverMoved, Side
from dgt.protocol import (
    ClockAck,
    ClockCommand,
    ClockTimes,
    encode_clock_beep,
    encode_clock_end,
    encode_clock_setnrun,
    encode_clock_text,
    encode_clock_version,
)


def ack_for(command: int, ok: bool = True, ack2: int = 0) -> ClockAck:
    return ClockAck(0x10 if ok else 0x40, command, ack2, 0)


# --- ClockState ----------------------------------------------------------------------------


def times(left: float, right: float, **kwargs: bool) -> ClockTimes:
    return ClockTimes.build(left, right, **kwargs)


def test_times_become_clock_update_and_connection() -> None:
    state = ClockState()
    events = state.feed(times(180, 175, running=True, left_running=True), 1.0)
    assert events[0] == ClockConnection(1.0, True, None, "times")
    update = events[1]
    assert isinstance(update, ClockUpdate)
    assert (update.left, update.right, update.running) == (180.0, 175.0, True)
    assert update.lever_high is Side.LEFT
    assert update.turn is Side.LEFT  # 0x08 = left running, as recorded boards send it
    assert state.left == 180.0
    assert state.connected is True


def _twin_frames(rng: random.Random, length: int) -> list[bytes]:
    """Times frames as a clock sends them (mostly one side counting down with the same
    status), with status bits, flags, null, bogus and no-clock frames mixed in."""
    frames: list[bytes] = []
    raw = ClockTimes.build(600, 600, running=True, left_running=True).raw
    for _ in range(length):
        b = bytearray(raw)
        pick = rng.random()
        if pick < 0.6:  # a side counts down (or both stand)
            left, right = ClockTimes(raw).read()[:2]
            side = rng.choice(("left", "right", None))
            left -= side == "left"
            right -= side == "right"
            fresh = ClockTimes.build(max(left, 0), max(right, 0)).raw
            b[0:6] = bytes(
                (b[0] & 0x50 | fresh[0], *fresh[1:3], b[3] & 0x50 | fresh[3], *fresh[4:6])
            )
        elif pick < 0.8:
            b[6] ^= 1 << rng.randrange(6)  # running, lever, battery, turn bits, no clock
        elif pick < 0.9:
            b[rng.choice((0, 3))] ^= rng.choice((0x10, 0x40))  # a flag
        elif pick < 0.95:
            b = bytearray(7)  # the null frame
        else:
            b = bytearray(rng.randrange(256) for _ in range(7))  # mostly bogus
        raw = bytes(b)
        frames.append(raw)
    return frames


def test_short_path_gives_the_events_of_the_general_path() -> None:
    """feed_raw's path for a report that only moves time gives, for any sequence, the same
    events (classes, fields, order) and the same state as the general path alone."""
    rng = random.Random(20)
    for _ in range(200):
        fast, general = ClockState(), ClockState()
        for i, raw in enumerate(_twin_frames(rng, 40)):
            now = float(i)
            if rng.random() < 0.03:  # the sender gave the clock up
                assert fast.set_connected(False, now) == general.set_connected(False, now)
            events = fast.feed_raw(raw, now)
            expected = general._feed_raw(raw, now)
            assert events == expected, raw.hex(" ")
            assert [type(e) for e in events] == [type(e) for e in expected]
            for name in ("left", "right", "running", "lever", "connected", "last_update"):
                assert getattr(fast, name) == getattr(general, name), name
            assert fast.turn_bit_left == general.turn_bit_left


def test_short_path_still_learns_the_turn_bits() -> None:
    """A running clock with the same status whose other side counts down switches the turn
    bits, as the general path does."""
    state = ClockState()
    state.feed_raw(ClockTimes.build(300, 300, running=True, left_running=True).raw, 0.0)
    state.feed_raw(ClockTimes.build(300, 300, running=True, left_running=True).raw, 1.0)
    (update,) = state.feed_raw(ClockTimes.build(300, 299, running=True, left_running=True).raw, 2.0)
    assert isinstance(update, ClockUpdate)
    assert update.turn is Side.RIGHT
    assert state.turn_bit_left != 0x08
    (update,) = state.feed_raw(ClockTimes.build(300, 298, running=True, left_running=True).raw, 3.0)
    assert isinstance(update, ClockUpdate)
    assert update.turn is Side.RIGHT


def test_lever_flip_is_reported_once() -> None:
    state = ClockState()
    state.feed(times(60, 60, running=True, left_running=True), 0.0)
    events = state.feed(times(59, 60, running=True, right_high=True, left_running=False), 1.0)
    assert LeverMoved(1.0, Side.RIGHT) in events
    again = state.feed(times(59, 59, running=True, right_high=True, left_running=False), 2.0)
    assert not any(isinstance(e, LeverMoved) for e in again)
    back = state.feed(times(58, 59, running=True, left_running=True), 3.0)
    assert LeverMoved(3.0, Side.LEFT) in back
    assert state.lever is Side.LEFT


def test_null_and_bogus_frames_are_ignored() -> None:
    state = ClockState()
    state.feed(times(100, 90), 0.0)
    assert state.feed(ClockTimes(bytes(7)), 1.0) == []
    bogus = ClockTimes(bytes((0x00, 0x6A, 0x00, 0x00, 0x10, 0x00, 0x01)))  # minutes "6A"
    assert state.feed(bogus, 2.0) == []
    assert (state.left, state.right) == (100.0, 90.0)


def test_no_clock_bit_reports_disconnection_once() -> None:
    state = ClockState()
    state.feed(times(10, 10), 0.0)
    events = state.feed(times(0, 0, no_clock=True), 1.0)
    assert events == [ClockConnection(1.0, False, None, "no clock on the board")]
    assert state.feed(times(0, 0, no_clock=True), 2.0) == []
    assert state.connected is False
    back = state.feed(times(10, 10), 3.0)
    assert back[0] == ClockConnection(3.0, True, None, "times")


def test_version_ack_and_buttons() -> None:
    state = ClockState()
    events = state.feed(ClockAck(0x10, 0x09, 0x20, 0), 1.0)
    assert events == [ClockConnection(1.0, True, (2, 0), "version")]
    assert state.version == (2, 0)
    pressed = state.feed(ClockAck(0x10, 0x88, 0x41, 0x35), 2.0)
    assert pressed == [ButtonPressed(2.0, "ok", 0x41)]
    # An ack that answers a command is no button.
    assert state.feed(ack_for(ClockCommand.BEEP), 3.0) == []


def test_turn_bits_other_reading_is_learned() -> None:
    """A clock that follows the 2015 header (0x08 = right running) is recognised from
    which time counts down, and its turn reported accordingly."""
    state = ClockState()
    # 0x08 set while the RIGHT time counts down.
    state.feed(ClockTimes.build(100, 100, running=True, left_running=True), 0.0)
    events = state.feed(ClockTimes.build(100, 99, running=True, left_running=True), 1.0)
    update = events[-1]
    assert isinstance(update, ClockUpdate)
    assert update.turn is Side.RIGHT
    later = state.feed(ClockTimes.build(99, 99, running=True, left_running=False), 2.0)[-1]
    assert isinstance(later, ClockUpdate)
    assert later.turn is Side.LEFT


def test_stopped_clock_has_no_turn() -> None:
    state = ClockState()
    update = state.feed(times(5, 5, left_running=True), 0.0)[-1]
    assert isinstance(update, ClockUpdate)
    assert update.turn is None
    assert not update.running


# --- ClockSender ---------------------------------------------------------------------------


def active_sender(now: float = 0.0) -> ClockSender:
    sender = ClockSender()
    sender.set_active(True, now)
    return sender


def test_nothing_is_sent_while_inactive() -> None:
    sender = ClockSender()
    req = sender.submit(encode_clock_beep(0.5), 0.0)
    assert sender.take_output() == []
    assert req.state is CommandState.QUEUED
    sender.set_active(True, 1.0)
    assert sender.take_output() == [encode_clock_beep(0.5)]
    assert sender.next_deadline() == 1.0 + ACK_TIMEOUT


def test_one_in_flight_and_ack_round_trip() -> None:
    sender = active_sender()
    first = sender.submit(encode_clock_setnrun(300, 300), 0.0)
    second = sender.submit(encode_clock_text("hello"), 0.0)
    assert sender.take_output() == [encode_clock_setnrun(300, 300)]
    assert sender.queued == 1
    # An ack for another command, and a button press, do not complete it.
    sender.on_ack(ack_for(ClockCommand.BEEP), 0.5)
    sender.on_ack(ClockAck(0x10, 0x88, 0x05, 0x31), 0.6)
    assert not first.done()
    assert sender.take_output() == []
    sender.on_ack(ack_for(ClockCommand.SETNRUN), 0.7)
    assert first.result().command == ClockCommand.SETNRUN
    assert sender.take_output() == [encode_clock_text("hello")]
    sender.on_ack(ack_for(ClockCommand.ASCII), 0.9)
    assert second.result().ok
    assert sender.in_flight is None
    assert sender.next_deadline() is None


def test_resend_on_time_out_then_ack() -> None:
    sender = active_sender()
    req = sender.submit(encode_clock_beep(1), 0.0)
    sender.take_output()
    assert sender.poll(ACK_TIMEOUT - 0.01) == []
    assert sender.take_output() == []
    assert sender.poll(ACK_TIMEOUT) == []
    assert sender.take_output() == [encode_clock_beep(1)]
    assert req.tries == 2
    sender.on_ack(ack_for(ClockCommand.BEEP), ACK_TIMEOUT + 0.3)
    assert req.done()
    assert req.exception() is None


def test_clock_that_stops_acking_is_reported_not_waited_on() -> None:
    sender = active_sender()
    req = sender.submit(encode_clock_beep(1), 0.0)
    queued = sender.submit(encode_clock_end(), 0.0)
    now, sends, reports = 0.0, len(sender.take_output()), []
    while sender.next_deadline() is not None:
        now = sender.next_deadline()
        reports += sender.poll(now)
        sends += len(sender.take_output())
    assert sends == MAX_TRIES  # bounded: never more than MAX_TRIES sends
    assert now == pytest.approx(MAX_TRIES * ACK_TIMEOUT)  # given up after 6 s, not later
    assert isinstance(req.exception(), ClockNotAnswering)
    with pytest.raises(ClockNotAnswering):
        req.result()
    assert isinstance(queued.exception(), ClockNotAnswering)  # the queue is dropped
    assert len(reports) == 1
    assert isinstance(reports[0], ClockConnection)
    assert reports[0].connected is False
    assert "0x0b" in reports[0].reason
    # The next command is tried afresh; an ack says the clock is back.
    later = sender.submit(encode_clock_end(), 10.0)
    assert sender.take_output() == [encode_clock_end()]
    events = sender.on_ack(ack_for(ClockCommand.END), 10.5)
    assert later.done()
    assert events
    assert events[0].connected is True


def test_ready_ack_completes_end() -> None:
    sender = active_sender()
    req = sender.submit(encode_clock_end(), 0.0)
    sender.on_ack(ClockAck(0x10, 0x81, 0, 0), 0.2)
    assert req.done()
    assert req.result().ack1 == 0x81


def test_error_ack_is_resent_once() -> None:
    sender = active_sender()
    req = sender.submit(encode_clock_beep(1), 0.0)
    sender.take_output()
    sender.on_ack(ack_for(ClockCommand.BEEP, ok=False), 0.1)
    assert not req.done()
    assert sender.take_output() == [encode_clock_beep(1)]
    sender.on_ack(ack_for(ClockCommand.BEEP), 0.2)
    assert req.result().ok


def test_probe_failure_is_silent_and_queue_moves_on() -> None:
    sender = active_sender()
    probe = sender.submit(encode_clock_version(), 0.0, max_tries=1, report=False)
    after = sender.submit(encode_clock_beep(1), 0.0)
    sender.take_output()
    assert sender.poll(ACK_TIMEOUT) == []
    assert isinstance(probe.exception(), ClockNotAnswering)
    assert sender.take_output() == [encode_clock_beep(1)]
    assert not after.done()


def test_going_inactive_requeues_and_cancel_all() -> None:
    sender = active_sender()
    req = sender.submit(encode_clock_beep(1), 0.0)
    sender.take_output()
    sender.set_active(False, 0.5)
    assert sender.next_deadline() is None
    assert req.state is CommandState.QUEUED
    assert sender.poll(100.0) == []
    sender.set_active(True, 1.0)
    assert sender.take_output() == [encode_clock_beep(1)]
    callbacks: list[object] = []
    req.add_done_callback(callbacks.append)
    sender.cancel_all()
    assert isinstance(req.exception(), LinkClosed)
    assert callbacks == [req]


def test_submit_rejects_non_clock_bytes() -> None:
    with pytest.raises(ValueError, match="clock message"):
        ClockSender().submit(b"\x42", 0.0)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.floats(0.0, 3.0)), min_size=1, max_size=40))
def test_sender_is_bounded_under_any_ack_pattern(script: list[tuple[bool, float]]) -> None:
    """Whatever the clock does, at most one command is in flight, nothing is sent more
    than MAX_TRIES times, and every command finishes."""
    sender = active_sender()
    requests = [sender.submit(encode_clock_beep(i % 5), 0.0) for i in range(5)]
    sent: dict[bytes, int] = {}
    now = 0.0
    for answer, step in script:
        now += step
        sender.poll(now)
        for data in sender.take_output():
            sent[data] = sent.get(data, 0) + 1
        req = sender.in_flight
        if answer and req is not None:
            sender.on_ack(ack_for(req.command), now)
    while sender.next_deadline() is not None:
        now = max(now, sender.next_deadline() or now)
        sender.poll(now)
        sender.take_output()
    assert all(r.done() for r in requests)
    assert all(count <= MAX_TRIES * len(requests) for count in sent.values())
    assert now <= sum(step for _, step in script) + MAX_TRIES * ACK_TIMEOUT * len(requests)
