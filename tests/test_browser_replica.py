"""The overview served from a read replica (Chromium): the edges' tables as cards, and the
edges panel (heartbeat age, clock skew, a late edge marked); a hall of its own shows no
panel.  Slow (a browser)."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from chromium import chromium, open_page
from playwright.async_api import Browser

from service.hall import Hall
from service.scaleout.edge_directory import HeartbeatDirectory
from service.scaleout.replica import ReplicaHall
from service.scaleout.rows import REGISTRATION, LogRow
from service.store import Store
from service.web import WebServer

TOKEN = "replica-browser-token"


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    async with chromium() as launched:
        yield launched


def registration(seq: int, table_id: str, board: int) -> LogRow:
    data = json.dumps({"board": board, "settings": {"white": "Ann", "black": "Bob"}})
    return LogRow(seq, table_id, REGISTRATION, REGISTRATION, 1000.0, data)


async def test_the_overview_of_a_replica_shows_its_edges(browser: Browser) -> None:
    now = time.time()
    replica = ReplicaHall()
    directory = HeartbeatDirectory(on_link=replica.link_changed)
    replica.directory = directory
    replica.on_rows("hall-a", [registration(0, "1", 1), registration(1, "2", 2)])
    replica.on_rows("hall-b", [registration(0, "301", 301)])
    tables = {"1": {"state": "up", "port": "/dev/ttyACM0", "error": None}}
    directory.note({"edge": "hall-a", "time": now + 0.4, "interval": 2.0, "waiting": 0,
                    "store": {"state": "ok"}, "tables": tables}, received=now)  # fmt: skip
    directory.note({"edge": "hall-b", "time": now - 60, "interval": 2.0}, received=now - 60)
    server = WebServer(replica, TOKEN, port=0)
    url = (await server.start()).rstrip("/")
    try:
        watched = await open_page(browser, url + "/")
        page = watched.page
        await page.wait_for_selector("#edges tbody tr")
        await page.wait_for_selector(".card >> nth=2")
        rows = await page.locator("#edges tbody tr").all()
        assert len(rows) == 2
        first = await rows[0].locator("td").all_inner_texts()
        assert first[0] == "hall-a"
        assert first[1].endswith("s ago")
        assert first[2] == "+0.40 s"
        assert first[3] == "2"
        assert await rows[0].get_attribute("class") != "late"
        assert await rows[1].get_attribute("class") == "late"
        cards = await page.locator(".card").evaluate_all("cs => cs.map(c => c.dataset.table)")
        assert cards == ["1", "2", "301"]
        assert watched.problems == []
    finally:
        await server.close()


async def test_a_hall_of_its_own_shows_no_edges_panel(tmp_path: Path, browser: Browser) -> None:
    store = Store(tmp_path / "h.db")
    hall = Hall(store, tick_interval=0)
    server = WebServer(hall, TOKEN, port=0)
    url = (await server.start()).rstrip("/")
    try:
        watched = await open_page(browser, url + "/")
        await watched.page.wait_for_load_state("networkidle")
        assert await watched.page.locator("#edges").count() == 0
        assert watched.problems == []
    finally:
        await server.close()
        await hall.close()
        store.close()
