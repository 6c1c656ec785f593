"""The table page's variant panels in a real headless Chromium (Debian's /usr/bin/chromium
driven by Playwright): realtime chess (``realtime.js``: delay bars counting down, the
corrections and their squares outlined) and 20-chess (``twenty.js``: the turn's rule, the
step, the hands, the extra piece's glyph), each played on an emulated board in a hall.

Like every browser test (tests/chromium.py) these fail, not skip, when Chromium is
missing.  Every page must load and run without a console error, an uncaught exception, a CSP
violation or a failed request.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import chess
import pytest
from chromium import HallSite, chromium, hall_site, open_page
from conftest import FAST
from playwright.async_api import Browser, Page, expect

from dgt.protocol import Piece
from dgt.transports.emulator import EmulatorTransport
from service.hall import default_table_factory
from service.table import RealtimeTable

pytestmark = pytest.mark.timeout(90)

WAIT = 10_000
"""Milliseconds a page may take to show what the table state says."""
TABLES: dict[str, dict[str, str]] = {
    "rt": {"variant": "realtime", "tick": "1", "white": "Ann", "black": "Bob"},
    # Turn 1 orthodox, turn 2 two moves a side, turn 3 the extra piece as a fool.
    "tw": {"variant": "twenty-chess", "options": "schedule=1,2,12", "time_control": "600+0",
           "white": "Cleo", "black": "Dan"},
}  # fmt: skip


def table_factory(table_id: str, settings: Mapping[str, Any]) -> Any:
    """A realtime table for variant ``realtime``, the hall's default for the others."""
    if settings.get("variant") == "realtime":
        return RealtimeTable(table_id, settings)
    return default_table_factory(table_id, settings)


@pytest.fixture
async def site(tmp_path: Path) -> AsyncIterator[HallSite]:
    async with hall_site(
        tmp_path, TABLES, token="browser-variants-token", table_factory=table_factory,
        board_options=FAST,
    ) as built:  # fmt: skip
        yield built


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    async with chromium() as launched:
        yield launched


def square(page: Page, name: str) -> Any:
    return page.locator(f'#board [data-square="{name}"]')


async def outline(page: Page, name: str) -> str:
    return str(await square(page, name).evaluate("el => el.style.outline"))


async def seconds(locator: Any) -> float:
    text = (await locator.inner_text()).strip()
    match = re.fullmatch(r"\d+(\.\d+)?", text)
    assert match, f"not seconds: {text!r}"
    return float(text)


async def width(locator: Any) -> float:
    return float(await locator.evaluate("el => parseFloat(el.style.width)"))


MOVE_LINES = """list => Array.from(list.querySelectorAll("li")).map(li => [
  li.dataset.number || "",
  Array.from(li.querySelectorAll(".part")).map(p => [p.dataset.label || "", p.dataset.side,
    p.textContent, p.classList.contains("pending")]),
  (li.querySelector(".meta") || {}).textContent || "",
])"""
"""The move list as the page draws it: per line, its number and its parts (label, side,
moves, under way) and, for realtime chess, the side and start time."""


async def move_lines(page: Page) -> list[Any]:
    return list(await page.locator("#moves").evaluate(MOVE_LINES))


async def marked(page: Page) -> list[str]:
    return list(
        await page.locator("#board .sq.mark").evaluate_all("els => els.map(e => e.dataset.square)")
    )


class Hands:
    """A player's hands at an emulated board."""

    def __init__(self, transport: EmulatorTransport) -> None:
        self.transport = transport

    def symbol(self, name: str) -> str:
        return self.transport.board.squares[chess.parse_square(name)].symbol

    async def lift(self, name: str) -> None:
        self.transport.lift(chess.parse_square(name))
        await asyncio.sleep(0.05)

    async def put(self, name: str, symbol: str) -> None:
        self.transport.place(chess.parse_square(name), Piece.from_symbol(symbol))
        await asyncio.sleep(0.05)

    async def move(self, uci: str) -> None:
        """Lift the piece (and one standing on the target), set it down on the target."""
        piece = self.symbol(uci[:2])
        await self.lift(uci[:2])
        if self.symbol(uci[2:4]) != ".":
            await self.lift(uci[2:4])
        await self.put(uci[2:4], piece)

    async def press(self) -> None:
        await asyncio.sleep(0.3)  # the board settles before the press completes the part
        self.transport.press_lever()
        await asyncio.sleep(0.05)


