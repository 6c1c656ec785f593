"""The clock inside the board protocol: BWTIME frames (times and acks) and the clock
commands (0x2B).  Pure codec tests, no I/O.

Facts: docs/protocol.md §3.4 (times), §3.5 (acks), §5 (clock commands),
§10 (status bytes seen on a real board).
"""

from __future__ import annotations

import random

import pytest

from dgt.protocol import (
    Button,
    ClockAck,
    ClockCommand,
    ClockTimes,
    FrameParser,
    Message,
    SetNRunMode,
    clock_message,
    decode_bwtime,
    decode_clock_setnrun,
    encode_clock_beep,
    encode_clock_button,
    encode_clock_display,
    encode_clock_end,
    encode_clock_icons,
    encode_clock_setnrun,
    encode_clock_text,
    encode_clock_text_rev2,
    encode_clock_version,
)

H, M = 3600, 60


def parse(data: bytes) -> list[Message]:
    """Everything a fresh parser decodes from ``data`` fed in one chunk."""
    return FrameParser().feed(data)


def bwtime(*payload: int) -> bytes:
    """A BWTIME frame around 7 payload bytes."""
    assert len(payload) == 7
    return bytes((0x8D, 0x00, 0x0A, *payload))


# --- clock times --------------------------------------------------------------------------


def test_times_frame_bytes_are_bcd_right_side_first() -> None:
    msg = ClockTimes.build(1 * H + 2 * M + 3, 59 * M + 59, running=True, left_running=True)
    assert msg.to_bytes() == bwtime(0x00, 0x59, 0x59, 0x01, 0x02, 0x03, 0x09)
    assert parse(msg.to_bytes()) == [msg]


def test_times_are_decoded_from_bcd() -> None:
    [msg] = parse(bwtime(0x02, 0x45, 0x17, 0x00, 0x09, 0x30, 0x00))
    assert isinstance(msg, ClockTimes)
    assert msg.right == 2 * H + 45 * M + 17
    assert msg.left == 9 * M + 30
    assert msg.valid
    assert msg.clock_connected


def test_per_move_indicator_is_not_part_of_the_hours() -> None:
    [msg] = parse(bwtime(0x21, 0x00, 0x00, 0x20, 0x00, 0x05, 0x00))
    assert isinstance(msg, ClockTimes)
    assert (msg.right, msg.left) == (1 * H, 5)
    assert not msg.right_flag
    assert not msg.left_flag


@pytest.mark.parametrize("bit", [0x10, 0x40])
def test_flags_on_either_side(bit: int) -> None:
    [right] = parse(bwtime(bit, 0, 0, 0x00, 0x01, 0x00, 0x01))
    [left] = parse(bwtime(0x00, 0x01, 0x00, bit, 0, 0, 0x01))
    assert isinstance(right, ClockTimes)
    assert isinstance(left, ClockTimes)
    assert (right.right_flag, right.left_flag) == (True, False)
    assert (left.right_flag, left.left_flag) == (False, True)
    assert right.right == 0
    assert left.left == 0


def test_build_sets_flags() -> None:
    msg = ClockTimes.build(0, 0, left_flag=True)
    assert msg.left_flag
    assert not msg.right_flag
    assert ClockTimes.build(0, 0, right_flag=True).raw[0] == 0x10


@pytest.mark.parametrize(
    ("kwargs", "status"),
    [
        ({"running": True, "left_running": True}, 0x09),  # left counts down (recorded)
        ({"running": True, "right_high": True, "left_running": False}, 0x13),  # right counts
        ({"left_running": True}, 0x08),  # stopped
        ({"right_high": True, "left_running": False}, 0x12),  # stopped
        ({"battery_low": True}, 0x04),
        ({"no_clock": True}, 0x20),
        ({}, 0x00),
    ],
)
def test_status_byte_as_recorded_on_a_real_board(kwargs: dict[str, bool], status: int) -> None:
    msg = ClockTimes.build(60, 60, **kwargs)
    assert msg.status == status
    assert parse(msg.to_bytes()) == [msg]


def test_status_properties() -> None:
    [msg] = parse(bwtime(0, 0, 0, 0, 0, 0, 0x13))
    assert isinstance(msg, ClockTimes)
    assert msg.running
    assert msg.right_high
    assert not msg.battery_low
    assert msg.clock_connected
    [msg] = parse(bwtime(0, 0, 1, 0, 0, 1, 0x24))
    assert isinstance(msg, ClockTimes)
    assert not msg.running
    assert not msg.right_high
    assert msg.battery_low
    assert not msg.clock_connected


def test_lever_bit_alone_decides_right_high() -> None:
    for status in range(0x80):
        msg = ClockTimes(bytes((0, 0, 1, 0, 0, 1, status)))
        assert msg.right_high is bool(status & 0x02)
        assert msg.running is bool(status & 0x01)
        assert msg.clock_connected is not bool(status & 0x20)


