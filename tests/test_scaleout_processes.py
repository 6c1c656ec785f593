"""Two edges (``dgt-service demo --central``: emulated boards replaying games), the broker,
the centre (``dgt-service central``, with its web) and a web process (``central-web``) as
real processes, the broker, an edge and the centre killed with SIGKILL and started again
mid-run: in the end every edge's log equals the centre's copy, row for row, both central webs
show every table as its edge's web does, and an admin command sent to a central web is
applied once at the edge."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest
from nats_broker import Broker, free_port

pytestmark = pytest.mark.slow

TOKEN = "t" * 16
ENV = {**os.environ, "DGT_ADMIN_TOKEN": TOKEN}


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
        *("--first", "1" if edge_id == "hall-a" else "11"),
        *("--db", str(db), "--central", broker.url, "--edge-id", edge_id),
    )


def centre(broker: Broker, db: Path) -> subprocess.Popen[bytes]:
    return start("central", "--nats", broker.url, "--db", str(db), "--listen", "127.0.0.1:0")


def kill(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=10)


def stop(process: subprocess.Popen[bytes]) -> str:
    process.send_signal(signal.SIGTERM)
    try:
        _out, err = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        _out, err = process.communicate(timeout=10)
        raise AssertionError(f"{process.args}: no stop in 30 s: {err.decode()}") from None
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


def get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()
    except OSError:
        return 0, b""


def post(url: str, body: dict[str, object]) -> tuple[int, dict[str, object]]:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")
    except OSError as exc:
        return 0, {"error": str(exc)}


def until(predicate: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, f"timed out: {what}"
        time.sleep(0.1)


def table_views(web: str, table_id: str) -> dict[str, object] | None:
    """A table's state (without ``connection``: the link the edge reports), its games and
    each game's PGN, as ``web`` serves them; None when one of them is not there."""
    status, state = get(f"{web}api/tables/{table_id}")
    if status != 200:
        return None
    view: dict[str, object] = {"state": {**json.loads(state), "connection": None}}
    status, games = get(f"{web}api/tables/{table_id}/games")
    if status != 200:
        return None
    view["games"] = json.loads(games)
    count = len(json.loads(games).get("games", []))
    for number in range(1, count + 1):
        status, pgn = get(f"{web}games/{table_id}-{number}.pgn")
        if status != 200:
            return None
        view[f"pgn {number}"] = pgn.decode()
    return view


def view_difference(edge_web: str, webs: list[str], table_id: str) -> str | None:
    """What a central web shows of the table unlike its edge's web (None: nothing); each
    asked right after the edge, as a board moves every second or so."""
    edge_view = table_views(edge_web, table_id)
    if edge_view is None:
        return "the edge does not answer"
    for web in webs:
        view = table_views(web, table_id)
        if view is None:
            return f"{web} does not answer"
        for key in sorted(set(view) | set(edge_view)):
            mine, theirs = view.get(key), edge_view.get(key)
            if mine == theirs:
                continue
            if isinstance(mine, dict) and isinstance(theirs, dict):
                keys = [k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k)]
                return f"{web} {key}: " + "; ".join(
                    f"{k}: {mine.get(k)!r} at the centre, {theirs.get(k)!r} at the edge"
                    for k in sorted(keys)
                )
            return f"{web} {key}: {str(mine)[:300]!r} at the centre, {str(theirs)[:300]!r}"
    return None


