"""``GET /api/tables/ID/games``: a table's games, oldest first, each with its players,
result and the size of its change log (``at_table``: the game at the table), on a hall of
emulated boards; the same after a restart; an unknown table is a 404."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp
import pytest
from chromium import HallSite, hall_site
from test_browser_spectator import play, start_clock

from service.commands.demo import TransportLine

pytestmark = pytest.mark.timeout(60)

TOKEN = "games-token-1234"
TABLES = {"1": {"rules": "casual", "round": "4"}, "2": {"rules": "casual"}}


async def get(url: str) -> tuple[int, Any]:
    async with aiohttp.ClientSession() as session, session.get(url) as response:
        return response.status, await response.json()


async def an_earlier_game(site: HallSite) -> None:
    """Table 1: a game of one move, its players changed before it, ended 1-0 by the arbiter,
    replaced by a new game (the board still shows the old one: set-up waits)."""
    await site.hall.admin("1", "players", {"white": "Able, Ann", "black": "Baker, Bob"})
    start_clock(TransportLine(site.boards["1"]), 600)
    await play(site, ["e2e4"])
    await site.hall.admin("1", "end", {"result": "1-0", "reason": "resignation"})
    await site.hall.admin("1", "players", {"white": "Cole, Cy", "black": "Dunn, Di"})
    await site.hall.admin("1", "start", {})


async def test_a_tables_games_with_their_change_logs_survive_a_restart(tmp_path: Path) -> None:
    async with hall_site(tmp_path, TABLES, token=TOKEN) as site:
        await an_earlier_game(site)
        status, body = await get(site.url + "/api/tables/1/games")
        assert status == 200
        assert body["table"] == "1"
        first, current = body["games"]
        assert first == {
            "game": "1-1",
            "number": 1,
            "round": "4",
            "white": "Able, Ann",
            "black": "Baker, Bob",
            "result": "1-0",
            "changes": 2,
            "at_table": False,
        }
        assert current["game"] == "1-2"
        assert current["at_table"] is True
        assert (current["white"], current["result"]) == ("Cole, Cy", "*")
        status, log = await get(site.url + "/api/games/1-1/corrections")
        assert [c["what"] for c in log["corrections"]] == ["players", "result"]
        status, other = await get(site.url + "/api/tables/2/games")
        assert [g["game"] for g in other["games"]] == ["2-1"]
        status, missing = await get(site.url + "/api/tables/9/games")
        assert status == 404
        assert missing["error"] == "no table '9'"
    async with hall_site(tmp_path, TABLES, token=TOKEN) as site:
        status, again = await get(site.url + "/api/tables/1/games")
        assert again["games"][0] == first
