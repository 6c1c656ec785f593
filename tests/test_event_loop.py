"""service.event_loop: the service's loop is uvloop's (a dependency except on Windows),
asyncio's on request or where uvloop does not exist; the collector is paced while it runs."""

from __future__ import annotations

import asyncio
import gc
import sys

import pytest

import service.collector_pacer
from service import event_loop
from service.collector_pacer import CollectorPacer


async def _loop_module() -> str:
    await asyncio.sleep(0.01)
    return type(asyncio.get_running_loop()).__module__


def test_the_service_runs_on_uvloop_where_it_exists(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DGT_EVENT_LOOP", raising=False)
    expected = "asyncio" if sys.platform == "win32" else "uvloop"
    assert event_loop.run(_loop_module()).startswith(expected)


def test_asyncio_loop_on_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DGT_EVENT_LOOP", "asyncio")
    assert event_loop.run(_loop_module()).startswith("asyncio")


async def test_the_tests_run_on_the_service_loop() -> None:
    assert type(asyncio.get_running_loop()).__module__.startswith(event_loop.name())


async def _frozen() -> int:
    await asyncio.sleep(0.05)
    return gc.get_freeze_count()


def test_the_loop_paces_the_collector_until_main_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(service.collector_pacer, "THAW_CHECK", 0.01)
    asked: list[float | None] = []
    thaw_if_due = CollectorPacer.thaw_if_due

    def counted(now: float | None = None) -> bool:
        asked.append(now)
        return thaw_if_due(now)

    monkeypatch.setattr(CollectorPacer, "thaw_if_due", counted)
    assert event_loop.run(_frozen()) > 0  # what lived at start is out of the collector's way
    assert asked  # a thaw that is due is looked for while it runs
    assert gc.get_freeze_count() == 0  # and everything is given back at the end
    assert event_loop.run(_frozen(), pace_collector=False) == 0
