"""``dgt-service scan``: list the serial ports that may be DGT boards, ask each one who it
is, and print what answered; list the Bluetooth LE boards (Pegasus) in reach too.

Exit status: 0 when at least one board answered, 1 when none did (or on an error).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TextIO

from dgt.ble_discovery import DEFAULT_BLE_SCAN_TIME, BleBoard, scan_ble_boards
from dgt.discovery import (
    DEFAULT_PROBE_TIMEOUT,
    Candidate,
    Confidence,
    MatchKind,
    ProbeResult,
    find_candidates,
    probe_all,
)
from dgt.errors import DgtError
from service.errors import UsageError

HINTS = (
    "check the cable, and that the board is switched on",
    "USB boards: install the udev rules (docs/udev.md), then plug the board in again",
    "Bluetooth classic boards: connect them first with 'rfcomm connect' (docs/bluetooth.md)",
    "a Pegasus (Bluetooth LE): switch it on, and disconnect it from any phone or app",
    "no board at hand? 'dgt-service emulate' serves a virtual one: "
    "'dgt-service scan --port PATH' with the path it prints",
)
HINT_ALL = "'dgt-service scan --all' probes every serial port, not only the likely ones"


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``scan`` with the ``dgt-service`` parser."""
    p = subparsers.add_parser(
        "scan",
        help="find DGT boards on this machine",
        description=(
            "List serial ports that may be DGT boards (by USB id and name, Bluetooth "
            "/dev/rfcomm* nodes, the /dev/dgt/* links of the udev rules), ask each for its "
            "version and serial number, and print a table.  Exit status 0 when a board "
            "answered, 1 when none did."
        ),
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_PROBE_TIMEOUT,
        metavar="S",
        help=f"seconds to wait for each port's answer (default {DEFAULT_PROBE_TIMEOUT:g}); "
        "all ports are probed at once",
    )
    p.add_argument(
        "--all",
        dest="all_ports",
        action="store_true",
        help="probe every serial port, not only the likely ones",
    )
    p.add_argument(
        "--port",
        dest="ports",
        action="append",
        default=[],
        metavar="PATH",
        help="probe this port (or pyserial URL) instead of searching; repeatable",
    )
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument(
        "--no-ble",
        dest="no_ble",
        action="store_true",
        help="do not look for Bluetooth LE boards (Pegasus)",
    )
    p.add_argument(
        "--ble-seconds",
        type=float,
        default=DEFAULT_BLE_SCAN_TIME,
        metavar="S",
        help=f"seconds to listen for Bluetooth LE boards (default {DEFAULT_BLE_SCAN_TIME:g}), "
        "while the serial ports are probed",
    )
    p.set_defaults(run=run)


@dataclass(frozen=True, slots=True)
class Row:
    """One probed port: why it was picked and what it said."""

    candidate: Candidate
    result: ProbeResult
    transport: str = "serial"
    """``serial`` (USB, RFCOMM, pty) or ``ble`` (Bluetooth LE, seen advertising)."""
    ble: BleBoard | None = None
    """What the Bluetooth LE scan saw, for ``ble`` rows (they are listed, not probed)."""

    @property
    def status(self) -> str:
        if self.ble is not None:
            rssi = "" if self.ble.rssi is None else f", RSSI {self.ble.rssi} dBm"
            return f"seen{rssi}"
        return self.result.status

    def to_json(self) -> dict[str, Any]:
        out = {"transport": self.transport, **self.candidate.to_json(), **self.result.to_json()}
        if self.ble is not None:
            out.update(self.ble.to_json())
            out["status"] = "seen"
        return out


