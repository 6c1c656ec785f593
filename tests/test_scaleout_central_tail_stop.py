"""A web process's tail of the centre's database stops when cancelled, even when the cancel
meets a commit notice: Python 3.11's ``wait_for`` then returns the notice and drops the
cancel, and a tail that went on looking would make its process wait for ever at stop."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from service.scaleout.central_db import CentralTail


async def test_a_cancel_that_meets_a_commit_notice_still_stops_the_tail(tmp_path: Path) -> None:
    tail = CentralTail(tmp_path / "centre.db", lambda _edge, _rows: None, interval=60.0)
    task = asyncio.create_task(tail.run())
    for _ in range(3):
        await asyncio.sleep(0)  # the tail has looked once and waits for a notice
    assert not task.done()
    tail.committed(1)  # the notice and the cancel arrive in the same turn of the loop
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 2.0)
    assert task.cancelled()
