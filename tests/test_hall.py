"""service.hall: several emulated boards in one hall; commit before publish; rebuild after
a restart; a board that cannot be opened does not disturb the others."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import chess
import pytest
from hall_stand_in import EchoTable

import service.hall
import service.table.game
from dgt.emulator.board import VirtualBoard
from dgt.events import BoardEvent, ClockUpdate, Side, SquareChanged
from dgt.protocol import Piece
from dgt.transports.emulator import EmulatorTransport
from service.commands.demo import TransportLine
from service.config import TableConfig
from service.hall import Hall, HallError, Update
from service.store import Store
from service.web.stream import summary


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
    await wait_for(lambda: all(len(r.table.moves()) == 5 for r in hall.runners.values()))
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
    assert again.runners["1"].table.settings.white == "Ann"
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
        await wait_for(lambda: len(hall.runners["good"].table.moves()) == 1)
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
    with pytest.raises(HallError, match="used by table 1 without a bus address"):
        hall.add_table(TableConfig("2", "emulator", 3, {}))
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


@pytest.mark.slow
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


async def test_inputs_close_together_share_a_commit_and_are_shown_only_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(service.hall, "COMMIT_SPACING", 0.3)
    db = tmp_path / "hall.db"
    store = Store(db)
    hall = Hall(store, table_factory=EchoTable, tick_interval=0)
    runner = hall.add_table(TableConfig("1", "emulator", None, {}), EmulatorTransport())
    shown: list[tuple[int, int]] = []  # (moves shown so far, rows on disk then)

    def on_update(update: Update) -> None:
        moves = sum(1 for e in update.events if e["type"] == "move")
        shown.append((moves + (shown[-1][0] if shown else 0), committed_rows(db)))

    hall.subscribe(on_update)
    commits = store.commits
    for i in range(30):
        hall.board_event(runner, SquareChanged(time.monotonic(), i, Piece.WPAWN, Piece.EMPTY))
        await asyncio.sleep(0)  # a turn of the loop between two inputs
    await wait_for(lambda: bool(shown) and shown[-1][0] == 30)
    # The first input is committed at once, the other 29 wait for the spacing together.
    assert store.commits - commits <= 3
    for moves, rows in shown:
        assert rows >= 2 * moves  # each move's input and output row were on disk first
    assert [i.kind for i in store.inputs("1")] == ["board"] * 30
    store.close()


async def test_a_commit_the_loop_leaves_overdue_is_made_by_the_next_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An overloaded hall: inputs keep the loop from running the due commit; the queue must
    not grow for as long as that lasts (found at 5,000 boards: millions of rows waiting)."""
    monkeypatch.setattr(service.hall, "FLUSH_OVERDUE", 0.05)
    store = Store(tmp_path / "hall.db")
    hall = Hall(store, table_factory=EchoTable, tick_interval=0)
    runner = hall.add_table(TableConfig("1", "emulator", None, {}), EmulatorTransport())
    updates: list[Update] = []
    hall.subscribe(updates.append)
    commits = store.commits

    def move(square: int) -> None:
        hall.board_event(runner, SquareChanged(time.monotonic(), square, Piece.WPAWN, Piece.EMPTY))

    move(0)  # a commit is due on the next turn of the loop, which never comes here
    move(1)
    assert store.commits == commits
    assert not updates
    # The inputs' handling holds the loop past the commit's due time.
    time.sleep(0.1)  # noqa: ASYNC251 (blocking the loop is the point)
    move(2)
    assert store.commits == commits + 1  # made by the input, without a turn of the loop
    assert sum(1 for u in updates for e in u.events if e["type"] == "move") == 3
    assert [i.kind for i in store.inputs("1")] == ["board"] * 3
    await asyncio.sleep(0.02)
    hall.settle()
    store.close()


class ClockTable(EchoTable):
    """:class:`EchoTable` that echoes clock reports as ``board`` outputs, as the real table
    does."""

    def feed(self, event: BoardEvent) -> list[dict[str, Any]]:
        if isinstance(event, ClockUpdate):
            return [{"time": event.time, "type": "board", "data": {"left": event.left}}]
        return super().feed(event)


