"""The emulator on a TCP port of 127.0.0.1 (dgt.emulator.tcp), with the serial transport
opening its ``socket://`` URL as the hall opens a board."""

from __future__ import annotations

import os
import resource
import time

import chess
import pytest
from conftest import wait_until

from dgt.emulator import VirtualBoard
from dgt.emulator.tcp import TcpEmulatorServer
from dgt.protocol import BoardDump, Command, FieldUpdate, FrameParser, SerialNumber, Version
from dgt.transports import open_transport

pytestmark = pytest.mark.usefixtures("no_leaked_tasks")


class Host:
    """A transport's callbacks, parsing what the board sends."""

    def __init__(self) -> None:
        self.parser = FrameParser()
        self.messages: list[object] = []
        self.lost: list[str] = []

    def on_data(self, data: bytes) -> None:
        self.messages += self.parser.feed(data)

    def on_lost(self, reason: str) -> None:
        self.lost.append(reason)


HANDSHAKE = bytes(
    (Command.SEND_UPDATE_NICE, Command.SEND_VERSION, Command.RETURN_SERIALNR, Command.SEND_BRD)
)


async def test_handshake_and_a_lifted_piece_over_a_socket_url() -> None:
    async with TcpEmulatorServer(VirtualBoard()) as server:
        assert server.path.startswith("socket://127.0.0.1:")
        transport = open_transport(server.path)
        host = Host()
        await transport.open(host.on_data, host.on_lost)
        try:
            transport.write(HANDSHAKE)
            await wait_until(lambda: len(host.messages) == 3)
            version, serial_number, dump = host.messages
            assert version == Version(3, 10)
            assert serial_number == SerialNumber("12345")
            assert isinstance(dump, BoardDump)
            board = server.device
            assert isinstance(board, VirtualBoard)
            server.act(lambda now: board.lift(chess.E2, now))
            await wait_until(lambda: len(host.messages) == 4)
            assert host.messages[3] == FieldUpdate(52, 0)
        finally:
            await transport.close()


async def test_a_host_reconnects_and_an_unplugged_board_ends_the_link() -> None:
    async with TcpEmulatorServer(VirtualBoard()) as server:
        url = server.path
        for _ in range(2):  # the same URL again after the host closed it
            transport = open_transport(url)
            again = Host()
            await transport.open(again.on_data, again.on_lost)
            transport.write(bytes((Command.SEND_VERSION,)))
            await wait_until(lambda: again.messages == [Version(3, 10)])  # noqa: B023
            await transport.close()
        transport = open_transport(url)
        host = Host()
        await transport.open(host.on_data, host.on_lost)
        server.unplug()
        assert not server.plugged
        await wait_until(lambda: bool(host.lost))
        await transport.close()
        assert server.plug() == url  # listening again on the same port
        transport = open_transport(url)
        host = Host()
        await transport.open(host.on_data, host.on_lost)
        transport.write(bytes((Command.SEND_VERSION,)))
        await wait_until(lambda: host.messages == [Version(3, 10)])
        await transport.close()


async def test_a_socket_url_opens_past_file_descriptor_1023() -> None:
    """pyserial's own input flush uses select(), which refuses descriptors past 1,023: a
    hall of thousands of boards on sockets has them."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))
    null = os.open(os.devnull, os.O_RDONLY)
    taken = [os.dup(null) for _ in range(1100)]
    try:
        async with TcpEmulatorServer(VirtualBoard()) as server:
            transport = open_transport(server.path)
            host = Host()
            await transport.open(host.on_data, host.on_lost)
            try:
                transport.write(bytes((Command.SEND_VERSION,)))
                await wait_until(lambda: host.messages == [Version(3, 10)])
            finally:
                await transport.close()
    finally:
        for fd in (*taken, null):
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


async def test_closing_a_socket_board_does_not_hold_the_loop() -> None:
    """pyserial's socket close sleeps 0.3 s on the caller's thread: the event loop's."""
    async with TcpEmulatorServer(VirtualBoard()) as server:
        transport = open_transport(server.path)
        host = Host()
        await transport.open(host.on_data, host.on_lost)
        started = time.monotonic()
        await transport.close()
        assert time.monotonic() - started < 0.2
