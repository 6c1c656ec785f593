"""A round's pairings imported on the admin page, in a real headless Chromium
(tests/chromium.py): the TRF file uploaded with the round, the answer listing the tables
seated, the boards without a table and the byes; the overview then shows each table's
players with title, rating and federation, the board number, and the round's byes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from chromium import chromium, hall_site, open_page
from playwright.async_api import Browser, expect

pytestmark = pytest.mark.timeout(120)

WAIT = 10_000
TOKEN = "browser-pairings-token"
TRF = Path(__file__).parent / "data" / "pairings-round3.trf"
CASUAL = {"round": "1", "rules": "casual", "time_control": "300+0"}


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    async with chromium() as launched:
        yield launched


async def test_a_trf_imported_on_the_admin_page_shows_on_the_overview(
    tmp_path: Path, browser: Browser
) -> None:
    tables = {str(n): CASUAL for n in range(1, 5)}
    async with hall_site(tmp_path, tables, token=TOKEN) as site:
        await site.hall.admin("2", "end", {"result": "1-0"})  # its pairing: the next game
        admin = await open_page(browser, site.url + "/admin")
        page = admin.page
        await page.fill("#token", TOKEN)
        await page.click("#token-form button[type=submit]")
        await expect(page.locator("#desk")).to_be_visible(timeout=WAIT)
        await page.set_input_files("#pairings-file", str(TRF))
        await page.fill("#pairings-round", "3")
        await page.click("#pairings-form button[type=submit]")
        answer = page.locator("#pairings-answer")
        await expect(answer).to_have_text(
            "round 3: 4 table(s) seated from pairings-round3.trf", timeout=WAIT
        )
        await expect(page.locator('#table-rows tr[data-table="2"] td.attention')).to_have_text(
            "next game: Björk, Åsa 1955 SWE \u2013 FM van den Berg, Pieter 2355 NED (round 3)"
        )
        report = page.locator("#pairings-report")
        await expect(report).to_contain_text(
            "Table 3, board 3: IM Wróbel, Łukasz 2467 POL \u2013 GM Müller, Jürgen 2598 GER: seated"
        )
        await expect(report).to_contain_text(
            "No table has board 5: CM Novák, Jiří 2210 CZE \u2013 Lefèvre, Élodie 1987 FRA "
            "(give a table board = 5)"
        )
        await expect(report).to_contain_text(
            "Round 3: no game for O'Brien, Seán 1740 IRL (zero-point bye), "
            "Unrated, Newcomer GER (half-point bye)"
        )
        row = page.locator('#table-rows tr[data-table="3"]')
        await expect(row.locator("td.white")).to_have_text(
            "IM Wróbel, Łukasz 2467 POL", timeout=WAIT
        )
        await expect(row.locator("td.black")).to_have_text("GM Müller, Jürgen 2598 GER")

        overview = await open_page(browser, site.url + "/")
        card = overview.page.locator('.card[data-table="1"]')
        await expect(card.locator(".row.meta").first).to_have_text(
            "Table 1 · board 1 · round 3", timeout=WAIT
        )
        names = card.locator(".name")
        await expect(names.nth(0)).to_have_text("WIM Dubois, Amélie 2301 FRA")  # black on top
        await expect(names.nth(1)).to_have_text("IM García Núñez, José 2440 ESP")
        waiting = overview.page.locator('.card[data-table="2"] .row.meta').last
        await expect(waiting).to_contain_text("next game: Björk, Åsa 1955 SWE")
        byes = overview.page.locator("#round-byes")
        await expect(byes).to_contain_text("Unrated, Newcomer GER (half-point bye)", timeout=WAIT)
        await expect(byes).not_to_contain_text("no pairing at table")
        assert admin.problems == []
        assert overview.problems == []
