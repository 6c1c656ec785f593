"""The hall plays realtime chess: a table configured with ``variant = "realtime"`` is a
:class:`service.table.RealtimeTable` (built by ``default_table_factory``), its
moves are logged and published, and a restart rebuilds it from the log.

These tests need the hall to build the realtime table for variant ``realtime`` (see the
realtime section of docs/variants.md, "Still to wire")."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

from dgt.protocol import Piece
from dgt.transports.emulator import EmulatorTransport
from service.config import TableConfig
from service.hall import Hall, default_table_factory
from service.store import Store
from service.table import RealtimeTable

SETTINGS = {"variant": "realtime", "tick": "0.2", "white": "Ann", "black": "Bob"}


async def wait_for(predicate: Callable[[], bool], within: float) -> None:
    deadline = time.monotonic() + within
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)


def test_the_factory_builds_a_realtime_table_with_its_tick() -> None:
    table = default_table_factory("rt", dict(SETTINGS))
    assert isinstance(table, RealtimeTable)
    assert table.settings.tick == 0.2
    assert table.settings.white == "Ann"


async def test_the_hall_records_a_realtime_move_and_rebuilds_it(tmp_path: Path) -> None:
    store = Store(tmp_path / "rt.db")
    hall = Hall(store, tick_interval=0.1)
    transport = EmulatorTransport(name="emu-rt")
    hall.add_table(TableConfig("rt", transport.name, None, dict(SETTINGS)), transport)
    await hall.start()
    try:
        assert await hall.runners["rt"].wait_ready(5)
        await wait_for(lambda: hall.state("rt")["phase"] == "playing", 5)
        transport.lift(6)  # g1
        await asyncio.sleep(0.1)
        transport.place(21, Piece.WKNIGHT)  # f3
        await wait_for(lambda: [m["uci"] for m in hall.state("rt")["moves"]] == ["g1f3"], 5)
        state = hall.state("rt")
        assert state["realtime"]["tick"] == 0.2
        await wait_for(lambda: "f3" in hall.state("rt")["realtime"]["delays"], 5)
    finally:
        await hall.close()
    again = Hall(store, tick_interval=0.1)
    runner = again.add_table(TableConfig("rt", "emu-rt-2", None, dict(SETTINGS)))
    assert [m["uci"] for m in runner.table.moves()] == ["g1f3"]
    assert runner.games[0].archived is None
    assert again.summary("rt")["ply"] == 1  # the table's own summary, with the connection
    assert set(again.summary("rt")) >= {"white", "variant", "connection", "board"}
    store.close()


async def test_the_hall_archives_a_replaced_realtime_game_as_it_read(tmp_path: Path) -> None:
    store = Store(tmp_path / "rt.db")
    hall = Hall(store, tick_interval=0.1)
    transport = EmulatorTransport(name="emu-rt")
    runner = hall.add_table(TableConfig("rt", transport.name, None, dict(SETTINGS)), transport)
    await hall.start()
    try:
        assert await runner.wait_ready(5)
        await wait_for(lambda: hall.state("rt")["phase"] == "playing", 5)
        transport.lift(6)  # g1
        await asyncio.sleep(0.1)
        transport.place(21, Piece.WKNIGHT)  # f3
        await wait_for(lambda: len(runner.table.moves()) == 1, 5)
        played = runner.table.pgn()
        await hall.admin("rt", "start", {"white": "Cy"})
        assert [g.number for g in runner.games] == [1, 2]
        assert runner.games[0].pgn == played  # under the settings it was played with
        assert '[White "Ann"]' in played
    finally:
        await hall.close()
    store.close()
