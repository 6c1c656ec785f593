"""Bluetooth LE transport for the DGT Pegasus, on bleak.

The Pegasus speaks the ordinary DGT byte protocol through the Nordic UART Service
(docs/protocol.md §6.1): the host writes commands to the RX characteristic and the board
sends its messages as notifications on the TX characteristic.  This transport turns that
into the byte link every :class:`~dgt.transports.base.Transport` offers:

* **finding the board**: ``BleTransport("AA:BB:CC:DD:EE:FF")`` looks for that address,
  ``BleTransport("DGT_PEGASUS_1234")`` for an advertised name starting with the given text
  (case does not matter), and ``BleTransport("")`` for the first board that looks like a
  Pegasus (its name starts with ``DGT_PEGASUS``, or it advertises the Nordic UART service).
  Each :meth:`~BleTransport.open` scans again for up to ``scan_timeout`` seconds, so a
  board that went to sleep and woke up is found wherever BlueZ now has it.
* **connecting**: bleak's client, then notifications on TX are switched on *before* the
  first byte is written (a Pegasus answers nothing until they are, DD).
* **writing**: each :meth:`~BleTransport.write` is queued and sent in order by one task,
  split into pieces no longer than the link carries in one ATT packet: the ATT MTU minus 3
  when BlueZ reports the MTU (bleak's ``max_write_without_response_size``), else 20 bytes.
  Pieces of different writes are not merged, so a command written alone goes out alone,
  as the field's Pegasus hosts send them.  Writes use *write with response* when the RX
  characteristic offers it (as the DGT app's driver DD and BearChess do): every piece is
  then acknowledged before the next goes out, which paces the board's small input buffer
  and turns a dead link into a write error instead of silence.  A characteristic offering
  only *write without response* gets that; ``write_response=`` forces either.
* **reading**: every notification is handed on as it came; the board's messages may be
  cut anywhere between notifications (a 67-byte dump spans several), and
  :class:`~dgt.protocol.FrameParser` in :class:`~dgt.Board` joins them by their length
  header.
* **losing the link**: bleak's disconnected callback (the board switched off, slept or
  walked out of range) and failed writes call ``on_lost`` once.  Reconnecting is
  :class:`dgt.Board`'s job: it closes the transport and opens it again with capped
  back-off.

Errors are one line, as :class:`~dgt.errors.ConnectionFailed` subclasses:
:class:`BluetoothUnavailable` (no adapter, adapter off, BlueZ or the system D-Bus not
running), :class:`BleDeviceNotFound` (nothing matching seen within the scan time-out),
:class:`NotAPegasus` (connected, but no Nordic UART service), and plain
:class:`~dgt.errors.ConnectionFailed` for a refused or timed-out connection.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections import deque
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from dgt.errors import ConnectionFailed
from dgt.events import BoardFamily
from dgt.tasks import cancel_and_wait
from dgt.transports.base import DataCallback, LostCallback, Transport

if TYPE_CHECKING:
    from bleak import BleakClient
    from bleak.backends.characteristic import BleakGATTCharacteristic
    from bleak.backends.device import BLEDevice
    from bleak.backends.scanner import AdvertisementData

__all__ = [
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_SCAN_TIMEOUT",
    "NUS_RX",
    "NUS_SERVICE",
    "NUS_TX",
    "PEGASUS_NAME_PREFIX",
    "SAFE_CHUNK",
    "BleDeviceNotFound",
    "BleTransport",
    "BluetoothUnavailable",
    "NotAPegasus",
    "is_ble_address",
    "map_ble_error",
    "pegasus_match",
]

logger = logging.getLogger(__name__)

NUS_SERVICE = "6e400001-b5a3-f393-e0a9-e50e24dcca9e"
"""Nordic UART Service, advertised by the Pegasus (§6.1)."""

NUS_RX = "6e400002-b5a3-f393-e0a9-e50e24dcca9e"
"""NUS "RX": the board receives here (host → board, write)."""

NUS_TX = "6e400003-b5a3-f393-e0a9-e50e24dcca9e"
"""NUS "TX": the board transmits here (board → host, notify)."""

PEGASUS_NAME_PREFIX = "DGT_PEGASUS"
"""Advertised names of Pegasus boards start with this (matched ignoring case, as
BearChess does)."""

SAFE_CHUNK = 20
"""Bytes per write when the link's MTU is not known: the ATT payload of the minimum MTU
(23), which every BLE link carries."""

MAX_CHUNK = 512
"""Longest attribute value ATT allows; no piece is longer even on a large MTU."""

DEFAULT_SCAN_TIMEOUT = 10.0
"""Seconds :meth:`BleTransport.open` scans for the board before giving up."""

DEFAULT_CONNECT_TIMEOUT = 20.0
"""Seconds bleak gets to connect and resolve the board's services."""

