"""``service.bus_links``: tables whose boards share a bus line.

A hall configures a table on a bus line with ``port`` and ``bus = ADDRESS``.  All tables
on one port share one :class:`dgt.bus_master.BusMaster` (one process may open a serial port
only once); each table gets the :class:`~dgt.bus_master.BusBoard` of its address, which
offers what the hall uses of a :class:`dgt.Board` (``open``, ``events``, ``close``,
``ready``, ``info``, ``clock``).  The line opens when the first of its boards is opened and
closes when the last one is closed.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Mapping
from typing import Any

from dgt.bus_master import BusBoard, BusMaster
from dgt.transports import Transport
from service.config import TableConfig

__all__ = ["BusConfigError", "BusLinks"]

logger = logging.getLogger(__name__)

_MASTER_OPTIONS = frozenset(
    name
    for name, parameter in inspect.signature(BusMaster).parameters.items()
    if parameter.kind is inspect.Parameter.KEYWORD_ONLY
)
"""Keyword options of :class:`BusMaster`; board options it has no use for are left out."""


class BusConfigError(ValueError):
    """Tables that cannot share a line as configured (same address twice, a port used
    both as a bus line and by a single board)."""


class BusLinks:
    """One :class:`BusMaster` per port, shared by the tables configured on it.

    ``options`` are board options (the hall's ``board_options``): those a
    :class:`BusMaster` takes (``reconnect_min``, ``reconnect_max``, ``handshake_timeout``,
    ``reply_timeout``, ...) are passed on, the others (``read_memory``, ``settle_delay``)
    do not apply to a bus line and are ignored.
    """

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        self.options = {k: v for k, v in (options or {}).items() if k in _MASTER_OPTIONS}
        self.masters: dict[str, BusMaster] = {}
        self._tables: dict[tuple[str, int], str] = {}
        self._single_ports: dict[str, str] = {}

    def check(self, config: TableConfig) -> None:
        """Register a table's place, or raise :class:`BusConfigError` if it clashes with a
        table registered before (call it for every table, bus or not)."""
        port = _port_key(config.port)
        if config.bus is None:
            if any(p == port for p, _ in self._tables):
                raise BusConfigError(
                    f"port {config.port} is a bus line of other tables: give this table "
                    "its board's bus address (bus = N)"
                )
            self._single_ports.setdefault(port, config.id)
            return
        if port in self._single_ports:
            raise BusConfigError(
                f"port {config.port} is used by table {self._single_ports[port]} without a "
                "bus address: every table on a bus line needs one (bus = N)"
            )
        other = self._tables.get((port, config.bus))
        if other is not None and other != config.id:
            raise BusConfigError(
                f"bus address {config.bus} on {config.port} is already table {other}'s"
            )
        self._tables[(port, config.bus)] = config.id

    def board(self, config: TableConfig, transport: Transport | None = None) -> BusBoard:
        """The board of a bus table (its line made on first use; ``transport`` replaces the
        port for that line, as tests and the emulator do)."""
        if config.bus is None:
            raise BusConfigError(f"table {config.id} has no bus address")
        port = _port_key(config.port)
        master = self.masters.get(port)
        if master is None:
            master = BusMaster(transport or config.port, **self.options)
            self.masters[port] = master
            logger.debug("bus line %s for table %s", config.port, config.id)
        return master.board(config.bus)

    async def close(self) -> None:
        """Close every line (and so every board on it)."""
        masters, self.masters = self.masters, {}
        for master in masters.values():
            await master.close()


def _port_key(port: str) -> str:
    return port.strip()
