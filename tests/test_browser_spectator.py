"""The table page for spectators in Chromium: the move list with clock times, stepping
through the moves (keys, buttons, taps, a click on a move) without being pulled forward by
new moves, flipping (kept by the browser), the players' details, the last move and a check
marked, the result banner, a 390 px phone and a 1920x1080 hall screen, and the stream's diffs
arriving (moves made on the emulated board show without a reload)."""

from __future__ import annotations

import asyncio
import functools
import re
from collections.abc import AsyncIterator
from pathlib import Path

import chess
import pytest
from chromium import HallSite, chromium, hall_site, open_page
from playwright.async_api import Browser, Page, expect

from dgt.protocol import Piece
from service.commands.demo import TransportLine

WAIT = 10_000
START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"
PLAYERS = {"white": "Magnus Able", "black": "Bob Baker", "round": "2", "rules": "casual"}
DETAILS = {
    "white_title": "GM",
    "white_elo": "2830",
    "white_federation": "NOR",
    "white_fide_id": "1503014",
    "white_team": "Offerspill",
}
"""Player details as a round's pairings give them (only White's here)."""
MATE = ["e2e4", "e7e5", "f1c4", "b8c6", "d1h5", "g8f6", "h5f7"]

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
async def site(tmp_path: Path) -> AsyncIterator[HallSite]:
    async with hall_site(tmp_path, {"1": PLAYERS}, token="spectator-token") as built:
        # the details as a pairings import seats them: the players command, before any move
        await built.hall.admin(
            "1", "players", {"white": PLAYERS["white"], "black": PLAYERS["black"], **DETAILS}
        )
        start_clock(TransportLine(built.boards["1"]), 600)
        yield built


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    async with chromium() as launched:
        yield launched


def start_clock(line: TransportLine, seconds: float) -> None:
    device = line.device

    def setup(now: float) -> bytes:
        assert device.clock is not None
        device.clock.set(seconds, seconds, now, increment=0, right_high=False)
        return device.poll(now)

    line.act(setup)


async def play(site: HallSite, ucis: list[str]) -> None:
    line = TransportLine(site.boards["1"])
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


def placement_after(ucis: list[str]) -> str:
    board = chess.Board()
    for uci in ucis:
        board.push_uci(uci)
    return board.board_fen()


async def ply_shown(page: Page, ply: str, ucis: list[str]) -> None:
    board = page.locator("#board")
    await expect(board).to_have_attribute("data-ply", ply, timeout=WAIT)
    moves = ucis if ply == "live" else ucis[: int(ply)]
    await expect(board).to_have_attribute("data-placement", placement_after(moves))


async def marked(page: Page, cls: str) -> list[str]:
    squares = page.locator(f"#board .sq.{cls}")
    return sorted(await squares.evaluate_all("els => els.map(e => e.dataset.square)"))


async def test_stepping_through_the_moves_with_keys_buttons_and_clicks(
    site: HallSite, browser: Browser
) -> None:
    watched = await open_page(browser, site.url + "/tables/1")
    page = watched.page
    await expect(page.locator("#board")).to_have_attribute("data-placement", START, timeout=WAIT)
    assert any("diff=1" in url for url in watched.requested)
    await expect(page.locator("#steps")).to_be_hidden()  # no move yet
    first = MATE[:4]
    await play(site, first)
    # The moves arrive as diffs: no reload, each with its clock time.
    await expect(page.locator("#moves .mv")).to_have_count(4, timeout=WAIT)
    await expect(page.locator("#moves .part.pending")).to_have_count(0, timeout=WAIT)
    clocks = await page.locator("#moves .part").evaluate_all(
        "els => els.map(e => e.dataset.clock || '')"
    )
    assert all(re.fullmatch(r"\d{1,2}:\d\d", c) for c in clocks), clocks
    assert await page.locator("#moves li").first.text_content() == "e4  e5"
    await ply_shown(page, "live", first)
    await expect(page.locator("#golive")).to_be_hidden()

    await page.keyboard.press("ArrowLeft")
    await ply_shown(page, "3", first)
    assert await marked(page, "mark") == ["c4", "f1"]
    await page.keyboard.press("Home")
    await ply_shown(page, "0", first)
    assert await marked(page, "mark") == []
    await expect(page.locator("#first")).to_be_disabled()
    await page.keyboard.press("ArrowRight")
    await ply_shown(page, "1", first)
    await expect(page.locator('#moves .mv[data-ply="1"]')).to_have_class(re.compile(r"\bcur\b"))
    await page.locator("#forward").click()
    await ply_shown(page, "2", first)
    await page.locator("#back").click()
    await ply_shown(page, "1", first)
    await page.locator('#moves .mv[data-ply="3"]').click()
    await ply_shown(page, "3", first)
    await expect(page.locator("#golive")).to_have_text("live (1 more)")

    # New moves while stepped back: listed, but the board stays where the viewer is.
    await play(site, MATE[4:6])
    await expect(page.locator("#moves .mv")).to_have_count(6, timeout=WAIT)
    await expect(page.locator("#golive")).to_have_text("live (3 more)")
    await ply_shown(page, "3", MATE)
    await page.locator("#golive").click()
    await ply_shown(page, "live", MATE[:6])
    await page.keyboard.press("ArrowLeft")
    await page.keyboard.press("End")
    await ply_shown(page, "live", MATE[:6])
    assert watched.problems == []


