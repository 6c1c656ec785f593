"""The web page in a real headless Chromium (tests/chromium.py: Debian's /usr/bin/chromium
driven by Playwright): the start position, a move made on an emulated board, clocks counting.

These tests fail, not skip, when Chromium is missing, because the page is part of what the
service promises.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import chess
import pytest
from chromium import chromium, hall_site, open_page
from playwright.async_api import Browser, expect

from service.commands.demo import TransportLine
from service.hall import Hall

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"
PLAYERS = {"white": "Ann <b>", "black": "Bob & Co", "round": "1", "rules": "casual"}

pytestmark = pytest.mark.timeout(90)


@dataclass
class Site:
    url: str
    hall: Hall
    lines: dict[str, TransportLine]


@pytest.fixture
async def site(tmp_path: Path) -> AsyncIterator[Site]:
    tables = {"1": PLAYERS, "2": PLAYERS}
    async with hall_site(tmp_path, tables, token="browser-test-token") as built:
        lines = {table_id: TransportLine(board) for table_id, board in built.boards.items()}
        yield Site(built.url, built.hall, lines)


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    async with chromium() as launched:
        yield launched


def make_move(line: TransportLine, uci: str) -> None:
    move = chess.Move.from_uci(uci)
    piece = line.device.squares[move.from_square]
    line.act(lambda now: line.device.lift(move.from_square, now))
    line.act(lambda now: line.device.place(move.to_square, piece, now))


def start_clock(line: TransportLine, seconds: float) -> None:
    device = line.device

    def setup(now: float) -> bytes:
        assert device.clock is not None
        device.clock.set(seconds, seconds, now, increment=0, right_high=False)
        return device.poll(now)

    line.act(setup)


async def test_page_shows_the_start_position(site: Site, browser: Browser) -> None:
    watched = await open_page(browser, site.url + "/tables/1")
    page = watched.page
    board = page.locator("#board")
    await expect(board).to_have_attribute("data-placement", START, timeout=10_000)
    assert await page.locator("#board .sq").count() == 64
    assert await page.locator('#board [data-square="e1"] .pc').get_attribute("data-piece") == "K"
    assert await page.locator('#board [data-square="d8"] .pc').get_attribute("data-piece") == "q"
    assert await page.locator("#board .pc").count() == 32
    # Names are shown as text, never as markup.
    await expect(page.locator("#bottom-name")).to_have_text("Ann <b>")
    await expect(page.locator("#top-name")).to_have_text("Bob & Co")
    assert await page.locator("#bottom-name b").count() == 0
    await expect(page.locator("#live")).to_have_text("live")
    assert watched.page_errors == []


async def test_a_move_on_the_board_appears_on_the_page(site: Site, browser: Browser) -> None:
    watched = await open_page(browser, site.url + "/tables/1")
    page = watched.page
    await expect(page.locator("#board")).to_have_attribute("data-placement", START, timeout=10_000)
    line = site.lines["1"]
    make_move(line, "e2e4")
    await asyncio.sleep(0.4)
    line.act(line.device.press_lever)
    e4 = page.locator('#board [data-square="e4"]')
    await expect(e4.locator(".pc")).to_have_attribute("data-piece", "P", timeout=10_000)
    assert await page.locator('#board [data-square="e2"] .pc').count() == 0
    await expect(e4).to_have_class(re.compile(r"\bmark\b"))
    await expect(page.locator('#board [data-square="e2"]')).to_have_class(re.compile(r"\bmark\b"))
    await expect(page.locator("#moves li").first).to_have_text(re.compile(r"^e4"), timeout=10_000)
    # The overview shows the same table live.
    overview = await open_page(browser, site.url + "/")
    card_e4 = overview.page.locator('a[data-table="1"] [data-square="e4"] .pc')
    await expect(card_e4).to_have_attribute("data-piece", "P", timeout=10_000)
    assert await overview.page.locator("a.card").count() == 2
    assert watched.page_errors == []
    assert overview.page_errors == []


async def test_the_clocks_count_down(site: Site, browser: Browser) -> None:
    line = site.lines["2"]
    start_clock(line, 300)
    page = (await open_page(browser, site.url + "/tables/2")).page
    await expect(page.locator("#board")).to_have_attribute("data-placement", START, timeout=10_000)
    make_move(line, "e2e4")
    await asyncio.sleep(0.4)
    line.act(line.device.press_lever)
    running = page.locator(".clock.running")
    await expect(running).to_have_count(1, timeout=10_000)
    runs = await running.get_attribute("id")
    stands = "top-clock" if runs == "bottom-clock" else "bottom-clock"
    first = _seconds(await running.inner_text())
    other = _seconds(await page.locator(f"#{stands}").inner_text())
    # No more clock reports from the board: the page counts down by itself.
    line.unplug()
    await asyncio.sleep(1.6)
    second = _seconds(await page.locator(f"#{runs}").inner_text())
    assert 0 < second < first <= 300
    assert 0.8 <= first - second <= 3.0
    assert _seconds(await page.locator(f"#{stands}").inner_text()) == other
    assert 280 <= other <= 300


def _seconds(text: str) -> float:
    parts = [float(p) for p in text.strip().split(":")]
    value = 0.0
    for part in parts:
        value = value * 60 + part
    return value
