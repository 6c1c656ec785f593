"""service.hall with tables on a DGT bus line (service.bus_links): the tables of one port
share one line, each gets the events of its own address, a pulled cable recovers every
table, and configurations that cannot work are refused with a one-line error."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import chess
import pytest
from conftest import wait_until
from test_store import EchoTable

from dgt.emulator import EmulatorServer, make_bus
from dgt.protocol import Piece
from service.bus_links import BusConfigError, BusLinks
from service.config import TableConfig
from service.hall import Hall, HallError, Update
from service.store import Store

pytestmark = pytest.mark.usefixtures("no_leaked_tasks")

OPTIONS = {"reconnect_min": 0.05, "reconnect_max": 0.2, "handshake_timeout": 3.0}


def make_hall(tmp_path: Path) -> tuple[Hall, Store]:
    store = Store(tmp_path / "hall.db")
    hall = Hall(store, table_factory=EchoTable, tick_interval=0, board_options=OPTIONS)
    # a loaded test machine, not a 9600-baud line: a forgiving reply time-out
    hall.bus_links.options.update(reply_timeout=0.25, cycle_min=0.02)
    return hall, store


def moves(updates: list[Update], table_id: str) -> list[dict[str, object]]:
    return [
        e for u in updates if u.table_id == table_id for e in u.events if e["type"] == "move"
    ]


def boards(updates: list[Update], table_id: str) -> list[dict[str, object]]:
    return [
        e for u in updates if u.table_id == table_id for e in u.events if e["type"] == "board"
    ]


def link_states(updates: list[Update], table_id: str) -> Callable[[], list[object]]:
    return lambda: [
        e["state"] for u in updates if u.table_id == table_id for e in u.events
        if e["type"] == "connection"
    ]  # fmt: skip


async def test_tables_on_one_bus_line_get_their_own_boards(tmp_path: Path) -> None:
    line = make_bus(3)
    async with EmulatorServer(line, link=tmp_path / "bus") as server:
        hall, store = make_hall(tmp_path)
        hall.add_table(TableConfig("a", server.path, 10001, {}))
        hall.add_table(TableConfig("b", server.path, 10002, {}))
        hall.add_table(TableConfig("c", server.path, 10003, {}))
        seen: list[Update] = []
        hall.subscribe(seen.append)
        await hall.start()
        try:
            for runner in hall.runners.values():
                assert await runner.wait_ready(5)
                assert runner.connection()["state"] == "up"
            assert len(hall.bus_links.masters) == 1  # one line, one open port
            second = line.board(10002)
            server.act(lambda now: second.lift(chess.E2, now))
            server.act(lambda now: second.place(chess.E4, Piece.WPAWN, now))
            await wait_until(lambda: len(moves(seen, "b")) == 1)
            assert moves(seen, "b")[0]["data"]["uci"] == str(chess.E4)  # type: ignore[index]
            await asyncio.sleep(0.3)
            assert moves(seen, "a") == []
            assert moves(seen, "c") == []
        finally:
            await hall.close()
            store.close()
        assert not hall.runners["a"].board.ready  # type: ignore[union-attr]


async def test_a_pulled_bus_cable_recovers_every_table(tmp_path: Path) -> None:
    line = make_bus(2)
    async with EmulatorServer(line, link=tmp_path / "bus") as server:
        hall, store = make_hall(tmp_path)
        hall.add_table(TableConfig("a", server.path, 10001, {}))
        hall.add_table(TableConfig("b", server.path, 10002, {}))
        seen: list[Update] = []
        hall.subscribe(seen.append)
        await hall.start()
        try:
            for runner in hall.runners.values():
                assert await runner.wait_ready(5)
            server.unplug()
            await wait_until(
                lambda: all(not r.board.ready for r in hall.runners.values())  # type: ignore[union-attr]
            )
            assert all(r.connection()["state"] == "reconnecting" for r in hall.runners.values())
            first = line.board(10001)
            server.act(lambda now: first.lift(chess.D2, now))
            server.act(lambda now: first.place(chess.D4, Piece.WPAWN, now))
            server.plug()
            await wait_until(
                lambda: all(r.board.ready for r in hall.runners.values())  # type: ignore[union-attr]
            )
            for table_id in ("a", "b"):
                assert hall.runners[table_id].connection()["state"] == "up"
            # every table was handed the board as found again, and the boards go on working
            for table_id in ("a", "b"):
                reasons = [e["data"]["reason"] for e in boards(seen, table_id)]  # type: ignore[index]
                assert reasons[-1] == "reconnect"
            assert hall.runners["a"].board.squares[chess.D4] is Piece.WPAWN  # type: ignore[union-attr]
            second = line.board(10002)
            server.act(lambda now: second.lift(chess.G8, now))
            server.act(lambda now: second.place(chess.F6, Piece.BKNIGHT, now))
            await wait_until(lambda: len(moves(seen, "b")) == 1)
            assert moves(seen, "a") == []
        finally:
            await hall.close()
            store.close()


async def test_an_address_that_does_not_answer_leaves_the_other_tables_alone(
    tmp_path: Path,
) -> None:
    line = make_bus(2)
    async with EmulatorServer(line, link=tmp_path / "bus") as server:
        hall, store = make_hall(tmp_path)
        hall.board_options["handshake_timeout"] = 0.5
        hall.bus_links.options["handshake_timeout"] = 0.5
        hall.add_table(TableConfig("a", server.path, 10001, {}))
        hall.add_table(TableConfig("ghost", server.path, 10042, {}))
        seen: list[Update] = []
        hall.subscribe(seen.append)
        await hall.start()
        try:
            assert await hall.runners["a"].wait_ready(5)
            ghost = hall.runners["ghost"]
            await wait_until(lambda: ghost.error is not None)
            assert "bus address 10042" in str(ghost.error)
            assert "\n" not in str(ghost.error)
            assert "down" in link_states(seen, "ghost")()
            first = line.board(10001)
            server.act(lambda now: first.lift(chess.C2, now))
            server.act(lambda now: first.place(chess.C4, Piece.WPAWN, now))
            await wait_until(lambda: len(moves(seen, "a")) == 1)
        finally:
            await hall.close()
            store.close()


async def test_clashing_bus_tables_are_refused(tmp_path: Path) -> None:
    hall, store = make_hall(tmp_path)
    try:
        hall.add_table(TableConfig("1", "/dev/ttyUSB0", 3, {}))
        with pytest.raises(HallError, match="bus address 3 on /dev/ttyUSB0 is already table 1"):
            hall.add_table(TableConfig("2", "/dev/ttyUSB0", 3, {}))
        with pytest.raises(HallError, match="is a bus line of other tables"):
            hall.add_table(TableConfig("3", "/dev/ttyUSB0", None, {}))
        hall.add_table(TableConfig("4", "/dev/ttyACM0", None, {}))
        with pytest.raises(HallError, match="used by table 4 without a bus address"):
            hall.add_table(TableConfig("5", "/dev/ttyACM0", 7, {}))
        assert sorted(hall.runners) == ["1", "4"]
    finally:
        store.close()


def test_bus_links_share_one_master_per_port() -> None:
    links = BusLinks({"reconnect_min": 0.1, "read_memory": False, "settle_delay": 0.05})
    assert links.options == {"reconnect_min": 0.1}  # board-only options are left out
    a = links.board(TableConfig("a", "/dev/ttyUSB0", 1, {}))
    b = links.board(TableConfig("b", "/dev/ttyUSB0 ", 2, {}))
    c = links.board(TableConfig("c", "/dev/ttyUSB1", 1, {}))
    assert a.master is b.master
    assert c.master is not a.master
    assert (a.address, b.address, c.address) == (1, 2, 1)
    assert a.master.reconnect_min == 0.1
    with pytest.raises(BusConfigError, match="no bus address"):
        links.board(TableConfig("d", "/dev/ttyUSB2", None, {}))