async def test_last_move_check_and_the_result_banner(site: HallSite, browser: Browser) -> None:
    watched = await open_page(browser, site.url + "/tables/1")
    page = watched.page
    await expect(page.locator("#board")).to_have_attribute("data-placement", START, timeout=WAIT)
    await expect(page.locator("#result")).to_be_hidden()
    await play(site, MATE)
    banner = page.locator("#result")
    await expect(banner).to_be_visible(timeout=WAIT)
    await expect(banner).to_have_attribute("data-result", "1-0")
    await expect(banner).to_have_text(re.compile("1\u20130\\s*White wins · checkmate"))
    await ply_shown(page, "live", MATE)
    assert await marked(page, "mark") == ["f7", "h5"]
    assert await marked(page, "check") == ["e8"]
    # Stepped back to a position without check: no king marked.
    await page.keyboard.press("ArrowLeft")
    await ply_shown(page, "6", MATE)
    assert await marked(page, "check") == []
    assert await marked(page, "mark") == ["f6", "g8"]
    assert watched.problems == []


async def test_flip_is_kept_by_the_browser(site: HallSite, browser: Browser) -> None:
    watched = await open_page(browser, site.url + "/tables/1")
    page = watched.page
    board = page.locator("#board")
    await expect(board).to_have_attribute("data-placement", START, timeout=WAIT)
    first_square = "el => el.firstElementChild.dataset.square"
    assert await board.evaluate(first_square) == "a8"
    await expect(page.locator("#bottom-name")).to_have_text("Magnus Able")
    await page.locator("#flip").click()
    await expect(board).to_have_attribute("data-flipped", "true")
    assert await board.evaluate(first_square) == "h1"
    await expect(page.locator("#bottom-name")).to_have_text("Bob Baker")
    await expect(page.locator("#top-name")).to_have_text("Magnus Able")
    await expect(page.locator("#top-title")).to_have_text("GM")
    await page.reload()
    await expect(board).to_have_attribute("data-placement", START, timeout=WAIT)
    await expect(board).to_have_attribute("data-flipped", "true")
    await expect(page.locator("#flip")).to_have_attribute("aria-pressed", "true")
    await page.keyboard.press("f")
    await expect(board).to_have_attribute("data-flipped", "false")
    assert await board.evaluate(first_square) == "a8"
    await expect(page.locator("#bottom-name")).to_have_text("Magnus Able")
    # (the reload aborts the first page's stream)
    assert [p for p in watched.problems if "/api/stream" not in p] == []


async def test_players_details_shown_when_present(site: HallSite, browser: Browser) -> None:
    watched = await open_page(browser, site.url + "/tables/1")
    page = watched.page
    await expect(page.locator("#bottom-name")).to_have_text("Magnus Able", timeout=WAIT)
    await expect(page.locator("#bottom-title")).to_have_text("GM")
    await expect(page.locator("#bottom-elo")).to_have_text("2830")
    await expect(page.locator("#bottom-fed")).to_have_text("NOR")
    await expect(page.locator("#bottom-team")).to_have_text("Offerspill")
    await expect(page.locator("#bottom-name")).to_have_attribute("title", "FIDE ID 1503014")
    await expect(page.locator("#bottom-fed")).to_be_visible()
    # Black has none: nothing is shown for them.
    await expect(page.locator("#top-name")).to_have_text("Bob Baker")
    for part in ("title", "elo", "fed", "team"):
        await expect(page.locator(f"#top-{part}")).to_be_empty()
        await expect(page.locator(f"#top-{part}")).to_be_hidden()
    assert watched.problems == []


async def test_a_phone_steps_by_taps_without_sideways_scrolling(
    site: HallSite, browser: Browser
) -> None:
    await play(site, MATE[:3])
    context = await browser.new_context(
        viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True
    )
    try:
        page = await context.new_page()
        await page.goto(site.url + "/tables/1")
        await expect(page.locator("#moves .mv")).to_have_count(3, timeout=WAIT)
        await ply_shown(page, "live", MATE[:3])
        widths = await page.evaluate(
            "() => [document.documentElement.scrollWidth, document.body.scrollWidth, innerWidth]"
        )
        assert max(widths[:2]) <= widths[2] == 390, widths
        box = await page.locator("#board").bounding_box()
        assert box is not None
        assert box["width"] >= 340
        await page.locator("#back").tap()
        await ply_shown(page, "2", MATE)
        await page.locator("#back").tap()
        await ply_shown(page, "1", MATE)
        await page.locator("#golive").tap()
        await ply_shown(page, "live", MATE[:3])
        await page.locator("#flip").tap()
        await expect(page.locator("#board")).to_have_attribute("data-flipped", "true")
        widths = await page.evaluate("() => document.documentElement.scrollWidth")
        assert widths <= 390
    finally:
        await context.close()


async def test_a_hall_screen_shows_the_table_without_scrolling(
    site: HallSite, browser: Browser
) -> None:
    await play(site, MATE)
    watched = await open_page(browser, site.url + "/tables/1", viewport=(1920, 1080))
    page = watched.page
    await expect(page.locator("#result")).to_be_visible(timeout=WAIT)
    size = await page.evaluate(
        "() => [document.documentElement.scrollWidth, document.documentElement.scrollHeight]"
    )
    assert size[0] <= 1920
    assert size[1] <= 1080, size
    box = await page.locator("#board").bounding_box()
    assert box is not None
    assert box["height"] >= 750
    assert watched.problems == []
