"""``Hall._schedule_flush`` keeps the earliest commit asked for (never sooner than the spacing
after the last commit; from the input path when the loop is starved of turns), whatever
the order of the requests: its short way (a request with a delay as long as the one due
already's, such as every quiet clock report's) against a model of the rule."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from service.hall import COMMIT_SPACING, FLUSH_OVERDUE, QUIET_COMMIT_DELAY, Hall
from service.store import Store


class Handle:
    def __init__(self, loop: FakeLoop, when: float) -> None:
        self.loop = loop
        self.when = when
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class FakeLoop:
    """The loop's time and the timers armed, nothing run."""

    def __init__(self) -> None:
        self.now = 0.0
        self.armed: list[Handle] = []

    def time(self) -> float:
        return self.now

    def call_at(self, when: float, callback: Any) -> Handle:
        handle = Handle(self, when)
        self.armed.append(handle)
        return handle

    def call_soon(self, callback: Any) -> Handle:
        return self.call_at(self.now, callback)


@pytest.mark.parametrize("seed", range(6))
def test_the_commit_due_is_the_earliest_asked_for(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    store = Store(tmp_path / "s.db")
    hall = Hall(store, tick_interval=0.0)
    loop = FakeLoop()
    hall._loop = loop  # type: ignore[assignment]
    flushes: list[float] = []
    real_flush = hall._flush

    def flush() -> None:
        flushes.append(loop.now)
        real_flush()

    hall._flush = flush  # type: ignore[method-assign]
    last_commit = float("-inf")
    due: float | None = None  # the model: the commit due, None when none is
    for _ in range(400):
        loop.now += rng.choice([0.0, 0.001, 0.004, 0.03, 0.2, 0.7])
        if due is not None and rng.random() < 0.1:
            # the timer runs (on time, or late)
            loop.now = max(loop.now, due)
            hall._flush()
            due = None
            last_commit = loop.now
            continue
        store.append_echo("a", loop.now, {"event": "lever", "high": "left"})
        delay = rng.choice([0.0, 0.0, QUIET_COMMIT_DELAY, QUIET_COMMIT_DELAY, 0.05, 2.0])
        before = len(flushes)
        hall._schedule_flush(delay)
        if due is not None and loop.now - due > FLUSH_OVERDUE:
            assert flushes[before:] == [loop.now]  # committed from the input path
            due = None
            last_commit = loop.now
            continue
        assert flushes[before:] == []
        want = max(loop.now + delay, last_commit + COMMIT_SPACING)
        due = want if due is None else min(due, want)
        handle = hall._flush_handle
        assert handle is not None
        assert not handle.cancelled  # type: ignore[attr-defined]
        assert hall._flush_due == due
        assert due <= handle.when <= max(due, loop.now)  # type: ignore[attr-defined]
    store.close()