def test_null_frame_is_recognised_and_not_valid() -> None:
    [msg] = parse(bwtime(0, 0, 0, 0, 0, 0, 0))
    assert isinstance(msg, ClockTimes)
    assert msg.is_null
    assert not msg.valid
    assert not ClockTimes.build(0, 0, running=True).is_null


@pytest.mark.parametrize(
    "payload",
    [
        (0x00, 0x60, 0x00, 0x00, 0x00, 0x00, 0x01),  # 60 minutes
        (0x00, 0x00, 0x5A, 0x00, 0x00, 0x00, 0x01),  # units digit 10
        (0x00, 0x00, 0x00, 0x00, 0x0F, 0x00, 0x01),
        (0x00, 0x00, 0x00, 0x00, 0x00, 0x7F, 0x01),
        (0x0B, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01),  # hours 11
        (0x00, 0x00, 0x00, 0x0C, 0x00, 0x00, 0x01),
    ],
)
def test_invalid_digits_make_the_frame_invalid(payload: tuple[int, ...]) -> None:
    [msg] = parse(bwtime(*payload))
    assert isinstance(msg, ClockTimes)
    assert not msg.valid


def test_read_valid_is_read_of_a_valid_frame_else_none() -> None:
    """``read_valid`` (what the driver takes from each report) agrees with ``valid`` and
    ``read`` on frames with every kind of digit, flag bit and status byte."""
    rng = random.Random(7)
    interesting = (0x00, 0x01, 0x09, 0x0A, 0x13, 0x45, 0x59, 0x5A, 0x60, 0x7F, 0x99, 0xFF)
    for _ in range(20000):
        raw = bytes(
            rng.choice(interesting) if rng.random() < 0.6 else rng.randrange(256) for _ in range(7)
        )
        times = ClockTimes(raw)
        assert times.read_valid() == (times.read() if times.valid else None), raw.hex()
    assert ClockTimes(bytes(7)).read_valid() is None


def test_read_valid_takes_every_byte_value_at_every_place() -> None:
    """Each byte of a times frame, every value, the others those of a valid frame."""
    base = ClockTimes.build(3723, 45, running=True).raw
    for place in range(7):
        for value in range(256):
            raw = base[:place] + bytes((value,)) + base[place + 1 :]
            times = ClockTimes(raw)
            assert times.read_valid() == (times.read() if times.valid else None), raw.hex()


def test_build_round_trips_every_representable_time() -> None:
    for seconds in (*range(0, 2 * H, 7), 9 * H + 59 * M + 59):
        msg = ClockTimes.build(seconds, 9 * H + 59 * M + 59 - seconds)
        assert (msg.left, msg.right) == (seconds, 9 * H + 59 * M + 59 - seconds)
        assert msg.valid


def test_build_saturates_at_the_largest_clock_time() -> None:
    """A clock shows at most 9:59:59; a longer time must not come out as 9:00:00 plus the
    remainder (the set-and-run encoder and the EE encoder both saturate at 9:59:59)."""
    msg = ClockTimes.build(10 * H, 12 * H + 30 * M)
    assert msg.valid
    assert (msg.left, msg.right) == (9 * H + 59 * M + 59, 9 * H + 59 * M + 59)


def test_build_never_produces_an_ack() -> None:
    for hours in range(12):
        msg = ClockTimes.build(hours * H, hours * H)
        assert isinstance(decode_bwtime(msg.raw), ClockTimes)


# --- clock acks -------------------------------------------------------------------------


def test_version_ack_of_a_dgt3000() -> None:
    """The log example (0x10, 0x09, 0x20, 0x00) = version 2.0."""
    data = bwtime(0x0A, 0x10, 0x09, 0x0A, 0x20, 0x00, 0x00)
    assert ClockAck(0x10, 0x09, 0x20, 0x00).to_bytes() == data
    [ack] = parse(data)
    assert ack == ClockAck(0x10, 0x09, 0x20, 0x00)
    assert isinstance(ack, ClockAck)
    assert ack.version == (2, 0)
    assert ack.ok
    assert not ack.spontaneous
    assert ack.command == ClockCommand.VERSION
    assert ack.button is None


def test_version_ack_of_an_xl() -> None:
    [ack] = parse(bwtime(0x0A, 0x10, 0x09, 0x0A, 0x14, 0x00, 0x00))
    assert isinstance(ack, ClockAck)
    assert ack.version == (1, 4)


def test_version_is_only_read_from_a_version_ack() -> None:
    assert ClockAck(0x10, ClockCommand.BEEP, 0x20, 0).version is None