async def test_realtime_delays_count_down_and_corrections_show(
    site: HallSite, browser: Browser
) -> None:
    watched = await open_page(browser, site.url + "/tables/rt")
    page = watched.page
    panel = page.locator("#rt-panel")
    await expect(panel).to_contain_text("Realtime chess · tick 1 s", timeout=WAIT)
    hands = Hands(site.boards["rt"])
    assert hands.symbol("g1") == "N"

    await hands.move("g1f3")  # a knight takes two ticks, then waits ten
    f3 = square(page, "f3")
    await expect(f3.locator(".rt-travel")).to_have_count(1, timeout=2_000)
    await expect(panel).to_contain_text("Under way:")
    await expect(panel.locator("ul li")).to_have_text(re.compile(r"^N g1.f3 \(arrives \d"))
    await expect(f3.locator(".pc")).to_have_attribute("data-piece", "N", timeout=WAIT)
    await expect(panel).to_have_attribute("data-travels", "1")
    bar = f3.locator(".rt-delay")
    await expect(bar).to_have_count(1, timeout=WAIT)
    await expect(f3.locator(".rt-travel")).to_have_count(0)
    await expect(panel).not_to_contain_text("Under way")  # counted down on the page
    # The arrival itself sends a state (no board event since the move): no piece under way.
    await expect(panel).to_have_attribute("data-travels", "0", timeout=2_000)
    assert sorted(await marked(page)) == ["f3", "g1"]
    first, first_width = await seconds(bar), await width(bar)
    await asyncio.sleep(1.2)
    second, second_width = await seconds(bar), await width(bar)
    assert 0 < second < first <= 10.0
    assert 0.7 <= first - second <= 3.0
    assert 0 < second_width < first_width <= 100
    assert await square(page, "g1").locator(".rt-delay").count() == 0

    # The knight moves again during its delay: refused, it must go back (rule 3.1).
    await hands.move("f3g5")
    corrections = panel.locator("ol li")
    await expect(corrections).to_have_text(["move N from g5 to f3"], timeout=WAIT)
    await expect(panel).to_contain_text("Set right on the board")
    assert 0 < await seconds(bar) < second
    assert await outline(page, "g5") != ""
    assert await outline(page, "f3") != ""
    assert await outline(page, "e4") == ""
    # The page shows the board as it should stand: the knight on f3, still waiting.
    await expect(f3.locator(".pc")).to_have_attribute("data-piece", "N")
    assert await square(page, "g5").locator(".pc").count() == 0
    await expect(bar).to_have_count(1)

    await hands.move("g5f3")  # put right
    await expect(corrections).to_have_count(0, timeout=WAIT)
    await expect(panel).not_to_contain_text("Set right")
    assert await outline(page, "g5") == ""
    assert await outline(page, "f3") == ""
    moves = site.hall.state("rt")["moves"]
    assert [m["uci"] for m in moves if not m.get("refused")] == ["g1f3"]

    # No turns: Black starts b7-b5 before White starts e2-e4 but sets it down after; the
    # list follows the starts, one line a move, each with its side and start time.
    await hands.lift("b7")
    await hands.lift("e2")
    await hands.put("e4", "P")
    await hands.put("b5", "p")
    lines = page.locator("#moves li")
    await expect(lines).to_have_count(3, timeout=WAIT)
    record = {m["uci"]: m for m in site.hall.state("rt")["moves"]}
    b5, e4 = record["b7b5"], record["e2e4"]
    assert b5["start"] < e4["start"]
    shown = await move_lines(page)
    assert [line[:2] for line in shown] == [
        ["1", [["1.", "white", "Ng1-f3", False]]],
        ["2", [["2...", "black", "b7-b5", False]]],
        ["3", [["3.", "white", "e2-e4", False]]],
    ]
    # the start time to two decimals (the page rounds as JavaScript does: 6.125 -> 6.13)
    starts = (("White", record["g1f3"]), ("Black", b5), ("White", e4))
    for line, (side, entry) in zip(shown, starts, strict=True):
        shown_time = re.fullmatch(rf" · {side} · (\d+\.\d\d) s", line[2])
        assert shown_time is not None, line[2]
        assert abs(float(shown_time.group(1)) - entry["start"]) <= 0.0051
    await expect(lines.last).to_have_class(re.compile(r"\blast\b"))
    assert watched.problems == []


