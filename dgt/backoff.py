"""Reopening a lost link with capped exponential back-off (a board, or a bus line)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from dgt.errors import DgtError

__all__ = ["reopen_with_backoff"]


async def reopen_with_backoff(
    reopen: Callable[[], Awaitable[None]],
    *,
    closed: Callable[[], bool],
    first: float,
    cap: float,
    name: str,
    attempt: str,
    log: logging.Logger,
) -> int | None:
    """Wait ``first`` seconds and call ``reopen()``; while it raises a
    :class:`~dgt.errors.DgtError`, double the wait (up to ``cap``) and call it again.

    Returns how many attempts failed before one succeeded, or None once ``closed()`` is
    true (checked before each attempt).  Each failure is logged to ``log`` (the caller's
    logger) as ``"<name>: <attempt> <n> failed: <error> (next in <s> s)"``: the first as a
    warning, the later ones at debug level, so a long outage does not flood the log.
    """
    delay = first
    failures = 0
    while not closed():
        await asyncio.sleep(delay)
        if closed():
            return None
        try:
            await reopen()
        except DgtError as exc:
            failures += 1
            delay = min(delay * 2, cap)
            log.log(
                logging.WARNING if failures == 1 else logging.DEBUG,
                "%s: %s %d failed: %s (next in %.1f s)",
                name, attempt, failures, exc, delay,
            )  # fmt: skip
            continue
        return failures
    return None
