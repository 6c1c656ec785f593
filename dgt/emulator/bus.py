"""Several virtual boards on one serial line (DGT bus mode).

In bus mode every board hears every byte the host sends and answers only the commands
addressed to it (or broadcast to address 0); all answers share the one line back (H14, bus
section).  :class:`BusLine` models exactly that: it feeds each byte to every board (each
board reads the line itself, so they stay in step whatever the host sends) and joins
their answers.  Collisions of simultaneous answers are not modelled: the answers are
concatenated in board order.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from dgt.emulator.board import VirtualBoard

__all__ = ["BusLine", "make_bus"]

log = logging.getLogger(__name__)


class BusLine:
    """Boards sharing one line: the same ``receive`` / ``poll`` / ``next_deadline`` API as
    a single :class:`VirtualBoard`, so a server can serve either."""

    def __init__(self, boards: Iterable[VirtualBoard]) -> None:
        self.boards: tuple[VirtualBoard, ...] = tuple(boards)
        if not self.boards:
            raise ValueError("a bus line needs at least one board")
        addresses = [b.bus_address for b in self.boards]
        if len(set(addresses)) != len(addresses):
            raise ValueError(f"bus addresses must differ: {addresses}")

    def board(self, address: int) -> VirtualBoard:
        """The board with this bus address."""
        for b in self.boards:
            if b.bus_address == address:
                return b
        raise KeyError(f"no board with bus address {address} on this line")

    @property
    def last_now(self) -> float:
        return max(b.last_now for b in self.boards)

    def receive(self, data: bytes, now: float) -> bytes:
        return b"".join(b.receive(data, now) for b in self.boards)

    def poll(self, now: float) -> bytes:
        return b"".join(b.poll(now) for b in self.boards)

    def next_deadline(self) -> float | None:
        deadlines = [d for d in (b.next_deadline() for b in self.boards) if d is not None]
        return min(deadlines) if deadlines else None

    def power_up(self, now: float) -> None:
        for b in self.boards:
            b.power_up(now)

    def __repr__(self) -> str:
        return f"<BusLine {', '.join(str(b.bus_address) for b in self.boards)}>"


def make_bus(
    count: int, *, first_serial: int = 10001, now: float = 0.0, **options: object
) -> BusLine:
    """``count`` classic boards with consecutive serial numbers (and so bus addresses)
    starting at ``first_serial``; ``options`` go to every :class:`VirtualBoard`."""
    if count < 1:
        raise ValueError("a bus needs at least one board")
    if first_serial + count - 1 > 16383:
        raise ValueError("serial numbers above 16383 do not fit a 14-bit bus address")
    return BusLine(
        VirtualBoard(serial=f"{first_serial + i:05d}", now=now, **options)  # type: ignore[arg-type]
        for i in range(count)
    )
