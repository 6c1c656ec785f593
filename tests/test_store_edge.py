"""The store as an edge's outbox: schema 3 (the ``table`` role of a registration), a
database of schema 2 brought to 3 when opened, registrations written once a database has an
edge id (those of older tables before the first row), and the readers passing them by."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from service.store import REGISTRATION, SCHEMA_VERSION, Store, StoreError, row_inputs
from service.store_salvage import recover

_SCHEMA_2 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE tables (id TEXT PRIMARY KEY, settings TEXT NOT NULL, created REAL NOT NULL);
CREATE TABLE log (
    seq INTEGER PRIMARY KEY,
    table_id TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role = 'in' OR role = 'echo' OR role = 'out'),
    kind TEXT NOT NULL,
    t REAL NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX log_by_table ON log (table_id, seq);
CREATE TRIGGER log_no_update BEFORE UPDATE ON log
    BEGIN SELECT RAISE(ABORT, 'the log is append-only'); END;
CREATE TRIGGER log_no_delete BEFORE DELETE ON log
    BEGIN SELECT RAISE(ABORT, 'the log is append-only'); END;
INSERT INTO meta VALUES ('schema', '2');
INSERT INTO tables VALUES ('1', '{"white": "Ann"}', 10.0);
INSERT INTO tables VALUES ('2', '{}', 11.0);
INSERT INTO log (table_id, role, kind, t, data) VALUES ('1', 'in', 'tick', 20.0, '{}');
INSERT INTO log (table_id, role, kind, t, data)
    VALUES ('1', 'out', 'tick', 20.0, '{"type": "tick"}');
INSERT INTO log (table_id, role, kind, t, data) VALUES ('2', 'in', 'tick', 21.0, '{}');
"""


def old_database(path: Path) -> None:
    db = sqlite3.connect(path)
    db.executescript(_SCHEMA_2)
    db.close()


def test_a_database_of_schema_2_is_brought_to_3_with_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    old_database(path)
    store = Store(path)
    assert [item.seq for item in store.inputs("1")] == [1]
    assert store.outputs("1") == [(2, {"type": "tick"})]
    store.close()
    db = sqlite3.connect(path)
    assert db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()[0] == "3"
    assert SCHEMA_VERSION == 3
    db.execute(
        "INSERT INTO log (table_id, role, kind, t, data) VALUES ('1', 'table', 'x', 1, '{}')"
    )
    for statement in ("UPDATE log SET t=0", "DELETE FROM log"):
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            db.execute(statement)
    db.rollback()
    db.close()
    Store(path).close()  # opens again as 3


def test_an_edge_database_logs_each_registration_before_the_tables_rows(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    old_database(path)
    store = Store(path)
    store.claim_edge("hall-a", {"1": 7})
    db_name = store.edge_db
    store.register_table("3", {"black": "Cy"}, 30.0, board=3)
    store.append("3", "tick", 31.0, {}, [{"type": "tick", "time": 31.0}])
    store.commit()
    rows = store.log_rows(None)
    assert [(r.seq, r.table_id, r.role) for r in rows] == [
        (-1, "1", REGISTRATION),
        (0, "2", REGISTRATION),
        (1, "1", "in"),
        (2, "1", "out"),
        (3, "2", "in"),
        (4, "3", REGISTRATION),
        (5, "3", "in"),
        (6, "3", "out"),
    ]
    assert json.loads(rows[0].data) == {"board": 7, "settings": {"white": "Ann"}}
    assert json.loads(rows[1].data) == {"board": None, "settings": {}}
    assert json.loads(rows[5].data) == {"board": 3, "settings": {"black": "Cy"}}
    # the readers pass registrations by
    assert [item.seq for item in store.inputs("3")] == [5]
    assert store.outputs("3") == [(6, {"type": "tick", "time": 31.0})]
    assert [item.seq for item in row_inputs(r for r in rows if r.table_id == "3")] == [5]
    assert list(row_inputs(r for r in rows if r.table_id == "3")) == list(store.inputs("3"))
    assert store.log_rows(3, limit=2) == rows[5:7]
    assert store.last_seq() == 6
    # claimed again (every start): nothing more
    store.claim_edge("hall-a")
    assert store.count() == 8
    store.close()
    # a salvaged copy keeps the registrations numbered before row 1
    report = recover(path, tmp_path / "copy.db")
    assert report.rows == 8
    copy = Store(tmp_path / "copy.db")
    assert copy.log_rows(None) == rows
    # ... and the edge id and database name: it goes on as the same edge's log
    assert (copy.edge_id, copy.edge_db) == ("hall-a", db_name)
    with pytest.raises(StoreError, match="store of edge 'hall-a'"):
        copy.claim_edge("hall-b")
    copy.claim_edge("hall-a")
    assert copy.edge_db == db_name
    copy.close()


def test_a_club_database_logs_no_registrations(tmp_path: Path) -> None:
    store = Store(tmp_path / "club.db")
    store.register_table("1", {}, 1.0)
    assert store.count() == 0
    assert store.edge_id is None
    store.close()
