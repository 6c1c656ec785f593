""":class:`Listeners`: the callbacks told each new value, in the order they were added (the
hall's and a read replica's subscribers: the stream hub, the feeds, the pushes)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["Listeners"]

T = TypeVar("T")


class Listeners(Generic[T]):
    """Callbacks told each value; one that raises is logged (``what`` failed, on ``log``)
    and the others are still told."""

    def __init__(self, log: logging.Logger, what: str) -> None:
        self._callbacks: tuple[Callable[[T], None], ...] = ()
        """A new tuple on every change: :meth:`tell` goes over the one it found, whatever
        a callback adds or removes meanwhile, without copying it on every value."""
        self._log = log
        self._what = what

    def add(self, callback: Callable[[T], None]) -> None:
        self._callbacks = (*self._callbacks, callback)

    def remove(self, callback: Callable[[T], None]) -> None:
        """Forget ``callback`` (nothing when it is not there)."""
        if callback in self._callbacks:
            kept = list(self._callbacks)
            kept.remove(callback)
            self._callbacks = tuple(kept)

    def __bool__(self) -> bool:
        return bool(self._callbacks)

    def tell(self, value: T) -> None:
        for callback in self._callbacks:
            try:
                callback(value)
            except Exception:  # noqa: BLE001 - logged with its traceback: a bug to fix
                self._log.exception("%s failed", self._what)
