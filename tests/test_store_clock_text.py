"""``clock_text`` (a clock report's row written in one step, its times' texts kept from the
last time they were met) against the general way, ``utf8_dumps(board_input(report))``: the
same text for every whole time a clock shows, met once or again, and None for any time the
two could spell differently."""

from __future__ import annotations

import itertools
import math

import pytest

import service.store
from dgt.events import ClockUpdate, Side, clock_update
from service.json_text import utf8_dumps
from service.store import board_input, clock_text


def report(left: float, right: float, **flags: bool) -> ClockUpdate:
    return clock_update(
        1.0,
        left,
        right,
        flags.get("running", True),
        Side.LEFT,
        flags.get("left_flag", False),
        flags.get("right_flag", False),
        flags.get("battery_low", False),
        Side.RIGHT if flags.get("running", True) else None,
    )


@pytest.fixture(autouse=True)
def fresh_texts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(service.store, "_SECONDS_TEXT", {})
    monkeypatch.setattr(service.store, "_STATE_TEXT", {})


def test_every_time_a_clock_shows_is_written_as_the_general_way_writes_it() -> None:
    times = [float(s) for s in range(36_000)]
    for rounds in range(2):  # met first, then again (its text kept)
        for left, right in zip(times, reversed(times), strict=True):
            r = report(left, right, running=bool(rounds))
            assert clock_text(r) == utf8_dumps(board_input(r))
    assert len(service.store._SECONDS_TEXT) == 35_999  # every time but 0


def test_the_flags_the_lever_and_the_turn_are_written_as_the_general_way_writes_them() -> None:
    bools = [False, True]
    sides = [Side.LEFT, Side.RIGHT]
    for _ in range(2):  # met first, then again (its text kept)
        for running, left_flag, right_flag, battery, lever, turn in itertools.product(
            bools, bools, bools, bools, sides, [None, *sides]
        ):
            r = clock_update(1.0, 60.0, 0.0, running, lever, left_flag, right_flag, battery, turn)
            assert clock_text(r) == utf8_dumps(board_input(r))
    assert len(service.store._STATE_TEXT) == 96


def test_flags_of_other_types_are_written_by_their_truth_and_not_kept() -> None:
    for _ in range(2):
        for running in (True, 1, 1.0, 2, 0, 0.0, "", "x", False):
            r = clock_update(1.0, 60.0, 5.0, running, Side.LEFT, 0, 1, False, None)  # type: ignore[arg-type]
            text = clock_text(r)
            assert text is not None
            expected = utf8_dumps(
                {**board_input(r), "running": bool(running), "left_flag": False, "right_flag": True}
            )
            assert text == expected
    assert service.store._STATE_TEXT == {}
    # equal to fields kept (1 == True): the kept text, which says the same truth
    for running in (True, False):
        clock_text(clock_update(1.0, 60.0, 5.0, running, Side.LEFT, False, True, False, None))
    assert len(service.store._STATE_TEXT) == 2
    for running in (1, 1.0, 0, 0.0):
        r = clock_update(1.0, 60.0, 5.0, running, Side.LEFT, 0, 1, False, None)  # type: ignore[arg-type]
        expected = {**board_input(r), "running": bool(running), "left_flag": False}
        assert clock_text(r) == utf8_dumps({**expected, "right_flag": True})


@pytest.mark.parametrize("value", [-0.0, 0.0, -3.0, 36_000.0, 1e15, 123456789.0, -7.0, 5.0])
def test_whole_times_outside_the_kept_ones_are_written_as_before(value: float) -> None:
    for _ in range(2):
        for left, right in ((value, 5.0), (5.0, value)):
            r = report(left, right)
            assert clock_text(r) == utf8_dumps(board_input(r))
            assert f'"left":{left!r},"right":{right!r},' in (clock_text(r) or "")
    assert 0.0 not in service.store._SECONDS_TEXT  # -0.0 would find it


def test_zero_and_minus_zero_keep_their_own_texts() -> None:
    for left in (0.0, -0.0, 0.0, -0.0):
        text = clock_text(report(left, 1.0))
        assert text is not None
        assert f'"left":{left!r},' in text


@pytest.mark.parametrize("value", [0.5, 1e-05, 299.25, math.nan, math.inf, -math.inf])
def test_other_times_take_the_general_way(value: float) -> None:
    for _ in range(2):
        assert clock_text(report(value, 5.0)) is None
        assert clock_text(report(5.0, value)) is None
    assert set(service.store._SECONDS_TEXT) == {5.0}


def test_an_unhashable_flag_is_written_by_its_truth() -> None:
    for flag in ([], [1]):
        r = clock_update(1.0, 60.0, 5.0, True, Side.LEFT, flag, False, False, None)  # type: ignore[arg-type]
        assert clock_text(r) == utf8_dumps({**board_input(r), "left_flag": bool(flag)})
    assert service.store._STATE_TEXT == {}