WRITE_TIMEOUT = 10.0
"""Seconds one acknowledged write may take before the link counts as lost."""

CLOSE_TIMEOUT = 5.0
"""Seconds :meth:`BleTransport.close` waits for BlueZ to confirm the disconnection."""

_ADDRESS = re.compile(r"^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$")

_NO_BLUEZ_ERRORS = frozenset(
    {
        "org.freedesktop.DBus.Error.ServiceUnknown",
        "org.freedesktop.DBus.Error.NameHasNoOwner",
        "org.freedesktop.DBus.Error.NoServer",
    }
)


class BluetoothUnavailable(ConnectionFailed):
    """No usable Bluetooth here: no adapter, adapter off, or BlueZ / system D-Bus down."""


class BleDeviceNotFound(ConnectionFailed):
    """No matching Bluetooth LE device was seen within the scan time-out."""

    def __init__(self, target: str, seconds: float) -> None:
        what = f"no Bluetooth LE board {_describe(target)}"
        super().__init__(
            f"{what} seen within {seconds:g} s: is it switched on, in range, and not "
            "connected to another device (the DGT app on a phone)? 'dgt-service scan' "
            "lists the boards in reach"
        )
        self.target = target


class NotAPegasus(ConnectionFailed):
    """The device connected but has no Nordic UART service."""

    def __init__(self, name: str) -> None:
        super().__init__(
            f"{name} has no Nordic UART service: it is not a DGT Pegasus "
            "('dgt-service scan' lists the boards in reach)"
        )


def _describe(target: str) -> str:
    if not target:
        return f"(named {PEGASUS_NAME_PREFIX}* or offering the Nordic UART service)"
    if is_ble_address(target):
        return f"with address {target.upper()}"
    return f"named {target}*"


def is_ble_address(text: str) -> bool:
    """Whether ``text`` is a Bluetooth device address (``AA:BB:CC:DD:EE:FF``)."""
    return bool(_ADDRESS.match(text))


def pegasus_match(name: str | None, service_uuids: Iterable[str] = ()) -> str | None:
    """Why an advertisement looks like a DGT Pegasus, or None when it does not: its name
    starts with ``DGT_PEGASUS`` (any case), or it offers the Nordic UART service."""
    if name and name.upper().startswith(PEGASUS_NAME_PREFIX):
        return f"name {name}"
    if any(uuid.lower() == NUS_SERVICE for uuid in service_uuids):
        return "Nordic UART service"
    return None


def map_ble_error(name: str, exc: BaseException) -> ConnectionFailed:
    """Turn what bleak, dbus-fast or the socket layer raised into a one-line
    :mod:`dgt.errors` exception."""
    from bleak.exc import (
        BleakBluetoothNotAvailableError,
        BleakBluetoothNotAvailableReason,
        BleakDBusError,
        BleakDeviceNotFoundError,
    )

    if isinstance(exc, ConnectionFailed):
        return exc
    if isinstance(exc, BleakBluetoothNotAvailableError):
        reason = exc.reason
        if reason is BleakBluetoothNotAvailableReason.POWERED_OFF:
            text = "the Bluetooth adapter is switched off: 'bluetoothctl power on'"
        elif reason is BleakBluetoothNotAvailableReason.DENIED_BY_SYSTEM:
            text = "access to Bluetooth was denied (D-Bus policy): see docs/bluetooth.md"
        elif reason is BleakBluetoothNotAvailableReason.NO_BLUETOOTH:
            text = "no Bluetooth adapter found on this machine"
        else:
            text = _one_line(str(exc)) or "Bluetooth LE is not available"
        return BluetoothUnavailable(f"{name}: Bluetooth not available: {text}")
    if isinstance(exc, BleakDBusError) and exc.dbus_error in _NO_BLUEZ_ERRORS:
        return BluetoothUnavailable(
            f"{name}: Bluetooth not available: BlueZ (bluetoothd) is not running: "
            "'sudo systemctl start bluetooth'"
        )
    if isinstance(exc, BleakDeviceNotFoundError):
        return ConnectionFailed(
            f"{name}: the board disappeared before the connection was made: try again"
        )
    if isinstance(exc, TimeoutError):
        return ConnectionFailed(
            f"{name}: the board did not complete the connection in time: "
            "switch it off and on, and keep it close to this machine"
        )
    if isinstance(exc, BleakDBusError):
        detail = exc.dbus_error_details or exc.dbus_error
        return ConnectionFailed(
            f"{name}: connection refused ({_one_line(detail)}): switch the board off and on; "
            "if it persists, 'bluetoothctl remove ADDRESS' and try again"
        )
    if isinstance(exc, (FileNotFoundError, ConnectionRefusedError)):
        return BluetoothUnavailable(
            f"{name}: Bluetooth not available: the system D-Bus cannot be reached "
            f"({_one_line(str(exc.strerror or exc))}): is dbus running?"
        )
    if isinstance(exc, PermissionError):
        return BluetoothUnavailable(
            f"{name}: Bluetooth not available: permission denied on the system D-Bus"
        )
    detail = _one_line(str(exc)) or type(exc).__name__
    return ConnectionFailed(f"{name}: Bluetooth LE error: {detail}")


