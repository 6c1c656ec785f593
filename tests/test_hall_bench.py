"""Smoke runs of the tournament service's bench scripts: each runs with ``--quick`` in a
subprocess, exits 0 and prints its figure lines.  Performance numbers are never checked
(figures are for the issue notes, see bench/README.md); the correctness counts of the crash
and bad-input benches are: they must be zero."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"

SCRIPTS: dict[str, list[str]] = {
    "hall.py": [
        r"^games: \d+ real games replayed",
        r"^N=20: latency p50 [\d.]+ ms, p99 [\d.]+ ms, max [\d.]+ ms; CPU \d+%; [\d.]+ MB/table",
        r"^N=20: service CPU per input \d+ us \([\d,]+ inputs/s\); cycle collector [\d.]+% "
        r"of the time, \d+ full collections, longest \d+ ms",
        r"^N=20: stages \(CPU per input",
        r"^  all inputs by stage \(us per input\): driver [\d.]+ \+ recogniser [\d.]+ \+ "
        r"table [\d.]+ \+ store [\d.]+ \+ commit [\d.]+ \+ stream [\d.]+$",
        r"^goal \(issue 20\): 2,000 tables at <= 80 us",
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


def test_the_hall_spectator_reads_the_update_time_as_a_full_parse_does() -> None:
    """bench/hall.py's spectator reads ``t_in`` without decoding the whole update."""
    import importlib.util
    import json

    from service.web.stream import dumps

    spec = importlib.util.spec_from_file_location("hall_bench", BENCH / "hall.py")
    assert spec is not None
    assert spec.loader is not None
    hall_bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hall_bench)
    events = [{"time": 1.5, "type": "move", "uci": "e2e4"}, {"time": 1.5, "type": "clock"}]
    for t_in in (1795337966.7807086, 0.5, 1e-07, 2.5e16, 12345.0):
        body = {"table": "1", "state": {"fen": "8/8"}, "events": events, "t_in": t_in}
        raw = b"data: " + dumps(body).encode() + b"\n"
        assert hall_bench._t_in(raw) == json.loads(raw[6:])["t_in"] == t_in
        assert raw.count(b'"type":"move"') == 1
    assert hall_bench._t_in(b'data: {"table":"1","events":[]}\n') is None


def test_the_stage_meter_charges_the_innermost_stage_and_leaves_the_service_as_it_was() -> None:
    """bench/_stages.py wraps the service's methods (and samples with a profiling timer)
    only while installed; a nested stage's time is its own, not its caller's as well."""
    import signal
    import sys

    sys.path.insert(0, str(BENCH.parent))
    from bench._stages import STAGES, StageMeter
    from service.hall import Hall
    from service.table import Table

    before = {name: Table.__dict__[name] for name in ("feed", "tick", "admin")}
    flush = Hall.__dict__["_flush"]
    handler = signal.getsignal(signal.SIGPROF)
    meter = StageMeter(sampled=True)
    meter.install()
    try:
        assert Table.__dict__["feed"] is not before["feed"]
        assert signal.getsignal(signal.SIGPROF) == meter.sample
        meter.on = True
        meter.reset()
        meter.enter("square", "table")
        meter.enter(None, "recogniser")  # inherits the kind
        sum(range(200000))
        meter.sample()
        meter.leave()
        sum(range(200000))
        meter.sample()
        meter.leave()
        meter.on = False
        assert set(meter.ns) >= {("square", "recogniser"), ("square", "table")}
        assert meter.ns[("square", "recogniser")] + meter.ns[("square", "table")] > 0
    finally:
        meter.uninstall()
    assert {name: Table.__dict__[name] for name in before} == before
    assert Hall.__dict__["_flush"] is flush
    assert signal.getsignal(signal.SIGPROF) == handler
    assert signal.getitimer(signal.ITIMER_PROF) == (0.0, 0.0)

    exact = StageMeter(sampled=False)
    exact.on = True
    exact.enter("square", "table")
    exact.enter(None, "recogniser")
    sum(range(20000))
    exact.leave()
    exact.leave()
    assert set(exact.ns) == {("square", "table"), ("square", "recogniser")}
    split = exact.split()
    assert set(split["square"]) == set(STAGES)
    assert split["square"]["recogniser"] > 0


