"""A move a presence-only board cannot tell from another, end to end over HTTP: an emulated
Pegasus (it reports only whether a square is occupied) in a hall behind the web server; a
pawn takes while both pieces it could take are lifted and set down again.  The table's state
(``/api/tables/ID`` and the live stream the spectator page reads) names the other reading,
the PGN says so in a comment, and the arbiter's ``correct`` with that reading's UCI rewrites
the move, after which no other reading is named anywhere."""

from __future__ import annotations

import asyncio
import io
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import chess
import chess.pgn
import pytest

from dgt.emulator.board import VirtualBoard
from dgt.protocol import Piece
from dgt.transports.emulator import EmulatorTransport
from service.config import TableConfig
from service.hall import Hall
from service.store import Store
from service.web import WebServer

pytestmark = pytest.mark.timeout(60)

TOKEN = "alternatives-test-token"
TWO_CAPTURES = "4k3/8/8/3p1n2/4P3/8/8/4K3 w - - 0 1"
"""White's pawn on e4 can take the pawn on d5 or the knight on f5."""
SETTINGS = {"white": "Ann", "black": "Bob", "time_control": "-"}
NOTE = "(the board could not tell this from exd5)"


@dataclass
class Site:
    """The hall, its web server's address and the emulated Pegasus of table ``1``."""

    url: str
    hall: Hall
    board: EmulatorTransport


def pegasus_at(fen: str) -> VirtualBoard:
    """An emulated Pegasus (no clock) with the pieces of ``fen`` standing on it."""
    position = chess.Board(fen)
    squares = {sq: Piece.from_symbol(p.symbol()) for sq, p in position.piece_map().items()}
    return VirtualBoard(pegasus=True, squares=squares, now=time.monotonic())


@asynccontextmanager
async def pegasus_site(tmp_path: Path) -> AsyncIterator[Site]:
    """A hall with one table (``1``, starting from :data:`TWO_CAPTURES`) at an emulated
    Pegasus, and its web server."""
    store = Store(tmp_path / "hall.db")
    hall = Hall(store, tick_interval=0.1)
    transport = EmulatorTransport(pegasus_at(TWO_CAPTURES), name="pegasus")
    hall.add_table(TableConfig("1", transport.name, None, dict(SETTINGS)), transport)
    server = WebServer(hall, TOKEN, port=0)
    url = (await server.start()).rstrip("/")
    try:
        await hall.start()
        assert await hall.runners["1"].wait_ready(5)
        yield Site(url, hall, transport)
    finally:
        await server.close()
        await hall.close()
        store.close()


async def until(check: Callable[[], Awaitable[bool]], seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not await check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.05)


async def take_with_both_lifted(board: EmulatorTransport) -> None:
    """White's pawn lifted from e4, the knight on f5 and the pawn on d5 lifted too, then a
    piece set down on each: the board sees e4 empty, d5 and f5 occupied, whichever was
    taken (steps slower than the sensors' flicker filter)."""
    for step in (
        lambda: board.lift(chess.E4),
        lambda: board.lift(chess.F5),
        lambda: board.lift(chess.D5),
        lambda: board.place(chess.F5, Piece.WPAWN),
        lambda: board.place(chess.D5, Piece.BPAWN),
    ):
        await asyncio.sleep(0.3)
        step()


def readings(state: dict[str, Any]) -> list[tuple[str, str, Any]]:
    """Each move of a table state: its UCI, SAN and the other readings (None: none)."""
    return [(m["uci"], m["san"], m.get("alternatives")) for m in state["moves"]]


@pytest.mark.slow
async def test_the_other_reading_is_served_and_the_correction_removes_it(
    tmp_path: Path,
) -> None:
    async with pegasus_site(tmp_path) as site, aiohttp.ClientSession() as session:

        async def get(path: str) -> Any:
            async with session.get(site.url + path) as response:
                assert response.status == 200, await response.text()
                if response.content_type == "application/json":
                    return await response.json()
                return await response.text()

        async def streamed() -> dict[str, Any]:
            """The first state the spectator page's stream sends."""
            async with session.get(site.url + "/api/stream?table=1") as response:
                assert response.status == 200
                async for raw in response.content:
                    line = raw.decode().rstrip("\n")
                    if line.startswith("data: "):
                        message = json.loads(line[len("data: ") :])
                        assert message["table"] == "1"
                        return dict(message["state"])
            raise AssertionError("the stream sent no state")

        async def admin(command: str, args: dict[str, Any]) -> dict[str, Any]:
            path = f"{site.url}/api/admin/tables/1/{command}"
            headers = {"Authorization": f"Bearer {TOKEN}"}
            async with session.post(path, data=json.dumps(args), headers=headers) as response:
                assert response.status == 200, await response.text()
                return dict(await response.json())

        # The arbiter starts the game from the position standing on the board.
        await admin("start", {"start": TWO_CAPTURES})
        state = await get("/api/tables/1")
        assert (state["phase"], state["fen"]) == ("playing", TWO_CAPTURES)
        await take_with_both_lifted(site.board)

        async def final() -> bool:
            moves = (await get("/api/tables/1"))["moves"]
            return len(moves) == 1 and moves[0]["final"]

        await until(final)
        other = [{"uci": "e4d5", "san": "exd5"}]
        assert readings(await get("/api/tables/1")) == [("e4f5", "exf5", other)]
        assert readings(await streamed()) == [("e4f5", "exf5", other)]
        games = (await get("/api/games"))["games"]
        assert len(games) == 1
        pgn = await get(games[0]["pgn"])
        game = chess.pgn.read_game(io.StringIO(pgn))
        assert game is not None
        first = game.next()
        assert first is not None
        assert first.san() == "exf5"
        assert NOTE in first.comment

        # The arbiter picks the other reading: the move is rewritten, nothing else named.
        await admin("correct", {"ply": 1, "uci": "e4d5"})
        state = await get("/api/tables/1")
        assert readings(state) == [("e4d5", "exd5", None)]
        assert state["fen"].split()[0] == "4k3/8/8/3P1n2/8/8/8/4K3"
        assert readings(await streamed()) == [("e4d5", "exd5", None)]
        pgn = await get(games[0]["pgn"])
        assert "could not tell" not in pgn
        game = chess.pgn.read_game(io.StringIO(pgn))
        assert game is not None
        assert [node.san() for node in game.mainline()] == ["exd5"]
