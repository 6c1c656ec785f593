"""Transports: the serial transport over a pty and socket:// (both read on the event loop),
error mapping, and open_transport."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import threading
import tty

import pytest
import serial
from conftest import wait_until

from dgt.errors import (
    ConnectionFailed,
    PortBusy,
    PortNotFound,
    PortPermissionDenied,
)
from dgt.events import BoardFamily
from dgt.transports import SerialTransport, open_transport
from dgt.transports.ble import BleTransport
from dgt.transports.emulator import EmulatorTransport
from dgt.transports.serial import map_open_error

pytestmark = pytest.mark.usefixtures("no_leaked_tasks")


@pytest.fixture
def pty_pair() -> tuple[int, str]:
    master, slave = os.openpty()
    tty.setraw(slave, tty.TCSANOW)
    name = os.ttyname(slave)
    yield master, name
    for fd in (master, slave):
        with contextlib.suppress(OSError):
            os.close(fd)


class Sink:
    def __init__(self) -> None:
        self.data = bytearray()
        self.lost: list[str] = []

    def on_data(self, data: bytes) -> None:
        self.data += data

    def on_lost(self, reason: str) -> None:
        self.lost.append(reason)


async def test_pty_read_write_and_vanishing_device(pty_pair: tuple[int, str]) -> None:
    master, name = pty_pair
    os.write(master, b"stale bytes from an earlier session")
    await asyncio.sleep(0.01)
    transport = SerialTransport(name)
    sink = Sink()
    await transport.open(sink.on_data, sink.on_lost)
    assert transport.is_open
    os.write(master, b"\x8e\x00\x05\x0c\x01")
    await wait_until(lambda: len(sink.data) == 5)
    assert bytes(sink.data) == b"\x8e\x00\x05\x0c\x01"  # the stale bytes were flushed
    transport.write(b"\x40\x4d")
    await asyncio.sleep(0.01)
    assert os.read(master, 16) == b"\x40\x4d"
    os.close(master)  # the device vanishes
    await wait_until(lambda: bool(sink.lost))
    assert len(sink.lost) == 1
    assert name in sink.lost[0]
    assert not transport.is_open
    with pytest.raises(ConnectionFailed, match="not open"):
        transport.write(b"B")
    await transport.close()


async def test_writes_the_line_cannot_take_yet_wait_in_order(pty_pair: tuple[int, str]) -> None:
    master, name = pty_pair
    transport = SerialTransport(name)
    sink = Sink()
    await transport.open(sink.on_data, sink.on_lost)
    chunks = [bytes([i]) * 1000 for i in range(1, 200)]  # more than a pty holds unread
    for chunk in chunks:
        transport.write(chunk)
    assert transport._out  # the rest waits for the line
    os.set_blocking(master, False)
    got = bytearray()
    expected = b"".join(chunks)
    async with asyncio.timeout(5):
        while len(got) < len(expected):
            with contextlib.suppress(BlockingIOError):
                got += os.read(master, 65536)
            await asyncio.sleep(0.001)
    assert bytes(got) == expected
    assert not transport._out
    transport.write(b"B")  # the line free again: straight to it
    assert not transport._out
    await asyncio.sleep(0.01)
    assert os.read(master, 16) == b"B"
    assert not sink.lost
    await transport.close()


async def test_exclusive_access(pty_pair: tuple[int, str]) -> None:
    _, name = pty_pair
    first = SerialTransport(name)
    sink = Sink()
    await first.open(sink.on_data, sink.on_lost)
    try:
        with pytest.raises(PortBusy, match="in use by another program"):
            await SerialTransport(name).open(sink.on_data, sink.on_lost)
    finally:
        await first.close()
    await first.close()  # idempotent


async def test_socket_url_is_read_on_the_event_loop() -> None:
    received = bytearray()
    writers: list[asyncio.StreamWriter] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writers.append(writer)
        received.extend(await reader.read(16))
        writer.write(b"\x93\x00\x05\x03\x0a")
        await writer.drain()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    transport = open_transport(f"socket://127.0.0.1:{port}")
    sink = Sink()
    await transport.open(sink.on_data, sink.on_lost)
    # no reader thread: thousands of boards on sockets (bench/hall.py) cost no threads
    assert not [t for t in threading.enumerate() if t.name.startswith("dgt-serial")]
    transport.write(b"\x4d")
    await wait_until(lambda: bytes(sink.data) == b"\x93\x00\x05\x03\x0a")
    assert bytes(received) == b"\x4d"
    for writer in writers:
        writer.close()
        await writer.wait_closed()
    await wait_until(lambda: bool(sink.lost))
    await transport.close()
    server.close()
    await server.wait_closed()


@pytest.mark.parametrize(
    ("code", "kind", "text"),
    [
        (errno.ENOENT, PortNotFound, "no such port /dev/ttyX"),
        (errno.EACCES, PortPermissionDenied, "udev/99-dgt.rules"),
        (errno.EBUSY, PortBusy, "in use"),
        (errno.EIO, ConnectionFailed, "cannot open /dev/ttyX"),
    ],
)
def test_open_errors_are_one_line(code: int, kind: type, text: str) -> None:
    exc = serial.SerialException(code, f"could not open port /dev/ttyX: [Errno {code}] ...")
    mapped = map_open_error("/dev/ttyX", exc)
    assert type(mapped) is kind
    assert text in str(mapped)
    assert "\n" not in str(mapped)


async def test_open_transport_picks_the_backend() -> None:
    assert isinstance(open_transport("/dev/ttyACM0"), SerialTransport)
    assert isinstance(open_transport("rfc2217://localhost:1"), SerialTransport)
    assert isinstance(open_transport("emulator"), EmulatorTransport)
    ble = open_transport("ble:AA:BB:CC:DD:EE:FF")
    assert isinstance(ble, BleTransport)
    assert ble.family_hint is BoardFamily.PRESENCE_ONLY
    with pytest.raises(ConnectionFailed, match="no port"):
        open_transport(" ")
    with pytest.raises(PortNotFound):
        await open_transport("/dev/does-not-exist").open(Sink().on_data, Sink().on_lost)
    with pytest.raises(ConnectionFailed, match="cannot open nosuch://x"):
        await open_transport("nosuch://x").open(Sink().on_data, Sink().on_lost)