def _hall_bench() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("hall_bench", BENCH / "hall.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_hall_bench_serves_boards_over_tcp_when_the_ptys_run_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``--boards-transport auto``: a pty per board while N fits in the free ones (with a
    margin), TCP beyond (the kernel allows 4,096 ptys by default); a choice is kept."""
    import argparse

    hall_bench = _hall_bench()
    monkeypatch.setattr(hall_bench, "free_ptys", lambda: 4096 - 10)
    auto = argparse.Namespace(boards_transport="auto")
    assert hall_bench.boards_transport(2000, auto) == "pty"
    assert hall_bench.boards_transport(4096 - 10 - hall_bench.PTY_MARGIN, auto) == "pty"
    assert hall_bench.boards_transport(4096 - 10 - hall_bench.PTY_MARGIN + 1, auto) == "tcp"
    assert hall_bench.boards_transport(5000, auto) == "tcp"
    forced = argparse.Namespace(boards_transport="pty")
    assert hall_bench.boards_transport(5000, forced) == "pty"
    monkeypatch.setattr(hall_bench, "free_ptys", lambda: None)  # not Linux: ptys
    assert hall_bench.boards_transport(5000, auto) == "pty"


@pytest.mark.slow
@pytest.mark.timeout(150)
def test_the_hall_bench_runs_with_its_boards_over_tcp_in_another_process() -> None:
    """The path 5,000 tables take (boards on TCP ports of a second process, opened by the
    hall as socket:// URLs), at 20 tables, with the memory report."""
    done = subprocess.run(
        [sys.executable, str(BENCH / "hall.py"), "--quick", "--no-stages", "--boards-process",
         "--boards-transport", "tcp", "--memory"],
        capture_output=True, text=True, timeout=140, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    out = done.stdout
    assert re.search(r"^N=20: latency p50 .*boards over TCP, socket:// URLs", out, re.M), out
    assert re.search(r"^N=20: connected after \d+ s, resident set \+[\d.]+ kB", out, re.M), out
    assert re.search(r"^  owned by one table \(sys.getsizeof .*\): [\d.]+ kB", out, re.M), out
    assert re.search(r"^  garbage cycles held frozen .*: [\d.]+ objects per table", out, re.M), out


def test_the_hall_bench_gives_the_service_one_cpu_and_its_children_the_others() -> None:
    """And reads how long a process waited for a CPU (0 for one that is gone)."""
    hall_bench = _hall_bench()
    assert hall_bench.split_cpus({0, 1}) == ({0}, {1})
    assert hall_bench.split_cpus({2, 5, 3, 7}) == ({2}, {3, 5, 7})
    assert hall_bench.split_cpus({4}) == ({4}, {4})  # one CPU: shared, as it must be
    assert hall_bench.cpu_wait_seconds() >= 0.0
    assert hall_bench.cpu_wait_seconds(2**22 + 12345) == 0.0  # past pid_max: no such process


# The service's process pins itself, then starts the boards process as the bench does; both
# say where they may run.
PIN_SCRIPT = """
import argparse, asyncio, os, sys
sys.path.insert(0, {root!r})
from bench import hall
hall.pin_service()

async def main() -> None:
    args = argparse.Namespace(seed=1, speed=1.0, stagger=1.0)
    boards = await hall.BoardsProcess.start(1, args, "tcp")
    try:
        print(sorted(os.sched_getaffinity(0)), sorted(os.sched_getaffinity(boards.process.pid)))
    finally:
        await boards.stop()

asyncio.run(main())
"""


@pytest.mark.slow
@pytest.mark.skipif(
    not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
    reason="needs two CPUs to keep apart",
)
def test_the_boards_process_does_not_inherit_the_services_cpu() -> None:
    """Regression: the boards (and spectator) process pinned itself to the last CPU of the
    affinity it inherited, which was the service's one CPU, so they shared its core."""
    cpus = sorted(os.sched_getaffinity(0))
    done = subprocess.run(
        [sys.executable, "-c", PIN_SCRIPT.format(root=str(BENCH.parent))],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    service, boards = done.stdout.strip().split("] ")
    assert service + "]" == str(cpus[:1])
    assert boards == str(cpus[1:])
