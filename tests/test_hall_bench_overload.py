"""``bench/hall.py``'s overload watch: a run whose event loop no longer comes back to the
bench (a hall too big for the core) is ended with a one-line figure and status 3, and the
child processes it names are killed, instead of the bench hanging."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# A stand-in hall (the watch only counts its tables' inputs), a child process, and a loop
# that stays away: the main thread blocks as an overloaded loop does.
SCRIPT = textwrap.dedent(
    """
    import subprocess, sys, time, types
    sys.path.insert(0, {root!r})
    from bench import hall as bench

    bench.OVERLOAD_LATE = 0.5
    tables = {{"1": types.SimpleNamespace(inputs=0), "2": types.SimpleNamespace(inputs=0)}}
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    print(child.pid, flush=True)
    watch = bench.LoopWatch(2, types.SimpleNamespace(runners=tables), [child.pid])
    watch.start()
    watch.due(0.2, "window")
    for _ in range(400):  # busy, as a loop that never returns to its timers
        tables["1"].inputs += 5
        time.sleep(0.01)
    print("the watch never ended the run", flush=True)
    """
)


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (killed, not reaped yet)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


@pytest.mark.slow
def test_an_overloaded_run_is_ended_with_its_figures_and_status_3() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(root=str(ROOT))],
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = done.stdout.splitlines()
    assert done.returncode == 3, done.stdout + done.stderr
    child = int(lines[0])
    report = lines[1]
    assert report.startswith("N=2: overloaded: the event loop is ")
    assert "late for the end of the window" in report
    assert " inputs/s at " in report
    assert "no latency figures" in report
    assert "the watch never ended the run" not in done.stdout
    assert not _running(child)  # the child named was killed with the run


@pytest.mark.slow
def test_a_loop_back_in_time_is_left_alone() -> None:
    script = SCRIPT.replace('watch.due(0.2, "window")', 'watch.due(0.2, "window"); watch.back()')
    script = script.replace("range(400)", "range(150)")
    done = subprocess.run(
        [sys.executable, "-c", script.format(root=str(ROOT))],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "overloaded" not in done.stdout
    assert "the watch never ended the run" in done.stdout
    child = int(done.stdout.splitlines()[0])
    assert _running(child)  # left alone by the watch
    subprocess.run(["kill", str(child)], capture_output=True)
