"""``dgt-service run --play``: the eboards API over a hall's boards.  A hall with emulated
boards is served with the play API beside it; clients that follow lichess's calls get each
board's moves, ``setup`` on a board restarts only the API's reading (the table's record
stays as it was), the boards' states follow their links, and without the option nothing of
``service.play`` is imported."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

import aiohttp
import chess
import pytest
from conftest import ErrorLog, wait_until
from hall_stand_in import EchoTable
from test_play_pty import Site, site

from dgt.events import BoardEvent, SquareChanged
from dgt.protocol import Piece
from dgt.transports.emulator import EmulatorTransport
from service.cli import main
from service.commands.demo import emulated_tables
from service.config import DEFAULT_PLAY_PORT, TableConfig
from service.hall import Hall
from service.play.eboard import EboardState
from service.play.hall_feed import HallPlay, eboard_state
from service.play.server import DEFAULT_PORT
from service.store import Store
from service.table_runner import Connection, TableInput, TableRunner

ROOT = Path(__file__).resolve().parent.parent
SETTLE = 0.4
"""The API's settle delay here (short, to keep the tests quick)."""


class HallSite(Site):
    """A site's page at one board of the hall: lichess's calls, the board chosen by its
    serial number (lichess takes the first listed)."""

    async def eboards(self) -> list[dict[str, Any]]:
        await self.ws.send_str('{"id":1,"call":"eboards"}')
        while True:
            message = await self.receive()
            if message["response"] == "call" and message["id"] == 1:
                boards: list[dict[str, Any]] = message["param"]
                return boards

    async def start_at(self, serialnr: str, within: float = 10.0) -> None:
        """eboards (again while ``serialnr`` is not listed yet), then subscribe to it."""
        deadline = time.monotonic() + within
        self.boards = await self.eboards()
        while serialnr not in [b["serialnr"] for b in self.boards]:
            assert time.monotonic() < deadline, f"{serialnr} not listed: {self.boards}"
            await asyncio.sleep(0.1)
            self.boards = await self.eboards()
        self.serialnr = serialnr
        subscription = {"id": 2, "call": "subscribe",
                        "param": {"feed": "eboardevent", "id": 1,
                                  "param": {"serialnr": serialnr}}}  # fmt: skip
        await self.ws.send_str(json.dumps(subscription))
        assert await self.receive() == {"response": "call", "id": 2, "param": None}
        feed = await self.receive()
        assert feed["response"] == "feed"
        assert feed["param"]["serialnr"] == serialnr


@dataclass
class HallRig:
    hall: Hall
    store: Store
    play: HallPlay
    url: str
    boards: dict[str, EmulatorTransport]
    """The emulated board of each table."""

    async def move(self, table: str, uci: str, position: chess.Board) -> None:
        """Make ``uci`` with one hand on ``table``'s board (a capture: the taken piece off
        first), then press the clock, as in a hall (the press completes the move)."""
        transport = self.boards[table]
        move = position.parse_uci(uci)
        before = dict(position.piece_map())
        position.push(move)
        after = position.piece_map()
        lifts = sorted(
            (s for s in before if s not in after or after[s] != before[s]),
            key=lambda s: s not in after,
        )
        places = [s for s in after if before.get(s) != after[s]]
        for square in lifts:
            await asyncio.sleep(0.05)
            transport.lift(square)
        for square in places:
            await asyncio.sleep(0.05)
            transport.place(square, Piece.from_symbol(after[square].symbol()))
        await asyncio.sleep(0.05)
        transport.press_lever()

    def moves(self, table: str) -> list[str]:
        return [m["uci"] for m in self.hall.state(table)["moves"]]

    async def all_active(self, *serials: str) -> None:
        def ready() -> bool:
            listed = {e.serialnr: e.state for e in self.play.server.api.boards.values()}
            return all(listed.get(s) is EboardState.ACTIVE for s in serials)

        await wait_until(ready, within=10)


@contextlib.asynccontextmanager
async def hall_rig(
    tmp_path: Path, count: int = 2, extra: str | None = None
) -> AsyncIterator[HallRig]:
    """A hall with ``count`` emulated boards (serial numbers 00001, 00002, ...) and, with
    ``extra``, a table whose board is on that port; the play API on any port."""
    store = Store(tmp_path / "hall.db")
    hall = Hall(store, tick_interval=0.1)
    tables = emulated_tables(hall, count)
    boards = {runner.id: line.transport for runner, line in tables}
    if extra is not None:
        hall.add_table(TableConfig("x", extra, None, {}))
    play = HallPlay(hall.runners.values(), port=0, settle=SETTLE)
    url = await play.start()
    try:
        await hall.start()
        yield HallRig(hall, store, play, url, boards)
    finally:
        await play.close()
        await hall.close()
        store.close()


