"""Finding DGT boards: which serial ports look like one, and which of them answer like one.

:func:`find_candidates` lists ports without opening them: USB serial ports whose ids or
product strings belong to a DGT board (facts: docs/protocol.md §1.2),
Bluetooth classic ``/dev/rfcomm*`` nodes (§1.3) and the stable names ``/dev/dgt/*`` made by
``udev/99-dgt.rules``.  Each candidate says why it was picked and how sure that is.

:func:`probe` opens one port at 9600 8N1, asks for the version and the serial numbers
(§3.6), and reports what came back or, as one line, why nothing did.  :func:`probe_all`
probes several ports at once, so a scan takes about one time-out however many ports there are.

Bluetooth LE boards (the Pegasus) are not serial ports; finding them belongs to the BLE
transport and is not done here.
"""

from __future__ import annotations

import enum
import glob
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import serial
from serial.tools import list_ports

from dgt.errors import (
    ConnectionFailed,
    DgtError,
    NotADgtBoard,
)
from dgt.protocol import (
    Command,
    FrameParser,
    LongSerialNumber,
    SerialNumber,
    Version,
    encode_command,
)
from dgt.transports.serial import map_open_error

__all__ = [
    "AMBIGUOUS_USB_IDS",
    "DEFAULT_PROBE_TIMEOUT",
    "KNOWN_USB_IDS",
    "Candidate",
    "Confidence",
    "MatchKind",
    "PortInfo",
    "ProbeResult",
    "find_candidates",
    "match_port",
    "mentions_dgt",
    "probe",
    "probe_all",
]

_log = logging.getLogger(__name__)

DEFAULT_PROBE_TIMEOUT = 2.0
"""Seconds a probe waits for the identification replies.  A board answers within a few
tens of milliseconds; Bluetooth links and boards busy writing EEPROM are slower."""

RESEND_INTERVAL = 0.5
"""Seconds after which unanswered identification requests are sent again: a board that
powered up in bus mode may drop bytes that arrived while it was switching modes."""

LONG_SERIAL_GRACE = 0.25
"""Seconds to wait for the long serial number once version and serial number are in:
boards older than 2012 do not know the command and never answer it."""

_READ_SLICE = 0.05
"""Longest single blocking read, so a probe notices its deadline promptly."""

KNOWN_USB_IDS: dict[tuple[int, int], str] = {
    (0x045B, 0x8111): "USB id 045B:8111 (DGT USB board, Renesas CDC)",
    (0x04D8, 0x000A): "USB id 04D8:000A (older DGT USB board, Microchip CDC)",
}
"""USB vendor/product ids seen on DGT boards (docs/protocol.md §1.2)."""

AMBIGUOUS_USB_IDS: dict[tuple[int, int], str] = {
    (0x0403, 0x6001): "USB id 0403:6001 (FTDI FT232)",
}
"""Ids seen on a DGT board but shared with generic adapters: they count only together
with a manufacturer or product string that mentions DGT."""

_DGT_WORDS = ("dgt", "digital game technology")


class Confidence(enum.IntEnum):
    """How likely a candidate port is a DGT board, before it is probed."""

    LOW = 1
    """Only listed because ``--all`` asked for every serial port."""
    MEDIUM = 2
    """A port of a kind DGT boards use (Bluetooth serial, an id also used elsewhere)."""
    HIGH = 3
    """A DGT id or name, or a port the udev rules recognised."""

    def __str__(self) -> str:
        return self.name.lower()


class MatchKind(enum.Enum):
    """What kind of evidence picked a candidate."""

    USB_ID = "usb-id"
    NAME = "name"
    UDEV_LINK = "udev-link"
    RFCOMM = "rfcomm"
    EXPLICIT = "explicit"
    OTHER = "other"

    def __str__(self) -> str:
        return self.value


class PortInfo(Protocol):
    """What discovery reads from a port listing: the attributes of pyserial's
    ``serial.tools.list_ports_common.ListPortInfo``."""

    device: str
    description: str
    vid: int | None
    pid: int | None
    serial_number: str | None
    manufacturer: str | None
    product: str | None
    interface: str | None


