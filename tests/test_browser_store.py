"""The store's banner in a real headless Chromium (tests/chromium.py): every page (the
overview, a table, the admin page) says so while the store cannot write, with the count of
rows kept in memory, and stops saying so once it writes again."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from chromium import chromium, hall_site, open_page
from conftest import ErrorLog
from playwright.async_api import Browser, expect

from service.hall import HallError

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]

PLAYERS = {"white": "Ann", "black": "Bob", "round": "1", "rules": "casual"}


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    async with chromium() as launched:
        yield launched


async def test_every_page_shows_the_banner_while_the_store_cannot_write(
    tmp_path: Path, browser: Browser, error_log: ErrorLog
) -> None:
    async with hall_site(tmp_path, {"1": PLAYERS}, token="browser-store-token") as site:
        pages = [await open_page(browser, site.url + path) for path in ("/", "/tables/1", "/admin")]
        admin = pages[2].page
        await admin.locator("#token").fill("browser-store-token")
        await admin.locator("#token-form button[type=submit]").click()
        for watched in pages:
            await expect(watched.page.locator("#live")).to_have_text("live", timeout=10_000)
            await expect(watched.page.locator("#store-banner")).to_be_hidden()
        store = site.hall.store
        connection = store._db
        connection.execute("PRAGMA query_only=1")  # every write refused from now on
        try:
            with pytest.raises(HallError):
                await site.hall.admin("1", "players", {"white": "Carla"})
            assert store.unstored > 0
            kept_at_failure = store.unstored
            for watched in pages:
                banner = watched.page.locator("#store-banner")
                await expect(banner).to_be_visible(timeout=10_000)
                await expect(banner).to_contain_text("Not stored")
                # the boards keep reporting, so the count grows: the banner shows a count
                # of at least the rows kept when the failure began, never fewer
                await expect(banner).to_contain_text(re.compile(r"\d+ row\(s\) kept in memory"))
                shown = await banner.get_attribute("data-unstored")
                assert shown is not None
                assert kept_at_failure <= int(shown) <= store.unstored
            late = await open_page(browser, site.url + "/tables/1")  # opened while failing
            await expect(late.page.locator("#store-banner")).to_be_visible(timeout=10_000)
            await expect(late.page.locator("#top-name")).to_have_text("Bob")
            await expect(late.page.locator("#bottom-name")).to_have_text("Ann")  # not Carla
            pages.append(late)
        finally:
            connection.execute("PRAGMA query_only=0")
        await asyncio.sleep(store.retry_in() + 0.05)
        site.hall.settle()
        assert store.healthy
        for watched in pages:
            await expect(watched.page.locator("#store-banner")).to_be_hidden(timeout=10_000)
            assert watched.page_errors == []
        await expect(pages[1].page.locator("#bottom-name")).to_have_text("Carla")
    error_log.expect("cannot write the log")
