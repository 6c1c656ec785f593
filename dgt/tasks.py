"""Stopping a task of one's own: :func:`cancel_and_wait`; and, inside a task, whether it is
being stopped: :func:`cancelling`."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

__all__ = ["cancel_and_wait", "cancelling"]


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


def cancelling() -> bool:
    """Whether the running task is being cancelled.  A retry loop asks it where it caught an
    error: a library may turn a cancel into an error of its own (the NATS client does, when
    the cancel meets a closed connection), and Python 3.11's ``wait_for`` can lose one; the
    loop would then go on for ever, and whoever cancelled it waits for ever."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0
