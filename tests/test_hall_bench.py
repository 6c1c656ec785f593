"""Smoke runs of the tournament service's bench scripts: each runs with ``--quick`` in a
subprocess, exits 0 and prints its figure lines.  Performance numbers are never checked
(figures are for the issue notes, see bench/README.md); the correctness counts of the crash
and bad-input benches are: they must be zero."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"

SCRIPTS: dict[str, list[str]] = {
    "hall.py": [
        r"^games: \d+ real games replayed",
        r"^N=20: latency p50 [\d.]+ ms, p99 [\d.]+ ms, max [\d.]+ ms; CPU \d+%; [\d.]+ MB/table",
        r"^N=20: service CPU per input \d+ us \([\d,]+ inputs/s\); cycle collector [\d.]+% "
        r"of the time, \d+ full collections, longest \d+ ms",
        r"^goal: 1,000 tables on one core",
    ],
    "crash.py": [
        r"^kills: 3 \(SIGKILL at a random moment",
        r"^completed moves shown before the kills: \d+$",
        r"^moves lost: 0$",
        r"^moves changed: 0$",
        r"^replay divergences: 0$",
        r"^failed starts \(no page within 60 s, not killed early\): 0$",
    ],
    "bad_input.py": [
        r"^config: not TOML +exit 2 +ok ",
        r"^unknown port \(table 2\) +link down +ok +no such port",
        r"^admin request without token +HTTP 401 +ok ",
        r"^oversized body \(1 MB\) +HTTP 413 +ok ",
        r"^malformed request line +HTTP 400 +ok ",
        r"^cases: \d+, clear answer and service still running: \d+, failed: 0$",
    ],
}


@pytest.mark.timeout(150)
@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_bench_quick_run(script: str) -> None:
    result = subprocess.run(
        [sys.executable, str(BENCH / script), "--quick"],
        capture_output=True, text=True, timeout=140, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    lines = result.stdout.splitlines()
    for pattern in SCRIPTS[script]:
        assert any(re.search(pattern, line) for line in lines), (pattern, result.stdout)
