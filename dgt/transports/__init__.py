"""Byte links to a board: one contract (:class:`Transport`), several backends.

:func:`open_transport` picks the backend from a port spec:

* ``emulator`` or ``emulator:`` — the in-process virtual board (:mod:`.emulator`);
* ``ble:<address or name>`` — Bluetooth LE (Pegasus, :mod:`.ble`); ``ble:`` alone takes
  the first Pegasus in reach;
* anything else — a serial port path or a pyserial URL (:mod:`.serial`), its descriptor
  watched by the event loop or by the ``watcher`` given (a
  :class:`~dgt.transports.poller.BoardPoller` shared by a hall's boards).
"""

from __future__ import annotations

from dgt.errors import ConnectionFailed
from dgt.transports.base import DataCallback, LostCallback, Transport
from dgt.transports.poller import BoardPoller, ReadWatcher
from dgt.transports.serial import SerialTransport

EMULATOR_SPECS = ("emulator", "emulator:")
BLE_PREFIX = "ble:"


def is_serial(spec: str) -> bool:
    """Whether :func:`open_transport` makes a serial transport of ``spec`` (a port path or a
    pyserial URL: what a :class:`BoardPoller` can read)."""
    spec = spec.strip()
    return bool(spec) and spec not in EMULATOR_SPECS and not spec.startswith(BLE_PREFIX)


def open_transport(spec: str, *, watcher: ReadWatcher | None = None) -> Transport:
    """A (not yet opened) transport for ``spec``: a port path, a pyserial URL, ``emulator``
    or ``ble:ADDRESS``.  ``watcher``: what reads a serial port's descriptor (None: the
    event loop; the other backends ignore it).  Raises
    :class:`~dgt.errors.ConnectionFailed` for a spec no backend takes."""
    spec = spec.strip()
    if not spec:
        raise ConnectionFailed("no port given: pass a serial port, URL or 'emulator'")
    if spec in EMULATOR_SPECS:
        from dgt.transports.emulator import EmulatorTransport

        return EmulatorTransport()
    if spec.startswith(BLE_PREFIX):
        from dgt.transports.ble import BleTransport

        return BleTransport(spec[len(BLE_PREFIX) :])
    return SerialTransport(spec, watcher=watcher)


__all__ = [
    "BLE_PREFIX",
    "BoardPoller",
    "DataCallback",
    "LostCallback",
    "ReadWatcher",
    "SerialTransport",
    "Transport",
    "is_serial",
    "open_transport",
]
