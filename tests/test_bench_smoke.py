"""Smoke runs of the bench scripts: each runs with ``--quick`` in a subprocess, exits 0 and
prints its figure lines.  No number is ever checked: figures are for the issue notes, not
for CI (see bench/README.md).  To add a script, append it to ``SCRIPTS``.
"""

from __future__ import annotations

import gzip
import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"

SCRIPTS: dict[str, list[str]] = {
    "parser_throughput.py": [
        r"^stream: [\d,]+ frames, [\d,]+ bytes",
        r"^run 1: [\d,]+ frames/s",
        r"^median: [\d,]+ frames/s$",
        r"^min: [\d,]+ frames/s$",
        r"^max: [\d,]+ frames/s$",
        r"^goal: 500,000 frames/s",
    ],
    "driver_cost.py": [
        r"^boards: 20; frames per board and kind: 20; rounds: 3$",
        r"^clock: [\d.]+ us per frame \(min [\d.]+, max [\d.]+\)$",
        r"^lever: [\d.]+ us per frame",
        r"^square: [\d.]+ us per frame",
        r"^dump: [\d.]+ us per frame",
    ],
    "fuzz_parser.py": [
        r"^FrameParser: 20,000 mutated \+ [\d,]+ valid frames fed, [\d,]+ messages out, 0 exc",
        r"^BusFrameParser: 20,000 mutated \+ [\d,]+ valid frames fed",
        r"^CommandParser: 20,000 mutated \+ [\d,]+ valid frames fed",
        r"^frames fed: [\d,]+ \(60,000 mutated\)$",
        r"^messages out: [\d,]+$",
        r"^exceptions: 0$",
        r"^recovery failures: 0$",
        r"^split mismatches: 0$",
        r"^elapsed: [\d.]+ s$",
    ],
    "latency.py": [
        r"^field update written on a pty -> dgt\.Board event, 300 events",
        r"^to the event +: p50 \d+ us +p90 \d+ us +p99 \d+ us",
        r"^  of which, to read : p50 \d+ us",
        r"^goal p99 < 1000 us: (meets|misses)",
    ],
    "bus.py": [
        r"^3 boards:$",
        r"^  poll cycle \(busy\) on the pty: median [\d.]+ ms +p99 [\d.]+ ms",
        r"^  board 10002: latency median [\d.]+ ms",
        r"^  all boards: latency median [\d.]+ ms +p99 [\d.]+ ms",
    ],
    "bad_input.py": [
        r"^lone surrogate in a player name +HTTP \d+ ",
        r"^token header not UTF-8 +HTTP \d+ ",
        r"^foreign Host \(DNS rebinding\) +HTTP \d+ ",
        r"^round name adding filename= ",
        r"^cases: \d+, clear answer and service still running: \d+, failed: \d+$",
    ],
    "flood.py": [
        r"^[\d,]+ x GET no/such/N \(404\) .* RSS \d+ -> \d+ MB over [\d,]+ requests",
        r"^[\d,]+ x PUT api/tables\?n=N \(405\) .* RSS \d+ -> \d+ MB",
        r"^[\d,]+ idle connections \+ \d+ GETs .* GET p50 [\d.]+ ms p99 [\d.]+ ms$",
        r"^\d+ slow header lines \(1 byte/s\) +\d+ open ",
        r"^\d+ live streams from one address ",
        r"^open-files limit 1,024 at start ",
        r"^cases: \d+, service still up and within bounds: \d+, failed: \d+$",
    ],
    "play_latency.py": [
        r"^play latency \(settle 1 s\), pty board, 4 moves each way$",
        r"^  last piece -> feed \(no clock\) +p50 +[\d.]+ ms +p99 +[\d.]+ ms",
        r"^  clock press -> feed +p50 +[\d.]+ ms +p99 +[\d.]+ ms",
        r"^  piece-identity +2 games, \d+ moves: sent twice \d+, before completion \d+",
        r"^  presence-only +2 games, \d+ moves: sent twice \d+, before completion \d+",
    ],
    "broadcast.py": [
        r"^6 boards at speed 10, 8 s, push interval 1 s",
        r"^pushes: [\d,]+ \([\d.]+ per minute\)$",
        r"^bytes per push: mean [\d,]+  max [\d,]+",
        r"^commit -> push leaving: p50 [\d,]+ ms  p99 [\d,]+ ms",
        r"^reading the round on the hall's loop: p50 [\d.]+ ms  p99 [\d.]+ ms",
        r"^feed polls: \d+, reorders: 0 \(goal 0\)$",
        r"^push reorders: 0 \(goal 0\)$",
    ],
    "replica.py": [
        r"^4 tables, [\d,]+ moves, [\d,]+ rows, [\d,]+ inputs",
        r"^replay: [\d.]+ s, [\d,]+ inputs/s; divergences 0$",
        r"^snapshot: [\d.]+ MB, [\d.]+ kB a table; loop held [\d.]+ ms, the forked child",
        r"^come-up: read and restored [\d.]+ s, the rows of the last 60 s \([\d,]+ rows of 4 "
        r"tables, each unpickled at its first\) [\d.]+ s, every table's summary [\d.]+ s: "
        r"[\d.]+ s \([\d.]+ s for 1,000 tables; goal < 10 s\)$",
        r"^restored tables \(\d+ still frozen\) answer as the replayed ones: True$",
        r"^unpickled tables answer as the replayed ones: True$",
    ],
    "scaleout.py": [
        r"^2 edges x 20 inputs/s, 3 s quiet, then 12 s with 4 faults",
        r"^rows committed: [\d,]+$",
        r"^rows lost: 0 \(goal 0\)$",
        r"^rows duplicated: 0 \(goal 0\)$",
        r"^rows changed: 0 \(goal 0\)$",
        r"^catch-up: 4 faults, longest [\d.]+ s$",
        r"^commit -> centre, quiet phase \([\d,]+ rows\): p50 [\d.]+ ms  p99 [\d.]+ ms",
    ],
}
"""Each script and the lines (regular expressions, one match per line) it must print."""


