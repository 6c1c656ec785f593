"""``dgt-service scan``: list the serial ports that may be DGT boards, ask each one who it
is, and print what answered.

Exit status: 0 when at least one board answered, 1 when none did (or on an error).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import dataclass
from typing import Any, TextIO

from dgt.discovery import (
    DEFAULT_PROBE_TIMEOUT,
    Candidate,
    Confidence,
    MatchKind,
    ProbeResult,
    find_candidates,
    probe_all,
)
from service.errors import UsageError

HINTS = (
    "check the cable, and that the board is switched on",
    "USB boards: install the udev rules (docs/udev.md), then plug the board in again",
    "Bluetooth boards: connect them first with 'rfcomm connect' (docs/udev.md)",
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
    p.set_defaults(run=run)


@dataclass(frozen=True, slots=True)
class Row:
    """One probed port: why it was picked and what it said."""

    candidate: Candidate
    result: ProbeResult
    transport: str = "serial"
    """``serial`` (USB, RFCOMM, pty); ``ble`` will come with the Bluetooth LE boards."""

    def to_json(self) -> dict[str, Any]:
        return {"transport": self.transport, **self.candidate.to_json(), **self.result.to_json()}


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


def _find_ble_boards(timeout: float) -> list[Row]:
    """Bluetooth LE boards (the DGT Pegasus).

    Not done yet: it comes with the Bluetooth issue.  BLE boards are not serial ports, so
    they are found by advertisement (service UUID, fact sheet §6.1) rather than by
    ``dgt.discovery``, and their rows carry ``"transport": "ble"`` in the JSON output.
    Add them here; ``run`` already merges what this returns.
    """
    del timeout
    return []


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
        cells = [
            port,
            row.candidate.reason,
            "-" if r.version is None else str(r.version),
            r.serial or "-",
        ]
        if with_long:
            cells.append(r.long_serial or "-")
        cells.append(r.status)
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

    started = time.monotonic()
    progress = Progress(sys.stderr)
    try:
        results = probe_all([c.port for c in candidates], timeout, progress=progress)
    finally:
        progress.finish()
    rows = [Row(c, r) for c, r in zip(candidates, results, strict=True)]
    if not args.ports:
        rows.extend(_find_ble_boards(timeout))
    found = sum(1 for row in rows if row.result.ok)
    elapsed = time.monotonic() - started

    if args.json:
        json.dump(
            {
                "boards_found": found,
                "timeout": timeout,
                "elapsed": round(elapsed, 3),
                "ports": [row.to_json() for row in rows],
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
        return "No DGT board found: no serial port looks like one."
    return "No DGT board found: no port answered like one."
