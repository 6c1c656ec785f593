"""Stopping a task of one's own: :func:`cancel_and_wait`."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

__all__ = ["cancel_and_wait"]


async def cancel_and_wait(task: asyncio.Future[Any] | None) -> None:
    """Cancel ``task`` and wait until it has ended, its cancellation swallowed (an error it
    ended with is raised).  Nothing for None or for the calling task itself (it cannot
    wait for its own end).  As with any ``suppress(CancelledError)``, a cancellation of
    the caller that arrives while it waits is swallowed too."""
    if task is None or task is asyncio.current_task():
        return
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
