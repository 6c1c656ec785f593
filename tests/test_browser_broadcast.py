"""The admin page in Chromium shows the lichess pushes: a game lichess refused and a game
kept back for want of a player's name (``GET /api/broadcast``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from broadcast_stand_in import LichessStandIn
from chromium import chromium, hall_site, open_page
from playwright.async_api import Browser, expect

from service.broadcast.push import LichessClient, Pusher
from service.config import BroadcastConfig, BroadcastRound

pytestmark = pytest.mark.slow

TOKEN = "browser-broadcast-token"


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    async with chromium() as launched:
        yield launched


async def test_the_admin_page_shows_refused_and_flagged_games(
    tmp_path: Path, browser: Browser
) -> None:
    tables = {
        "1": {"white": "Ann Able", "black": "Bob Baker", "round": "1"},
        "2": {"white": "Cy Cole", "black": "Di Dorn", "round": "1"},
        "3": {"white": "?", "black": "Ed", "round": "1"},
    }
    lichess = LichessStandIn(token="lip_browser0123", refused_games={"2-1"})
    await lichess.start()
    async with hall_site(tmp_path, tables, token=TOKEN) as site:
        config = BroadcastConfig((BroadcastRound("1", "AbCd1234"),), lichess.url, None, "T", 0.2)
        pusher = Pusher(site.hall, config, LichessClient(lichess.url, "lip_browser0123"))
        pusher.start()
        try:
            watched = await open_page(browser, site.url + "/admin")
            page = watched.page
            await page.locator("#token").fill(TOKEN)
            await page.locator("#token-form button[type=submit]").click()
            panel = page.locator("#broadcast")
            await expect(panel).to_be_visible(timeout=10_000)
            await expect(panel).to_contain_text("Round 1", timeout=10_000)
            await expect(panel).to_contain_text("refused by lichess: Refused by the stand-in")
            await expect(panel).to_contain_text("board 2 (2-1): Cy Cole")
            await expect(panel).to_contain_text("board 3 (3-1): ? \u2013 Ed: not pushed: unnamed")
            assert watched.page_errors == []
            assert not [p for p in watched.problems if "api/broadcast" in p]
        finally:
            await pusher.close()
            await lichess.close()
