"""``read_valid_times`` (the driver's reading of a clock report) against the general reading:
``read_times`` of a frame whose digits are all digits and that is not the null frame, else
None; the flags bools."""

from __future__ import annotations

import random

from dgt.protocol.clock_codec import read_times, read_valid_times


def general(r: bytes) -> tuple[int, int, int, bool, bool] | None:
    def bcd(value: int) -> bool:
        return (value >> 4) <= 5 and (value & 0x0F) <= 9  # 00-59

    valid = all((r[i] & 0x0F) <= 9 and bcd(r[i + 1]) and bcd(r[i + 2]) for i in (0, 3))
    if not valid or r == bytes(7):
        return None
    left, right, status, left_flag, right_flag = read_times(r)
    return (left, right, status, bool(left_flag), bool(right_flag))


def frames() -> list[bytes]:
    rng = random.Random(7)
    bases = [
        bytes(7),  # the null frame
        bytes([0, 0, 0, 0, 0, 0, 0x09]),  # 0:00:00 on both sides, running
        bytes([0x50, 0, 0, 0x10, 0, 0, 0]),  # 0:00:00, both flags
        bytes([0x01, 0x59, 0x59, 0x09, 0x05, 0x00, 0x21]),
        bytes([0x00, 0x09, 0x27, 0x00, 0x20, 0x34, 0x09]),
    ]
    out = list(bases)
    for base in bases:  # every value of every byte, the others as in the base
        for i in range(7):
            for value in range(256):
                frame = bytearray(base)
                frame[i] = value
                out.append(bytes(frame))
    out += [bytes(rng.randrange(256) for _ in range(7)) for _ in range(20_000)]
    digits = [0x00, 0x01, 0x09, 0x10, 0x45, 0x59, 0x99]
    for _ in range(20_000):  # mostly valid frames
        right = [rng.choice([0, 1, 9, 0x10, 0x40, 0x50, 0x59]), *rng.choices(digits, k=2)]
        left = [rng.choice([0, 2, 0x10, 0x49]), *rng.choices(digits, k=2)]
        out.append(bytes([*right, *left, rng.randrange(256)]))
    return out


def test_read_valid_times_is_the_general_reading() -> None:
    seen = {"none": 0, "read": 0}
    for frame in frames():
        got = read_valid_times(frame)
        assert got == general(frame), frame.hex(" ")
        if got is not None:
            assert type(got[3]) is bool
            assert type(got[4]) is bool
        seen["none" if got is None else "read"] += 1
    assert seen["none"] > 1000
    assert seen["read"] > 1000
    assert read_valid_times(bytes(7)) is None
    assert read_valid_times(bytes([0, 0, 0, 0, 0, 0, 1])) == (0, 0, 1, False, False)
