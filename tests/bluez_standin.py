"""A stand-in for BlueZ on a private D-Bus system bus, so bleak's own code can talk to a
virtual DGT Pegasus with no Bluetooth adapter.

* :class:`PrivateSystemBus` runs a ``dbus-daemon`` with a system-bus configuration (a unix
  socket in a temporary folder, a policy that allows everything); tests point
  ``DBUS_SYSTEM_BUS_ADDRESS`` at it, which is where dbus-fast (and so bleak) looks.
* :class:`BlueZStandIn` owns ``org.bluez`` on that bus and exports what bleak's BlueZ
  backend reads and calls: the object manager at ``/`` (dbus-fast answers
  ``GetManagedObjects`` and sends ``InterfacesAdded``/``InterfacesRemoved`` itself),
  ``org.bluez.Adapter1`` at ``/org/bluez/hci0`` (discovery with a filter, power), one
  ``org.bluez.Device1`` per peripheral (connect, disconnect, name, address, service UUIDs,
  RSSI), and, while connected, the peripheral's GATT tree: a Device Information service and
  the Nordic UART service with its RX characteristic (write, write without response) and
  TX characteristic (notify, with its CCCD descriptor).  Notifications are
  ``PropertiesChanged`` on the TX characteristic's ``Value``, as BlueZ sends them.
  ``AcquireNotify``/``AcquireWrite`` are not offered (no ``NotifyAcquired`` property), so
  bleak uses ``StartNotify``, its default.
* :class:`FakePegasus` is the peripheral: its bytes come from the project's emulator,
  :class:`dgt.emulator.board.VirtualBoard` with ``pegasus=True``.  Writes to RX go to
  ``board.receive``; what the board answers goes out as TX notifications cut into pieces
  of ``notify_size`` bytes (1 = every byte alone), and only while notifications are on, as
  on a real link.  A write longer than the link's MTU allows is refused, as BlueZ refuses
  it.  Test hooks: :meth:`FakePegasus.lift` / :meth:`~FakePegasus.place` (pieces moved on
  the board), :meth:`~FakePegasus.drop_link` (the link breaks, the board keeps
  advertising), :meth:`~FakePegasus.vanish` / :meth:`~FakePegasus.reappear` (asleep or out
  of range, and back), ``silent`` (a board that never answers), ``refuse`` (BlueZ reports
  the connection refused).

Everything runs on the test's event loop; bleak runs unmodified on the same loop (or in a
subprocess given the bus address).  :func:`reset_bleak` drops bleak's per-loop BlueZ
manager, which holds a D-Bus connection, before the loop and the bus go away.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import select
import shutil
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Annotated, Any

from dbus_fast import BusType, DBusError
from dbus_fast.aio import MessageBus
from dbus_fast.annotations import (
    DBusBool,
    DBusBytes,
    DBusDict,
    DBusInt16,
    DBusObjectPath,
    DBusSignature,
    DBusStr,
    DBusUInt16,
)
from dbus_fast.constants import PropertyAccess, RequestNameReply
from dbus_fast.service import ServiceInterface, dbus_method, dbus_property

from dgt.emulator.board import VirtualBoard
from dgt.protocol import Piece
from dgt.transports.ble import NUS_RX, NUS_SERVICE, NUS_TX

log = logging.getLogger(__name__)

DBusStrList = Annotated[list[str], DBusSignature("as")]
DBusNone = Annotated[None, DBusSignature("")]
"""No value (a D-Bus method that returns nothing, a setter)."""

DEVICE_INFO_SERVICE = "0000180a-0000-1000-8000-00805f9b34fb"
MANUFACTURER_NAME = "00002a29-0000-1000-8000-00805f9b34fb"
CCCD = "00002902-0000-1000-8000-00805f9b34fb"

BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
"""