@pytest.mark.parametrize(
    ("ack", "p0", "p3"),
    [
        (ClockAck(0x90, 0x00, 0x00, 0x00), 0x0A, 0x1A),  # ack0 bit 7 -> p3 bit 4
        (ClockAck(0x00, 0x80, 0x00, 0x00), 0x0A, 0x2A),  # ack1 bit 7 -> p3 bit 5
        (ClockAck(0x00, 0x00, 0x80, 0x00), 0x1A, 0x0A),  # ack2 bit 7 -> p0 bit 4
        (ClockAck(0x00, 0x00, 0x00, 0x80), 0x2A, 0x0A),  # ack3 bit 7 -> p0 bit 5
    ],
)
def test_ack_high_bits_are_carried_in_p0_and_p3(ack: ClockAck, p0: int, p3: int) -> None:
    data = ack.to_bytes()
    assert (data[3], data[6]) == (p0, p3)
    assert all(b < 0x80 for b in data[1:])
    assert parse(data) == [ack]


def test_ack_bytes_with_every_high_bit() -> None:
    ack = ClockAck(0x90, 0x81, 0xA0, 0xB1)
    assert ack.to_bytes() == bwtime(0x3A, 0x10, 0x01, 0x3A, 0x20, 0x31, 0x00)
    assert parse(ack.to_bytes()) == [ack]


def test_every_ack_byte_value_round_trips() -> None:
    for value in range(256):
        for ack in (
            ClockAck(value, 0, 0, 0),
            ClockAck(0, value, 0, 0),
            ClockAck(0, 0, value, 0),
            ClockAck(0, 0, 0, value),
        ):
            assert decode_bwtime(ack.to_bytes()[3:]) == ack


@pytest.mark.parametrize(
    ("p0", "p3"),
    [(0x0A, 0x00), (0x00, 0x0A), (0x0A, 0x0A), (0x1A, 0x01), (0x01, 0x1A), (0x2A, 0x3A)],
)
def test_ack_detected_on_either_hours_nibble(p0: int, p3: int) -> None:
    [msg] = parse(bwtime(p0, 0x10, 0x0B, p3, 0x00, 0x00, 0x00))
    assert isinstance(msg, ClockAck)
    assert msg.command == ClockCommand.BEEP


@pytest.mark.parametrize(("p0", "p3"), [(0x09, 0x09), (0x0B, 0x00), (0x00, 0x0F), (0x1B, 0x2C)])
def test_other_hours_nibbles_are_times(p0: int, p3: int) -> None:
    [msg] = parse(bwtime(p0, 0x10, 0x0B, p3, 0x00, 0x00, 0x00))
    assert isinstance(msg, ClockTimes)


def test_ack_from_p0_only_carries_the_high_bits_of_p3() -> None:
    """Only p0 has the 0x0A nibble: p3's bits 4 and 5 still set ack0/ack1 bit 7."""
    [msg] = parse(bwtime(0x0A, 0x10, 0x01, 0x30, 0x00, 0x00, 0x00))
    assert msg == ClockAck(0x90, 0x81, 0x00, 0x00)


@pytest.mark.parametrize("button", list(Button))
def test_button_acks(button: Button) -> None:
    data = bwtime(0x0A, 0x10, 0x08, 0x2A, 0x05, int(button), 0x00)
    [ack] = parse(data)
    assert isinstance(ack, ClockAck)
    assert ack == ClockAck(0x10, 0x88, 0x05, button)
    assert ack.to_bytes() == data
    assert ack.button is button
    assert ack.spontaneous
    assert ack.command == ClockCommand.BUTTON
    assert ack.button_mask == 0x05


def test_button_ascii_codes() -> None:
    assert [int(b) for b in (Button.BACK, Button.PLUS, Button.RUN, Button.MINUS, Button.OK)] == [
        0x31,
        0x32,
        0x33,
        0x34,
        0x35,
    ]


def test_two_buttons_at_once() -> None:
    ack = ClockAck(0x10, 0x88, 0x45, 0x35)
    assert ack.button is Button.OK
    assert ack.button_mask == 0x45


def test_reply_to_the_button_query_carries_no_button() -> None:
    ack = ClockAck(0x10, 0x08, 0x00, 0x00)
    assert ack.button is None
    assert ack.button_mask == 0
    assert not ack.spontaneous


def test_ready_and_error_acks() -> None:
    ready = ClockAck(0x10, 0x81, 0, 0)
    assert ready.spontaneous
    assert ready.command == 0x01
    error = ClockAck(0x40, ClockCommand.SETNRUN, 0, 0)
    assert not error.ok
    assert error.command == ClockCommand.SETNRUN
    assert not ClockAck(0x20, ClockCommand.DISPLAY, 0, 0).ok


# --- clock commands ----------------------------------------------------------------------


def test_clock_message_frame() -> None:
    assert clock_message(0x0B, b"\x10") == bytes.fromhex("2b 04 03 0b 10 00")
    assert clock_message(0x09) == bytes.fromhex("2b 03 03 09 00")


