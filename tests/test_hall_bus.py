"""service.hall with tables on a DGT bus line (service.bus_links): the tables of one port
share one line, each gets the events of its own address, a pulled cable recovers every
table, and configurations that cannot work are refused with a one-line error."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import chess
import pytest
from conftest import move_on, wait_until
from hall_stand_in import EchoTable

from dgt.emulator import BusLine, EmulatorServer, make_bus
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


@dataclass
class BusHall:
    """A hall whose tables sit on one emulated bus line, and what it published."""

    line: BusLine
    server: EmulatorServer
    hall: Hall
    seen: list[Update] = field(default_factory=list)

    def events(self, table_id: str, kind: str) -> list[dict[str, object]]:
        """The published events of ``kind`` of one table, in order."""
        return [
            e for u in self.seen if u.table_id == table_id for e in u.events if e["type"] == kind
        ]

    def moves(self, table_id: str) -> list[dict[str, object]]:
        return self.events(table_id, "move")

    def move(self, address: int, from_square: int, to_square: int) -> None:
        """A hand moves a piece on the board at bus ``address``."""
        move_on(self.server, self.line.board(address), from_square, to_square)


@asynccontextmanager
async def hall_on_bus(
    tmp_path: Path, boards: int, tables: Mapping[str, int], handshake_timeout: float | None = None
) -> AsyncIterator[BusHall]:
    """A bus line of ``boards`` boards on a pty and a started hall with ``tables`` (id: bus
    address) on it; the hall is closed on leaving."""
    line = make_bus(boards)
    async with EmulatorServer(line, link=tmp_path / "bus") as server:
        hall, store = make_hall(tmp_path)
        if handshake_timeout is not None:
            hall.board_options["handshake_timeout"] = handshake_timeout
            hall.bus_links.options["handshake_timeout"] = handshake_timeout
        for table_id, address in tables.items():
            hall.add_table(TableConfig(table_id, server.path, address, {}))
        built = BusHall(line, server, hall)
        hall.subscribe(built.seen.append)
        await hall.start()
        try:
            yield built
        finally:
            await hall.close()
            store.close()


async def test_tables_on_one_bus_line_get_their_own_boards(tmp_path: Path) -> None:
    async with hall_on_bus(tmp_path, 3, {"a": 10001, "b": 10002, "c": 10003}) as bus:
        for runner in bus.hall.runners.values():
            assert await runner.wait_ready(5)
            assert runner.connection()["state"] == "up"
        assert len(bus.hall.bus_links.masters) == 1  # one line, one open port
        bus.move(10002, chess.E2, chess.E4)
        await wait_until(lambda: len(bus.moves("b")) == 1)
        assert bus.moves("b")[0]["data"]["uci"] == str(chess.E4)  # type: ignore[index]
        await asyncio.sleep(0.3)
        assert bus.moves("a") == []
        assert bus.moves("c") == []
    assert not bus.hall.runners["a"].board.ready  # type: ignore[union-attr]


async def test_a_pulled_bus_cable_recovers_every_table(tmp_path: Path) -> None:
    async with hall_on_bus(tmp_path, 2, {"a": 10001, "b": 10002}) as bus:
        runners = bus.hall.runners
        for runner in runners.values():
            assert await runner.wait_ready(5)
        bus.server.unplug()
        await wait_until(
            lambda: all(not r.board.ready for r in runners.values())  # type: ignore[union-attr]
        )
        assert all(r.connection()["state"] == "reconnecting" for r in runners.values())
        bus.move(10001, chess.D2, chess.D4)
        bus.server.plug()
        await wait_until(
            lambda: all(r.board.ready for r in runners.values())  # type: ignore[union-attr]
        )
        for table_id in ("a", "b"):
            assert runners[table_id].connection()["state"] == "up"
        # every table is handed the board as found again (the snapshot reaches the store a
        # commit after the board is ready), and the boards go on working
        def last_reason(table_id: str) -> str | None:
            reasons = [e["data"]["reason"] for e in bus.events(table_id, "board")]  # type: ignore[index]
            return reasons[-1] if reasons else None

        await wait_until(lambda: last_reason("a") == last_reason("b") == "reconnect")
        assert runners["a"].board.squares[chess.D4] is Piece.WPAWN  # type: ignore[union-attr]
        bus.move(10002, chess.G8, chess.F6)
        await wait_until(lambda: len(bus.moves("b")) == 1)
        assert bus.moves("a") == []


@pytest.mark.slow
async def test_an_address_that_does_not_answer_leaves_the_other_tables_alone(
    tmp_path: Path,
) -> None:
    tables = {"a": 10001, "ghost": 10042}
    async with hall_on_bus(tmp_path, 2, tables, handshake_timeout=0.5) as bus:
        assert await bus.hall.runners["a"].wait_ready(5)
        ghost = bus.hall.runners["ghost"]
        await wait_until(lambda: ghost.error is not None)
        assert "bus address 10042" in str(ghost.error)
        assert "\n" not in str(ghost.error)
        assert "down" in [e["state"] for e in bus.events("ghost", "connection")]
        bus.move(10001, chess.C2, chess.C4)
        await wait_until(lambda: len(bus.moves("a")) == 1)


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