@contextlib.asynccontextmanager
async def hall_site(url: str, origin: str = "https://lichess.org") -> AsyncIterator[HallSite]:
    async with site(url, origin) as plain:
        yield HallSite(plain.ws)


def test_the_default_port_is_livechess_s() -> None:
    assert DEFAULT_PLAY_PORT == DEFAULT_PORT == 1982


@pytest.mark.parametrize(
    ("link", "ready", "state"),
    [
        (Connection.UP, True, "ACTIVE"),
        (Connection.UP, False, "NOTRESPONDING"),
        (Connection.RECONNECTING, False, "NOTRESPONDING"),
        (Connection.DOWN, False, "NOTRESPONDING"),
        (Connection.CONNECTING, False, "INACTIVE"),
    ],
)
def test_a_runner_s_link_as_livechess_names_it(link: Connection, ready: bool, state: str) -> None:
    assert eboard_state(link, ready) == state


@pytest.mark.slow
async def test_each_site_gets_its_board_s_moves_and_the_hall_keeps_its_tables(
    tmp_path: Path,
) -> None:
    async with (
        hall_rig(tmp_path) as r,
        hall_site(r.url) as one,
        hall_site(r.url, "https://www.chess.com") as two,
    ):
        await r.all_active("00001", "00002")
        boards = await one.eboards()
        assert [(b["serialnr"], b["state"], b["source"]) for b in boards] == [
            ("00001", "ACTIVE", "emulator-1"),
            ("00002", "ACTIVE", "emulator-2"),
        ]
        await one.start_at("00001")
        await two.start_at("00002")
        assert one.feeds[-1]["board"] == chess.STARTING_BOARD_FEN
        first, second = chess.Board(), chess.Board()
        for uci in ("e2e4", "e7e5", "g1f3", "b8c6", "f1b5"):
            await r.move("1", uci, first)
        for uci in ("d2d4", "d7d5", "c2c4", "d5c4"):
            await r.move("2", uci, second)
        await one.san(["e4", "e5", "Nf3", "Nc6", "Bb5"])
        await two.san(["d4", "d5", "c4", "dxc4"])
        assert two.feeds[-1]["board"] == second.board_fen()
        # each site saw only its board, each list growing one move at a time
        assert {f["serialnr"] for f in one.feeds} == {"00001"}
        assert {f["serialnr"] for f in two.feeds} == {"00002"}
        for s in (one, two):
            lists = s.san_lists()
            assert all(len(b) == len(a) + 1 and b[: len(a)] == a for a, b in pairwise(lists))
        # the hall's tables read the same games, as always
        await wait_until(lambda: len(r.moves("1")) == 5 and len(r.moves("2")) == 4, within=10)
        assert r.moves("2") == ["d2d4", "d7d5", "c2c4", "d5c4"]


@pytest.mark.slow
async def test_setup_restarts_only_the_api_s_reading_never_the_table(tmp_path: Path) -> None:
    async with hall_rig(tmp_path) as r, hall_site(r.url) as s, hall_site(r.url) as other:
        await r.all_active("00001", "00002")
        await s.start_at("00001")
        await other.start_at("00002")
        position = chess.Board()
        for uci in ("e2e4", "e7e5"):
            await r.move("1", uci, position)
        await s.san(["e4", "e5"])
        await wait_until(lambda: r.moves("1") == ["e2e4", "e7e5"], within=10)
        runner = r.hall.runners["1"]
        rows = len(list(r.store.inputs("1")))
        before = (r.hall.state("1")["moves"], runner.table.pgn(), len(runner.games))
        # lichess sets up the game in progress: the reading starts again from it
        await s.setup(position.fen())
        assert s.feeds[-1]["san"] == []
        await asyncio.sleep(0.5)
        assert (r.hall.state("1")["moves"], runner.table.pgn(), len(runner.games)) == before
        assert len(list(r.store.inputs("1"))) == rows
        assert other.feeds[-1]["san"] == []  # the other board's feed is its own
        # the next move: the API lists it from the setup, the table adds it to its game
        await r.move("1", "g1f3", position)
        await s.san(["Nf3"])
        await wait_until(lambda: r.moves("1") == ["e2e4", "e7e5", "g1f3"], within=10)
        # a setup that is no position is an error object; the connection stays
        empty = "8/8/8/8/8/8/8/8 w - - 0 1"
        await s.ws.send_str(json.dumps({"id": 7, "call": "call", "param": {
            "id": 1, "method": "setup", "param": {"fen": empty}}}))  # fmt: skip
        message = await s.receive()
        while message["response"] == "feed":
            message = await s.receive()
        assert message["response"] == "error"
        assert message["id"] == 7
        assert r.moves("1") == ["e2e4", "e7e5", "g1f3"]