@pytest.mark.slow
async def test_a_clock_report_shown_to_nobody_waits_for_a_commit_but_not_forever(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(service.hall, "QUIET_COMMIT_DELAY", 0.5)
    db = tmp_path / "hall.db"
    store = Store(db)
    hall = Hall(store, table_factory=ClockTable, tick_interval=0)
    runner = hall.add_table(TableConfig("1", "emulator", None, {}), EmulatorTransport())
    updates: list[Update] = []
    hall.subscribe(updates.append)

    def report(left: float) -> None:
        event = ClockUpdate(time.monotonic(), left, 300.0, True, Side.LEFT)
        hall.board_event(runner, event)

    report(299.0)  # the clock starts running: shown (so committed first)
    await wait_for(lambda: len(updates) == 1)
    on_disk = committed_rows(db)
    assert on_disk == 2
    report(298.0)  # only the times changed: logged, not shown, no commit of its own
    for _ in range(5):
        await asyncio.sleep(0)
    assert store.pending == 2
    assert committed_rows(db) == on_disk
    await wait_for(lambda: store.pending == 0)  # committed after QUIET_COMMIT_DELAY
    assert committed_rows(db) == on_disk + 2
    assert len(updates) == 1
    # A page reading the table commits whatever waits first.
    report(297.0)
    assert store.pending == 2
    hall.settle()
    assert committed_rows(db) == on_disk + 4
    store.close()


async def test_checkpoints_run_on_a_thread_of_their_own_at_lower_priority(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(service.hall, "CHECKPOINT_INTERVAL", 0.02)
    store = Store(tmp_path / "hall.db")
    seen: list[tuple[str, int]] = []
    checkpoint = store.checkpoint

    def recorded() -> None:
        thread = threading.current_thread()
        seen.append((thread.name, os.getpriority(os.PRIO_PROCESS, threading.get_native_id())))
        checkpoint()

    monkeypatch.setattr(store, "checkpoint", recorded)
    base = os.getpriority(os.PRIO_PROCESS, 0)
    hall = Hall(store, table_factory=EchoTable, tick_interval=0)
    hall.add_table(TableConfig("1", "emulator", None, {}), EmulatorTransport())
    await hall.start()
    try:
        await wait_for(lambda: len(seen) >= 2)
    finally:
        await hall.close()
        store.close()
    assert all(name.startswith("dgt-checkpoint") for name, _ in seen)
    if sys.platform == "linux":
        assert all(nice >= 10 for _, nice in seen)
    assert os.getpriority(os.PRIO_PROCESS, 0) == base  # the loop's own thread is untouched


async def test_pgn_is_written_only_when_a_game_is_archived_or_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    written: list[str] = []
    write = service.table.game.table_pgn

    def counted(source: Any) -> str:
        text = write(source)
        written.append(text)
        return text

    monkeypatch.setattr(service.table.game, "table_pgn", counted)
    store = Store(tmp_path / "hall.db")
    hall = Hall(store, tick_interval=0)
    transport = EmulatorTransport(VirtualBoard(now=time.monotonic(), clock=None), name="emu")
    settings = {"white": "Ann", "black": "Bob", "round": "1", "rules": "casual"}
    runner = hall.add_table(TableConfig("1", "emu", None, settings), transport)
    await hall.start()
    line = TransportLine(transport)
    try:
        assert await runner.wait_ready(5)
        for uci in ("e2e4", "e7e5", "g1f3", "b8c6"):
            move = chess.Move.from_uci(uci)
            piece = line.device.squares[move.from_square]
            line.act(lambda now, m=move: line.device.lift(m.from_square, now))
            line.act(lambda now, m=move, p=piece: line.device.place(m.to_square, p, now))
            await asyncio.sleep(0.1)
        await wait_for(lambda: len(runner.table.moves()) == 4)
        # the overview's summary is the table's own, the same as one cut from its state
        assert hall.summary("1") == summary(hall.state("1"))
        assert written == []  # four moves pushed, no PGN written for them
        assert runner.games[0].pgn is None  # in progress
        await hall.admin("1", "end", {"result": "1/2-1/2", "reason": "agreement"})
        assert written == []
        finished = runner.games[0].pgn  # asked for: written now, kept until a change
        assert finished is not None
        assert runner.games[0].pgn is finished
        assert len(written) == 1
        await hall.admin("1", "start", {"white": "Cy", "round": "2"})
        assert [(g.number, g.round) for g in runner.games] == [(1, "1"), (2, "2")]
        assert runner.games[0].archived == finished  # as played, under its own players
        assert '[White "Ann"]' in finished
        assert "1. e4" in finished
        assert "1/2-1/2" in finished
        assert runner.games[1].pgn is None
        assert '[White "Cy"]' in runner.game_pgn(runner.games[1])
    finally:
        await hall.close()
        store.close()


async def test_a_rebuilt_table_shows_the_same_change_log(tmp_path: Path) -> None:
    """The change log is rebuilt from the stored admin commands: a restart shows it as it
    was, and the web serves it (``/api/tables/ID/corrections``)."""
    from service.web.app import create_app

    db = tmp_path / "hall.db"
    store = Store(db)
    hall = Hall(store, tick_interval=0)
    transport = EmulatorTransport(VirtualBoard(now=time.monotonic(), clock=None), name="emu")
    runner = hall.add_table(TableConfig("1", "emu", None, {"rules": "casual"}), transport)
    await hall.start()
    line = TransportLine(transport)
    try:
        assert await runner.wait_ready(5)
        for uci in ("e2e4", "e7e5", "g1f3"):
            move = chess.Move.from_uci(uci)
            piece = line.device.squares[move.from_square]
            line.act(lambda now, m=move: line.device.lift(m.from_square, now))
            line.act(lambda now, m=move, p=piece: line.device.place(m.to_square, p, now))
            await asyncio.sleep(0.1)
        await wait_for(lambda: len(runner.table.moves()) == 3)
        await hall.admin("1", "correct", {"ply": 3, "uci": "b1c3"})
        await hall.admin("1", "end", {"result": "1-0", "reason": "resignation"})
        log = runner.table.change_log()
        assert [c["what"] for c in log] == ["correction", "result"]
        assert log[0]["old"] == "2. Nf3"
        assert log[0]["new"] == "2. Nc3"
    finally:
        await hall.close()
        store.close()
    store = Store(db)
    again = Hall(store, tick_interval=0)
    rebuilt = again.add_table(TableConfig("1", "emu", None, {"rules": "casual"}))
    try:
        assert rebuilt.replay_divergences == 0
        assert rebuilt.table.change_log() == log
        from aiohttp.test_utils import TestClient, TestServer

        async with TestClient(TestServer(create_app(again, "admin-token-1"))) as client:
            response = await client.get("/api/tables/1/corrections")
            assert response.status == 200
            assert await response.json() == {"table": "1", "corrections": log}
    finally:
        await again.close()
        store.close()
