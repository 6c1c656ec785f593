"""A replaced game's change log is kept with it: the table hands it over with the game's
PGN, the hall keeps it with the game, ``/api/games/TABLE-N/corrections`` serves it (and
the change log of the game at the table), and a restart rebuilds it from the stored
commands."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import chess
from aiohttp.test_utils import TestClient, TestServer
from test_table_helpers import Hands

from dgt.emulator.board import VirtualBoard
from dgt.transports.emulator import EmulatorTransport
from service.commands.demo import TransportLine
from service.config import TableConfig
from service.hall import Hall
from service.store import Store
from service.web.app import create_app


def test_the_table_hands_over_a_replaced_games_change_log_with_its_pgn() -> None:
    hands = Hands()
    hands.play("e2e4", "P", True)
    hands.admin("end", result="1-0", reason="resignation")
    log = hands.table.change_log()
    assert [c["what"] for c in log] == ["result"]
    hands.admin("start")
    assert hands.table.change_log() == []
    assert len(hands.table.take_ended_games()) == 1
    assert hands.table.take_ended_change_logs() == [log]
    assert hands.table.take_ended_change_logs() == []


async def test_the_hall_keeps_and_serves_the_change_log_of_each_game(tmp_path: Path) -> None:
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
        deadline = time.monotonic() + 5
        while len(runner.table.moves()) < 3:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
        await hall.admin("1", "correct", {"ply": 3, "uci": "b1c3"})
        await hall.admin("1", "end", {"result": "1-0", "reason": "resignation"})
        log = runner.table.change_log()
        await hall.admin("1", "start", {})  # the board shows the old game: set-up waits
        assert runner.table.change_log() == []
        assert runner.games[0].changes == log
    finally:
        await hall.close()
        store.close()
    store = Store(db)
    again = Hall(store, tick_interval=0)
    again.add_table(TableConfig("1", "emu", None, {"rules": "casual"}))
    try:
        async with TestClient(TestServer(create_app(again, "admin-token-1"))) as client:
            response = await client.get("/api/games/1-1/corrections")
            assert response.status == 200
            body = await response.json()
            assert body == {"game": "1-1", "table": "1", "number": 1, "corrections": log}
            response = await client.get("/api/games/1-2/corrections")
            assert (await response.json())["corrections"] == []  # the game at the table
            response = await client.get("/api/games/1-9/corrections")
            assert response.status == 404
            assert "no game '1-9'" in (await response.json())["error"]
    finally:
        await again.close()
        store.close()
