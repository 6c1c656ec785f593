"""The admin page's broadcast panel in Chromium (admin_broadcast.js): per round its lichess
round id, pushed or not and its delay, changed while the service runs (the lichess stand-in
gets the round under its new id), a round switched off, a round added; refusals shown per
game; the lichess token never reaches the page."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from broadcast_stand_in import LichessStandIn
from chromium import chromium, hall_site, open_page
from playwright.async_api import Browser, expect

from service.broadcast.push import LichessClient, Pusher
from service.config import BroadcastConfig, BroadcastRound

TOKEN = "browser-broadcast-admin"
LICHESS_TOKEN = "lip_browser0123"
WAIT = 10_000


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    async with chromium() as launched:
        yield launched


async def until(check: Callable[[], bool], within: float = 10.0) -> None:
    deadline = time.monotonic() + within
    while not check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.05)


async def test_the_broadcast_panel_changes_a_round_while_running(
    tmp_path: Path, browser: Browser
) -> None:
    tables = {
        "1": {"white": "Ann Able", "black": "Bob Baker", "round": "1"},
        "2": {"white": "Cy Cole", "black": "Di Dorn", "round": "1"},
    }
    lichess = LichessStandIn(token=LICHESS_TOKEN, refused_games={"2-1"})
    await lichess.start()
    async with hall_site(tmp_path, tables, token=TOKEN) as site:
        config = BroadcastConfig((BroadcastRound("1", "AbCd1234"),), lichess.url, None, "T", 0.2)
        pusher = Pusher(site.hall, config, LichessClient(lichess.url, LICHESS_TOKEN))
        pusher.start()
        try:
            watched = await open_page(browser, site.url + "/admin")
            page = watched.page
            await page.locator("#token").fill(TOKEN)
            await page.locator("#token-form button[type=submit]").click()
            round_box = page.locator('#broadcast .bc-round[data-round="1"]')
            await expect(round_box).to_be_visible(timeout=WAIT)
            await expect(round_box.locator(".bc-head")).to_contain_text(
                "Round 1 \u2192 AbCd1234: ok", timeout=WAIT
            )
            await expect(round_box).to_contain_text(
                "board 2 (2-1): Cy Cole \u2013 Di Dorn: refused by lichess: Refused by the stand-in"
            )
            form = round_box.locator("form")
            await expect(form.locator("[name=lichess_id]")).to_have_value("AbCd1234")
            await expect(form.locator("[name=enabled]")).to_be_checked()
            await expect(form.locator("[name=delay]")).to_have_value("0")

            # A new lichess round id: the round is pushed there whole.
            await form.locator("[name=lichess_id]").fill("NewRnd99")
            await form.locator("button[type=submit]").click()
            await expect(form.locator(".answer")).to_have_text("Saved.")
            await until(lambda: any(p.round_id == "NewRnd99" for p in lichess.pushes))
            await expect(round_box.locator(".bc-head")).to_contain_text(
                "Round 1 \u2192 NewRnd99", timeout=WAIT
            )

            # Switched off: the state says so.
            await form.locator("[name=enabled]").uncheck()
            await form.locator("button[type=submit]").click()
            await expect(round_box).to_have_attribute("data-state", "off", timeout=WAIT)
            assert pusher.status()["rounds"][0]["state"] == "off"

            # A round added, and a bad id refused with the service's one line.
            adder = page.locator("#broadcast .bc-add form")
            await adder.locator("[name=round]").fill("2")
            await adder.locator("[name=lichess_id]").fill("Round222")
            await adder.locator("[name=delay]").fill("30")
            await adder.locator("button[type=submit]").click()
            added = page.locator('#broadcast .bc-round[data-round="2"]')
            await expect(added).to_be_visible(timeout=WAIT)
            await expect(added.locator("[name=delay]")).to_have_value("30")
            assert [r["round"] for r in pusher.status()["rounds"]] == ["1", "2"]
            await form.locator("[name=enabled]").check()
            await form.locator("[name=lichess_id]").evaluate("el => el.removeAttribute('pattern')")
            await form.locator("[name=lichess_id]").fill("bad-id!!")
            await form.locator("button[type=submit]").click()
            await expect(form.locator(".answer")).to_contain_text("lichess_id must be")

            assert LICHESS_TOKEN not in await page.content()
            assert watched.page_errors == []
        finally:
            await pusher.close()
            await lichess.close()
