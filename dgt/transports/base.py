"""The one contract every transport keeps: open, write, received bytes delivered to a
callback, close, and a link-lost signal.

All callbacks run on the event loop the transport was opened on.  A transport can be
opened again after it was closed or lost (that is how :class:`dgt.Board` reconnects).
"""

from __future__ import annotations

import abc
from collections.abc import Callable

from dgt.events import BoardFamily

DataCallback = Callable[[bytes], None]
"""Called with each chunk of received bytes, in order, on the event loop."""

LostCallback = Callable[[str], None]
"""Called once with a one-line reason when the link is lost (device gone, read or write
error).  Not called after :meth:`Transport.close`."""


class Transport(abc.ABC):
    """A byte link to one board."""

    family_hint: BoardFamily | None = None
    """What kind of board this transport reaches, when the transport knows (BLE: Pegasus);
    None to let the board tell from its messages."""

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """Human-readable name for messages (port path or URL)."""

    @property
    @abc.abstractmethod
    def is_open(self) -> bool: ...

    @abc.abstractmethod
    async def open(self, on_data: DataCallback, on_lost: LostCallback) -> None:
        """Open the link and start delivering bytes.  Raises a
        :class:`dgt.errors.ConnectionFailed` subclass with a one-line message."""

    @abc.abstractmethod
    def write(self, data: bytes) -> None:
        """Queue bytes for the board; never blocks.  Raises
        :class:`dgt.errors.ConnectionFailed` if the link is not open; a failing write
        reports the link as lost."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Stop delivering bytes and release the device.  Idempotent."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} {'open' if self.is_open else 'closed'}>"
