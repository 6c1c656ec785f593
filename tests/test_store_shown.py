"""Nothing shown that is not stored: while the store cannot write (a full disk, a database
that refuses writes), every public read (the state JSON, the overview's summary, the games
list, the PGN feeds, a stream opened then) shows each table as of its last commit, clock
orders wait for their rows' commit, and the store's state is said (a ``status`` event on
the live stream, ``GET /api/status``, the admin API's 503); once it writes again, the
tables are shown live and the banner's status goes back to ok."""

from __future__ import annotations

import asyncio
import io
import json
import sqlite3
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import chess
import chess.pgn
import pytest
from conftest import ErrorLog
from test_store_faults import FakeClock, fill, small_disk

from dgt.emulator.board import VirtualBoard
from dgt.transports.emulator import EmulatorTransport
from service.commands.demo import TransportLine
from service.config import TableConfig
from service.hall import Hall, HallError
from service.store import Store, StoreState
from service.table import ClockOrder
from service.web import WebServer

TOKEN = "shown-test-token"
OPENING = [
    "e2e4",
    "e7e5",
    "g1f3",
    "b8c6",
    "f1c4",
    "g8f6",
    "d2d3",
    "f8c5",
    "c2c3",
    "d7d6",
    "b1d2",
    "a7a6",
    "h2h3",
    "h7h6",
    "a2a4",
    "b7b5",
    "a4b5",
    "a6b5",
    "a1a8",
    "c8b7",
]


@dataclass
class Site:
    url: str
    hall: Hall
    store: Store
    clock: FakeClock
    lines: dict[str, TransportLine]
    statuses: list[dict[str, Any]]
    session: aiohttp.ClientSession

    async def get(self, path: str) -> tuple[int, Any]:
        async with self.session.get(self.url + path) as response:
            body = await response.text()
            if response.content_type == "application/json":
                return response.status, json.loads(body)
            return response.status, body


@asynccontextmanager
async def served(db: Path, tables: tuple[str, ...] = ("1", "2")) -> AsyncIterator[Site]:
    """A hall of emulated boards on ``db`` (the store's retries timed by a fake clock) with
    its web server."""
    clock = FakeClock()
    store = Store(db, clock=clock)
    hall = Hall(store, tick_interval=0.2)
    boards: dict[str, EmulatorTransport] = {}
    for table_id in tables:
        transport = EmulatorTransport(VirtualBoard(now=time.monotonic()), name=f"emu-{table_id}")
        settings = {"white": "Ann", "black": "Bob", "round": "1", "rules": "casual"}
        hall.add_table(TableConfig(table_id, transport.name, None, settings), transport)
        boards[table_id] = transport
    statuses: list[dict[str, Any]] = []
    hall.subscribe_status(statuses.append)
    server = WebServer(hall, TOKEN, port=0)
    url = (await server.start()).rstrip("/")
    try:
        await hall.start()
        for runner in hall.runners.values():
            assert await runner.wait_ready(5)
        lines = {table_id: TransportLine(board) for table_id, board in boards.items()}
        async with aiohttp.ClientSession() as session:
            yield Site(url, hall, store, clock, lines, statuses, session)
    finally:
        await server.close()
        await hall.close()


def close_store(store: Store) -> None:
    """Close the store (every row is stored by now)."""
    store.close()
    assert store.unstored == 0


async def play(site: Site, table_id: str, uci: str) -> None:
    """Make ``uci`` on the table's emulated board and wait until its table took it."""
    line = site.lines[table_id]
    runner = site.hall.runners[table_id]
    before = len(runner.table.moves())
    move = chess.Move.from_uci(uci)
    piece = line.device.squares[move.from_square]
    line.act(lambda now: line.device.lift(move.from_square, now))
    line.act(lambda now: line.device.place(move.to_square, piece, now))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 5
    while len(runner.table.moves()) <= before:
        assert loop.time() < deadline, f"table {table_id} did not take {uci}"
        await asyncio.sleep(0.01)


def committed_moves(db: Path, table_id: str) -> list[str]:
    """The moves of the table's committed log, read through a connection of its own."""
    connection = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    try:
        rows = connection.execute(
            "SELECT data FROM log WHERE table_id=? AND role='out' AND kind='move' ORDER BY seq",
            (table_id,),
        ).fetchall()
    finally:
        connection.close()
    by_ply: dict[int, str] = {}  # a move is logged as made, then again once final
    for (data,) in rows:
        move = json.loads(data)
        by_ply[int(move["ply"])] = str(move["uci"])
    return [by_ply[ply] for ply in sorted(by_ply)]