@dataclass(frozen=True, slots=True)
class Candidate:
    """A port that may be a DGT board."""

    port: str
    """The path to open (``/dev/ttyACM0``, ``/dev/rfcomm0``, ``/dev/dgt/board``, ...)."""
    reason: str
    """Why it was picked, for people (``USB id 045B:8111 (...)``)."""
    confidence: Confidence
    kind: MatchKind
    description: str = ""
    """What the operating system calls the device, if anything."""
    usb_id: str | None = None
    """``VVVV:PPPP`` for USB ports."""
    usb_serial: str | None = None
    """The USB serial-number string, if the device has one."""
    aliases: tuple[str, ...] = ()
    """Other names of the same device (udev symlinks under ``/dev/dgt``)."""

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "port": self.port,
            "reason": self.reason,
            "confidence": str(self.confidence),
            "kind": str(self.kind),
            "description": self.description,
            "usb_id": self.usb_id,
            "usb_serial": self.usb_serial,
            "aliases": list(self.aliases),
        }


def mentions_dgt(*texts: str | None) -> bool:
    """Whether any of the texts names DGT (case does not matter)."""
    for text in texts:
        if text:
            low = text.lower()
            if any(word in low for word in _DGT_WORDS):
                return True
    return False


def _usb_id(info: PortInfo) -> str | None:
    if info.vid is None or info.pid is None:
        return None
    return f"{info.vid:04X}:{info.pid:04X}"


def _is_rfcomm(device: str) -> bool:
    return os.path.basename(device).startswith("rfcomm")


def match_port(info: PortInfo, *, include_all: bool = False) -> Candidate | None:
    """Whether one listed serial port looks like a DGT board, and why.

    Known DGT USB ids win; an ambiguous id (FTDI) counts only with a DGT name; then any port
    whose manufacturer, product or description names DGT; then Bluetooth serial nodes.
    Anything else is returned (with low confidence) only when ``include_all`` is set.
    """
    ids = (info.vid, info.pid) if info.vid is not None and info.pid is not None else None
    usb_id = _usb_id(info)
    strings = (info.manufacturer, info.product, info.description, info.interface)
    named = mentions_dgt(*strings)

    def make(reason: str, confidence: Confidence, kind: MatchKind) -> Candidate:
        return Candidate(
            port=info.device,
            reason=reason,
            confidence=confidence,
            kind=kind,
            description=info.description if info.description not in (None, "n/a") else "",
            usb_id=usb_id,
            usb_serial=info.serial_number,
        )

    if ids in KNOWN_USB_IDS:
        # 04D8:000A is Microchip's stock CDC id; only a DGT string makes it certain.
        sure = ids == (0x045B, 0x8111) or named
        return make(
            KNOWN_USB_IDS[ids], Confidence.HIGH if sure else Confidence.MEDIUM, MatchKind.USB_ID
        )
    if ids in AMBIGUOUS_USB_IDS and named:
        return make(
            f"{AMBIGUOUS_USB_IDS[ids]} named DGT: {_dgt_text(strings)}",
            Confidence.HIGH,
            MatchKind.USB_ID,
        )
    if named:
        return make(f"named DGT: {_dgt_text(strings)}", Confidence.HIGH, MatchKind.NAME)
    if _is_rfcomm(info.device):
        return make("Bluetooth serial (RFCOMM)", Confidence.MEDIUM, MatchKind.RFCOMM)
    if include_all:
        if ids in AMBIGUOUS_USB_IDS:
            reason = f"{AMBIGUOUS_USB_IDS[ids]}, not named DGT"
        elif usb_id is not None:
            reason = f"USB serial port {usb_id}"
        else:
            reason = "serial port"
        return make(reason, Confidence.LOW, MatchKind.OTHER)
    return None


def _dgt_text(strings: Iterable[str | None]) -> str:
    for text in strings:
        if mentions_dgt(text):
            return repr(text)
    return "''"


def _comports() -> list[PortInfo]:
    return list(list_ports.comports())


