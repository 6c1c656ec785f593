"""The pages in a real headless Chromium (tests/chromium.py): a game started on a board that
does not show its start position waits in set-up and the pages mark the squares to set
right; the pages say so when they lose the service (the clocks stand, the board state
greys); the overview's dense layout holds a 16-board round on one 1920x1080 screen and is
remembered; the admin page fits a 390 px phone.

Screenshots: set ``DGT_SHOTS`` to a directory to keep them (to look at the pages).
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import AsyncIterator
from pathlib import Path

import chess
import pytest
from chromium import chromium, hall_site, open_page
from playwright.async_api import Browser, Page, expect
from test_browser import START, make_move, start_clock

from service.commands.demo import TransportLine

pytestmark = pytest.mark.timeout(120)

WAIT = 10_000
TOKEN = "browser-setup-token"
PLAYERS = {"white": "Ann", "black": "Bob", "round": "3", "rules": "casual"}


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    async with chromium() as launched:
        yield launched


async def shot(page: Page, name: str) -> None:
    where = os.environ.get("DGT_SHOTS")
    if where:
        await page.screenshot(path=str(Path(where) / f"{name}.png"), full_page=True)


async def fixed(page: Page) -> list[str]:
    squares = page.locator("#board .sq.fix")
    return sorted(await squares.evaluate_all("els => els.map(e => e.dataset.square)"))


async def test_a_start_on_a_moved_board_waits_and_the_pages_mark_the_squares(
    tmp_path: Path, browser: Browser
) -> None:
    async with hall_site(tmp_path, {"1": PLAYERS}, token=TOKEN) as site:
        line = TransportLine(site.boards["1"])
        start_clock(line, 300)
        page = (await open_page(browser, site.url + "/tables/1")).page
        await expect(page.locator("#board")).to_have_attribute(
            "data-placement", START, timeout=WAIT
        )
        # the board is moved on without a press (pieces from elsewhere), then a game started
        make_move(line, "e2e4")
        make_move(line, "e7e5")
        await asyncio.sleep(0.5)
        await site.hall.admin("1", "start", {"white": "Cy", "black": "Di"})
        assert site.hall.state("1")["phase"] == "setup"
        await expect(page.locator("#status")).to_have_text("setup", timeout=WAIT)
        # the page draws the start position the game waits for and marks what to set right
        await expect(page.locator("#board")).to_have_attribute("data-placement", START)
        await expect(page.locator("#board")).to_have_attribute("data-fix", "e2 e4 e5 e7")
        assert await page.locator('#board [data-square="e4"]').get_attribute("data-want") == "empty"
        assert await page.locator('#board [data-square="e2"]').get_attribute("data-want") == "P"
        await expect(page.locator("#setright li")).to_have_count(4)
        await expect(page.locator("#setright")).to_contain_text("e2: put P (empty now)")
        assert await page.locator(".clock.running").count() == 0
        bottom = await page.locator("#bottom-clock").inner_text()
        overview = (await open_page(browser, site.url + "/", viewport=(1920, 1080))).page
        card = overview.locator('a.card[data-table="1"]')
        await expect(card).to_have_class(re.compile(r"\bneeds-hand\b"), timeout=WAIT)
        await expect(card.locator(".hand")).to_have_text("set up: 4 squares")
        await shot(page, "table-setup")
        await shot(overview, "overview-setup")
        # the admin desk: the table needs a hand, listed first, its board marked the same
        admin = (await open_page(browser, site.url + "/admin", viewport=(1440, 900))).page
        await admin.locator("#token").fill(TOKEN)
        await admin.locator("#token-form button[type=submit]").click()
        hands = admin.locator("#hand-list li")
        await expect(hands).to_have_text("1set up: 4 squares", timeout=WAIT)
        desk = admin.locator('.desk-card[data-table="1"]')
        await expect(desk).to_have_class(re.compile(r"\bneeds-hand\b"))
        await expect(desk.locator(".board")).to_have_attribute("data-fix", "e2 e4 e5 e7")
        await shot(admin, "admin-setup")
        await asyncio.sleep(1.2)
        assert await page.locator("#bottom-clock").inner_text() == bottom
        # set right: the game begins, the marks go
        make_move(line, "e4e2")
        make_move(line, "e5e7")
        await expect(page.locator("#status")).to_have_text("playing", timeout=WAIT)
        await expect(page.locator("#board")).to_have_attribute("data-fix", "")
        await expect(page.locator("#setright")).to_be_empty()
        await expect(card).not_to_have_class(re.compile(r"\bneeds-hand\b"), timeout=WAIT)
        # a piece lifted in play: the board differs from the game where it was
        line.act(lambda now: line.device.lift(chess.G1, now))
        await expect(page.locator("#board")).to_have_attribute("data-fix", "g1", timeout=WAIT)
        assert (
            await page.locator('#board [data-square="g1"] .pc').get_attribute("data-piece") == "N"
        )
        await expect(card.locator(".hand")).to_have_text("board differs from the game: 1 square")


async def test_a_lost_service_stops_the_clocks_and_greys_the_board(
    tmp_path: Path, browser: Browser
) -> None:
    async with hall_site(tmp_path, {"1": PLAYERS}, token=TOKEN) as site:
        line = TransportLine(site.boards["1"])
        start_clock(line, 300)
        watched = await open_page(browser, site.url + "/tables/1")
        page = watched.page
        await expect(page.locator("#board")).to_have_attribute(
            "data-placement", START, timeout=WAIT
        )
        make_move(line, "e2e4")
        await asyncio.sleep(0.4)
        line.act(line.device.press_lever)
        await expect(page.locator(".clock.running")).to_have_count(1, timeout=WAIT)
        await expect(page.locator("#link")).to_have_text("board connected")
        overview = (await open_page(browser, site.url + "/")).page
        status = overview.locator('a.card[data-table="1"] .row.meta').last
        await expect(status).to_have_text("playing", timeout=WAIT)
        admin = (await open_page(browser, site.url + "/admin")).page
        await admin.locator("#token").fill(TOKEN)
        await admin.locator("#token-form button[type=submit]").click()
        await expect(admin.locator("#live")).to_have_text("live", timeout=WAIT)
        assert site.server is not None
        await site.server.close()  # the service is gone: nothing more comes
        live = page.locator("#live")
        await expect(live).to_have_text(
            re.compile(r"^no connection to the service since \d\d:\d\d:\d\d$"), timeout=WAIT
        )
        await expect(page.locator("body")).to_have_class(re.compile(r"\boffline\b"))
        await expect(page.locator("#link")).to_have_text(re.compile("^board state unknown"))
        running = await page.locator(".clock.running").get_attribute("id")
        assert running is not None
        first = await page.locator(f"#{running}").inner_text()
        await asyncio.sleep(1.5)
        assert await page.locator(f"#{running}").inner_text() == first
        grey = await page.locator("#board").evaluate("e => getComputedStyle(e).filter")
        assert "grayscale" in grey
        await shot(page, "table-offline")
        await expect(status).to_contain_text("no connection to the service since")
        await expect(admin.locator("#live")).to_have_text(
            re.compile(r"^no connection to the service since "), timeout=WAIT
        )
        await expect(admin.locator("body")).to_have_class(re.compile(r"\boffline\b"))
        await expect(admin.locator(".desk-why").first).to_contain_text("board state unknown")


@pytest.mark.slow
async def test_a_16_board_round_fits_one_full_hd_screen_and_the_admin_page_a_phone(
    tmp_path: Path, browser: Browser
) -> None:
    tables = {str(n): {**PLAYERS, "white": f"White player {n}"} for n in range(1, 17)}
    async with hall_site(tmp_path, tables, token=TOKEN) as site:
        watched = await open_page(browser, site.url + "/", viewport=(1920, 1080))
        page = watched.page
        await expect(page.locator("a.card")).to_have_count(16, timeout=WAIT)
        assert await page.locator("#tables").get_attribute("data-layout") == "boards"
        before = await boards_on_screen(page)
        await page.locator('.layouts button[data-layout="dense"]').click()
        dense = await boards_on_screen(page)
        await shot(page, "overview-dense-16")
        assert dense == 16, f"dense layout: {dense} of 16 boards on one 1920x1080 screen"
        assert before < 16
        assert await page.evaluate("document.documentElement.scrollWidth") <= 1920
        # the choice is kept by this browser
        await page.reload()
        await expect(page.locator("a.card")).to_have_count(16, timeout=WAIT)
        assert await page.locator("#tables").get_attribute("data-layout") == "dense"
        await page.locator('.layouts button[data-layout="list"]').click()
        rows = await boards_on_screen(page, board=False)
        assert rows == 16
        await shot(page, "overview-list-16")
        print(f"boards on one 1920x1080 screen: boards layout {before}, dense {dense}")
        # the admin page on a phone: no horizontal scroll
        admin = (await open_page(browser, site.url + "/admin", viewport=(390, 844))).page
        await admin.locator("#token").fill(TOKEN)
        await admin.locator("#token-form button[type=submit]").click()
        await expect(admin.locator("#table-rows tr")).to_have_count(16, timeout=WAIT)
        await admin.locator("#table-rows button.pick").first.click()
        await expect(admin.locator("#detail")).to_be_visible()
        width = await admin.evaluate("document.documentElement.scrollWidth")
        await shot(admin, "admin-phone")
        print(f"admin page width at 390 px: {width}")
        assert width <= 390
        assert watched.page_errors == []


async def boards_on_screen(page: Page, *, board: bool = True) -> int:
    """The cards (with their board, if ``board``) wholly inside the first screen."""
    await page.wait_for_timeout(300)
    return int(
        await page.evaluate(
            """(board) => Array.from(document.querySelectorAll('a.card')).filter(c => {
                const r = c.getBoundingClientRect();
                const b = c.querySelector('.board').getBoundingClientRect();
                const ok = r.bottom <= innerHeight && r.right <= innerWidth && r.top >= 0;
                return ok && (!board || (b.width > 100 && b.bottom <= innerHeight));
            }).length""",
            board,
        )
    )