@pytest.mark.parametrize(("script", "patterns"), list(SCRIPTS.items()), ids=list(SCRIPTS))
def test_bench_script_quick_run(script: str, patterns: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH / script), "--quick"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for pattern in patterns:
        assert re.search(pattern, done.stdout, re.MULTILINE), (pattern, done.stdout)


def test_replay_cost_runs_on_a_recorded_hall_log(tmp_path: Path) -> None:
    """``bench/replay_cost.py`` (no ``--quick``: it reads a recorded log) on the log the
    tests keep: every input's rows written again as recorded, a line per input kind."""
    db = tmp_path / "hall-log.db"
    with gzip.open(Path(__file__).parent / "data" / "hall-log.db.gz") as packed:
        db.write_bytes(packed.read())
    done = subprocess.run(
        [sys.executable, str(BENCH / "replay_cost.py"), str(db)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^inputs [\d,]+, differing 0$", done.stdout, re.MULTILINE), done.stdout
    for kind in ("clock", "square", "lever", "all"):
        assert re.search(rf"^{kind} +\d+ +us/input:", done.stdout, re.MULTILINE), done.stdout


def test_replay_cost_idles_between_inputs_when_asked(tmp_path: Path) -> None:
    """``--gap MS --gap-every K``: the loop sleeps after every K inputs and the line says so;
    the rows are written again as recorded all the same."""
    db = tmp_path / "hall-log.db"
    with gzip.open(Path(__file__).parent / "data" / "hall-log.db.gz") as packed:
        db.write_bytes(packed.read())
    command = [sys.executable, str(BENCH / "replay_cost.py"), str(db), "--limit", "200"]
    done = subprocess.run(
        [*command, "--gap", "0.5", "--gap-every", "20"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    idle = r"^inputs 200, differing 0, 0.5 ms idle after every 20 input\(s\)$"
    assert re.search(idle, done.stdout, re.MULTILINE), done.stdout


@pytest.mark.slow
def test_publish_cost_prints_the_same_digest_of_its_frames_run_after_run(tmp_path: Path) -> None:
    """``bench/publish_cost.py`` on the log the tests keep: every published update made into
    one frame of the overview stream, and, the times fixed, the same frames each run (the
    digest two versions are compared by)."""
    db = tmp_path / "hall-log.db"
    with gzip.open(Path(__file__).parent / "data" / "hall-log.db.gz") as packed:
        db.write_bytes(packed.read())
    digests = []
    for run in range(2):
        frames = tmp_path / f"frames-{run}"
        done = subprocess.run(
            [sys.executable, str(BENCH / "publish_cost.py"), str(db), "--frames", str(frames)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        found = re.search(
            r"^inputs (\d+), updates (\d+), frames (\d+), stream us/update [\d.]+, "
            r"digest ([0-9a-f]{16})$",
            done.stdout,
            re.MULTILINE,
        )
        assert found, done.stdout
        inputs, updates, count = (int(found[i]) for i in (1, 2, 3))
        assert inputs > 0
        assert 0 < updates == count
        assert frames.read_bytes().count(b"event: state\n") == count
        digests.append(found[4])
    assert digests[0] == digests[1]
    assert (tmp_path / "frames-0").read_bytes() == (tmp_path / "frames-1").read_bytes()
