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
