"""service.scaleout.snapshot: a replica restored from a snapshot and fed the rows after it
is the replica that replayed everything (tables, games, PGN, an input whose outputs were
still coming); a snapshot of other code, a damaged one or none: the whole log is replayed;
snapshots are kept while rows come."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import pickle
import zlib
from pathlib import Path
from typing import Any

import pytest
from replica_rows import batches, edge_rows, write_central
from test_scaleout_replica import play_a_hall, registration

from service.scaleout.central_db import CentralTail
from service.scaleout.replica import ReplicaHall, _packed, unpickled
from service.scaleout.snapshot import (
    FORMAT,
    keep_snapshots,
    read_snapshot,
    snapshot_bytes,
    write_snapshot,
)


def follow(central: Path) -> tuple[ReplicaHall, CentralTail]:
    replica = ReplicaHall()
    tail = CentralTail(central, replica.on_rows)
    replica.use_log(tail)
    return replica, tail


def drain(tail: CentralTail) -> None:
    while tail.poll():
        pass


@pytest.mark.slow
async def test_a_replica_from_a_snapshot_goes_on_as_the_one_that_replayed_all(
    tmp_path: Path,
) -> None:
    edge_db = tmp_path / "edge.db"
    await play_a_hall(edge_db)
    rows = edge_rows(edge_db)
    central = tmp_path / "central.db"
    parts = batches(rows, (13,))
    # cut inside an input: the snapshot holds an input whose outputs are still coming
    cut = next(i for i in range(len(parts) // 2, len(parts)) if parts[i][0].role == "out")
    for part in parts[:cut]:
        write_central(central, "hall-a", part)
    first, tail = follow(central)
    drain(tail)
    path = tmp_path / "central.db.snapshot"
    write_snapshot(path, snapshot_bytes(first))
    tail.close()
    for part in parts[cut:]:
        write_central(central, "hall-a", part)

    state = read_snapshot(path)
    assert state is not None
    again, tail = follow(central)
    again.restore(state)
    tail.resume(again.last_seq)
    drain(tail)
    whole, whole_tail = follow(central)
    drain(whole_tail)
    try:
        assert tail.rows == len(rows) - sum(len(p) for p in parts[:cut])
        assert again.table_ids() == whole.table_ids()
        for table_id in whole.table_ids():
            assert again.state(table_id) == whole.state(table_id)
            assert again.corrections(table_id) == whole.corrections(table_id)
            assert again.outputs(table_id, after=-1, limit=10**6) == whole.outputs(
                table_id, after=-1, limit=10**6
            )
        pgn = [(r.id, r.game_pgn(e)) for r, e in again.games()]
        assert pgn == [(r.id, r.game_pgn(e)) for r, e in whole.games()]
        assert again.feeds().entries() == whole.feeds().entries()
        assert again.edges() == whole.edges()
        assert {r.divergences for r in again.runners.values()} == {0}
    finally:
        tail.close()
        whole_tail.close()


def test_no_snapshot_or_one_of_other_code_is_not_used(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "s.snapshot"
    assert read_snapshot(path) is None
    path.write_bytes(b"not a pickle")
    with caplog.at_level(logging.INFO):
        assert read_snapshot(path) is None
    assert "not a snapshot" in caplog.text
    replica = ReplicaHall()
    blob = {"format": FORMAT, "code": "other", "state": replica.taken()}
    path.write_bytes(pickle.dumps(blob))
    with caplog.at_level(logging.INFO):
        assert read_snapshot(path) is None
    assert "a snapshot of other code" in caplog.text
    write_snapshot(path, snapshot_bytes(replica))
    assert read_snapshot(path) is not None


async def test_snapshots_are_kept_while_rows_come(tmp_path: Path) -> None:
    replica = ReplicaHall()
    path = tmp_path / "s.snapshot"
    keeping = asyncio.get_running_loop().create_task(keep_snapshots(replica, path, 0.05))
    try:
        await asyncio.sleep(0.15)
        assert not path.exists()  # no rows: nothing to keep
        replica.on_rows("hall-a", [registration(0, "7")])
        for _ in range(100):
            await asyncio.sleep(0.02)
            if path.exists():
                break
        state = read_snapshot(path)
        assert state is not None
        assert list(state.runners) == ["7"]
    finally:
        keeping.cancel()
        with pytest.raises(asyncio.CancelledError):
            await keeping


@pytest.mark.slow
async def test_a_restored_replica_answers_from_its_frozen_tables_as_the_replayed_one(
    tmp_path: Path,
) -> None:
    """Restored, no table is unpickled: the pages' reads come from each table's view and
    are the replayed replica's, byte for byte; the next input of a table unpickles it
    (only it), and it goes on as the replayed one."""
    edge_db = tmp_path / "edge.db"
    await play_a_hall(edge_db)
    rows = edge_rows(edge_db)
    central = tmp_path / "central.db"
    parts = batches(rows, (11,))
    cut = len(parts) * 2 // 3
    for part in parts[:cut]:
        write_central(central, "hall-a", part)
    first, tail = follow(central)
    drain(tail)
    state = pickle.loads(snapshot_bytes(first))["state"]
    again, again_tail = follow(central)
    again.restore(state)
    again_tail.resume(again.last_seq)

    def answers(replica: ReplicaHall) -> str:
        return json.dumps(
            [
                [replica.state(t), replica.summary(t), replica.corrections(t)]
                for t in replica.table_ids()
            ]
            + [[r.id, r.game_pgn(e), e.pgn] for r, e in replica.games()]
            + [[e.game_id, e.text] for e in replica.feeds().entries()]
        )

    try:
        assert answers(again) == answers(first)
        assert all(r.frozen for r in again.runners.values())
        tail.close()
        for part in parts[cut:]:
            write_central(central, "hall-a", part)
        tail = CentralTail(central, first.on_rows)
        tail.resume(first.last_seq)
        drain(tail)
        drain(again_tail)
        assert answers(again) == answers(first)
        assert {r.divergences for r in again.runners.values()} == {0}
        assert not all(r.frozen for r in again.runners.values())
        # a table still frozen is written into the next snapshot as the same bytes
        still = [r for r in again.runners.values() if r.frozen]
        kept = pickle.loads(snapshot_bytes(again))["state"].runners
        assert all(kept[r.id].frozen for r in still)
    finally:
        tail.close()
        again_tail.close()


@dataclasses.dataclass(frozen=True, slots=True)
class Record:
    name: str
    seen: list[Any]
    parent: Record | None = None


@dataclasses.dataclass(slots=True)
class Loose:
    value: int


def test_a_frozen_table_s_records_come_back_as_they_were() -> None:
    """A frozen table keeps its frozen dataclasses with slots as their fields' values
    (quicker to unpickle): they come back equal, shared where they were shared, a cycle
    through a list kept; other objects are pickled as ever."""
    first = Record("a", [])
    second = Record("b", [first, Loose(3)], parent=first)
    first.seen.append(second)  # a cycle: second -> list -> first -> list -> second
    value = {"records": [first, second, first], "loose": Loose(5)}
    back = unpickled(zlib.decompress(_packed(value)))
    one, two, again = back["records"]
    assert one is again
    assert two.parent is one
    assert one.seen[0] is two
    assert two.seen[0] is one
    assert (one.name, two.name, two.seen[1], back["loose"]) == ("a", "b", Loose(3), Loose(5))
    with pytest.raises(dataclasses.FrozenInstanceError):
        one.name = "c"  # type: ignore[misc]