def find_candidates(
    *,
    include_all: bool = False,
    ports: Sequence[PortInfo] | None = None,
    dev: str = "/dev",
) -> list[Candidate]:
    """Ports that may be DGT boards, most likely first.

    ``ports`` defaults to pyserial's listing of this machine's serial ports; ``dev`` is
    where ``rfcomm*`` nodes and the udev links ``dgt/...`` are looked for (both are
    parameters so tests can give their own).  A udev link to a listed port does not make a
    second candidate: it is recorded as an alias, and raises the confidence to high (the
    rules only link DGT boards).
    """
    listed = _comports() if ports is None else list(ports)
    by_real: dict[str, Candidate] = {}
    for info in listed:
        candidate = match_port(info, include_all=include_all)
        if candidate is not None:
            by_real.setdefault(os.path.realpath(candidate.port), candidate)

    for node in sorted(glob.glob(os.path.join(glob.escape(dev), "rfcomm*"))):
        real = os.path.realpath(node)
        if real not in by_real:
            by_real[real] = Candidate(
                port=node,
                reason="Bluetooth serial (RFCOMM)",
                confidence=Confidence.MEDIUM,
                kind=MatchKind.RFCOMM,
            )

    for link in _udev_links(os.path.join(dev, "dgt")):
        real = os.path.realpath(link)
        found = by_real.get(real)
        if found is None:
            by_real[real] = Candidate(
                port=link,
                reason=f"udev link {link} (udev/99-dgt.rules)",
                confidence=Confidence.HIGH,
                kind=MatchKind.UDEV_LINK,
            )
        elif link != found.port and link not in found.aliases:
            reason = found.reason
            if found.confidence < Confidence.HIGH:
                reason = f"{reason}; udev link {link}"
            by_real[real] = replace(
                found,
                aliases=(*found.aliases, link),
                confidence=Confidence.HIGH,
                reason=reason,
            )

    result = sorted(by_real.values(), key=lambda c: (-c.confidence, _natural(c.port)))
    _log.debug("candidates: %s", [c.port for c in result])
    return result


def _udev_links(directory: str) -> list[str]:
    """Symlinks below ``directory`` (``/dev/dgt``), ``board`` first then sorted."""
    links: list[str] = []
    for root, _dirs, files in os.walk(directory):
        links.extend(os.path.join(root, name) for name in files)
    links = [link for link in links if os.path.exists(link)]  # drop dangling links
    return sorted(links, key=lambda p: (os.path.basename(p) != "board", p))


def _natural(text: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key putting ttyACM2 before ttyACM10."""
    return tuple(
        (0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", text) if part
    )


# --- probing ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ProbeResult:
    """What one port said when asked who it is."""

    port: str
    version: Version | None = None
    serial: str | None = None
    long_serial: str | None = None
    error: str | None = None
    """One line saying why the port is not a usable board; None when it answered."""
    error_type: str | None = None
    """The name of the :mod:`dgt.errors` class behind ``error`` (``PortBusy``, ...)."""
    elapsed: float = 0.0
    """Seconds the probe took."""
    other_messages: int = field(default=0, compare=False)
    """Other DGT messages seen meanwhile (field updates, clock times from a board left in
    update mode by another program)."""

    @property
    def ok(self) -> bool:
        """True when the port answered like a DGT board."""
        return self.error is None

    @property
    def status(self) -> str:
        """A short word for tables: ``ok``, ``no serial number``, or the error's kind."""
        if self.error is not None:
            return _STATUS_WORDS.get(self.error_type or "", "error")
        if self.serial is None:
            return "ok (no serial number)"
        return "ok"

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "port": self.port,
            "ok": self.ok,
            "status": self.status,
            "version": None if self.version is None else str(self.version),
            "serial": self.serial,
            "long_serial": self.long_serial,
            "error": self.error,
            "error_type": self.error_type,
            "elapsed": round(self.elapsed, 3),
        }


_STATUS_WORDS = {
    "PortNotFound": "not found",
    "PortPermissionDenied": "permission denied",
    "PortBusy": "busy",
    "NotADgtBoard": "not answering",
    "ConnectionFailed": "failed",
}


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _open(port: str, timeout: float) -> serial.Serial:
    try:
        return serial.serial_for_url(
            port,
            baudrate=9600,
            bytesize=serial.EIGHTBITS,
            parity=serial.PARITY_NONE,
            stopbits=serial.STOPBITS_ONE,
            timeout=_READ_SLICE,
            write_timeout=timeout,
            xonxoff=False,
            rtscts=False,
            exclusive=True,
        )
    except (serial.SerialException, OSError) as exc:
        raise map_open_error(port, exc) from exc


