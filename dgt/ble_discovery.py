"""Finding DGT boards on Bluetooth LE (the Pegasus): a scan through bleak, kept apart from
:mod:`dgt.discovery` (serial ports) because BLE boards are found by what they advertise,
not by a device node.

A device counts as a board when its advertised name starts with ``DGT_PEGASUS`` (any
case; high confidence) or when it advertises the Nordic UART service the Pegasus uses
(medium confidence: other gadgets use that service too).  Facts: docs/protocol.md §6.1.

:func:`find_ble_boards` scans for a given time and returns what it saw; it raises
:class:`~dgt.transports.ble.BluetoothUnavailable` (one line) when this machine has no
usable Bluetooth (no adapter, adapter off, BlueZ or the system D-Bus not running), so
callers can print that as a note rather than fail.  :func:`scan_ble_boards` is the same for
code without an event loop.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from dgt.discovery import Confidence
from dgt.transports.ble import map_ble_error, pegasus_match

__all__ = ["DEFAULT_BLE_SCAN_TIME", "BleBoard", "find_ble_boards", "scan_ble_boards"]

logger = logging.getLogger(__name__)

DEFAULT_BLE_SCAN_TIME = 5.0
"""Seconds a scan listens for advertisements.  A Pegasus advertises several times a
second while awake; a few seconds also catch a board that advertises slowly."""


@dataclass(frozen=True, slots=True)
class BleBoard:
    """A Bluetooth LE device that looks like a DGT board."""

    address: str
    name: str | None
    rssi: int | None
    """Signal strength of the latest advertisement, dBm (None when not reported)."""
    reason: str
    """Why it counts as a board (``name DGT_PEGASUS_1234``, ``Nordic UART service``)."""
    confidence: Confidence

    @property
    def port(self) -> str:
        """What to pass to ``dgt.Board`` or ``dgt-service monitor``."""
        return f"ble:{self.address}"

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "port": self.port,
            "address": self.address,
            "name": self.name,
            "rssi": self.rssi,
            "reason": self.reason,
            "confidence": str(self.confidence),
        }


async def find_ble_boards(
    seconds: float = DEFAULT_BLE_SCAN_TIME,
    *,
    adapter: str | None = None,
    name: str = "Bluetooth LE scan",
) -> list[BleBoard]:
    """Scan for ``seconds`` and return the devices that look like DGT boards, the likely
    ones first, then by signal strength.  Raises
    :class:`~dgt.transports.ble.BluetoothUnavailable` when there is no usable Bluetooth
    (its message starts with ``name``)."""
    from bleak import BleakScanner

    if seconds <= 0:
        raise ValueError("seconds must be positive")
    kwargs: dict[str, Any] = {} if adapter is None else {"bluez": {"adapter": adapter}}
    try:
        seen = await BleakScanner.discover(seconds, return_adv=True, **kwargs)
    except Exception as exc:  # bleak, dbus-fast and socket errors alike
        raise map_ble_error(name, exc) from exc
    boards: list[BleBoard] = []
    for device, adv in seen.values():
        advertised = adv.local_name or device.name
        reason = pegasus_match(advertised, adv.service_uuids)
        if reason is None:
            continue
        confidence = Confidence.HIGH if reason.startswith("name") else Confidence.MEDIUM
        boards.append(BleBoard(device.address, advertised, adv.rssi, reason, confidence))
    boards.sort(key=lambda b: (-b.confidence, -(b.rssi if b.rssi is not None else -999)))
    logger.debug("BLE scan: %d devices, %d boards", len(seen), len(boards))
    return boards


def scan_ble_boards(
    seconds: float = DEFAULT_BLE_SCAN_TIME,
    *,
    adapter: str | None = None,
    name: str = "Bluetooth LE scan",
) -> list[BleBoard]:
    """:func:`find_ble_boards` for synchronous code (runs its own event loop; call it from
    a thread without one)."""
    return asyncio.run(find_ble_boards(seconds, adapter=adapter, name=name))
