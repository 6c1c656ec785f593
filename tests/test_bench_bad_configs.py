"""Smoke run of ``bench/bad_configs.py --quick`` (kept apart from test_bench_smoke.py): it
exits 0, prints a row per malformed config and the counts, and no config gives a
traceback (the figure the issue asks for is 0)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench" / "bad_configs.py"


@pytest.mark.slow
def test_bad_configs_quick_run() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--quick"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    rows = [line for line in lines if re.search(r" \| traceback: (yes|no)$", line)]
    count = re.search(r"^malformed configs: (\d+)$", done.stdout, re.M)
    assert count is not None, done.stdout
    assert len(rows) == int(count.group(1)) > 60
    assert all(line.endswith("| traceback: no") for line in rows)
    assert re.search(r"^tracebacks: 0 \(goal 0\)$", done.stdout, re.M)
    assert re.search(r"^answers not one line naming FILE:LINE: 0$", done.stdout, re.M)
    assert re.search(r"^accepted: 0$", done.stdout, re.M)
    assert re.search(r"^hung: 0 \(goal 0\)$", done.stdout, re.M)