def _identify(link: serial.Serial, port: str, timeout: float) -> ProbeResult:
    """Ask the open port for version and serial numbers; collect the answers."""
    start = time.monotonic()
    deadline = start + timeout
    parser = FrameParser()
    version: Version | None = None
    serial_text: str | None = None
    long_serial: str | None = None
    others = 0
    received = 0
    requests = {
        "version": encode_command(Command.SEND_VERSION),
        "serial": encode_command(Command.RETURN_SERIALNR),
        "long": encode_command(Command.RETURN_LONG_SERIALNR),
    }
    link.reset_input_buffer()
    # The first byte switches a board in bus mode to single-board mode.
    link.write(b"".join(requests.values()))
    next_resend = start + RESEND_INTERVAL
    grace_end: float | None = None
    while True:
        now = time.monotonic()
        if grace_end is not None and (long_serial is not None or now >= grace_end):
            break
        if now >= deadline:
            break
        if grace_end is None and now >= next_resend:
            missing = b"".join(
                request
                for name, request in requests.items()
                if (name == "version" and version is None)
                or (name == "serial" and serial_text is None)
                or (name == "long" and long_serial is None)
            )
            _log.debug("%s: asking again (%s)", port, missing.hex())
            link.write(missing)
            next_resend = now + RESEND_INTERVAL
        try:
            data = link.read(max(1, link.in_waiting))
        except (serial.SerialException, OSError) as exc:
            raise ConnectionFailed(
                f"{port} stopped working while being probed: {_one_line(str(exc))}"
            ) from exc
        if not data:
            continue
        received += len(data)
        for message in parser.feed(data):
            if isinstance(message, Version):
                version = message
            elif isinstance(message, SerialNumber):
                serial_text = message.text.strip()
            elif isinstance(message, LongSerialNumber):
                long_serial = message.text.strip()
            else:
                others += 1
        if grace_end is None and version is not None and serial_text is not None:
            grace_end = min(deadline, time.monotonic() + LONG_SERIAL_GRACE)

    elapsed = time.monotonic() - start
    if version is None and serial_text is None and long_serial is None:
        _log.debug(
            "%s: no identification in %.2f s (%d bytes, %d other messages, %d garbage)",
            port,
            elapsed,
            received,
            others,
            parser.discarded,
        )
        raise NotADgtBoard(port, timeout)
    return ProbeResult(
        port=port,
        version=version,
        serial=serial_text,
        long_serial=long_serial,
        elapsed=elapsed,
        other_messages=others,
    )


def probe(port: str, timeout: float = DEFAULT_PROBE_TIMEOUT) -> ProbeResult:
    """Open ``port`` at 9600 8N1, ask for version, serial and long serial number, and wait
    up to ``timeout`` seconds for the replies.

    Never raises for a port that is missing, locked, not permitted, silent or broken: the
    result then carries the one-line message of the matching :mod:`dgt.errors` class
    (``PortNotFound``, ``PortPermissionDenied``, ``PortBusy``, ``NotADgtBoard``, or
    ``ConnectionFailed``).  A board counts as answering when any identification message
    arrived; the long serial number is optional (older boards do not know it).

    Only read-only requests are sent: none of them changes a board's update mode (a board
    still in bus mode after power-up switches to single-board mode, as on any host's first
    command).  The port is opened with an exclusive lock, so a program holding one (the
    driver does) shows up as busy instead of having its replies stolen.
    """
    if timeout <= 0:
        raise ValueError("timeout must be positive")
    start = time.monotonic()
    try:
        link = _open(port, timeout)
        try:
            result = _identify(link, port, timeout)
        finally:
            link.close()
    except DgtError as exc:
        _log.debug("%s: %s", port, exc)
        return ProbeResult(
            port=port,
            error=str(exc),
            error_type=type(exc).__name__,
            elapsed=time.monotonic() - start,
        )
    _log.debug("%s: version %s serial %s", port, result.version, result.serial)
    return result


ProbeEvent = Callable[[str, int, int, str, ProbeResult | None], None]
"""``progress(stage, index, total, port, result)``: stage ``"start"`` (result None) or
``"done"``; ``index`` counts from 1 in the order the ports were given."""


def probe_all(
    ports: Sequence[str],
    timeout: float = DEFAULT_PROBE_TIMEOUT,
    *,
    progress: ProbeEvent | None = None,
    max_workers: int = 16,
) -> list[ProbeResult]:
    """Probe every port at the same time (one thread each, up to ``max_workers``) and
    return the results in the order of ``ports``.  ``progress`` is called from the worker
    threads, one call at a time."""
    if not ports:
        return []
    total = len(ports)
    lock = threading.Lock()

    def notify(stage: str, index: int, port: str, result: ProbeResult | None) -> None:
        if progress is not None:
            with lock:
                progress(stage, index, total, port, result)

    def one(index: int, port: str) -> ProbeResult:
        notify("start", index, port, None)
        result = probe(port, timeout)
        notify("done", index, port, result)
        return result

    workers = max(1, min(max_workers, total))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="dgt-probe") as pool:
        futures = [pool.submit(one, i, port) for i, port in enumerate(ports, start=1)]
        return [future.result() for future in futures]
