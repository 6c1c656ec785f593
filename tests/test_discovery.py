"""Finding and probing DGT boards: port matching on pyserial's own ``ListPortInfo``,
probes over real pseudo-terminals with a small scripted board on the master side, and
``dgt-service scan`` run as a real subprocess."""

from __future__ import annotations

import asyncio
import io
import json
import os
import select
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import serial
from serial.tools.list_ports_common import ListPortInfo

from dgt.discovery import (
    Candidate,
    Confidence,
    MatchKind,
    find_candidates,
    match_port,
    mentions_dgt,
    probe,
    probe_all,
)
from dgt.protocol import (
    Command,
    FieldUpdate,
    LongSerialNumber,
    SerialNumber,
    Version,
)

ROOT = Path(__file__).resolve().parent.parent

# --- matching ------------------------------------------------------------------------


def usb_port(
    device: str,
    vid: int | None,
    pid: int | None,
    *,
    manufacturer: str | None = None,
    product: str | None = None,
    serial_number: str | None = None,
) -> ListPortInfo:
    """A port listing as pyserial's Linux backend builds it."""
    info = ListPortInfo(device, skip_link_detection=True)
    info.vid = vid
    info.pid = pid
    info.manufacturer = manufacturer
    info.product = product
    info.serial_number = serial_number
    if vid is not None:
        info.apply_usb_info()
    return info


def test_current_dgt_usb_id_is_a_sure_match() -> None:
    c = match_port(usb_port("/dev/ttyACM0", 0x045B, 0x8111, serial_number="A1B2"))
    assert c is not None
    assert c.confidence is Confidence.HIGH
    assert c.kind is MatchKind.USB_ID
    assert "045B:8111" in c.reason
    assert c.usb_id == "045B:8111"
    assert c.usb_serial == "A1B2"


def test_microchip_id_is_likely_and_sure_when_named() -> None:
    plain = match_port(usb_port("/dev/ttyACM1", 0x04D8, 0x000A))
    named = match_port(usb_port("/dev/ttyACM1", 0x04D8, 0x000A, product="DGT USB Board"))
    assert plain is not None
    assert plain.confidence is Confidence.MEDIUM
    assert named is not None
    assert named.confidence is Confidence.HIGH


def test_generic_ftdi_adapter_is_not_a_candidate() -> None:
    ftdi = usb_port("/dev/ttyUSB0", 0x0403, 0x6001, manufacturer="FTDI", product="FT232R UART")
    assert match_port(ftdi) is None
    listed = match_port(ftdi, include_all=True)
    assert listed is not None
    assert listed.confidence is Confidence.LOW
    assert "not named DGT" in listed.reason


@pytest.mark.parametrize("field", ["manufacturer", "product"])
def test_ftdi_adapter_named_dgt_is_a_candidate(field: str) -> None:
    info = usb_port("/dev/ttyUSB0", 0x0403, 0x6001, **{field: "DGT e-Board"})
    c = match_port(info)
    assert c is not None
    assert c.confidence is Confidence.HIGH
    assert c.kind is MatchKind.USB_ID
    assert "0403:6001" in c.reason
    assert "DGT e-Board" in c.reason


def test_unknown_id_with_dgt_manufacturer_is_matched_by_name() -> None:
    c = match_port(usb_port("/dev/ttyACM3", 0x1234, 0x5678, manufacturer="Digital Game Technology"))
    assert c is not None
    assert c.kind is MatchKind.NAME
    assert c.confidence is Confidence.HIGH


def test_other_ports_only_with_include_all() -> None:
    builtin = usb_port("/dev/ttyS0", None, None)
    arduino = usb_port("/dev/ttyACM0", 0x2341, 0x0043, manufacturer="Arduino")
    assert match_port(builtin) is None
    assert match_port(arduino) is None
    assert match_port(builtin, include_all=True) is not None
    a = match_port(arduino, include_all=True)
    assert a is not None
    assert a.reason == "USB serial port 2341:0043"


