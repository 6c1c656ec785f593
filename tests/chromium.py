"""What the browser tests share: a real headless Chromium (Debian's /usr/bin/chromium driven
by Playwright), pages that record what goes wrong on them, and a hall of emulated boards
behind the web server for them to look at.

The suite's setup (``setup.sh test``) installs Chromium; the browser tests fail, not skip,
when it is missing, because the pages are part of what the service promises.
"""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from playwright.async_api import Browser, Page, Request, Response, async_playwright

from dgt.emulator.board import VirtualBoard
from dgt.transports.emulator import EmulatorTransport
from service.config import TableConfig
from service.hall import Hall
from service.store import Store
from service.web import WebServer

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
CHROMIUM_PRESENT = os.path.exists(CHROMIUM)


@asynccontextmanager
async def chromium() -> AsyncIterator[Browser]:
    """A headless Chromium for one test (the ``browser`` fixture of the browser tests)."""
    assert CHROMIUM_PRESENT, "Chromium is missing: run ./setup.sh test as root"
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
        )
        yield browser
        await browser.close()


@dataclass
class Watched:
    """A page, and what went wrong on it or what it asked for since it was opened."""

    page: Page
    page_errors: list[str] = field(default_factory=list)
    """Uncaught exceptions in the page's scripts."""
    problems: list[str] = field(default_factory=list)
    """Everything that went wrong: uncaught exceptions, console errors (CSP violations are
    console errors), failed requests and HTTP errors."""
    requested: list[str] = field(default_factory=list)
    """The address of every request the page made."""


async def open_page(
    browser: Browser, url: str, *, viewport: tuple[int, int] = (1600, 900)
) -> Watched:
    """A new page at ``url``, watched from before it loads."""
    page = await browser.new_page(viewport={"width": viewport[0], "height": viewport[1]})
    watched = Watched(page)
    problems = watched.problems

    def page_error(exc: Exception) -> None:
        watched.page_errors.append(str(exc))
        problems.append(f"pageerror: {exc}")

    def console(msg: Any) -> None:
        if msg.type == "error":
            problems.append(f"console: {msg.text} ({msg.location.get('url', '')})")

    def failed(request: Request) -> None:
        problems.append(f"request failed: {request.url} {request.failure}")

    def response(resp: Response) -> None:
        if resp.status >= 400:
            problems.append(f"HTTP {resp.status}: {resp.url}")

    page.on("pageerror", page_error)
    page.on("console", console)
    page.on("requestfailed", failed)
    page.on("response", response)
    page.on("request", lambda request: watched.requested.append(request.url))
    await page.goto(url)
    return watched


@dataclass
class HallSite:
    """A running hall of emulated boards and the address of its web server."""

    url: str
    hall: Hall
    boards: dict[str, EmulatorTransport]
    """Each table's emulated board, by table id."""
    server: WebServer | None = None
    """The web server (a test may close it early: the pages lose the service)."""


@asynccontextmanager
async def hall_site(
    tmp_path: Path, tables: Mapping[str, Mapping[str, str]], *, token: str, **hall_options: Any
) -> AsyncIterator[HallSite]:
    """A hall with an emulated board at each of ``tables`` (id: settings), every board
    ready, and its web server (admin ``token``); ``hall_options`` go to :class:`Hall`."""
    store = Store(tmp_path / "hall.db")
    hall = Hall(store, tick_interval=0.2, **hall_options)
    boards: dict[str, EmulatorTransport] = {}
    for table_id, settings in tables.items():
        transport = EmulatorTransport(VirtualBoard(now=time.monotonic()), name=f"emu-{table_id}")
        hall.add_table(TableConfig(table_id, transport.name, None, dict(settings)), transport)
        boards[table_id] = transport
    server = WebServer(hall, token, port=0)
    url = await server.start()
    try:
        await hall.start()
        for runner in hall.runners.values():
            assert await runner.wait_ready(5)
        yield HallSite(url.rstrip("/"), hall, boards, server)
    finally:
        await server.close()
        await hall.close()
        store.close()