class Progress:
    """The progress line on stderr: rewritten in place on a terminal, plain lines
    otherwise (so logs and pipes stay readable)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._tty = stream.isatty()
        self._done = 0
        self._width = 0

    def __call__(
        self, stage: str, index: int, total: int, port: str, result: ProbeResult | None
    ) -> None:
        if stage == "start":
            self._show(f"probing {index}/{total}: {port} ...")
        elif self._tty and result is not None:
            self._done += 1
            self._show(f"probed {self._done}/{total}: {port}: {result.status}")

    def _show(self, text: str) -> None:
        if self._tty:
            pad = max(0, self._width - len(text))
            self._stream.write("\r" + text + " " * pad)
            self._width = len(text)
        else:
            self._stream.write(text + "\n")
        self._stream.flush()

    def note(self, text: str) -> None:
        """One line of news between the probe lines."""
        self._show(text)

    def finish(self) -> None:
        """Clear the in-place line."""
        if self._tty and self._width:
            self._stream.write("\r" + " " * self._width + "\r")
            self._stream.flush()
            self._width = 0


def _explicit(ports: list[str]) -> list[Candidate]:
    seen: set[str] = set()
    out: list[Candidate] = []
    for port in ports:
        if port not in seen:
            seen.add(port)
            out.append(Candidate(port, "given with --port", Confidence.HIGH, MatchKind.EXPLICIT))
    return out


_SCAN_NAME = "Bluetooth LE scan"


def _find_ble_boards(seconds: float) -> tuple[list[Row], str | None]:
    """Bluetooth LE boards (the DGT Pegasus), found by advertisement (name or Nordic UART
    service, docs/protocol.md §6.1; :mod:`dgt.ble_discovery`) rather than by ``dgt.discovery``.
    Their rows carry ``"transport": "ble"`` in the JSON output.  Returns the rows and, when
    this machine has no usable Bluetooth, a one-line note saying why (not an error)."""
    try:
        boards = scan_ble_boards(seconds, name=_SCAN_NAME)
    except DgtError as exc:
        return [], f"Bluetooth LE not searched: {str(exc).removeprefix(_SCAN_NAME + ': ')}"
    rows = []
    for board in boards:
        kind = MatchKind.NAME if board.confidence is Confidence.HIGH else MatchKind.OTHER
        candidate = Candidate(
            board.port,
            f"Bluetooth LE: {board.reason}",
            board.confidence,
            kind,
            description=board.name or "",
        )
        rows.append(Row(candidate, ProbeResult(board.port), transport="ble", ble=board))
    return rows, None


def _table(rows: list[Row]) -> list[str]:
    with_long = any(row.result.long_serial for row in rows)
    header = ["PORT", "MATCH", "VERSION", "SERIAL", *(["LONG SERIAL"] if with_long else [])]
    header.append("STATUS")
    lines = [header]
    for row in rows:
        r = row.result
        port = row.candidate.port
        if row.candidate.aliases:
            port = f"{port} ({', '.join(row.candidate.aliases)})"
        elif row.ble is not None and row.ble.name:
            port = f"{port} ({row.ble.name})"
        cells = [
            port,
            row.candidate.reason,
            "-" if r.version is None else str(r.version),
            r.serial or "-",
        ]
        if with_long:
            cells.append(r.long_serial or "-")
        cells.append(row.status)
        lines.append(cells)
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    return [
        "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
        for line in lines
    ]


def _print_hints(out: TextIO, headline: str, args: argparse.Namespace) -> None:
    print(headline, file=out)
    print("what to check:", file=out)
    hints = list(HINTS)
    if not (args.all_ports or args.ports):
        hints.insert(3, HINT_ALL)
    for hint in hints:
        print(f"  - {hint}", file=out)


def run(args: argparse.Namespace) -> int:
    """Find, probe, print.  Returns 0 when at least one board answered."""
    timeout: float = args.timeout
    if not (math.isfinite(timeout) and timeout > 0):
        raise UsageError("--timeout must be a positive number of seconds")
    if args.ports:
        candidates = _explicit(args.ports)
    else:
        candidates = find_candidates(include_all=args.all_ports)

    ble_seconds: float = args.ble_seconds
    search_ble = not args.ports and not args.no_ble
    if search_ble and not (math.isfinite(ble_seconds) and ble_seconds > 0):
        raise UsageError("--ble-seconds must be a positive number of seconds")

    started = time.monotonic()
    progress = Progress(sys.stderr)
    ble_note: str | None = None
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="dgt-ble-scan") as pool:
        ble_scan: Future[tuple[list[Row], str | None]] | None = None
        if search_ble:
            # Listening for advertisements runs while the serial ports are probed.
            progress.note(f"listening for Bluetooth LE boards for {ble_seconds:g} s ...")
            ble_scan = pool.submit(_find_ble_boards, ble_seconds)
        try:
            results = probe_all([c.port for c in candidates], timeout, progress=progress)
            rows = [Row(c, r) for c, r in zip(candidates, results, strict=True)]
            if ble_scan is not None:
                ble_rows, ble_note = ble_scan.result()
                rows.extend(ble_rows)
        finally:
            progress.finish()
    if ble_note is not None:
        print(f"note: {ble_note} (--no-ble skips the search)", file=sys.stderr)
    found = sum(1 for row in rows if row.result.ok)
    elapsed = time.monotonic() - started

    if args.json:
        json.dump(
            {
                "boards_found": found,
                "timeout": timeout,
                "elapsed": round(elapsed, 3),
                "ports": [row.to_json() for row in rows],
                "bluetooth_le": {
                    "searched": search_ble and ble_note is None,
                    "seconds": ble_seconds if search_ble else 0,
                    "note": ble_note,
                },
            },
            sys.stdout,
            indent=2,
        )
        sys.stdout.write("\n")
        if not found:
            _print_hints(sys.stderr, _nothing_headline(rows), args)
        return 0 if found else 1

    if rows:
        for line in _table(rows):
            print(line)
    failed = [row.result for row in rows if not row.result.ok]
    if failed:
        print()
        for result in failed:
            print(result.error)
    if found:
        s = "" if found == 1 else "s"
        print(f"\n{found} DGT board{s} found ({elapsed:.1f} s).")
        return 0
    if rows:
        print()
    _print_hints(sys.stdout, _nothing_headline(rows), args)
    return 1


def _nothing_headline(rows: list[Row]) -> str:
    if not rows:
        return "No DGT board found: no serial port or Bluetooth LE device looks like one."
    return "No DGT board found: no port answered like one."
