"""service.store: append, commit, replay, append-only, and a writer killed with SIGKILL."""

from __future__ import annotations

import json
import logging
import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from dgt.events import BoardEvent, BoardSnapshot, SquareChanged
from dgt.protocol import Piece
from service.store import Input, Store, StoreError, board_input, normalise, rebuild

ROOT = Path(__file__).resolve().parent.parent


class EchoTable:
    """A deterministic stand-in for ``service.table.Table``: every placed piece is a
    "move" numbered in order, admin commands are echoed, ticks report every 10 s."""

    def __init__(self, table_id: str, settings: Mapping[str, Any] | None = None) -> None:
        self.id = table_id
        self.settings = dict(settings or {})
        self.moves: list[dict[str, Any]] = []
        self.last_tick = 0.0
        self.placement = ""

    def feed(self, event: BoardEvent) -> list[dict[str, Any]]:
        if isinstance(event, BoardSnapshot):
            self.placement = "x" * len(event.squares)
            return [{"time": event.time, "type": "board", "data": {"reason": event.reason}}]
        if isinstance(event, SquareChanged) and event.piece is not Piece.EMPTY:
            move = {"ply": len(self.moves) + 1, "uci": f"{event.square}", "san": event.piece.symbol}
            self.moves.append(move)
            return [{"time": event.time, "type": "move", "data": dict(move)}]
        return []

    def tick(self, now: float) -> list[dict[str, Any]]:
        if now - self.last_tick >= 10:
            self.last_tick = now
            return [{"time": now, "type": "clock", "data": {"now": now}}]
        return []

    def admin(self, command: str, args: Mapping[str, Any], now: float) -> list[dict[str, Any]]:
        if command == "players":
            self.settings.update(args)
            return [{"time": now, "type": "players", "data": dict(args)}]
        raise ValueError(f"unknown command {command}")

    def state(self) -> dict[str, Any]:
        return {"id": self.id, "settings": dict(self.settings), "moves": list(self.moves)}

    def pgn(self) -> str:
        return f'[Event "{self.settings.get("event", "?")}"]\n\n' + " ".join(
            m["san"] for m in self.moves
        )

    def take_clock_orders(self) -> list[Any]:
        return []


def place(t: float, square: int, piece: Piece = Piece.WPAWN) -> SquareChanged:
    return SquareChanged(t, square, piece, Piece.EMPTY)


def record(store: Store, table: EchoTable, table_id: str, event: BoardEvent) -> None:
    outs = table.feed(event)
    store.append(table_id, "board", event.time, board_input(event), outs)


