"""``run --central URL --edge-id ID`` (and ``[service] central``, ``edge_id``), and
``dgt-service central``: what they take, their one-line errors, and a hall and a centre as
real processes on a real broker."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from nats_broker import Broker

from service.cli import main
from service.config import ConfigError, parse_config, shown_url
from service.store import Store

TABLE = "\n[[table]]\nport = 'emulator'\n"


def test_the_central_keys_of_the_config() -> None:
    config = parse_config(
        f"[service]\ncentral = 'nats://10.0.0.5:4222'\nedge_id = 'hall-a'\n{TABLE}", "h.toml"
    )
    assert config.central == "nats://10.0.0.5:4222"
    assert config.edge_id == "hall-a"
    assert parse_config(TABLE, "h.toml").central is None


@pytest.mark.parametrize(
    ("service", "message"),
    [
        ("central = 'http://x:1'", r"h\.toml:2: \[service\] central: 'http://x:1' is not a broker"),
        ("central = 'nats://x'", "is not a broker address like nats://10.0.0.5:4222"),
        ("edge_id = 'a.b'", r"h\.toml:2: \[service\] edge_id: edge id 'a\.b': 1-32 letters"),
        ("edge_id = 3", "edge_id: edge id 3"),
    ],
)
def test_bad_central_keys_name_file_line_and_key(service: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config(f"[service]\n{service}\n{TABLE}", "h.toml")


def test_the_broker_address_is_shown_without_its_password() -> None:
    assert shown_url("nats://hall-a:secret@10.0.0.5:4222") == "nats://10.0.0.5:4222"
    assert shown_url("nats://10.0.0.5:4222") == "nats://10.0.0.5:4222"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--edge-id", "a"], "--edge-id names this hall at a central service: add --central"),
        (["--central", "nats://127.0.0.1:4222"], "--central needs --edge-id ID"),
        (["--central", "nats://127.0.0.1:4222", "--edge-id", "a b"], "edge id 'a b'"),
        (["--central", "127.0.0.1:4222", "--edge-id", "a"], "is not a broker address"),
    ],
)
def test_run_refuses_half_an_edge_in_one_line(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["run", "emulator", "--db", str(tmp_path / "h.db"), "--seconds", "1", *args])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err
    assert err.count("\n") == 1


def test_a_database_of_another_edge_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "h.db"
    store = Store(db)
    store.claim_edge("hall-a")
    store.close()
    code = main(
        [
            *("run", "emulator", "--db", str(db), "--seconds", "1"),
            *("--central", "nats://127.0.0.1:1", "--edge-id", "hall-b"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert "is the store of edge 'hall-a', not 'hall-b': give --edge-id hall-a" in err
    assert err.count("\n") == 1


def test_central_refuses_a_bad_broker_address(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["central", "--nats", "localhost"]) == 2
    assert "--nats: 'localhost' is not a broker address" in capsys.readouterr().err
    assert main(["central-web", "--db", "c.db", "--nats", "localhost"]) == 2
    assert "--nats: 'localhost' is not a broker address" in capsys.readouterr().err
    assert main(["central", "--nats", "nats://127.0.0.1:1", "--listen", "nowhere"]) == 2
    assert "--listen nowhere: give HOST:PORT" in capsys.readouterr().err


@pytest.mark.slow
def test_a_hall_and_a_centre_as_processes(nats_broker: Broker, tmp_path: Path) -> None:
    """``dgt-service run --central`` on an emulated board with a game replayed, and
    ``dgt-service central``: the centre holds the edge's log, row for row."""
    env = {**os.environ, "DGT_ADMIN_TOKEN": "x" * 12}
    edge_db, central_db = tmp_path / "edge.db", tmp_path / "central.db"
    centre = subprocess.Popen(
        [
            *(sys.executable, "-m", "service.cli", "central", "--nats", nats_broker.url),
            *("--db", str(central_db), "--seconds", "8", "--listen", "127.0.0.1:0"),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    edge = subprocess.run(
        [
            *(sys.executable, "-m", "service.cli", "run", "emulator", "emulator"),
            *("--port", "0", "--db", str(edge_db), "--seconds", "3"),
            *("--central", nats_broker.url, "--edge-id", "hall-a"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert edge.returncode == 0, edge.stderr
    assert "edge hall-a: forwarding the log to" in edge.stdout
    _out, err = centre.communicate(timeout=60)
    assert centre.returncode == 0, err
    assert b"ERROR" not in err
    with sqlite3.connect(edge_db) as db:
        edge_rows = db.execute("SELECT seq, table_id, role, kind, t, data FROM log ORDER BY seq")
        expected = edge_rows.fetchall()
    with sqlite3.connect(central_db) as db:
        got = db.execute(
            "SELECT seq, table_id, role, kind, t, data FROM rows WHERE edge='hall-a' ORDER BY seq"
        ).fetchall()
    assert len(expected) >= 2
    assert got == expected  # a stop forwards the last commits too
    assert [row[2] for row in got[:2]] == ["table", "table"]