def test_end_button_version() -> None:
    assert encode_clock_end() == bytes.fromhex("2b 03 03 03 00")
    assert encode_clock_button() == bytes.fromhex("2b 03 03 08 00")
    assert encode_clock_version() == bytes.fromhex("2b 03 03 09 00")


def test_display_for_the_xl() -> None:
    """Text "ABCDEF" is shown as 1A:BC 1D:EF; the segment bytes go C, B, A, F, E, D."""
    data = encode_clock_display("123456", icons=0x12, beep=True)
    assert data == bytes.fromhex("2b 0b 03 01 4f 5b 06 7d 6d 66 12 03 00")
    assert encode_clock_display("0") == bytes.fromhex("2b 0b 03 01 00 00 3f 00 00 00 00 01 00")


def test_display_digits_use_the_standard_seven_segment_patterns() -> None:
    patterns = [0x3F, 0x06, 0x5B, 0x4F, 0x66, 0x6D, 0x7D, 0x07, 0x7F, 0x6F]
    for digit, pattern in enumerate(patterns):
        data = encode_clock_display(str(digit))
        assert data[6] == pattern  # position A is the third segment byte


def test_icons() -> None:
    data = encode_clock_icons(left=0x01, right=0x02, left_periods=0x03, right_periods=0x24,
                              special=0x41)  # fmt: skip
    assert data == bytes.fromhex("2b 0b 03 02 01 02 03 24 41 00 00 00 00")
    assert encode_clock_icons() == bytes.fromhex("2b 0b 03 02 00 00 00 00 00 00 00 00 00")


def test_set_and_run_binary_times() -> None:
    mode = SetNRunMode.LEFT_RUNS | SetNRunMode.TOGGLE_ON_LEVER
    data = encode_clock_setnrun(1 * H + 2 * M + 3, 5 * M, mode)
    assert data == bytes.fromhex("2b 0a 03 0a 01 02 03 00 05 00 09 00")
    assert decode_clock_setnrun(data[4:11]) == (1 * H + 2 * M + 3, 5 * M, 0x09)


def test_set_and_run_defaults_to_paused_and_toggle_on_lever() -> None:
    assert encode_clock_setnrun(0, 0)[-2] == 0x0C


def test_set_and_run_saturates_at_9_59_59() -> None:
    data = encode_clock_setnrun(12 * H, -5)
    assert data[4:10] == bytes((9, 59, 59, 0, 0, 0))


@pytest.mark.parametrize(
    ("seconds", "units"), [(1.024, 16), (0.064, 1), (0, 0), (-1, 0), (100, 127)]
)
def test_beep_in_64_ms_units(seconds: float, units: int) -> None:
    assert encode_clock_beep(seconds) == bytes((0x2B, 0x04, 0x03, 0x0B, units, 0x00))


def test_ascii_text_for_the_dgt3000_is_eight_characters() -> None:
    assert encode_clock_text("HELLO", beep=3) == (
        bytes.fromhex("2b 0c 03 0c") + b"HELLO   " + bytes.fromhex("03 00")
    )
    assert encode_clock_text("ABCDEFGHIJ")[4:12] == b"ABCDEFGH"
    assert encode_clock_text("x", beep=99)[12] == 15
    assert encode_clock_text("x", beep=-1)[12] == 0
    assert len(encode_clock_text("")) == 2 + 0x0C


def test_ascii_text_for_the_revelation_is_eleven_characters() -> None:
    assert encode_clock_text_rev2("e2e4 d7d5", beep=1) == (
        bytes.fromhex("2b 0f 03 0d") + b"e2e4 d7d5  " + bytes.fromhex("01 00")
    )
    assert encode_clock_text_rev2("0123456789ABC")[4:15] == b"0123456789A"
    assert len(encode_clock_text_rev2("")) == 2 + 0x0F


def test_non_ascii_text_is_replaced_not_raised() -> None:
    data = encode_clock_text("Zürich")
    assert data[4:12] == b"Z?rich  "


@pytest.mark.parametrize(
    ("data", "size"),
    [
        (encode_clock_display("abc"), 0x0B),
        (encode_clock_icons(), 0x0B),
        (encode_clock_end(), 0x03),
        (encode_clock_button(), 0x03),
        (encode_clock_version(), 0x03),
        (encode_clock_setnrun(0, 0), 0x0A),
        (encode_clock_beep(1), 0x04),
        (encode_clock_text("abc"), 0x0C),
        (encode_clock_text_rev2("abc"), 0x0F),
    ],
)
def test_size_byte_counts_start_marker_to_end_marker(data: bytes, size: int) -> None:
    assert data[0] == 0x2B
    assert data[1] == size
    assert len(data) == 2 + size
    assert data[2] == 0x03
    assert data[-1] == 0x00