def test_rfcomm_nodes_are_medium_candidates() -> None:
    c = match_port(usb_port("/dev/rfcomm0", None, None))
    assert c is not None
    assert c.kind is MatchKind.RFCOMM
    assert c.confidence is Confidence.MEDIUM


def test_mentions_dgt() -> None:
    assert mentions_dgt(None, "dgt board")
    assert mentions_dgt("DGT_BT_12345")
    assert not mentions_dgt(None, "", "FT232R USB UART", "n/a")


def test_find_candidates_orders_dedupes_and_reads_udev_links(tmp_path: Path) -> None:
    dev = tmp_path / "dev"
    (dev / "dgt" / "by-serial").mkdir(parents=True)
    acm0 = dev / "ttyACM0"
    acm1 = dev / "ttyACM1"
    usb0 = dev / "ttyUSB0"
    rfcomm = dev / "rfcomm7"
    orphan = dev / "ttyACM9"  # linked by udev but not listed by pyserial
    for node in (acm0, acm1, usb0, rfcomm, orphan):
        node.touch()
    (dev / "dgt" / "board").symlink_to(acm1)
    (dev / "dgt" / "by-serial" / "0042").symlink_to(acm1)
    (dev / "dgt" / "by-serial" / "0099").symlink_to(orphan)
    (dev / "dgt" / "by-serial" / "gone").symlink_to(dev / "ttyACM5")  # dangling
    ports = [
        usb_port(str(usb0), 0x0403, 0x6001, manufacturer="FTDI"),
        usb_port(str(acm1), 0x04D8, 0x000A),
        usb_port(str(acm0), 0x045B, 0x8111),
    ]

    found = find_candidates(ports=ports, dev=str(dev))

    by_port = {c.port: c for c in found}
    assert str(usb0) not in by_port  # generic FTDI
    orphan_link = str(dev / "dgt" / "by-serial" / "0099")
    assert set(by_port) == {str(acm0), str(acm1), str(rfcomm), orphan_link}
    # the udev links to ttyACM1 became aliases and made it a sure match
    assert by_port[str(acm1)].aliases == (
        str(dev / "dgt" / "board"),
        str(dev / "dgt" / "by-serial" / "0042"),
    )
    assert by_port[str(acm1)].confidence is Confidence.HIGH
    assert "udev link" in by_port[str(acm1)].reason
    assert by_port[orphan_link].kind is MatchKind.UDEV_LINK
    # most likely first; the Bluetooth node (medium) last
    assert [c.confidence for c in found] == sorted((c.confidence for c in found), reverse=True)
    assert found[-1].port == str(rfcomm)

    everything = find_candidates(ports=ports, dev=str(dev), include_all=True)
    assert str(usb0) in {c.port for c in everything}


def test_udev_link_to_an_unlisted_port_is_its_own_candidate(tmp_path: Path) -> None:
    dev = tmp_path / "dev"
    (dev / "dgt").mkdir(parents=True)
    (dev / "ttyACM4").touch()
    (dev / "dgt" / "board").symlink_to(dev / "ttyACM4")
    found = find_candidates(ports=[], dev=str(dev))
    assert [(c.port, c.kind, c.confidence) for c in found] == [
        (str(dev / "dgt" / "board"), MatchKind.UDEV_LINK, Confidence.HIGH)
    ]


def test_candidate_json_is_plain_data() -> None:
    c = Candidate("/dev/x", "why", Confidence.MEDIUM, MatchKind.RFCOMM, aliases=("/dev/y",))
    assert json.loads(json.dumps(c.to_json()))["confidence"] == "medium"


# --- a scripted board on a real pseudo-terminal ----------------------------------------


@dataclass
class Script:
    """How the fake board behaves."""

    version: tuple[int, int] | None = (3, 10)
    serial: str = "12345"
    long_serial: str | None = "0000012345"
    bus_mode: bool = False
    """Like a board powered up in bus mode: of the first chunk only the first byte counts."""
    noise: bytes = b""
    """Sent before the first answer (a board left in update mode, line garbage)."""


