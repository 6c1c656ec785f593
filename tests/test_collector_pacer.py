"""service.collector_pacer.CollectorPacer: survivors are frozen and thawed in time, and no
full pass of the collector comes between two thaws, whatever the service makes."""

from __future__ import annotations

import gc
import time
import weakref

import pytest

import service.collector_pacer
from service.collector_pacer import CollectorPacer


class _Cycle:
    def __init__(self) -> None:
        self.me = self
        self.load: list[list[int]] = [[] for _ in range(9)]


def test_the_collector_pacer_freezes_survivors_and_thaws_them_in_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(service.collector_pacer, "THAW_INTERVAL", 3600.0)
    CollectorPacer.start()
    try:
        assert gc.get_freeze_count() > 0  # what was there at start is out of the way
        frozen = gc.get_freeze_count()
        young = [[] for _ in range(100)]
        gc.collect(0)  # the survivors of a young collection are frozen
        assert gc.get_freeze_count() >= frozen + 100
        assert len(gc.get_objects(1)) == 0  # none waits in the middle generation
        del young
        cycle = _Cycle()
        alive = weakref.ref(cycle)
        frozen = gc.get_freeze_count()
        gc.collect()  # a full collection: the survivors (the cycle among them) are frozen
        assert gc.get_freeze_count() > frozen
        del cycle
        gc.collect()
        assert alive() is not None  # frozen garbage cycles wait for the thaw...
        assert not CollectorPacer.thaw_if_due()  # ...not due yet
        assert alive() is not None
        assert CollectorPacer.thaw_if_due(time.monotonic() + 3600.0)  # due: one long pass
        assert alive() is None  # frees the cycle, and its survivors are frozen again
        assert gc.get_freeze_count() > 0
        assert not CollectorPacer.thaw_if_due(time.monotonic() + 3600.0)  # not again at once
    finally:
        CollectorPacer.stop()
    assert gc.get_freeze_count() == 0
    assert not CollectorPacer.thaw_if_due(time.monotonic() + 7200.0)  # not running: nothing


def test_settled_collects_once_before_the_service_is_busy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(service.collector_pacer, "THAW_INTERVAL", 3600.0)
    CollectorPacer.settled()  # not running: nothing
    assert gc.get_freeze_count() == 0
    CollectorPacer.start()
    try:
        built = [[] for _ in range(20_000)]  # the service's tables, made after the loop began
        gc.collect(0)
        cycle = _Cycle()
        alive = weakref.ref(cycle)
        gc.collect(0)
        del cycle
        CollectorPacer.settled()  # one long pass now: start-up's garbage cycles are freed
        assert alive() is None
        assert gc.get_freeze_count() >= len(built)
        assert not CollectorPacer.thaw_if_due()  # the next thaw is THAW_INTERVAL away
        del built
    finally:
        CollectorPacer.stop()
    assert gc.get_freeze_count() == 0


def test_no_full_pass_comes_between_two_thaws(monkeypatch: pytest.MonkeyPatch) -> None:
    """A busy hall makes many objects, most of which live through a young collection and
    die soon after, and garbage cycles now and then: none of it brings a full pass of the
    collector (a pause of some 400 ms at 1,000 tables) before the timed thaw."""
    monkeypatch.setattr(service.collector_pacer, "THAW_INTERVAL", 3600.0)
    full: list[int] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "stop" and info.get("generation") == 2:
            full.append(1)

    CollectorPacer.start()
    gc.callbacks.append(seen)
    try:
        for _ in range(50):
            batch = [[] for _ in range(1_000)]
            cycles = [_Cycle() for _ in range(100)]
            gc.collect(0)  # frozen while they live...
            del batch, cycles  # ...then freed by their count, or frozen garbage cycles
            assert not CollectorPacer.thaw_if_due()
        gc.collect(1)
        assert full == []
    finally:
        gc.callbacks.remove(seen)
        CollectorPacer.stop()
