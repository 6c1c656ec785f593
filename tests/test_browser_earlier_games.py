"""The admin page's table detail in Chromium: the table's earlier games, newest first, each
collapsed with its players, result and number of changes; its change log read only when it
is opened; a game replaced while the page is open joins the list without a reload; a table
without an earlier game says so."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator
from pathlib import Path

import chess
import pytest
from chromium import HallSite, chromium, hall_site, open_page
from playwright.async_api import Browser, expect
from test_browser_spectator import start_clock

from dgt.protocol import Piece
from service.commands.demo import TransportLine

pytestmark = pytest.mark.timeout(120)

TOKEN = "earlier-games-token"
WAIT = 10_000
TABLES = {"1": {"rules": "casual", "round": "4"}, "2": {"rules": "casual", "round": "4"}}


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    async with chromium() as launched:
        yield launched


async def play(site: HallSite, table: str, ucis: list[str]) -> None:
    line = TransportLine(site.boards[table])
    device = line.device
    for uci in ucis:
        move = chess.Move.from_uci(uci)
        piece = device.squares[move.from_square]
        for square in (move.from_square, move.to_square):
            if device.squares[square] != Piece.EMPTY:
                line.act(functools.partial(device.lift, square))
        line.act(functools.partial(device.place, move.to_square, piece))
        await asyncio.sleep(0.25)
        line.act(line.device.press_lever)
        await asyncio.sleep(0.1)


async def replace_a_game(site: HallSite, table: str, white: str, black: str, result: str) -> None:
    """A game of one move at ``table`` with ``white`` and ``black``, ended ``result`` by
    the arbiter and replaced by a new game."""
    await site.hall.admin(table, "players", {"white": white, "black": black})
    start_clock(TransportLine(site.boards[table]), 600)
    await play(site, table, ["e2e4"])
    for _ in range(100):
        if site.hall.state(table).get("moves"):
            break
        await asyncio.sleep(0.05)
    else:
        raise AssertionError(f"the move at table {table} was not taken")
    await site.hall.admin(table, "end", {"result": result, "reason": "resignation"})
    await site.hall.admin(table, "start", {})


async def test_earlier_games_and_their_change_logs_on_the_table_detail(
    tmp_path: Path, browser: Browser
) -> None:
    async with hall_site(tmp_path, TABLES, token=TOKEN) as site:
        await replace_a_game(site, "1", "Able, Ann", "Baker, Bob", "1-0")
        watched = await open_page(browser, site.url + "/admin", viewport=(390, 844))
        page = watched.page
        await page.locator("#token").fill(TOKEN)
        await page.locator("#token-form button[type=submit]").click()
        await page.locator('#table-rows tr[data-table="1"] button.pick').click()
        earlier = page.locator("#earlier-games details")
        await expect(earlier).to_have_count(1, timeout=WAIT)
        first = page.locator('#earlier-games details[data-game="1-1"]')
        await expect(first.locator("summary")).to_have_text(
            "Game 1 (1-1, round 4): Able, Ann \u2013 Baker, Bob 1-0, 2 changes"
        )
        await expect(page.locator("#no-earlier")).to_be_hidden()
        assert not await first.evaluate("el => el.open")
        assert not any("/api/games/1-1/corrections" in url for url in watched.requested)
        await first.locator("summary").click()
        items = first.locator("ul li")
        await expect(items).to_have_count(2, timeout=WAIT)
        texts = await items.all_text_contents()
        assert "players: ? \u2013 ? \u2192 Able, Ann \u2013 Baker, Bob" in texts[0]
        assert "result: * \u2192 1-0 (resignation)" in texts[1]
        assert sum("/api/games/1-1/corrections" in url for url in watched.requested) == 1
        await first.locator("summary").click()  # closed and opened again: read once
        await first.locator("summary").click()
        await expect(items).to_have_count(2)
        assert sum("/api/games/1-1/corrections" in url for url in watched.requested) == 1

        # Table 2 has none; a game replaced there while the page is open joins the list.
        await page.locator('#table-rows tr[data-table="2"] button.pick').click()
        await expect(page.locator("#detail-title")).to_have_text("Table 2")
        await expect(page.locator("#no-earlier")).to_be_visible(timeout=WAIT)
        await expect(earlier).to_have_count(0)
        await replace_a_game(site, "2", "Cole, Cy", "Dunn, Di", "0-1")
        await expect(earlier).to_have_count(1, timeout=WAIT)
        await expect(earlier.locator("summary")).to_have_text(
            "Game 1 (2-1, round 4): Cole, Cy \u2013 Dunn, Di 0-1, 2 changes"
        )
        await expect(page.locator("#no-earlier")).to_be_hidden()
        width = await page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390
        assert watched.page_errors == []
        # (the first table's stream, closed when the second was chosen, is no problem)
        assert [p for p in watched.problems if "/api/stream?table=1 " not in p] == []