def final_ucis(state: dict[str, Any]) -> list[str]:
    """The moves of a state (the last one may still be taken back: not final yet)."""
    return [m["uci"] for m in state.get("moves", []) if not m.get("refused")]


def pgn_ucis(text: str) -> list[str]:
    game = chess.pgn.read_game(io.StringIO(text))
    assert game is not None
    return [move.uci() for move in game.mainline_moves()]


def all_games(text: str) -> list[list[str]]:
    handle = io.StringIO(text)
    games: list[list[str]] = []
    while (game := chess.pgn.read_game(handle)) is not None:
        games.append([move.uci() for move in game.mainline_moves()])
    return games


async def shown_everywhere(site: Site, table_id: str) -> dict[str, Any]:
    """What each public read shows of the table: moves (as UCI) or a count."""
    hall = site.hall
    status, state = await site.get(f"/api/tables/{table_id}")
    assert status == 200
    _, tables = await site.get("/api/tables")
    summary = next(t for t in tables["tables"] if t["id"] == table_id)
    _, games = await site.get("/api/games")
    mine = [g for g in games["games"] if g["table"] == table_id]
    _, pgn = await site.get(f"/games/{table_id}-1.pgn")
    _, all_pgn = await site.get("/games.pgn")
    first = await first_stream_message(site, table_id)
    final = [m["uci"] for m in state["moves"] if m.get("final")]  # the PGN's moves
    return {
        "state": final_ucis(state),
        "hall.state": final_ucis(hall.state(table_id)),
        "summary.ply": summary["ply"],
        "hall.summary.ply": hall.summary(table_id)["ply"],
        "games": len(mine),
        "pgn is the state's final moves": pgn_ucis(pgn) == final,
        "games.pgn has it": final in all_games(all_pgn),
        "stream": final_ucis(first),
    }


async def first_stream_message(site: Site, table_id: str) -> dict[str, Any]:
    """The table's state as a stream opened now first shows it."""
    async with site.session.get(f"{site.url}/api/stream?table={table_id}") as response:
        text = ""
        while "event: state" not in text or not text.endswith("\n\n"):
            text += (await response.content.readany()).decode()
    data = text.split("event: state\ndata: ", 1)[1].split("\n", 1)[0]
    state: dict[str, Any] = json.loads(data)["state"]
    return state


def expected(moves: list[str], games: int = 1) -> dict[str, Any]:
    return {
        "state": moves,
        "hall.state": moves,
        "summary.ply": len(moves),
        "hall.summary.ply": len(moves),
        "games": games,
        "pgn is the state's final moves": True,
        "games.pgn has it": True,
        "stream": moves,
    }


@contextmanager
def refusing_writes(store: Store) -> Iterator[None]:
    """The store's database refuses every write (reads still work) until the end."""
    connection = store._db
    connection.execute("PRAGMA query_only=1")
    try:
        yield
    finally:
        connection.execute("PRAGMA query_only=0")