class PrivateSystemBus:
    """A ``dbus-daemon`` of our own, configured as a system bus, listening in
    ``directory``.  :attr:`address` is what ``DBUS_SYSTEM_BUS_ADDRESS`` should say."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.address = ""
        self._process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 10.0) -> str:
        daemon = shutil.which("dbus-daemon")
        if daemon is None:
            raise RuntimeError(
                "dbus-daemon not found: the Bluetooth LE tests need it (Debian package "
                "dbus-daemon; './setup.sh test' installs it)"
            )
        config = self.directory / "system-bus.conf"
        config.write_text(BUS_CONFIG.format(socket=self.directory / "system_bus_socket"))
        self._process = subprocess.Popen(
            [daemon, f"--config-file={config}", "--nofork", "--nopidfile", "--print-address=1"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # it complains it may not raise its fd limit
        )
        stdout = self._process.stdout
        assert stdout is not None
        ready, _, _ = select.select([stdout], [], [], timeout)
        line = os.read(stdout.fileno(), 4096).decode() if ready else ""
        if not line.strip():
            self.stop()
            raise RuntimeError("dbus-daemon did not start")
        self.address = line.strip().splitlines()[0]
        return self.address

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            process.terminate()
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)
            if process.stdout is not None:
                process.stdout.close()


# --- the BlueZ objects ------------------------------------------------------------------


class Adapter(ServiceInterface):
    """``org.bluez.Adapter1``."""

    def __init__(self, standin: BlueZStandIn, address: str, powered: bool) -> None:
        super().__init__("org.bluez.Adapter1")
        self._standin = standin
        self._address = address
        self._powered = powered
        self.discovering = False
        self.sessions = 0
        self.filter: dict[str, Any] = {}
        self.discovery_starts = 0

    @dbus_method()
    def StartDiscovery(self) -> DBusNone:
        if not self._powered:
            raise DBusError("org.bluez.Error.NotReady", "Resource Not Ready")
        self.sessions += 1
        self.discovery_starts += 1
        if not self.discovering:
            self.discovering = True
            self.emit_properties_changed({"Discovering": True})
            self._standin.discovery_started()

    @dbus_method()
    def StopDiscovery(self) -> DBusNone:
        if self.sessions == 0:
            raise DBusError("org.bluez.Error.Failed", "No discovery started")
        self.sessions -= 1
        if self.sessions == 0 and self.discovering:
            self.discovering = False
            self.emit_properties_changed({"Discovering": False})

    @dbus_method()
    def SetDiscoveryFilter(self, properties: DBusDict) -> DBusNone:
        self.filter = {key: value.value for key, value in properties.items()}

    @dbus_method()
    def GetDiscoveryFilters(self) -> DBusStrList:
        return ["UUIDs", "RSSI", "Pathloss", "Transport", "DuplicateData", "Discoverable"]

    @dbus_method()
    def RemoveDevice(self, device: DBusObjectPath) -> DBusNone:
        self._standin.remove_device_object(device)

    @dbus_property(access=PropertyAccess.READ)
    def Address(self) -> DBusStr:
        return self._address

    @dbus_property(access=PropertyAccess.READ)
    def AddressType(self) -> DBusStr:
        return "public"

    @dbus_property(access=PropertyAccess.READ)
    def Name(self) -> DBusStr:
        return "standin"

    @dbus_property(access=PropertyAccess.READ)
    def Alias(self) -> DBusStr:
        return "standin"

    @dbus_property()
    def Powered(self) -> DBusBool:
        return self._powered

    @Powered.setter
    def Powered(self, value: DBusBool) -> DBusNone:
        self._powered = value

    @dbus_property(access=PropertyAccess.READ)
    def Discovering(self) -> DBusBool:
        return self.discovering

    @dbus_property(access=PropertyAccess.READ)
    def Roles(self) -> DBusStrList:
        return ["central", "peripheral"]

    @dbus_property(access=PropertyAccess.READ)
    def UUIDs(self) -> DBusStrList:
        return []


class Device(ServiceInterface):
    """``org.bluez.Device1`` of one peripheral."""

    def __init__(self, peripheral: FakePegasus) -> None:
        super().__init__("org.bluez.Device1")
        self._p = peripheral

    @dbus_method()
    async def Connect(self) -> DBusNone:
        await self._p.connect_requested()

    @dbus_method()
    async def Disconnect(self) -> DBusNone:
        self._p.log.append("Disconnect")
        self._p.drop_link()

    @dbus_method()
    def Pair(self) -> DBusNone:
        raise DBusError("org.bluez.Error.NotSupported", "pairing is not needed")

    @dbus_method()
    def CancelPairing(self) -> DBusNone:
        raise DBusError("org.bluez.Error.DoesNotExist", "Does Not Exist")

    @dbus_property(access=PropertyAccess.READ)
    def Address(self) -> DBusStr:
        return self._p.address

    @dbus_property(access=PropertyAccess.READ)
    def AddressType(self) -> DBusStr:
        return "random"

    @dbus_property(access=PropertyAccess.READ)
    def Name(self) -> DBusStr:
        return self._p.name

    @dbus_property(access=PropertyAccess.READ)
    def Alias(self) -> DBusStr:
        return self._p.name

    @dbus_property(access=PropertyAccess.READ)
    def Adapter(self) -> DBusObjectPath:
        return self._p.adapter_path

    @dbus_property(access=PropertyAccess.READ)
    def UUIDs(self) -> DBusStrList:
        return list(self._p.uuids)

    @dbus_property(access=PropertyAccess.READ)
    def RSSI(self) -> DBusInt16:
        return self._p.rssi_now

    @dbus_property(access=PropertyAccess.READ)
    def Connected(self) -> DBusBool:
        return self._p.connected

    @dbus_property(access=PropertyAccess.READ)
    def ServicesResolved(self) -> DBusBool:
        return self._p.services_resolved

    @dbus_property(access=PropertyAccess.READ)
    def Paired(self) -> DBusBool:
        return False

    @dbus_property(access=PropertyAccess.READ)
    def Bonded(self) -> DBusBool:
        return False

    @dbus_property()
    def Trusted(self) -> DBusBool:
        return self._p.trusted

    @Trusted.setter
    def Trusted(self, value: DBusBool) -> DBusNone:
        self._p.trusted = value

    @dbus_property(access=PropertyAccess.READ)
    def Blocked(self) -> DBusBool:
        return False

    @dbus_property(access=PropertyAccess.READ)
    def LegacyPairing(self) -> DBusBool:
        return False


class GattService(ServiceInterface):
    """``org.bluez.GattService1``."""

    def __init__(self, uuid: str, device_path: str) -> None:
        super().__init__("org.bluez.GattService1")
        self._uuid = uuid
        self._device = device_path

    @dbus_property(access=PropertyAccess.READ)
    def UUID(self) -> DBusStr:
        return self._uuid

    @dbus_property(access=PropertyAccess.READ)
    def Device(self) -> DBusObjectPath:
        return self._device

    @dbus_property(access=PropertyAccess.READ)
    def Primary(self) -> DBusBool:
        return True

    @dbus_property(access=PropertyAccess.READ)
    def Includes(self) -> Annotated[list[str], DBusSignature("ao")]:
        return []


class GattCharacteristic(ServiceInterface):
    """``org.bluez.GattCharacteristic1``: the NUS RX and TX characteristics and a
    read-only one for the Device Information service."""

    def __init__(
        self,
        peripheral: FakePegasus,
        uuid: str,
        service_path: str,
        flags: list[str],
        value: bytes = b"",
    ) -> None:
        super().__init__("org.bluez.GattCharacteristic1")
        self._p = peripheral
        self._uuid = uuid
        self._service = service_path
        self._flags = flags
        self.value = value
        self.notifying = False

    @dbus_method()
    def ReadValue(self, options: DBusDict) -> DBusBytes:
        if "read" not in self._flags:
            raise DBusError("org.bluez.Error.NotPermitted", "Read not permitted")
        return self.value

    @dbus_method()
    def WriteValue(self, value: DBusBytes, options: DBusDict) -> DBusNone:
        kind = options["type"].value if "type" in options else "request"
        needed = "write" if kind == "request" else "write-without-response"
        if needed not in self._flags:
            raise DBusError("org.bluez.Error.NotPermitted", "Write not permitted")
        self._p.written(bytes(value), kind)

    @dbus_method()
    def StartNotify(self) -> DBusNone:
        if "notify" not in self._flags:
            raise DBusError("org.bluez.Error.NotSupported", "Operation is not supported")
        self._p.log.append("StartNotify")
        if not self.notifying:
            self.notifying = True
            self.emit_properties_changed({"Notifying": True})

    @dbus_method()
    def StopNotify(self) -> DBusNone:
        self._p.log.append("StopNotify")
        if self.notifying:
            self.notifying = False
            self.emit_properties_changed({"Notifying": False})

    def notify(self, data: bytes) -> None:
        self.value = data
        self.emit_properties_changed({"Value": data})

    @dbus_property(access=PropertyAccess.READ)
    def UUID(self) -> DBusStr:
        return self._uuid

    @dbus_property(access=PropertyAccess.READ)
    def Service(self) -> DBusObjectPath:
        return self._service

    @dbus_property(access=PropertyAccess.READ)
    def Value(self) -> DBusBytes:
        return self.value

    @dbus_property(access=PropertyAccess.READ)
    def Notifying(self) -> DBusBool:
        return self.notifying

    @dbus_property(access=PropertyAccess.READ)
    def Flags(self) -> DBusStrList:
        return list(self._flags)

    @dbus_property(access=PropertyAccess.READ)
    def MTU(self) -> DBusUInt16:
        return self._p.mtu


class GattDescriptor(ServiceInterface):
    """``org.bluez.GattDescriptor1`` (the TX characteristic's CCCD)."""

    def __init__(self, uuid: str, characteristic_path: str) -> None:
        super().__init__("org.bluez.GattDescriptor1")
        self._uuid = uuid
        self._characteristic = characteristic_path

    @dbus_method()
    def ReadValue(self, options: DBusDict) -> DBusBytes:
        return b"\x00\x00"

    @dbus_property(access=PropertyAccess.READ)
    def UUID(self) -> DBusStr:
        return self._uuid

    @dbus_property(access=PropertyAccess.READ)
    def Characteristic(self) -> DBusObjectPath:
        return self._characteristic

    @dbus_property(access=PropertyAccess.READ)
    def Value(self) -> DBusBytes:
        return b"\x00\x00"

    @dbus_property(access=PropertyAccess.READ)
    def Flags(self) -> DBusStrList:
        return ["read"]


# --- the peripheral ---------------------------------------------------------------------


class FakePegasus:
    """One BLE peripheral with the Pegasus's GATT layout, its bytes from a
    :class:`VirtualBoard` (``pegasus=True`` unless another board is given).

    ``notify_size``: bytes per TX notification (None: MTU - 3).  ``mtu``: the ATT MTU the
    link reports (BlueZ's ``MTU`` property); longer writes are refused.  ``uuids``: the
    service UUIDs it advertises.  ``nus``: whether it has the Nordic UART service at all.
    """

    def __init__(
        self,
        standin: BlueZStandIn,
        address: str,
        name: str,
        *,
        board: VirtualBoard | None = None,
        rssi: int = -58,
        mtu: int = 23,
        notify_size: int | None = None,
        uuids: tuple[str, ...] = (NUS_SERVICE,),
        nus: bool = True,
        write_flags: tuple[str, ...] = ("write-without-response", "write"),
    ) -> None:
        self.standin = standin
        self.address = address.upper()
        self.name = name
        self.board = board if board is not None else VirtualBoard(pegasus=True, now=_now())
        self.rssi = rssi
        self.rssi_now = rssi
        self.mtu = mtu
        self.notify_size = notify_size
        self.uuids = uuids
        self.nus = nus
        self.write_flags = list(write_flags)
        self.adapter_path = standin.adapter_path
        self.path = f"{standin.adapter_path}/dev_{self.address.replace(':', '_')}"
        self.advertising = True
        self.connected = False
        self.services_resolved = False
        self.trusted = False
        self.silent = False
        """True: writes are taken but the board never answers."""
        self.refuse: str | None = None
        """An error text: Connect fails with ``org.bluez.Error.Failed`` and this text."""
        self.exported = False
        self.log: list[str] = []
        """What the host asked for, in order: Connect, StartNotify, Write, Disconnect..."""
        self.writes: list[tuple[bytes, str]] = []
        """Every write to RX with its type (``request`` / ``command``)."""
        self.received = bytearray()
        """Every byte written to RX, in order."""
        self.notifications: list[bytes] = []
        """Every TX notification sent."""
        self.connects = 0
        self.device = Device(self)
        self._gatt: list[tuple[str, ServiceInterface]] = []
        self._tx: GattCharacteristic | None = None
        self._timer: asyncio.TimerHandle | None = None

    # -- BlueZ side --

    async def connect_requested(self) -> None:
        self.log.append("Connect")
        self.connects += 1
        if self.refuse is not None:
            raise DBusError("org.bluez.Error.Failed", self.refuse)
        if not self.advertising:
            raise DBusError("org.bluez.Error.Failed", "Page Timeout")
        if self.connected:
            return
        self.connected = True
        self.device.emit_properties_changed({"Connected": True})
        await asyncio.sleep(0.01)  # service discovery takes a moment
        if not self.connected:
            raise DBusError("org.bluez.Error.Failed", "Software caused connection abort")
        self._export_gatt()
        self.services_resolved = True
        self.device.emit_properties_changed({"ServicesResolved": True})

    def _export_gatt(self) -> None:
        bus = self.standin.bus
        info = f"{self.path}/service000a"
        objects: list[tuple[str, ServiceInterface]] = [
            (info, GattService(DEVICE_INFO_SERVICE, self.path)),
            (
                f"{info}/char000b",
                GattCharacteristic(
                    self, MANUFACTURER_NAME, info, ["read"], b"Digital Game Technology"
                ),
            ),
        ]
        if self.nus:
            nus = f"{self.path}/service0010"
            tx_path = f"{nus}/char0013"
            tx = GattCharacteristic(self, NUS_TX, nus, ["notify"])
            objects += [
                (nus, GattService(NUS_SERVICE, self.path)),
                (f"{nus}/char0011", GattCharacteristic(self, NUS_RX, nus, self.write_flags)),
                (tx_path, tx),
                (f"{tx_path}/desc0015", GattDescriptor(CCCD, tx_path)),
            ]
            self._tx = tx
        for path, interface in objects:
            bus.export(path, interface)
        self._gatt = objects

    def _unexport_gatt(self) -> None:
        bus = self.standin.bus
        for path, _ in reversed(self._gatt):
            with contextlib.suppress(Exception):
                bus.unexport(path)
        self._gatt = []
        self._tx = None

    def written(self, data: bytes, kind: str) -> None:
        if not self.connected:
            raise DBusError("org.bluez.Error.Failed", "Not connected")
        if len(data) > self.mtu - 3:
            raise DBusError(
                "org.bluez.Error.InvalidValueLength",
                f"{len(data)} bytes do not fit the {self.mtu}-byte MTU",
            )
        self.log.append("Write")
        self.writes.append((data, kind))
        self.received += data
        if self.silent:
            return
        self._send(self.board.receive(data, _now()))

    # -- the board's bytes --

    def _send(self, data: bytes) -> None:
        """Out as TX notifications (after the current D-Bus reply, like a radio would),
        dropped when no host listens."""
        if data:
            asyncio.get_running_loop().call_soon(self._notify, data)
        self._schedule()

    def _notify(self, data: bytes) -> None:
        tx = self._tx
        if not self.connected or tx is None or not tx.notifying:
            log.debug("%s: %d bytes dropped (nobody listening)", self.name, len(data))
            return
        size = self.notify_size or self.mtu - 3
        for start in range(0, len(data), size):
            piece = data[start : start + size]
            self.notifications.append(piece)
            tx.notify(piece)

    def _schedule(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        deadline = self.board.next_deadline()
        if deadline is not None:
            delay = max(0.001, deadline - _now())
            self._timer = asyncio.get_running_loop().call_later(delay, self._poll)

    def _poll(self) -> None:
        self._timer = None
        self._send(self.board.poll(_now()))

    # -- test hooks: the physical board --

    def lift(self, square: int) -> None:
        """A piece is taken off ``square`` (python-chess number)."""
        self._send(self.board.lift(square, _now()))

    def place(self, square: int, piece: Piece = Piece.OCCUPIED) -> None:
        """A piece is put on ``square``."""
        self._send(self.board.place(square, piece, _now()))

    def drop_link(self) -> None:
        """The link breaks (or the host disconnected): GATT objects go, ServicesResolved
        and Connected turn false.  The board stays on and keeps advertising."""
        if not self.connected:
            return
        if self._tx is not None:
            self._tx.notifying = False
        self.services_resolved = False
        self.device.emit_properties_changed({"ServicesResolved": False})
        self._unexport_gatt()
        self.connected = False
        self.device.emit_properties_changed({"Connected": False})

    def vanish(self) -> None:
        """The board goes to sleep or out of range: the link drops, it stops advertising
        and BlueZ forgets the device object."""
        self.advertising = False
        self.drop_link()
        self.standin.remove_device_object(self.path)

    def reappear(self, *, power_cycle: bool = False) -> None:
        """The board is back in range (``power_cycle``: it was switched off and on, and
        forgot the developer key and its update mode)."""
        if power_cycle:
            self.board.power_up(_now())
        self.advertising = True


def _now() -> float:
    return time.monotonic()


class BlueZStandIn:
    """``org.bluez`` on the bus at ``bus_address``, with one adapter and the peripherals
    added by :meth:`add_pegasus`."""

    def __init__(
        self,
        bus_address: str,
        *,
        adapter: str = "hci0",
        adapter_address: str = "00:1A:7D:DA:71:13",
        powered: bool = True,
        advertise_interval: float = 0.05,
    ) -> None:
        self.bus_address = bus_address
        self.adapter_path = f"/org/bluez/{adapter}"
        self.adapter = Adapter(self, adapter_address, powered)
        self.advertise_interval = advertise_interval
        self.peripherals: list[FakePegasus] = []
        self._bus: MessageBus | None = None
        self._advertiser: asyncio.Task[None] | None = None

    @property
    def bus(self) -> MessageBus:
        assert self._bus is not None, "stand-in not started"
        return self._bus

    async def start(self, *, own_name: bool = True, adapter: bool = True) -> None:
        """Connect to the bus; own ``org.bluez`` and export the adapter (either can be
        left out to stand in for a machine without BlueZ, or without an adapter)."""
        bus = MessageBus(bus_address=self.bus_address, bus_type=BusType.SYSTEM)
        await bus.connect()
        self._bus = bus
        if adapter:
            bus.export(self.adapter_path, self.adapter)
        if own_name:
            reply = await bus.request_name("org.bluez")
            assert reply is RequestNameReply.PRIMARY_OWNER, reply

    async def stop(self) -> None:
        task, self._advertiser = self._advertiser, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for peripheral in self.peripherals:
            if peripheral._timer is not None:
                peripheral._timer.cancel()
        bus, self._bus = self._bus, None
        if bus is not None:
            bus.disconnect()
            with contextlib.suppress(Exception):
                await bus.wait_for_disconnect()

    def add_pegasus(
        self,
        address: str = "F0:5E:CD:12:34:56",
        name: str = "DGT_PEGASUS_12345",
        **kwargs: Any,
    ) -> FakePegasus:
        """A peripheral in range and advertising (keyword arguments go to
        :class:`FakePegasus`)."""
        peripheral = FakePegasus(self, address, name, **kwargs)
        self.peripherals.append(peripheral)
        return peripheral

    # -- discovery --

    def discovery_started(self) -> None:
        if self._advertiser is None or self._advertiser.done():
            self._advertiser = asyncio.get_running_loop().create_task(self._advertise())

    def _wanted(self, peripheral: FakePegasus) -> bool:
        uuids = [u.lower() for u in self.adapter.filter.get("UUIDs", [])]
        return not uuids or any(u.lower() in uuids for u in peripheral.uuids)

    async def _advertise(self) -> None:
        """While discovering: a device that advertises appears (InterfacesAdded) and then
        its RSSI changes with every advertisement (PropertiesChanged), as BlueZ reports
        advertisements."""
        tick = 0
        while self.adapter.discovering and self._bus is not None:
            tick += 1
            for p in self.peripherals:
                if not p.advertising or p.connected or not self._wanted(p):
                    continue
                p.rssi_now = p.rssi - (tick % 2)
                if not p.exported:
                    self.bus.export(p.path, p.device)
                    p.exported = True
                else:
                    p.device.emit_properties_changed({"RSSI": p.rssi_now})
            await asyncio.sleep(self.advertise_interval)

    def remove_device_object(self, path: str) -> None:
        for p in self.peripherals:
            if p.path == path and p.exported:
                p.drop_link()
                self.bus.unexport(p.path, p.device)
                p.exported = False


async def reset_bleak() -> None:
    """Drop bleak's BlueZ manager for the running loop (it keeps a D-Bus connection and a
    watcher task), so the next test starts from a fresh manager on its own bus."""
    from bleak.backends.bluezdbus import manager as bluez_manager

    loop = asyncio.get_running_loop()
    instance = bluez_manager._global_instances.pop(loop, None)
    if instance is None:
        return
    watcher = instance._bus_watcher_task
    if watcher is not None:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher
    bus = instance._bus
    if bus is not None:
        bus.disconnect()
        # (the cancelled watcher took the disconnect future with it: poll instead)
        for _ in range(200):
            if not bus.connected:
                break
            await asyncio.sleep(0.005)


@contextlib.asynccontextmanager
async def running_standin(
    monkeypatch: Any, *, own_name: bool = True, adapter: bool = True, **kwargs: Any
) -> AsyncIterator[BlueZStandIn]:
    """A private system bus (in a short temporary folder: unix socket paths are limited to
    about 100 characters) with the stand-in on it, and ``DBUS_SYSTEM_BUS_ADDRESS`` pointing
    there for the duration; everything torn down (bleak's manager first) afterwards.
    ``own_name`` / ``adapter`` False stand in for a machine without BlueZ, or without a
    Bluetooth adapter; other keyword arguments go to :class:`BlueZStandIn`."""
    with tempfile.TemporaryDirectory(prefix="dgt-bluez-") as directory:
        system_bus = PrivateSystemBus(Path(directory))
        address = system_bus.start()
        monkeypatch.setenv("DBUS_SYSTEM_BUS_ADDRESS", address)
        standin = BlueZStandIn(address, **kwargs)
        try:
            await standin.start(own_name=own_name, adapter=adapter)
            yield standin
        finally:
            await reset_bleak()
            await standin.stop()
            system_bus.stop()


__all__ = [
    "BlueZStandIn",
    "FakePegasus",
    "PrivateSystemBus",
    "reset_bleak",
    "running_standin",
]
