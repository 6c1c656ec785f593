"""Two edges (``dgt-service demo --central``: emulated boards replaying games), the broker
and the centre (``dgt-service central``) as real processes, each killed with SIGKILL and
started again mid-run: in the end every edge's log equals the centre's copy, row for row."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from nats_broker import Broker

pytestmark = pytest.mark.slow

ENV = {**os.environ, "DGT_ADMIN_TOKEN": "t" * 16}


def start(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "service.cli", *args],
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def edge(broker: Broker, db: Path, edge_id: str, seed: int) -> subprocess.Popen[bytes]:
    return start(
        *("demo", "--boards", "2", "--speed", "20", "--seed", str(seed), "--port", "0"),
        *("--db", str(db), "--central", broker.url, "--edge-id", edge_id),
    )


def centre(broker: Broker, db: Path) -> subprocess.Popen[bytes]:
    return start("central", "--nats", broker.url, "--db", str(db))


def kill(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=10)


def stop(process: subprocess.Popen[bytes]) -> str:
    process.send_signal(signal.SIGTERM)
    _out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err.decode()
    return err.decode()


def edge_rows(db: Path) -> list[tuple[object, ...]]:
    with sqlite3.connect(db) as connection:
        rows = connection.execute("SELECT seq, table_id, role, kind, t, data FROM log ORDER BY seq")
        return rows.fetchall()


def central_rows(db: Path, edge_id: str) -> list[tuple[object, ...]]:
    if not db.exists():
        return []
    with sqlite3.connect(db) as connection:
        rows = connection.execute(
            "SELECT seq, table_id, role, kind, t, data FROM rows WHERE edge=? ORDER BY seq",
            (edge_id,),
        )
        return rows.fetchall()


def test_every_edge_log_reaches_the_centre_through_kills(
    nats_broker: Broker, tmp_path: Path
) -> None:
    a_db, b_db, c_db = tmp_path / "a.db", tmp_path / "b.db", tmp_path / "central.db"
    the_centre = centre(nats_broker, c_db)
    a, b = edge(nats_broker, a_db, "hall-a", 1), edge(nats_broker, b_db, "hall-b", 2)
    try:
        time.sleep(3)
        nats_broker.kill()  # the broker, kill -9
        time.sleep(1)
        nats_broker.start()
        time.sleep(2)
        kill(a)  # an edge, kill -9
        a = edge(nats_broker, a_db, "hall-a", 3)
        time.sleep(2)
        kill(the_centre)  # the centre, kill -9
        the_centre = centre(nats_broker, c_db)
        time.sleep(3)
    finally:
        errors = [stop(p) for p in (a, b)]
    for err in errors:
        assert "ERROR" not in err
        assert "Traceback" not in err
    expected = {"hall-a": edge_rows(a_db), "hall-b": edge_rows(b_db)}
    assert all(len(rows) > 50 for rows in expected.values())
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if all(central_rows(c_db, e) == rows for e, rows in expected.items()):
            break
        time.sleep(0.2)
    err = stop(the_centre)
    assert "ERROR" not in err
    for edge_id, rows in expected.items():
        got = central_rows(c_db, edge_id)
        assert len(got) == len(rows), edge_id
        assert got == rows, edge_id
        assert [row[2] for row in got[:2]] == ["table", "table"]