def test_nothing_is_visible_before_commit_and_everything_after(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    store.register_table("1", {"white": "A"}, 0.0)
    table = EchoTable("1")
    record(store, table, "1", place(1.0, 12))
    reader = sqlite3.connect(tmp_path / "s.db")
    assert store.pending == 2
    assert reader.execute("SELECT count(*) FROM log").fetchone()[0] == 0
    assert store.commit() == 2
    assert reader.execute("SELECT count(*) FROM log").fetchone()[0] == 2
    assert reader.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    reader.close()
    items = list(store.inputs("1"))
    assert len(items) == 1
    assert items[0].kind == "board"
    assert items[0].data["event"] == "square"
    assert items[0].outputs == ({"time": 1.0, "type": "move", "data": table.moves[0]},)
    store.close()


def test_log_is_append_only(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    store.append("1", "tick", 1.0, {}, [{"type": "clock", "time": 1.0}])
    store.commit()
    store.close()
    db = sqlite3.connect(tmp_path / "s.db")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.execute("UPDATE log SET data='{}'")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.execute("DELETE FROM log")
    db.close()


def test_register_keeps_the_first_settings(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    assert store.register_table("7", {"white": "A"}, 1.0) == {"white": "A"}
    assert store.register_table("7", {"white": "B"}, 2.0) == {"white": "A"}
    store.register_table("3", {}, 3.0)
    assert store.table_ids() == ["7", "3"]
    store.close()
    assert Store(tmp_path / "s.db").settings("7") == {"white": "A"}


def test_unknown_input_kind_is_refused(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    with pytest.raises(ValueError, match="unknown input kind"):
        store.append("1", "move", 1.0, {})


def test_rebuild_reproduces_the_stored_outputs(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    table = EchoTable("1")
    snapshot = BoardSnapshot(0.5, (Piece.EMPTY,) * 64, "connect")
    record(store, table, "1", snapshot)
    rng = random.Random(4)
    for i in range(200):
        record(store, table, "1", place(1.0 + i, rng.randrange(64)))
        if i % 50 == 0:
            outs = table.tick(1.0 + i)
            store.append("1", "tick", 1.0 + i, {}, outs)
    outs = table.admin("players", {"white": "Ann"}, 300.0)
    store.append("1", "admin", 300.0, {"command": "players", "args": {"white": "Ann"}}, outs)
    store.commit()
    store.close()

    reopened = Store(tmp_path / "s.db")
    fresh = EchoTable("1")
    report = rebuild(fresh, "1", reopened.inputs("1"))
    assert report.divergences == 0
    assert report.inputs == 1 + 200 + 4 + 1
    assert fresh.state() == table.state()


def test_rebuild_reports_a_divergence(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    items = [
        Input(1, "board", 1.0, board_input(place(1.0, 12)), ({"type": "move", "data": {}},)),
    ]
    with caplog.at_level(logging.WARNING, logger="service.store"):
        report = rebuild(EchoTable("1"), "1", items)
    assert report.divergences == 1
    assert report.first_divergence == 1
    assert "differs from the stored log at input 1" in caplog.text


def test_normalise_turns_tuples_into_lists() -> None:
    assert normalise({"a": (1, 2)}) == {"a": [1, 2]}


def test_a_file_that_is_not_a_database_gives_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match=r"bad\.db: cannot open the database"):
        Store(bad)


WRITER = textwrap.dedent(
    """
    import sys, json
    from service.store import Store
    store = Store(sys.argv[1])
    batch = 0
    while True:
        for i in range(50):
            n = batch * 50 + i
            out = {"type": "move", "time": float(n), "data": {"ply": n, "san": "x" * (n % 7)}}
            store.append("t", "board", float(n), {"n": n}, [out])
        store.commit()
        print(batch, flush=True)
        batch += 1
    """
)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_kill_9_mid_write_loses_no_committed_row(tmp_path: Path, seed: int) -> None:
    """A writer committing batches is killed with SIGKILL at a random moment: every batch
    it reported committed is there, intact, and nothing half-written is."""
    db = tmp_path / "k.db"
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.stdout is not None
    target = random.Random(seed).randrange(5, 60)
    reported = -1
    for line in proc.stdout:
        reported = int(line)
        if reported >= target:
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    store = Store(db)
    items = list(store.inputs("t"))
    assert len(items) % 50 == 0, "a transaction was half written"
    assert len(items) >= (reported + 1) * 50
    for n, item in enumerate(items):
        assert item.data == {"n": n}
        assert item.outputs == (
            {"type": "move", "time": float(n), "data": {"ply": n, "san": "x" * (n % 7)}},
        )
    store.close()


def test_output_rows_keep_json_exactly(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    out = {"type": "players", "time": 2.0, "data": {"white": "<b>Ann</b> \"&\" ü"}}
    store.append("1", "admin", 2.0, {"command": "players", "args": {}}, [out])
    store.commit()
    assert store.outputs("1") == [(2, out)]
    assert json.loads(json.dumps(out)) == store.outputs("1", kind="players")[0][1]
    store.close()


def test_a_board_event_shown_as_it_came_is_stored_once(tmp_path: Path) -> None:
    """The table's first answer to a board event is the event itself: one ``echo`` row
    stands for the input and that output, and the readers give both back."""
    store = Store(tmp_path / "s.db")
    event = place(3.5, 12)
    data = board_input(event)
    echo = {"time": 3.5, "type": "board", **data}
    move = {"time": 3.5, "type": "move", "data": {"uci": "e2e4"}}
    store.append("1", "board", 3.5, data, [echo, move])
    # Not the event as it came (another time): an ordinary output row.
    store.append("1", "board", 4.0, data, [echo])
    assert store.commit() == 4
    reader = sqlite3.connect(tmp_path / "s.db")
    roles = [row[0] for row in reader.execute("SELECT role FROM log ORDER BY seq")]
    reader.close()
    assert roles == ["echo", "out", "in", "out"]
    items = list(store.inputs("1"))
    assert [item.outputs for item in items] == [(echo, move), (echo,)]
    assert [item.data for item in items] == [data, data]
    assert store.outputs("1") == [(1, echo), (2, move), (4, echo)]
    assert store.outputs("1", kind="board") == [(1, echo), (4, echo)]
    assert store.outputs("1", after=1, kind="move") == [(2, move)]
    store.close()


def test_a_database_of_another_schema_is_refused_with_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    Store(path).close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value='1' WHERE key='schema'")
    db.close()
    with pytest.raises(StoreError, match="schema 1 is not 3: use a new --db file"):
        Store(path)


def test_the_log_refuses_a_row_of_no_known_role(tmp_path: Path) -> None:
    """The file itself keeps the log's roles to ``in``, ``echo``, ``out`` and ``table``: a
    row written around the store with any other role is refused, the known ones are taken."""
    Store(tmp_path / "s.db").close()
    db = sqlite3.connect(tmp_path / "s.db")
    insert = "INSERT INTO log (table_id, role, kind, t, data) VALUES ('1', ?, 'board', 1.0, '{}')"
    for role in ("in", "echo", "out", "table"):
        db.execute(insert, (role,))
    for role in ("bogus", "", "IN"):
        with pytest.raises(sqlite3.IntegrityError):
            db.execute(insert, (role,))
    db.rollback()
    db.close()