def _link_errors() -> tuple[type[BaseException], ...]:
    """What a write or disconnect on a dying link raises: bleak's errors, dbus-fast's
    (the bus went away), time-outs and socket errors."""
    from bleak.exc import BleakError
    from dbus_fast.errors import DBusFastError

    return (BleakError, DBusFastError, TimeoutError, OSError, EOFError)


def _one_line(text: str) -> str:
    return " ".join(text.split())


class BleTransport(Transport):
    """A DGT Pegasus over Bluetooth LE.

    ``address_or_name``: a device address (``AA:BB:CC:DD:EE:FF``), the start of an
    advertised name (``DGT_PEGASUS``, any case), or ``""`` for the first Pegasus found.
    ``adapter`` picks a BlueZ adapter (``hci1``); ``write_response`` forces write with
    (True) or without (False) response instead of choosing from the characteristic.
    """

    family_hint = BoardFamily.PRESENCE_ONLY

    def __init__(
        self,
        address_or_name: str,
        *,
        scan_timeout: float = DEFAULT_SCAN_TIMEOUT,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        write_response: bool | None = None,
        adapter: str | None = None,
    ) -> None:
        if scan_timeout <= 0 or connect_timeout <= 0:
            raise ValueError("time-outs must be positive")
        self.target = address_or_name.strip()
        self.scan_timeout = scan_timeout
        self.connect_timeout = connect_timeout
        self.write_response = write_response
        self.adapter = adapter
        self.device_address: str | None = None
        """Address of the board found by the last :meth:`open`."""
        self.device_name: str | None = None
        """Advertised name of the board found by the last :meth:`open`."""
        self.chunk_size = SAFE_CHUNK
        """Longest piece a write is cut into on the current link."""
        self.response: bool = True
        """Whether the current link writes with response."""
        self._client: BleakClient | None = None
        self._rx: BleakGATTCharacteristic | None = None
        self._open = False
        self._on_data: DataCallback | None = None
        self._on_lost: LostCallback | None = None
        self._out: deque[bytes] = deque()
        self._wake: asyncio.Event | None = None
        self._writer: asyncio.Task[None] | None = None

    @property
    def name(self) -> str:
        return f"ble:{self.target}"

    @property
    def is_open(self) -> bool:
        return self._open

    # -- opening --------------------------------------------------------------------------

    def _matches(self, device: BLEDevice, adv: AdvertisementData) -> bool:
        target = self.target
        if is_ble_address(target):
            return device.address.lower() == target.lower()
        names = (adv.local_name, device.name)
        if target:
            low = target.lower()
            return any(n is not None and n.lower().startswith(low) for n in names)
        return any(pegasus_match(n, adv.service_uuids) for n in names)

    def _bluez_args(self) -> dict[str, Any]:
        return {} if self.adapter is None else {"bluez": {"adapter": self.adapter}}

    async def _find(self) -> BLEDevice:
        from bleak import BleakScanner

        logger.debug("%s: scanning up to %.1f s", self.name, self.scan_timeout)
        try:
            device = await BleakScanner.find_device_by_filter(
                self._matches, timeout=self.scan_timeout, **self._bluez_args()
            )
        except Exception as exc:  # bleak, dbus-fast and socket errors alike
            raise map_ble_error(self.name, exc) from exc
        if device is None:
            raise BleDeviceNotFound(self.target, self.scan_timeout)
        return device

    async def open(self, on_data: DataCallback, on_lost: LostCallback) -> None:
        if self._open or self._client is not None:
            raise ConnectionFailed(f"{self.name} is already open")
        from bleak import BleakClient

        device = await self._find()
        self.device_address = device.address
        self.device_name = device.name
        logger.debug("%s: found %s (%s); connecting", self.name, device.address, device.name)
        client = BleakClient(
            device,
            disconnected_callback=self._disconnected,
            timeout=self.connect_timeout,
            **self._bluez_args(),
        )
        try:
            await client.connect()
        except BaseException as exc:
            await _disconnect_quietly(client)
            if not isinstance(exc, Exception):
                raise  # cancelled: the board was closed meanwhile
            raise map_ble_error(self.name, exc) from exc
        try:
            rx = client.services.get_characteristic(NUS_RX)
            tx = client.services.get_characteristic(NUS_TX)
            if rx is None or tx is None:
                raise NotAPegasus(f"{self.name} ({device.address})")
            chunk = rx.max_write_without_response_size
            self.chunk_size = max(1, min(chunk, MAX_CHUNK))
            if self.write_response is not None:
                self.response = self.write_response
            else:
                self.response = "write" in rx.properties
            self._on_data = on_data
            self._on_lost = on_lost
            self._rx = rx
            # Notifications first: the board's answers to the first command would be lost.
            await client.start_notify(tx, self._notified)
        except BaseException as exc:
            self._on_data = self._on_lost = None
            self._rx = None
            await _disconnect_quietly(client)
            if not isinstance(exc, Exception):
                raise
            raise map_ble_error(self.name, exc) from exc
        if not client.is_connected:
            self._on_data = self._on_lost = None
            await _disconnect_quietly(client)
            raise ConnectionFailed(f"{self.name}: the board dropped the link while connecting")
        self._client = client
        self._open = True
        self._out.clear()
        self._wake = asyncio.Event()
        self._writer = asyncio.get_running_loop().create_task(
            self._write_loop(client, rx), name=f"dgt-ble-writer {self.name}"
        )
        logger.info(
            "%s: connected to %s (%s), %d-byte writes %s response",
            self.name, device.address, device.name, self.chunk_size,
            "with" if self.response else "without",
        )  # fmt: skip

    # -- receiving ------------------------------------------------------------------------

    def _notified(self, _sender: BleakGATTCharacteristic, data: bytearray) -> None:
        on_data = self._on_data
        if self._open and on_data is not None and data:
            on_data(bytes(data))

    def _disconnected(self, client: BleakClient) -> None:
        if client is not self._client:
            return  # a connection being set up (open() reports it) or already closed
        self._lost(f"{self.name}: Bluetooth link lost (board switched off, asleep or out of range)")

    # -- writing --------------------------------------------------------------------------

    def write(self, data: bytes) -> None:
        if not self._open or self._wake is None:
            raise ConnectionFailed(f"{self.name} is not open")
        size = self.chunk_size
        for start in range(0, len(data), size):
            self._out.append(bytes(data[start : start + size]))
        self._wake.set()

    async def _write_loop(self, client: BleakClient, rx: BleakGATTCharacteristic) -> None:
        wake = self._wake
        assert wake is not None
        while True:
            await wake.wait()
            wake.clear()
            while self._out:
                piece = self._out.popleft()
                try:
                    async with asyncio.timeout(WRITE_TIMEOUT):
                        await client.write_gatt_char(rx, piece, response=self.response)
                except _link_errors() as exc:
                    detail = _one_line(str(exc)) or type(exc).__name__
                    self._lost(f"{self.name}: write failed: {detail}")
                    return

    # -- closing --------------------------------------------------------------------------

    def _lost(self, reason: str) -> None:
        if not self._open:
            return
        on_lost = self._on_lost
        self._open = False
        self._on_data = None
        self._on_lost = None
        self._out.clear()
        logger.debug("link lost: %s", reason)
        if on_lost is not None:
            on_lost(reason)

    async def close(self) -> None:
        self._open = False
        self._on_data = None
        self._on_lost = None
        self._out.clear()
        writer, self._writer = self._writer, None
        client, self._client = self._client, None
        self._rx = None
        self._wake = None
        await cancel_and_wait(writer)
        if client is not None:
            await _disconnect_quietly(client)


async def _disconnect_quietly(client: BleakClient) -> None:
    """Disconnect and release bleak's D-Bus connection; a link that is already gone (or a
    BlueZ that went away) is not an error here."""
    try:
        async with asyncio.timeout(CLOSE_TIMEOUT):
            await client.disconnect()
    except _link_errors() as exc:  # closing must not fail
        logger.debug("disconnect: %s", exc)