async def test_twenty_chess_panel_follows_the_turns(site: HallSite, browser: Browser) -> None:
    watched = await open_page(browser, site.url + "/tables/tw")
    page = watched.page
    panel = page.locator("#twenty")
    rule = panel.locator(".rule")
    await expect(rule).to_contain_text("Turn 1, rule 1", timeout=WAIT)
    await expect(rule).to_contain_text("orthodox")
    await expect(panel.locator(".step")).to_contain_text("White to act")
    await expect(panel.locator(".hands")).to_have_text("Captured pieces: White none · Black none")
    await expect(panel.locator(".extra").first).to_contain_text("not in the game yet")
    hands = Hands(site.boards["tw"])

    await hands.move("e2e4")
    await hands.press()
    await expect(panel.locator(".step")).to_contain_text("Black to act", timeout=WAIT)
    await hands.move("d7d5")
    await hands.press()
    await expect(rule).to_contain_text("Turn 2, rule 2", timeout=WAIT)
    await expect(rule).to_contain_text("two moves, with two different pieces")
    await expect(panel.locator(".step")).to_contain_text("White to act (step 1 of 2)")

    # Rule 2: two moves a side; each side takes a pawn, so both hands hold one.
    await hands.move("e4d5")
    await expect(panel.locator(".step")).to_contain_text("(step 2 of 2)", timeout=WAIT)
    await hands.move("g1f3")
    await hands.press()
    await expect(panel.locator(".step")).to_contain_text("Black to act", timeout=WAIT)
    await hands.move("d8d5")
    await hands.move("b8c6")
    await hands.press()
    await expect(rule).to_contain_text("Turn 3, rule 12", timeout=WAIT)
    await expect(panel.locator(".hands")).to_have_text("Captured pieces: White pawn · Black pawn")
    await expect(panel.locator(".step")).to_have_text(
        "White to act (step 1 of 2): drop the extra piece (or move another piece)"
    )

    # Rule 12: White's extra piece (its stand-in, the spare black queen) comes in as a fool.
    await hands.put("e3", "q")
    e3 = square(page, "e3")
    await expect(e3.locator(".pc")).to_have_attribute("data-piece", "F", timeout=WAIT)
    await expect(e3.locator(".pc")).to_have_text("\u2606")
    await expect(e3.locator(".pc")).to_have_class(re.compile(r"\bw\b"))
    await expect(panel.locator(".extra").first).to_have_text(
        "White's extra piece: fool on e3 (on the board: the black queen)"
    )
    await expect(panel.locator(".fool")).to_have_text("A fool moves as: knight")
    assert await page.locator('#board .pc[data-piece="Q"]').count() == 1
    assert await page.locator('#board .pc[data-piece="q"]').count() == 1
    # The drop's square is marked, and only it.
    await expect(e3).to_have_class(re.compile(r"\bmark\b"))
    assert await marked(page) == ["e3"]

    # The moves stand by the record's numbers and sides: a side's part under one number.
    assert await move_lines(page) == [
        ["1", [["1.", "white", "e2-e4", False], ["", "black", "d7-d5", False]], ""],
        ["2", [["2.", "white", "e4xd5 Ng1-f3", False],
               ["2...", "black", "Qd8xd5 Nb8-c6", False]], ""],
        ["3", [["3.", "white", "F@e3", True]], ""],  # the part goes on
    ]  # fmt: skip
    assert await page.locator("#moves li").nth(1).text_content() == "e4xd5 Ng1-f3  Qd8xd5 Nb8-c6"
    assert watched.problems == []