@pytest.mark.timeout(60)
def test_the_centre_and_a_web_process_show_what_the_edges_show_through_kills(
    nats_broker: Broker, tmp_path: Path
) -> None:
    """Two edges (demo, 2 boards each, tables 1-2 and 11-12), the broker, the centre (with
    its web) and a ``central-web --nats`` process; the broker, an edge and the centre killed
    (SIGKILL) and started again.  Then: an admin command sent to the centre's web reaches
    the edge and is applied once; every edge's log equals the centre's; every table's state
    JSON (but ``connection``, the link the edge reports), games and PGN on both central webs
    equal the edge's web."""
    a_db, b_db, c_db = tmp_path / "a.db", tmp_path / "b.db", tmp_path / "central.db"
    ports = {name: free_port() for name in ("centre", "web", "a", "b")}
    webs = {name: f"http://127.0.0.1:{port}/" for name, port in ports.items()}

    def an_edge(db: Path, edge_id: str, first: int, seed: int) -> subprocess.Popen[bytes]:
        return start(
            *("demo", "--boards", "2", "--first", str(first), "--speed", "5"),
            *("--seed", str(seed), "--port", str(ports[edge_id[-1]]), "--db", str(db)),
            *("--central", nats_broker.url, "--edge-id", edge_id),
        )

    def the_centre() -> subprocess.Popen[bytes]:
        return start(
            *("central", "--nats", nats_broker.url, "--db", str(c_db)),
            *("--listen", f"127.0.0.1:{ports['centre']}"),
        )

    centre = the_centre()
    web = start(
        *("central-web", "--db", str(c_db), "--nats", nats_broker.url),
        *("--listen", f"127.0.0.1:{ports['web']}"),
    )
    a, b = an_edge(a_db, "hall-a", 1, 1), an_edge(b_db, "hall-b", 11, 2)
    processes = [centre, web, a, b]
    try:
        time.sleep(4)
        nats_broker.kill()
        time.sleep(1)
        nats_broker.start()
        time.sleep(2)
        kill(a)
        a = an_edge(a_db, "hall-a", 1, 3)
        time.sleep(2)
        kill(centre)
        centre = the_centre()
        processes = [centre, web, a, b]
        # an admin command to the centre's web reaches edge hall-a once
        answer: tuple[int, dict[str, object]] = (0, {})

        def applied() -> bool:
            nonlocal answer
            answer = post(f"{webs['centre']}api/admin/tables/2/players", {"black": "Zed Admin"})
            return answer[0] != 503 and answer[0] != 0

        until(applied, 15, "the centre's web forwards an admin command")
        assert answer[0] == 200, answer
        assert answer[1]["table"] == "2"
        # the other web process forwards too, and shows the edges' heartbeats
        status, body = post(f"{webs['web']}api/admin/tables/12/players", {"white": "Web Two"})
        assert status == 200, body

        def heard(web: str) -> bool:
            edges = json.loads(get(f"{web}api/edges")[1] or b"{}").get("edges", [])
            return {e["id"] for e in edges if e["heartbeat"] and not e["late"]} == {
                "hall-a",
                "hall-b",
            }

        until(lambda: heard(webs["web"]) and heard(webs["centre"]), 10, "the edges' heartbeats")
        # every table the same on both central webs as on its edge's web
        for edge_name, tables in (("a", ("1", "2")), ("b", ("11", "12"))):
            for table_id in tables:
                difference: str | None = "not asked"
                deadline = time.monotonic() + 15
                while difference is not None and time.monotonic() < deadline:
                    difference = view_difference(
                        webs[edge_name], [webs["centre"], webs["web"]], table_id
                    )
                    time.sleep(0.05)
                assert difference is None, f"table {table_id}: {difference}"
    finally:
        errors = [stop(p) for p in processes[2:]]  # the edges first: their last rows go out
        expected = {"hall-a": edge_rows(a_db), "hall-b": edge_rows(b_db)}
        with contextlib.suppress(AssertionError):
            until(
                lambda: all(central_rows(c_db, e) == rows for e, rows in expected.items()),
                20,
                "the centre's copy of the edges' logs",
            )
        errors += [stop(p) for p in processes[:2]]
    for err in errors:
        assert "ERROR" not in err
        assert "Traceback" not in err
    for edge_id, rows in expected.items():
        assert len(rows) > 50, edge_id
        assert central_rows(c_db, edge_id) == rows, edge_id
    admin = [r for r in expected["hall-a"] if r[3] == "admin" and "Zed Admin" in str(r[5])]
    assert len(admin) == 1
    assert [r for r in expected["hall-b"] if r[3] == "admin" and "Web Two" in str(r[5])]
