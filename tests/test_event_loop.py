"""service.event_loop: the service's loop is uvloop's (a dependency except on Windows),
asyncio's on request or where uvloop does not exist."""

from __future__ import annotations

import asyncio
import sys

import pytest

from service import event_loop


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