class FakeBoard:
    """Answers identification commands on the master side of a pty, in a thread."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.master, slave = os.openpty()
        self.path = os.ttyname(slave)
        os.close(slave)  # pyserial opens it by path, like a real port
        self.received = bytearray()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fake-board", daemon=True)
        self._thread.start()

    def _answer(self, byte: int) -> bytes:
        s = self.script
        if byte == Command.SEND_VERSION and s.version is not None:
            return Version(*s.version).to_bytes()
        if byte == Command.RETURN_SERIALNR and s.version is not None:
            return SerialNumber(s.serial).to_bytes()
        if byte == Command.RETURN_LONG_SERIALNR and s.long_serial is not None:
            return LongSerialNumber(s.long_serial).to_bytes()
        return b""

    def _run(self) -> None:
        first = True
        while not self._stop.is_set():
            ready, _, _ = select.select([self.master], [], [], 0.02)
            if not ready:
                continue
            try:
                data = os.read(self.master, 1024)
            except OSError:  # nobody has the slave open right now
                time.sleep(0.01)
                continue
            self.received += data
            if first and self.script.bus_mode:
                data = data[:1]
            reply = (self.script.noise if first else b"") + b"".join(map(self._answer, data))
            first = False
            if reply:
                os.write(self.master, reply)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        os.close(self.master)


@pytest.fixture
def board_factory() -> Iterator[Callable[[Script], FakeBoard]]:
    boards: list[FakeBoard] = []

    def make(script: Script) -> FakeBoard:
        board = FakeBoard(script)
        boards.append(board)
        return board

    yield make
    for board in boards:
        board.close()


def test_probe_reads_version_and_serial_numbers(
    board_factory: Callable[[Script], FakeBoard],
) -> None:
    board = board_factory(Script())
    result = probe(board.path, timeout=2.0)
    assert result.ok, result.error
    assert str(result.version) == "3.10"
    assert result.serial == "12345"
    assert result.long_serial == "0000012345"
    assert result.status == "ok"
    assert result.elapsed < 1.0
    # exactly the three identification commands, and nothing that changes the board's mode
    assert bytes(board.received[:3]) == bytes(
        (Command.SEND_VERSION, Command.RETURN_SERIALNR, Command.RETURN_LONG_SERIALNR)
    )


@pytest.mark.slow
def test_probe_asks_again_when_a_bus_mode_board_drops_bytes(
    board_factory: Callable[[Script], FakeBoard],
) -> None:
    board = board_factory(Script(bus_mode=True))
    result = probe(board.path, timeout=2.0)
    assert result.ok, result.error
    assert result.serial == "12345"
    assert result.long_serial == "0000012345"


def test_probe_does_not_wait_for_a_long_serial_an_old_board_never_sends(
    board_factory: Callable[[Script], FakeBoard],
) -> None:
    board = board_factory(Script(long_serial=None))
    result = probe(board.path, timeout=3.0)
    assert result.ok
    assert result.long_serial is None
    assert result.elapsed < 1.5  # the short grace, not the whole time-out


def test_probe_skips_garbage_and_other_messages(
    board_factory: Callable[[Script], FakeBoard],
) -> None:
    noise = b"\x00\x7f" + FieldUpdate(12, 1).to_bytes() + b"\x8e\x00" + b"AT\r\n"
    board = board_factory(Script(noise=noise))
    result = probe(board.path, timeout=2.0)
    assert result.ok
    assert result.serial == "12345"
    assert result.other_messages >= 1


@pytest.mark.slow
def test_silent_pty_is_not_answering_within_the_timeout(
    board_factory: Callable[[Script], FakeBoard],
) -> None:
    board = board_factory(Script(version=None, long_serial=None))
    start = time.monotonic()
    result = probe(board.path, timeout=0.6)
    took = time.monotonic() - start
    assert not result.ok
    assert result.error_type == "NotADgtBoard"
    assert result.status == "not answering"
    assert board.path in (result.error or "")
    assert "did not answer like a DGT board" in (result.error or "")
    assert 0.55 <= took < 1.5


def test_missing_port_is_port_not_found() -> None:
    result = probe("/dev/does-not-exist-dgt", timeout=0.5)
    assert result.error_type == "PortNotFound"
    assert result.error is not None
    assert result.error.startswith("no such port /dev/does-not-exist-dgt")
    assert "\n" not in result.error


def test_not_a_tty_is_a_one_line_error(tmp_path: Path) -> None:
    plain = tmp_path / "file"
    plain.write_bytes(b"")
    result = probe(str(plain), timeout=0.5)
    assert result.error_type == "ConnectionFailed"
    assert "not a serial port" in (result.error or "")


def test_port_locked_by_another_program_is_busy(
    board_factory: Callable[[Script], FakeBoard],
) -> None:
    board = board_factory(Script())
    with serial.Serial(board.path, exclusive=True):
        result = probe(board.path, timeout=0.5)
    assert result.error_type == "PortBusy"
    assert "in use by another program" in (result.error or "")


AS_NOBODY = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups")


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None,
    reason="needs root and setpriv to run the probe as an unprivileged user",
)
def test_permission_denied_names_the_udev_rules(
    board_factory: Callable[[Script], FakeBoard],
) -> None:
    board = board_factory(Script())
    os.chmod(board.path, 0o600)  # owned by root: user nobody may not open it
    code = (
        "import json, sys; from dgt.discovery import probe; "
        "print(json.dumps(probe(sys.argv[1], 0.5).to_json()))"
    )
    done = subprocess.run(
        [*AS_NOBODY, sys.executable, "-c", code, board.path],
        capture_output=True,
        text=True,
        timeout=20,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["error_type"] == "PortPermissionDenied"
    assert result["status"] == "permission denied"
    assert "99-dgt.rules" in result["error"]


@pytest.mark.slow
def test_probe_all_runs_concurrently_and_keeps_order(
    board_factory: Callable[[Script], FakeBoard],
) -> None:
    good = board_factory(Script(serial="11111"))
    silent = [board_factory(Script(version=None, long_serial=None)) for _ in range(4)]
    ports = [silent[0].path, good.path, silent[1].path, "/dev/does-not-exist-dgt"]
    ports += [silent[2].path, silent[3].path]
    events: list[tuple[str, int, int, str]] = []

    start = time.monotonic()
    results = probe_all(
        ports, timeout=0.8, progress=lambda s, i, n, p, r: events.append((s, i, n, p))
    )
    took = time.monotonic() - start

    assert [r.port for r in results] == ports
    assert [r.ok for r in results] == [False, True, False, False, False, False]
    assert results[1].serial == "11111"
    assert took < 2.2  # about one time-out, not four (3.2 s)
    assert sorted(e for e in events if e[0] == "start") == [
        ("start", i, 6, p) for i, p in enumerate(ports, start=1)
    ]
    assert len([e for e in events if e[0] == "done"]) == 6


# --- the command ---------------------------------------------------------------------


MAIN = "import sys; from service.cli import main; sys.exit(main(sys.argv[1:]))"
"""What the ``dgt-service`` console script runs."""


def run_scan(*args: str, timeout: float = 20) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", MAIN, "scan", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )


@pytest.mark.slow
def test_scan_port_prints_version_and_serial(
    board_factory: Callable[[Script], FakeBoard],
) -> None:
    board = board_factory(Script(version=(1, 80), serial="54321", long_serial=None))
    done = run_scan("--port", board.path, "--timeout", "2")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["PORT", "MATCH", "VERSION", "SERIAL", "STATUS"]
    row = lines[1]
    assert row.startswith(board.path)
    assert "1.80" in row
    assert "54321" in row
    assert row.rstrip().endswith("ok")
    assert "1 DGT board found" in done.stdout
    assert f"probing 1/1: {board.path} ..." in done.stderr  # plain progress line: not a tty


@pytest.mark.slow
def test_scan_json_parses_and_reports_failures(
    board_factory: Callable[[Script], FakeBoard],
) -> None:
    board = board_factory(Script())
    silent = board_factory(Script(version=None, long_serial=None))
    done = run_scan("--json", "--timeout", "0.6", "--port", board.path, "--port", silent.path)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["boards_found"] == 1
    first, second = data["ports"]
    assert first["port"] == board.path
    assert first["transport"] == "serial"
    assert first["reason"] == "given with --port"
    assert (first["version"], first["serial"], first["long_serial"]) == (
        "3.10",
        "12345",
        "0000012345",
    )
    assert first["ok"] is True
    assert second["ok"] is False
    assert second["error_type"] == "NotADgtBoard"
    assert second["status"] == "not answering"


@pytest.mark.slow
def test_scan_with_nothing_found_says_what_to_check() -> None:
    done = run_scan("--port", "/dev/does-not-exist-dgt", "--timeout", "0.3")
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "No DGT board found" in done.stdout
    assert "no such port /dev/does-not-exist-dgt" in done.stdout
    assert "udev" in done.stdout
    assert "dgt-service emulate" in done.stdout


@pytest.mark.slow
def test_scan_rejects_a_bad_timeout() -> None:
    done = run_scan("--timeout", "0")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "dgt-service scan: --timeout must be a positive number of seconds"
    )


# --- against the project's emulator -----------------------------------------------------


async def test_probe_finds_the_emulated_board_behind_a_udev_style_link(tmp_path: Path) -> None:
    """The virtual board powers up in bus mode like a real one; discovery finds it through
    a ``dgt/board`` link and the probe identifies it."""
    from dgt.emulator.board import VirtualBoard
    from dgt.emulator.pty import EmulatorServer

    dev = tmp_path / "dev"
    (dev / "dgt").mkdir(parents=True)
    board = VirtualBoard(serial="24680", revelation=True)
    async with EmulatorServer(board, link=dev / "dgt" / "board") as server:
        found = find_candidates(ports=[], dev=str(dev))
        assert [c.port for c in found] == [server.path]
        assert found[0].kind is MatchKind.UDEV_LINK
        result = await asyncio.to_thread(probe, found[0].port, 2.0)
    assert result.ok, result.error
    assert str(result.version) == "3.25"
    assert result.serial == "24680"
    assert result.long_serial == "3.25024680"
    assert not board.bus_mode  # the probe switched it to single-board mode


async def test_probe_of_a_pegasus_personality() -> None:
    from dgt.emulator.board import VirtualBoard
    from dgt.emulator.pty import EmulatorServer

    async with EmulatorServer(VirtualBoard(pegasus=True, serial="13579")) as server:
        result = await asyncio.to_thread(probe, server.path, 2.0)
    assert result.ok, result.error
    assert str(result.version) == "1.00"
    assert result.serial == "13579"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_rewritten_in_place_on_a_terminal_and_plain_otherwise() -> None:
    from dgt.discovery import ProbeResult
    from service.commands.scan import Progress

    tty_out = _Terminal()
    progress = Progress(tty_out)
    progress("start", 1, 2, "/dev/ttyACM0", None)
    progress("start", 2, 2, "/dev/rfcomm0", None)
    progress("done", 1, 2, "/dev/ttyACM0", ProbeResult("/dev/ttyACM0", serial="1"))
    progress.finish()
    text = tty_out.getvalue()
    assert "\n" not in text
    shown = text.split("\r")
    assert shown[0] == ""
    assert "probing 2/2: /dev/rfcomm0 ..." in text
    assert "probed 1/2: /dev/ttyACM0: ok" in text
    assert shown[-1] == ""  # the line is cleared at the end
    assert shown[-2].strip() == ""
    assert len(shown[-2]) >= len("probed 1/2: /dev/ttyACM0: ok")

    plain = io.StringIO()
    progress = Progress(plain)
    progress("start", 1, 1, "/dev/ttyACM0", None)
    progress("done", 1, 1, "/dev/ttyACM0", ProbeResult("/dev/ttyACM0", serial="1"))
    progress.finish()
    assert plain.getvalue() == "probing 1/1: /dev/ttyACM0 ...\n"
