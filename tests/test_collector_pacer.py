"""service.collector_pacer.CollectorPacer: survivors are frozen and thawed in time; under a
flood of garbage cycles a thaw comes as soon as the frozen objects grew by THAW_GROWTH, not
only every THAW_INTERVAL seconds."""

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


def test_a_share_of_growth_is_needed_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(service.collector_pacer, "THAW_INTERVAL", 3600.0)
    monkeypatch.setattr(service.collector_pacer, "THAW_GROWTH", (10.0, 300))
    monkeypatch.setattr(service.collector_pacer, "GROWTH_CHECK", 0.0)
    CollectorPacer.start()
    try:
        for _ in range(3000):
            cycle = _Cycle()
            del cycle
            assert not CollectorPacer.thaw_if_due()  # ten times the live objects: far off
    finally:
        CollectorPacer.stop()


def test_garbage_frozen_by_the_pacer_is_freed_once_it_grew_too_much(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(service.collector_pacer, "THAW_INTERVAL", 3600.0)
    monkeypatch.setattr(service.collector_pacer, "THAW_GROWTH", (0.0, 300))
    monkeypatch.setattr(service.collector_pacer, "GROWTH_CHECK", 0.0)
    CollectorPacer.start()
    try:
        base = gc.get_freeze_count()
        first = _Cycle()
        alive = weakref.ref(first)
        gc.collect(0)  # a young collection freezes it while it lives...
        del first
        gc.collect()
        assert alive() is not None  # ...and, garbage, it waits for a thaw
        thawed = 0
        for _ in range(3000):
            cycle = _Cycle()  # garbage as soon as the next one is made...
            if gc.get_count()[0] > 600:
                gc.collect(0)  # ...but a young collection may freeze the one alive
            del cycle
            thawed += CollectorPacer.thaw_if_due()
        gc.collect(0)
        assert thawed >= 1
        assert alive() is None
        # What is frozen stays within the growth allowed past the live objects.
        assert gc.get_freeze_count() < base + 300 + 100
    finally:
        CollectorPacer.stop()


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


def test_settled_collects_once_and_measures_growth_from_the_built_service(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(service.collector_pacer, "THAW_INTERVAL", 3600.0)
    monkeypatch.setattr(service.collector_pacer, "THAW_GROWTH", (0.5, 300))
    monkeypatch.setattr(service.collector_pacer, "GROWTH_CHECK", 0.0)
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
        more = [[] for _ in range(2_000)]  # far from half of what the built service holds
        gc.collect(0)
        assert not CollectorPacer.thaw_if_due()
        del built, more
    finally:
        CollectorPacer.stop()
    assert gc.get_freeze_count() == 0


def test_survivors_that_died_since_bring_no_thaw(monkeypatch: pytest.MonkeyPatch) -> None:
    """A busy hall makes many objects that live through a young collection and die soon
    after (by reference counting): only what is still frozen counts as growth."""
    monkeypatch.setattr(service.collector_pacer, "THAW_INTERVAL", 3600.0)
    monkeypatch.setattr(service.collector_pacer, "THAW_GROWTH", (0.0, 5_000))
    monkeypatch.setattr(service.collector_pacer, "GROWTH_CHECK", 0.0)
    CollectorPacer.start()
    try:
        for _ in range(20):
            batch = [[] for _ in range(1_000)]
            gc.collect(0)  # frozen while they live...
            del batch  # ...and freed by their count: 20,000 survivors in all
            assert not CollectorPacer.thaw_if_due()
    finally:
        CollectorPacer.stop()
