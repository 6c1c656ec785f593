"""The emulator on a real pseudo-terminal, with pyserial as the host; and ``dgt-service
emulate`` as a subprocess.

pyserial blocks, and the server runs on the test's event loop, so every host read runs in
a worker thread (``asyncio.to_thread``).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import chess
import pytest
import serial

from dgt.emulator import EmulatorServer, VirtualBoard, make_bus
from dgt.protocol import (
    BoardDump,
    BusCommand,
    BusFrameParser,
    ClockTimes,
    Command,
    FieldUpdate,
    FrameParser,
    SerialNumber,
    Version,
    encode_bus_command,
    encode_clock_setnrun,
)

ROOT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-c", "import sys; from service.cli import main; sys.exit(main())"]


async def read_messages(port: serial.Serial, count: int, within: float = 2.0) -> list[object]:
    """Read until ``count`` messages arrived (or the time-out)."""
    parser = FrameParser()
    out: list[object] = []
    deadline = time.monotonic() + within
    while len(out) < count and time.monotonic() < deadline:
        data = await asyncio.to_thread(port.read, max(1, port.in_waiting))
        out += parser.feed(data)
    return out


def open_port(path: str) -> serial.Serial:
    port = serial.Serial(path, 9600, timeout=0.2)
    port.reset_input_buffer()
    return port


async def test_handshake_over_a_real_pty(tmp_path: Path) -> None:
    link = tmp_path / "board"
    async with EmulatorServer(VirtualBoard(), link=link) as server:
        assert server.path == str(link)
        assert link.resolve().is_relative_to("/dev/pts")
        with open_port(server.path) as port:
            port.write(bytes((Command.SEND_UPDATE_NICE, Command.SEND_VERSION,
                              Command.RETURN_SERIALNR, Command.SEND_BRD)))  # fmt: skip
            version, serial_number, dump = await read_messages(port, 3)
            assert version == Version(3, 10)
            assert serial_number == SerialNumber("12345")
            assert isinstance(dump, BoardDump)
            # a physical action reaches the host as a field update
            board = server.device
            assert isinstance(board, VirtualBoard)
            server.act(lambda now: board.lift(chess.E2, now))
            assert await read_messages(port, 1) == [FieldUpdate(52, 0)]
    assert not link.exists()


async def test_clock_times_flow_on_their_own_in_update_mode() -> None:
    async with EmulatorServer(VirtualBoard()) as server:
        port = open_port(server.path)
        port.write(bytes((Command.SEND_UPDATE,)) + encode_clock_setnrun(60, 60, 0x01))
        messages = await read_messages(port, 2, within=3.0)
        port.close()
        times = [m for m in messages if isinstance(m, ClockTimes)]
        assert times, messages
        assert times[-1].running


async def test_unplug_fails_the_host_and_plug_serves_the_same_path() -> None:
    async with EmulatorServer(VirtualBoard()) as server:
        path = server.path
        first = server.pty_name
        port = open_port(path)
        try:
            port.write(bytes((Command.SEND_VERSION,)))
            assert await read_messages(port, 1) == [Version(3, 10)]
            server.unplug()
            assert not server.plugged
            assert not Path(path).is_symlink()  # noqa: ASYNC240 (the device vanished)

            def read_until_failure() -> None:
                for _ in range(10):
                    port.read(1)

            with pytest.raises(serial.SerialException):
                await asyncio.to_thread(read_until_failure)
        finally:
            port.close()
        assert server.plug() == path
        assert server.pty_name is not None
        assert str(Path(path).resolve()) == server.pty_name  # noqa: ASYNC240
        assert first is not None
        board = server.device
        assert isinstance(board, VirtualBoard)
        assert board.bus_mode  # a USB board powers up again: bus mode
        with open_port(path) as again:
            again.write(bytes((Command.SEND_VERSION,)))
            assert await read_messages(again, 1) == [Version(3, 10)]


async def test_garbage_goes_on_the_line() -> None:
    async with EmulatorServer(VirtualBoard(), seed=3) as server:
        port = open_port(server.path)
        sent = server.garbage(40)
        received = b""
        while len(received) < 40:
            chunk = await asyncio.to_thread(port.read, 40 - len(received))
            assert chunk, "garbage did not arrive"
            received += chunk
        port.close()
        assert received == sent


async def test_a_host_reopening_the_port_is_served() -> None:
    async with EmulatorServer(VirtualBoard()) as server:
        for _ in range(2):
            with open_port(server.path) as port:
                port.write(bytes((Command.SEND_VERSION,)))
                assert await read_messages(port, 1) == [Version(3, 10)]


@pytest.mark.slow
async def test_bus_line_on_a_pty() -> None:
    async with EmulatorServer(make_bus(3)) as server:
        port = open_port(server.path)
        port.write(encode_bus_command(BusCommand.PING, 0))
        parser = BusFrameParser()
        replies = []
        deadline = time.monotonic() + 3.0
        while len(replies) < 3 and time.monotonic() < deadline:
            replies += parser.feed(await asyncio.to_thread(port.read, 64))
        port.close()
        assert sorted(r.address for r in replies) == [10001, 10002, 10003]


@pytest.mark.slow
def test_emulate_command_prints_the_path_first_and_answers(tmp_path: Path) -> None:
    link = tmp_path / "dgt"
    with subprocess.Popen(
        [*CLI, "emulate", "--link", str(link), "--seed", "1"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        try:
            assert proc.stdout is not None
            assert proc.stdin is not None
            first = proc.stdout.readline().strip()
            assert first == str(link)
            with serial.Serial(first, 9600, timeout=2) as port:
                port.reset_input_buffer()
                port.write(bytes((Command.SEND_UPDATE_BRD, Command.SEND_VERSION)))
                parser = FrameParser()
                assert parser.feed(port.read(5)) == [Version(3, 10)]
                proc.stdin.write("lift e2\nbogus\nshow\n")
                proc.stdin.flush()
                assert parser.feed(port.read(5)) == [FieldUpdate(52, 0)]
                assert proc.stdout.readline().startswith("error: unknown command 'bogus'")
                assert proc.stdout.readline().startswith("8 r n b q k b n r")
            # end of input, no replay: the emulator exits
            _, err = proc.communicate(timeout=10)
            assert proc.returncode == 0
            assert "Traceback" not in err
        finally:
            if proc.poll() is None:
                proc.kill()


@pytest.mark.slow
def test_emulate_exits_quietly_on_ctrl_c(tmp_path: Path) -> None:
    pgn = tmp_path / "game.pgn"
    pgn.write_text("1. e4 e5 2. Nf3 Nc6 *\n")
    with subprocess.Popen(
        [*CLI, "emulate", "--replay", str(pgn), "--speed", "50"],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        try:
            assert proc.stdout is not None
            path = proc.stdout.readline().strip()
            assert os.path.lexists(path)
            time.sleep(0.3)
            assert proc.poll() is None  # replaying: the end of standard input does not stop it
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=10)
            assert proc.returncode == 0
            assert "Traceback" not in err
            assert not os.path.lexists(path)
        finally:
            if proc.poll() is None:
                proc.kill()


@pytest.mark.slow
def test_emulate_usage_errors_are_one_line() -> None:
    result = subprocess.run(
        [*CLI, "emulate", "--pegasus", "--bus", "2"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=20,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert "no bus mode" in result.stderr


def read_until_it_fails(port: serial.Serial) -> None:
    """Read (a board that dropped the link makes a read fail) for at most 4 s."""
    for _ in range(20):
        port.read(1)


@pytest.mark.slow
def test_emulate_plays_a_clone_with_quirk(tmp_path: Path) -> None:
    link = tmp_path / "clone"
    with subprocess.Popen(
        [*CLI, "emulate", "--link", str(link), "--quirk", "ten-character-serial",
         "--quirk", "drops-on-memory-request"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:  # fmt: skip
        try:
            assert proc.stdout is not None
            first = proc.stdout.readline().strip()
            with serial.Serial(first, 9600, timeout=2) as port:
                port.reset_input_buffer()
                port.write(bytes((Command.RETURN_SERIALNR,)))
                assert FrameParser().feed(port.read(13)) == [SerialNumber("0000012345")]
                port.write(bytes((Command.SEND_EE_MOVES,)))
                with pytest.raises(serial.SerialException):
                    read_until_it_fails(port)
            proc.kill()
            proc.communicate(timeout=10)
        finally:
            if proc.poll() is None:
                proc.kill()


@pytest.mark.slow
def test_emulate_quirk_usage_errors_are_one_line() -> None:
    for args in (["--quirk", "crash-on-reset"], ["--quirk", "ten-character-serial", "--bus", "2"]):
        result = subprocess.run(
            [*CLI, "emulate", *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=20,
            stdin=subprocess.DEVNULL,
        )
        assert result.returncode == 2, args
        assert result.stdout == ""
        assert "Traceback" not in result.stderr
        assert "quirk" in result.stderr.splitlines()[-1]
