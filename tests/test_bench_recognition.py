"""Smoke runs of ``bench/recognition.py`` (``--quick``, one named game): they run and print
their figure lines.  Never look at a number (timings are for the issue notes, not for
tests)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

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


@pytest.mark.slow
def test_recognition_bench_runs_one_named_game_on_one_board_family() -> None:
    """``--games`` plays only the games named (each with the seed and clock it has among
    the games of ``--sources``), ``--family`` only one board family; an unknown name is a
    one-line error."""
    done = subprocess.run(
        [sys.executable, str(BENCH), "--sources", "960", "--games", "960#0kq", "--family",
         "presence", "--seeds", "1", "--repeat", "1"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "games per run: 1," in done.stdout
    assert "presence-only recogniser: games: 1 " in done.stdout
    assert "piece-identity" not in done.stdout
    unknown = subprocess.run(
        [sys.executable, str(BENCH), "--sources", "960", "--games", "960#0xx"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert unknown.returncode != 0
    assert unknown.stderr.strip() == "no game 960#0xx in --sources 960"
