"""The admin API and the PGN feeds with the real ``service.table.Table`` behind them: moves
made on an emulated board, players set, a move corrected (the game is rewritten, never a
variation), the game ended; and a restart that rebuilds the same record."""

from __future__ import annotations

import asyncio
import json
import re
import time
from pathlib import Path
from typing import Any

import aiohttp
import chess
import pytest

from dgt.emulator.board import VirtualBoard
from dgt.transports.emulator import EmulatorTransport
from service.broadcast.lichess_pgn import with_tags
from service.commands.demo import TransportLine
from service.config import TableConfig
from service.hall import Hall
from service.store import Store
from service.web import WebServer

TOKEN = "table-test-token-123"


def make_move(line: TransportLine, uci: str) -> None:
    move = chess.Move.from_uci(uci)
    piece = line.device.squares[move.from_square]
    line.act(lambda now: line.device.lift(move.from_square, now))
    line.act(lambda now: line.device.place(move.to_square, piece, now))


async def until(check: Any, seconds: float = 8.0) -> None:
    deadline = time.monotonic() + seconds
    while not await check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.05)


@pytest.mark.slow
async def test_admin_and_pgn_with_the_real_table(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    store = Store(db)
    hall = Hall(store, tick_interval=0.1)
    transport = EmulatorTransport(VirtualBoard(now=time.monotonic(), clock=None), name="emu")
    settings = {"event": "Club", "round": "2", "rules": "casual", "time_control": "600+5"}
    hall.add_table(TableConfig("1", "emu", None, settings), transport)
    server = WebServer(hall, TOKEN, port=0)
    url = (await server.start()).rstrip("/")
    await hall.start()
    line = TransportLine(transport)
    auth = {"Authorization": f"Bearer {TOKEN}"}
    try:
        assert await hall.runners["1"].wait_ready(5)
        async with aiohttp.ClientSession() as session:

            async def get(path: str) -> Any:
                async with session.get(url + path) as response:
                    assert response.status == 200, await response.text()
                    if response.content_type == "application/json":
                        return await response.json()
                    return await response.text()

            async def admin(command: str, body: dict[str, Any]) -> tuple[int, Any]:
                path = f"{url}/api/admin/tables/1/{command}"
                async with session.post(path, data=json.dumps(body), headers=auth) as response:
                    return response.status, await response.json()

            status, _ = await admin("players", {"white": 'Ann "A" <b>', "black": "Bob"})
            assert status == 200
            for uci in ("e2e4", "e7e5", "g1f3"):
                make_move(line, uci)
                await asyncio.sleep(0.15)

            async def three_final() -> bool:
                state = await get("/api/tables/1")
                return sum(1 for m in state["moves"] if m["final"]) >= 2

            await until(three_final)
            pgn = await get("/games/1-1.pgn")
            assert '[White "Ann \\"A\\" <b>"]' in pgn
            assert '[Round "2"]' in pgn
            assert re.search(r"\n1\. e4 \{\[%clk 0:\d\d:\d\d\]\} e5 \{\[%clk 0:\d\d:\d\d\]\}", pgn)

            status, answer = await admin("correct", {"ply": 1, "uci": "d2d4"})
            assert status == 200, answer
            state = await get("/api/tables/1")
            assert [m["uci"] for m in state["moves"]][:2] == ["d2d4", "e7e5"]
            pgn = await get("/games/1-1.pgn")
            assert re.search(r"\n1\. d4 \{\[%clk [\d:]+\]\} e5 \{\[%clk [\d:]+\]\}", pgn), pgn
            assert "(" not in pgn.split("\n\n", 1)[1]  # rewritten, no variation

            status, error = await admin("correct", {"ply": 1, "uci": "e2e5"})
            assert status == 400
            assert "not legal" in error["error"]

            status, answer = await admin("end", {"result": "1-0", "reason": "resignation"})
            assert status == 200, answer
            assert any(e["type"] == "result" for e in answer["events"])
            games = (await get("/api/games"))["games"]
            assert games[0]["result"] == "1-0"
            assert games[0]["white"] == 'Ann "A" <b>'
            round_pgn = await get("/rounds/2.pgn")
            assert "1-0" in round_pgn
            finished_pgn = await get("/games/1-1.pgn")
            assert games[0]["finished"] is True

            # A new game with other players: the finished one keeps its players, its
            # round, its PGN word for word; the new one is filed under the new round.
            status, answer = await admin("start", {"white": "Cy", "black": "Di", "round": "3"})
            assert status == 200, answer
            games = (await get("/api/games"))["games"]
            assert [(g["id"], g["round"], g["finished"]) for g in games] == [
                ("1-1", "2", True),
                ("1-2", "3", False),
            ]
            assert games[0]["white"] == 'Ann "A" <b>'
            assert games[1]["white"] == "Cy"
            assert await get("/games/1-1.pgn") == finished_pgn
            assert await get("/rounds/2.pgn") == finished_pgn
            everything = await get("/games.pgn")
            assert everything.startswith(finished_pgn)
            assert '[White "Cy"]' in everything.split(finished_pgn, 1)[1]
            before = hall.state("1")
    finally:
        await server.close()
        await hall.close()
        store.close()

    # A restart rebuilds the same record from the log.
    store = Store(db)
    again = Hall(store)
    runner = again.add_table(TableConfig("1", "emu", None, settings))
    assert runner.replay_divergences == 0
    after = runner.table.state()
    for key in ("moves", "result", "reason", "settings", "phase"):
        assert after[key] == before[key], key
    assert len(runner.games) == 2
    archived = runner.games[0].pgn  # archived again by the replay
    assert archived is not None
    # the feed adds the relay's Board and GameId tags and ends each game so
    feed_form = with_tags(archived, {"Board": "1", "GameId": "1-1"})
    assert feed_form.strip() + "\n\n" == finished_pgn
    assert runner.game_pgn(runner.games[0]) == archived
    assert runner.games[1].pgn is None  # in progress
    store.close()
