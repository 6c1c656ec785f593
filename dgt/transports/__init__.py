"""Byte links to a board: one contract (:class:`Transport`), several backends.

:func:`open_transport` picks the backend from a port spec:

* ``emulator`` or ``emulator:`` — the in-process virtual board (:mod:`.emulator`);
* ``ble:<address or name>`` — Bluetooth LE (Pegasus): reserved for the BLE transport,
  which a later issue adds as ``dgt/transports/ble.py`` (see :data:`BLE_PREFIX`);
* anything else — a serial port path or a pyserial URL (:mod:`.serial`).
"""

from __future__ import annotations

from dgt.errors import ConnectionFailed
from dgt.transports.base import DataCallback, LostCallback, Transport
from dgt.transports.serial import SerialTransport

EMULATOR_SPECS = ("emulator", "emulator:")
BLE_PREFIX = "ble:"


def open_transport(spec: str) -> Transport:
    """A (not yet opened) transport for ``spec``: a port path, a pyserial URL, ``emulator``
    or ``ble:ADDRESS``.  Raises :class:`~dgt.errors.ConnectionFailed` for a spec no backend
    takes."""
    spec = spec.strip()
    if not spec:
        raise ConnectionFailed("no port given: pass a serial port, URL or 'emulator'")
    if spec in EMULATOR_SPECS:
        from dgt.transports.emulator import EmulatorTransport

        return EmulatorTransport()
    if spec.startswith(BLE_PREFIX):
        # The BLE (Pegasus) transport plugs in here once dgt/transports/ble.py exists.
        try:
            from dgt.transports import ble  # type: ignore[attr-defined]
        except ImportError:
            raise ConnectionFailed(f"{spec}: Bluetooth LE boards are not supported yet") from None
        return ble.BleTransport(spec[len(BLE_PREFIX) :])  # type: ignore[no-any-return]
    return SerialTransport(spec)


__all__ = [
    "BLE_PREFIX",
    "DataCallback",
    "LostCallback",
    "SerialTransport",
    "Transport",
    "open_transport",
]