@pytest.mark.slow
async def test_states_follow_the_links_and_names_the_serial_once_opened(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-port")
    async with hall_rig(tmp_path, 1, extra=missing) as r, hall_site(r.url) as s:
        await r.all_active("00001")
        await wait_until(lambda: r.hall.runners["x"].link is Connection.DOWN)
        await wait_until(lambda: r.play.links[1].eboard.state is EboardState.NOTRESPONDING)
        boards = await s.eboards()
        assert [(b["serialnr"], b["state"]) for b in boards] == [
            ("00001", "ACTIVE"),
            ("table-x", "NOTRESPONDING"),
        ]
        await s.start_at("00001")
        r.boards["1"].unplug()
        link = r.play.links[0]
        await wait_until(lambda: link.eboard.state is EboardState.NOTRESPONDING, within=10)
        r.boards["1"].plug()
        await wait_until(lambda: link.eboard.state is EboardState.ACTIVE, within=15)
        await r.move("1", "e2e4", chess.Board())
        await s.san(["e4"])


async def test_a_subscription_under_the_name_before_opening_keeps_its_feed(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "hall.db")
    hall = Hall(store, tick_interval=0)
    emulated_tables(hall, 1)
    play = HallPlay(hall.runners.values(), port=0, settle=SETTLE)
    url = await play.start()
    try:
        async with hall_site(url) as s:
            boards = await s.eboards()
            assert [(b["serialnr"], b["state"]) for b in boards] == [("table-1", "INACTIVE")]
            await s.start_at("table-1")
            await hall.start()
            await s.until(lambda p: p["serialnr"] == "00001" and p["board"] != "8/8/8/8/8/8/8/8")
            assert [b["serialnr"] for b in await s.eboards()] == ["00001"]
    finally:
        await play.close()
        await hall.close()
        store.close()


def test_two_boards_with_one_serial_number_are_told_apart_by_their_table() -> None:
    from dgt.board import BoardInfo
    from service.play.hall_feed import HallBoardLink

    @dataclass
    class FakeBoard:
        info: BoardInfo
        ready: bool = True

    @dataclass
    class FakeRunner:
        id: str
        board: FakeBoard
        port: str | None = None
        link: Connection = Connection.UP
        board_listeners: list[Any] = field(default_factory=list)

    links: list[HallBoardLink] = []
    for table in ("a", "b"):
        links.append(HallBoardLink(FakeRunner(table, FakeBoard(BoardInfo(serial="7")), "p"),
                                   settle=SETTLE, group=links))  # fmt: skip
    for link in links:
        link.refresh()
    assert [link.serialnr for link in links] == ["7", "7-b"]
    assert [link.eboard.state for link in links] == ["ACTIVE", "ACTIVE"]


@pytest.mark.slow
def test_without_the_option_nothing_of_service_play_is_imported(tmp_path: Path) -> None:
    """The hall, ``run`` and ``demo`` import nothing of ``service.play``, and a hall served
    without ``--play`` does not either."""
    script = f"""
import argparse, sys
import service.hall, service.table_runner, service.config
from service.commands import demo, run
assert not [m for m in sys.modules if m.startswith("service.play")], "imported"
parser = argparse.ArgumentParser()
sub = parser.add_subparsers()
run.add_parser(sub)
args = parser.parse_args(["run", "emulator", "--seconds", "1", "--port", "0",
                          "--db", {str(tmp_path / "h.db")!r}, "--admin-token", "t" * 12])
assert run.run(args) == 0
print("served", [m for m in sys.modules if m.startswith("service.play")])
"""
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "served []" in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--allow-origin", "http://a.example"], "--allow-origin is an origin of the play API"),
        (["--play-port", "70000"], "--play-port 70000 is not a port number"),
        (["--play", "--allow-origin", "a.example"], "is not an origin like"),
        (["--play", "--allow-origin", "http://a.example/page"], "is not an origin like"),
    ],
)
def test_bad_play_options_get_one_line(
    tmp_path: Path, args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "h.db")
    for command in (["run", "emulator"], ["demo"]):
        assert main([*command, "--db", db, *args]) == 2
        lines = capsys.readouterr().err.strip().splitlines()
        assert len(lines) == 1
        assert message in lines[0]


