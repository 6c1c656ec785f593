"""service.hall: several emulated boards in one hall; commit before publish; rebuild after
a restart; a board that cannot be opened does not disturb the others."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from test_store import EchoTable

from dgt.protocol import Piece
from dgt.transports.emulator import EmulatorTransport
from service.config import TableConfig
from service.hall import Hall, HallError, Update
from service.store import Store


def committed_rows(db: Path) -> int:
    connection = sqlite3.connect(db)
    try:
        return int(connection.execute("SELECT count(*) FROM log").fetchone()[0])
    finally:
        connection.close()


async def wait_for(predicate: Callable[[], bool], seconds: float = 5.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not predicate():
        assert loop.time() < deadline, "timed out"
        await asyncio.sleep(0.01)


async def test_many_boards_each_published_only_after_commit(tmp_path: Path) -> None:
    db = tmp_path / "hall.db"
    store = Store(db)
    hall = Hall(store, table_factory=EchoTable, tick_interval=0)
    transports = []
    for i in range(1, 7):
        transport = EmulatorTransport(name=f"emu-{i}")
        transports.append(transport)
        hall.add_table(TableConfig(str(i), transport.name, None, {}), transport)
    seen: list[tuple[Update, int]] = []

    def on_update(update: Update) -> None:
        # Whatever is published is already readable through another connection.
        seen.append((update, committed_rows(db)))
        assert store.pending == 0

    hall.subscribe(on_update)
    await hall.start()
    try:
        for runner in hall.runners.values():
            assert await runner.wait_ready(5)
        for i, transport in enumerate(transports):
            transport.lift(8 + i)
            transport.place(16 + i, Piece.WPAWN)
        await wait_for(lambda: sum(
            1 for u, _ in seen for e in u.events if e["type"] == "move"
        ) == 6)  # fmt: skip
        moves = {u.table_id: e for u, _ in seen for e in u.events if e["type"] == "move"}
        assert sorted(moves, key=int) == [str(i) for i in range(1, 7)]
        assert all(moves[str(i + 1)]["data"]["uci"] == str(16 + i) for i in range(6))
        assert all(u.source_time is not None for u, _ in seen if u.events[0]["type"] == "move")
        logged = [(u, rows) for u, rows in seen if u.events[0]["type"] != "connection"]
        assert logged
        for update, rows in logged:
            assert rows > 0, update
    finally:
        await hall.close()
        store.close()


async def test_restart_rebuilds_every_table(tmp_path: Path) -> None:
    db = tmp_path / "hall.db"
    store = Store(db)
    hall = Hall(store, table_factory=EchoTable, tick_interval=0)
    transports = [EmulatorTransport(name=f"emu-{i}") for i in range(3)]
    for i, transport in enumerate(transports):
        hall.add_table(TableConfig(str(i), transport.name, None, {}), transport)
    await hall.start()
    for runner in hall.runners.values():
        assert await runner.wait_ready(5)
    for step in range(5):
        for i, transport in enumerate(transports):
            transport.lift(8 + step)
            transport.place(16 + step + i, Piece.WPAWN)
    await hall.admin("1", "players", {"white": "Ann"})
    await wait_for(lambda: all(len(r.table.moves) == 5 for r in hall.runners.values()))
    hall.settle()
    before = {tid: r.table.state() for tid, r in hall.runners.items()}
    await hall.close()
    store.close()

    store = Store(db)
    again = Hall(store, table_factory=EchoTable, tick_interval=0)
    for i in range(3):
        runner = again.add_table(TableConfig(str(i), f"emu-{i}", None, {}))
        assert runner.replay_divergences == 0
        assert runner.table.state() == before[str(i)]
    assert again.runners["1"].table.settings["white"] == "Ann"
    store.close()


async def test_a_board_that_cannot_be_opened_does_not_disturb_the_others(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = Store(tmp_path / "hall.db")
    hall = Hall(store, table_factory=EchoTable, tick_interval=0)
    good = EmulatorTransport(name="emu-good")
    hall.add_table(TableConfig("good", good.name, None, {}), good)
    hall.add_table(TableConfig("bad", str(tmp_path / "no-such-port"), None, {}))
    statuses: list[Update] = []
    hall.subscribe(statuses.append)
    await hall.start()
    try:
        assert await hall.runners["good"].wait_ready(5)
        await wait_for(lambda: hall.runners["bad"].link == "down")
        assert "no such port" in (hall.runners["bad"].error or "")
        assert hall.state("bad")["connection"]["state"] == "down"
        good.lift(12)
        good.place(28, Piece.WPAWN)
        await wait_for(lambda: len(hall.runners["good"].table.moves) == 1)
        assert any(u.table_id == "bad" and u.events[0]["type"] == "connection" for u in statuses)
        assert "table bad: no such port" in caplog.text
    finally:
        await hall.close()
        store.close()


async def test_admin_errors_are_hall_errors(tmp_path: Path) -> None:
    store = Store(tmp_path / "hall.db")
    hall = Hall(store, table_factory=EchoTable, tick_interval=0)
    hall.add_table(TableConfig("1", "emulator", None, {}), EmulatorTransport())
    with pytest.raises(HallError, match="no table 'x'") as info:
        await hall.admin("x", "players", {})
    assert info.value.status == 404
    with pytest.raises(HallError, match="unknown command") as info:
        await hall.admin("1", "explode", {})
    assert info.value.status == 400
    with pytest.raises(HallError, match="configured twice"):
        hall.add_table(TableConfig("1", "emulator", None, {}))
    with pytest.raises(HallError, match="bus addresses are not supported"):
        hall.add_table(TableConfig("2", "/dev/ttyUSB0", 3, {}))
    store.close()


async def test_ticks_that_produce_something_are_logged(tmp_path: Path) -> None:
    store = Store(tmp_path / "hall.db")
    now = [1000.0]
    hall = Hall(store, table_factory=EchoTable, tick_interval=0, wall_clock=lambda: now[0])
    hall.add_table(TableConfig("1", "emulator", None, {}), EmulatorTransport())
    hall.tick()
    now[0] += 1
    hall.tick()  # nothing new: not logged
    hall.settle()
    assert [i.kind for i in store.inputs("1")] == ["tick"]
    store.close()


async def test_the_hall_lights_the_last_move_on_a_pegasus_and_never_on_a_classic_board(
    tmp_path: Path,
) -> None:
    """Issue 6: ``dgt-service run`` drives the LEDs of boards that have them (the last move
    here); a classic board gets no LED frame (0x60 would stall it)."""
    store = Store(tmp_path / "leds.db")
    hall = Hall(store, tick_interval=0.1)
    pegasus = EmulatorTransport(name="emu-pegasus", pegasus=True)
    classic = EmulatorTransport(name="emu-classic")
    hall.add_table(TableConfig("p", pegasus.name, None, {}), pegasus)
    hall.add_table(TableConfig("c", classic.name, None, {}), classic)
    await hall.start()
    try:
        for runner in hall.runners.values():
            assert await runner.wait_ready(5)
        assert hall.runners["p"].leds is not None
        assert hall.runners["c"].leds is None
        for transport, piece in ((pegasus, Piece.OCCUPIED), (classic, Piece.WPAWN)):
            transport.lift(12)  # e2
            transport.place(28, piece)  # e4
        # No clock on the Pegasus: the move is final after the recogniser's settle delay.
        await wait_for(lambda: pegasus.board.leds == {12, 28}, 8.0)
        assert classic.board.leds == set()
        moves = hall.state("p")["moves"]
        assert [m["uci"] for m in moves] == ["e2e4"]
    finally:
        await hall.close()
        store.close()
