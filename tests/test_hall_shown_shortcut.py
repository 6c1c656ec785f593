"""``Hall.shown`` answers the live table without reading the store's queue when nothing is
queued (every read right after a commit): the same table as the general check (which tables
have rows queued, ``CommittedView.is_ahead``) in every state of the store."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.config import TableConfig
from service.hall import Hall, HallTable
from service.store import Store, StoreError


def general(hall: Hall, table_id: str) -> HallTable:
    """``Hall.shown`` by the general check alone (no shortcut)."""
    live = hall.runners[table_id]
    if not hall._committed.is_ahead(table_id):
        return live
    hall.settle()
    if not hall._committed.is_ahead(table_id):
        return live
    return hall._committed.shadow(table_id)


def players(hall: Hall, table_id: str, white: str, t: float) -> None:
    """An admin command into the table and the store's queue, not committed."""
    runner = hall.runners[table_id]
    outs = [o.to_json() for o in runner.admin("players", {"white": white}, t)]
    hall._log(runner, "admin", t, {"command": "players", "args": {"white": white}}, outs)
    hall._queue(runner, outs, None)


def test_shown_is_the_general_checks_table_in_every_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(tmp_path / "s.db")
    hall = Hall(store, tick_interval=0.0, wall_clock=lambda: 1000.0)
    for table_id in ("a", "b"):
        hall.add_table(TableConfig(table_id, f"/dev/null-{table_id}", None, {}))
    reads: list[int] = []
    queued = store.queued_tables

    def counted() -> set[str]:
        reads.append(1)
        return queued()

    monkeypatch.setattr(store, "queued_tables", counted)
    hall._committed._queued = counted

    def check(expect_shadow: set[str]) -> None:
        for table_id in ("a", "b"):
            want = general(hall, table_id)
            got = hall.shown(table_id)
            assert got is want
            assert (got is not hall.runners[table_id]) == (table_id in expect_shadow)

    # nothing queued: the live tables, the queue not read
    check(set())
    reads.clear()
    assert hall.shown("a") is hall.runners["a"]
    assert reads == []
    # rows queued, the store writing: the read commits them first, the live tables
    players(hall, "a", "Ann", 1001.0)
    check(set())
    assert store.pending == 0
    # the store failing: the table with rows kept is shown as of its last commit
    real_commit = store._commit_now

    def refuse() -> int:
        raise StoreError("refused")

    monkeypatch.setattr(store, "_commit_now", refuse)
    players(hall, "a", "Bea", 1002.0)
    check({"a"})
    assert hall.shown("a").table.summary()["white"] == "Ann"  # as committed
    assert hall.runners["a"].table.summary()["white"] == "Bea"
    # and writing again: every row stored, the live tables again, the queue not read
    monkeypatch.setattr(store, "_commit_now", real_commit)
    store._retry_at = 0.0
    hall.settle()
    assert store.pending == 0
    check(set())
    reads.clear()
    assert hall.shown("a") is hall.runners["a"]
    assert reads == []
    assert hall.shown("a").table.summary()["white"] == "Bea"
    kinds = [row.kind for row in store.log_rows() if row.table_id == "a" and row.role == "out"]
    assert kinds[-2:] == ["players", "players"]
    store.close()
