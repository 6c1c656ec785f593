"""A transport that hands every chunk on the line to a listener: for recording a session
(``dgt-service monitor --record``) without the board knowing."""

from __future__ import annotations

import time
from collections.abc import Callable

from dgt.transports.base import DataCallback, LostCallback, Transport

ChunkListener = Callable[[float, bytes, str], None]
"""Called with (monotonic time, bytes, ``"rx"`` or ``"tx"``)."""


class TapTransport(Transport):
    """Wraps another transport; everything else is passed through unchanged."""

    def __init__(self, inner: Transport, listener: ChunkListener) -> None:
        self.inner = inner
        self.listener = listener
        self.family_hint = inner.family_hint

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def is_open(self) -> bool:
        return self.inner.is_open

    async def open(self, on_data: DataCallback, on_lost: LostCallback) -> None:
        def tapped(data: bytes) -> None:
            self.listener(time.monotonic(), data, "rx")
            on_data(data)

        await self.inner.open(tapped, on_lost)

    def write(self, data: bytes) -> None:
        self.inner.write(data)
        self.listener(time.monotonic(), data, "tx")

    async def close(self) -> None:
        await self.inner.close()
