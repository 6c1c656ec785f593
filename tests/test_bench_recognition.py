"""Smoke run of ``bench/recognition.py --quick``: it runs and prints its figure lines.
Never looks at a number (timings are for the issue notes, not for tests)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench" / "recognition.py"


def test_recognition_bench_quick_run_prints_its_figures() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--quick"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    for line in (
        "piece-identity recogniser: games:",
        "piece-identity usual approach: games:",
        "presence-only recogniser: games:",
        "presence-only usual approach: games:",
        "cost per board event p50:",
        "cost per board event p99:",
    ):
        assert line in done.stdout, done.stdout