@pytest.mark.slow
async def test_demo_with_play_serves_its_boards_to_a_site(tmp_path: Path) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "service.cli", "demo", "--boards", "2", "--speed", "20",
        "--port", "0", "--play", "--play-port", "0", "--seconds", "30",
        "--db", str(tmp_path / "d.db"), "--admin-token", "demo-test-token",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=ROOT,
    )  # fmt: skip
    assert proc.stdout is not None
    try:
        url = ""
        deadline = time.monotonic() + 30
        while not url and time.monotonic() < deadline:
            line = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
            assert line, "the demo ended before printing the play address"
            if line.startswith("play online from the boards: "):
                url = line.split()[5]
        assert url.startswith("ws://127.0.0.1:")
        async with (
            aiohttp.ClientSession() as http,
            http.ws_connect(url, headers={"Origin": "https://lichess.org"}) as ws,
        ):
            s = HallSite(ws)
            await s.start_at("00002")
            await s.until(lambda p: len(p["san"]) >= 3, within=20)
            assert {f["serialnr"] for f in s.feeds} == {"00002"}
    finally:
        proc.send_signal(2)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), 20)
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


@pytest.mark.slow
def test_run_with_play_in_its_config_serves_it_and_says_where(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "hall.toml"
    config.write_text(
        "[service]\nport = 0\nplay = 0\nplay_origins = ['http://myhost:8000']\n"
        "[[table]]\nport = 'emulator'\n",
        encoding="utf-8",
    )
    argv = ["run", "--config", str(config), "--seconds", "1", "--db", str(tmp_path / "h.db")]
    assert main([*argv, "--admin-token", "t" * 12]) == 0
    out = capsys.readouterr().out
    assert "play online from the boards: ws://127.0.0.1:" in out
    assert "/api/v1.0 (lichess.org/dgt, chess.com)" in out


@pytest.mark.slow
async def test_a_pegasus_at_a_table_is_read_as_a_presence_board(tmp_path: Path) -> None:
    store = Store(tmp_path / "hall.db")
    hall = Hall(store, tick_interval=0.1)
    pegasus = EmulatorTransport(name="emu-pegasus", pegasus=True)
    hall.add_table(TableConfig("p", pegasus.name, None, {}), pegasus)
    play = HallPlay(hall.runners.values(), port=0, settle=SETTLE)
    url = await play.start()
    try:
        await hall.start()
        async with hall_site(url) as s:
            serial = pegasus.board.serial
            await s.start_at(serial)
            await s.until(lambda p: p["board"] == chess.STARTING_BOARD_FEN)
            pegasus.lift(chess.E2)
            pegasus.place(chess.E4, Piece.OCCUPIED)
            await s.san(["e4"])  # no clock: complete once the board stood still
            assert s.feeds[-1]["board"] == "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR"
    finally:
        await play.close()
        await hall.close()
        store.close()


def test_a_taken_play_port_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        argv = ["run", "emulator", "--play-port", port, "--port", "0", "--seconds", "5"]
        assert main([*argv, "--db", str(tmp_path / "h.db"), "--admin-token", "t" * 12]) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1
    assert f"cannot listen on 127.0.0.1:{port}" in lines[0]


async def test_a_runner_hands_each_board_event_to_its_listeners_after_the_table(
    error_log: ErrorLog,
) -> None:
    """The hook ``run --play`` uses: every board event reaches the runner's listeners after
    the table had it; a listener that fails is logged and the others still get it."""

    class Host:
        def __init__(self) -> None:
            self.inputs: list[TableInput] = []

        def table_input(self, runner: TableRunner, item: TableInput) -> None:
            self.inputs.append(item)

        def link_changed(self, runner: TableRunner) -> None:
            pass

    host = Host()
    runner = TableRunner("t", EchoTable("t"), host)
    seen: list[tuple[BoardEvent, int]] = []

    def broken(event: BoardEvent) -> None:
        raise RuntimeError("a broken listener")

    runner.board_listeners.extend([broken, lambda e: seen.append((e, len(host.inputs)))])
    event = SquareChanged(time.monotonic(), chess.E4, Piece.WPAWN, Piece.EMPTY)
    runner.board_event(event)
    assert seen == [(event, 1)]  # after the table's answer went to the host
    error_log.expect("a board listener failed")