async def check_failing_then_writing(
    site: Site, db: Path, fail: Callable[[], bool], free: Callable[[], None]
) -> None:
    """Play, make the store fail (``fail()`` after each move until it says the store
    failed), check every read shows the committed moves only; ``free()``, check the live
    tables are shown again."""
    hall, store = site.hall, site.store
    for uci in OPENING[:2]:
        await play(site, "1", uci)
    await play(site, "2", "d2d4")
    assert await shown_everywhere(site, "1") == expected(OPENING[:2])
    assert store.healthy
    assert site.statuses == []  # nothing said while the store writes
    status, answer = await site.get("/api/status")
    assert status == 200
    assert answer["store"]["state"] == "ok"

    played = 2
    for uci in OPENING[2:]:
        await play(site, "1", uci)
        played += 1
        hall.settle()
        if fail():
            break
    assert not store.healthy
    # more moves come in while it fails
    for uci in OPENING[played : played + 2]:
        await play(site, "1", uci)
    played += 2
    live = [m["uci"] for m in hall.runners["1"].table.moves()]
    assert live == OPENING[:played]
    committed = committed_moves(db, "1")
    assert len(committed) < played  # the live table is ahead of the log...
    assert await shown_everywhere(site, "1") == expected(committed)  # ...never what is shown
    assert await shown_everywhere(site, "2") == expected(["d2d4"])

    status, answer = await site.get("/api/status")
    assert answer["store"]["state"] == "failing"
    assert answer["store"]["unstored"] == store.unstored > 0
    assert answer["store"]["tables_behind"] == ["1"]
    assert site.statuses
    assert site.statuses[-1]["state"] == "failing"
    assert site.statuses[-1]["unstored"] == store.unstored
    async with site.session.get(f"{site.url}/api/stream") as response:
        text = ""
        while "event: state" not in text:
            text += (await response.content.readany()).decode()
    assert text.startswith("retry: 2000\nevent: status\ndata: ")
    said = json.loads(text.split("event: status\ndata: ", 1)[1].split("\n", 1)[0])
    assert said["store"]["state"] == "failing"

    # an admin command: 503, kept, not shown (the result: the players of a game with
    # moves are the next game's, and the record is what is shown)
    async with site.session.post(
        f"{site.url}/api/admin/tables/1/end",
        json={"result": "1/2-1/2", "reason": "agreement"},
        headers={"Authorization": f"Bearer {TOKEN}"},
    ) as response:
        assert response.status == 503
        error = (await response.json())["error"]
    assert error.startswith("not stored yet: kept in memory and retried")
    assert hall.runners["1"].table.result == "1/2-1/2"  # taken by the table...
    assert hall.state("1")["result"] == "*"  # ...shown once stored
    status, pgn = await site.get("/games/1-1.pgn")
    assert '[White "Ann"]' in pgn
    assert '[Result "*"]' in pgn

    free()
    site.clock.now += 100  # the store's back-off is over
    hall.settle()
    assert store.healthy
    assert committed_moves(db, "1") == OPENING[:played]
    assert await shown_everywhere(site, "1") == expected(OPENING[:played])
    assert hall.state("1")["result"] == "1/2-1/2"
    assert site.statuses[-1]["state"] == "ok"
    assert site.statuses[-1]["unstored"] == 0
    status, answer = await site.get("/api/status")
    assert answer["store"] == {
        "state": "ok", "unstored": 0, "refused": 0, "error": None, "retry_in": 0.0,
        "tables_behind": [],
    }  # fmt: skip


async def test_a_store_refusing_writes_shows_every_table_as_of_its_last_commit(
    tmp_path: Path, error_log: ErrorLog
) -> None:
    db = tmp_path / "hall.db"
    async with served(db) as site:
        connection = site.store._db

        def fail() -> bool:
            connection.execute("PRAGMA query_only=1")  # every write refused from now on
            return not site.store.healthy

        def free() -> None:
            connection.execute("PRAGMA query_only=0")

        await check_failing_then_writing(site, db, fail, free)
    close_store(site.store)
    error_log.expect("cannot write the log")


@pytest.mark.slow
async def test_a_full_disk_shows_every_table_as_of_its_last_commit(
    tmp_path: Path, error_log: ErrorLog
) -> None:
    with small_disk(tmp_path) as disk:
        db = disk / "hall.db"
        filler: list[Path] = []
        async with served(db) as site:

            def fail() -> bool:
                if not filler:
                    filler.append(fill(disk))
                return not site.store.healthy

            def free() -> None:
                filler[0].unlink()

            await check_failing_then_writing(site, db, fail, free)
        close_store(site.store)
    error_log.expect("cannot write the log")


async def test_clock_orders_wait_for_the_commit_of_their_rows(
    tmp_path: Path, error_log: ErrorLog
) -> None:
    db = tmp_path / "hall.db"
    async with served(db, ("1",)) as site:
        hall = site.hall
        runner = hall.runners["1"]
        sent: list[list[ClockOrder]] = []
        order = ClockOrder("beep", beep=0.1)
        runner.send_clock_orders = lambda orders: sent.append(list(orders))  # type: ignore[method-assign]
        real_take = runner.take_clock_orders  # the hall takes them through the runner
        given: list[ClockOrder] = []

        def take() -> list[ClockOrder]:
            out = list(real_take()) + given
            given.clear()
            return out

        runner.take_clock_orders = take  # type: ignore[method-assign]
        with refusing_writes(site.store):
            given.append(order)
            with pytest.raises(HallError) as refused:
                await hall.admin("1", "players", {"white": "Dora"})
            assert refused.value.status == 503
            await asyncio.sleep(0.05)
            assert sent == []  # the ruling waits for its rows
        site.clock.now += 100
        hall.settle()
        assert site.store.state is StoreState.OK
        assert sent == [[order]]
    close_store(site.store)
    error_log.expect("cannot write the log")
