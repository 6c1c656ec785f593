"""A move a presence-only board cannot tell from another, as the user sees it in a real
headless Chromium (tests/chromium.py): the spectator page shows the move with the other
reading ("exf5 (or exd5)"); the admin page offers the other reading as a button that fills
in the correction form, and submitting it rewrites the move on every page.

The board is an emulated Pegasus in a hall (tests/test_web_alternatives.py builds it).  Like
every browser test these fail, not skip, when Chromium is missing, and every page must run
without a console error, an uncaught exception, a CSP violation or a failed request.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from chromium import chromium, open_page
from playwright.async_api import Browser, Page, expect
from test_web_alternatives import TOKEN, TWO_CAPTURES, Site, pegasus_site, take_with_both_lifted

pytestmark = pytest.mark.timeout(90)

WAIT = 10_000
"""Milliseconds a page may take to show what the table state says."""


@pytest.fixture
async def site(tmp_path: Path) -> AsyncIterator[Site]:
    async with pegasus_site(tmp_path) as built:
        # The arbiter starts the game from the position standing on the board.
        async with aiohttp.ClientSession() as session:
            path = f"{built.url}/api/admin/tables/1/start"
            headers = {"Authorization": f"Bearer {TOKEN}"}
            body = json.dumps({"start": TWO_CAPTURES})
            async with session.post(path, data=body, headers=headers) as response:
                assert response.status == 200, await response.text()
        yield built


async def marked_squares(page: Page) -> list[str]:
    """The squares the page marks as the last move's, in order."""
    marked = page.locator("#board .sq.mark")
    return sorted(await marked.evaluate_all("els => els.map(e => e.dataset.square)"))


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    async with chromium() as launched:
        yield launched


async def test_the_other_reading_is_shown_offered_and_corrected(
    site: Site, browser: Browser
) -> None:
    spectator = await open_page(browser, site.url + "/tables/1")
    await expect(spectator.page.locator("#live")).to_have_text("live", timeout=WAIT)
    await expect(spectator.page.locator("#moves li")).to_have_count(0)
    await take_with_both_lifted(site.board)

    # The spectator page: the move as read, and the other reading.
    moves = spectator.page.locator("#moves li")
    await expect(moves).to_have_count(1, timeout=WAIT)
    part = moves.first.locator(".part")
    await expect(part).to_have_text("exf5 (or exd5)", timeout=WAIT)
    await expect(part).to_have_attribute("data-label", "1.")
    await expect(part).not_to_have_class("pending", timeout=WAIT)  # the move completed
    marked = spectator.page.locator("#board .sq.mark")
    await expect(marked).to_have_count(2, timeout=WAIT)
    assert await marked_squares(spectator.page) == ["e4", "f5"]
    # The Pegasus reads only occupied squares: the board shows the game's pieces on them.
    board = spectator.page.locator("#board")
    await expect(board.locator('[data-square="f5"] .pc')).to_have_attribute("data-piece", "P")
    await expect(board.locator('[data-square="d5"] .pc')).to_have_attribute("data-piece", "p")
    await expect(board.locator('[data-square="e1"] .pc')).to_have_attribute("data-piece", "K")

    # The admin page: log in, pick the table, the other reading is a button.
    admin = await open_page(browser, site.url + "/admin")
    page = admin.page
    await page.locator("#token").fill(TOKEN)
    await page.locator("#token-form button[type=submit]").click()
    await page.locator('#table-rows tr[data-table="1"] button.pick').click(timeout=WAIT)
    listed = page.locator("#moves li")
    await expect(listed).to_have_count(1, timeout=WAIT)
    await expect(listed.locator("button.move")).to_have_text("1. exf5 (ply 1, e4f5)")
    other = listed.locator("button.alternative")
    await expect(other).to_have_text(["or exd5?"])
    await expect(other).to_be_visible()
    assert await page.locator("#correct-ply").input_value() == ""
    assert await page.locator("#correct-uci").input_value() == ""
    await other.click()
    assert await page.locator("#correct-ply").input_value() == "1"
    assert await page.locator("#correct-uci").input_value() == "e4d5"
    assert await page.locator("#correct-uci").evaluate("el => el === document.activeElement")
    # The button only fills the form: nothing is sent until the arbiter submits it.
    assert not [url for url in admin.requested if url.endswith("/correct")]
    assert [m["uci"] for m in site.hall.state("1")["moves"]] == ["e4f5"]

    form = page.locator("#correct-form")
    await form.locator("button[type=submit]").click()
    await expect(form.locator(".answer")).to_have_text(
        re.compile(r"^correct on table 1: done"), timeout=WAIT
    )
    state = site.hall.state("1")
    assert [(m["uci"], m.get("alternatives")) for m in state["moves"]] == [("e4d5", None)]

    # Both pages follow: the corrected move alone, no other reading, no button.
    await expect(listed.locator("button.move")).to_have_text("1. exd5 (ply 1, e4d5)", timeout=WAIT)
    await expect(listed.locator("button.alternative")).to_have_count(0)
    await expect(part).to_have_text("exd5", timeout=WAIT)
    await expect(part).not_to_contain_text("(or")
    # The last move's squares marked on the board are the corrected move's.
    await expect(spectator.page.locator('#board [data-square="d5"]')).to_have_class(
        re.compile(r"\bmark\b"), timeout=WAIT
    )
    assert await marked_squares(spectator.page) == ["d5", "e4"]
    await expect(board.locator('[data-square="d5"] .pc')).to_have_attribute("data-piece", "P")
    await expect(board.locator('[data-square="f5"] .pc')).to_have_attribute("data-piece", "n")
    assert spectator.problems == []
    assert admin.problems == []
