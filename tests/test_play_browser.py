"""``dgt-service play`` from a page in a real headless Chromium, with the browser's own
WebSocket: a page of another origin (served by the test on another port, its origin made
allowed through the configured list) reads the board and sets it up, as lichess's page does;
a page of an origin not in the list cannot open the socket."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from aiohttp import web
from chromium import chromium, open_page
from test_play_pty import rig

from dgt.emulator import VirtualBoard
from service.play.server import DEFAULT_ORIGINS

pytestmark = [pytest.mark.timeout(90), pytest.mark.slow]

PAGE = """<!doctype html><meta charset="utf-8"><title>site</title>
<script>
window.received = [];
window.socketClosed = false;
const ws = new WebSocket(new URLSearchParams(location.search).get("ws"));
ws.onopen = () => ws.send('{"id":1,"call":"eboards"}');
ws.onclose = () => { window.socketClosed = true; };
ws.onmessage = (e) => {
  const m = JSON.parse(e.data);
  window.received.push(m);
  if (m.response === "call" && m.id === 1) {
    ws.send(JSON.stringify({id: 2, call: "subscribe", param: {feed: "eboardevent", id: 1,
      param: {serialnr: m.param[0].serialnr}}}));
    ws.send(JSON.stringify({id: 3, call: "call", param: {id: 1, method: "setup",
      param: {fen: "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"}}}));
  }
};
</script>"""


@asynccontextmanager
async def page_server() -> AsyncIterator[str]:
    """A site on another port of this machine: its origin (``http://127.0.0.1:PORT``)."""
    app = web.Application()

    async def page(request: web.Request) -> web.Response:
        return web.Response(text=PAGE, content_type="text/html")

    app.router.add_get("/", page)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


async def received(watched: Any) -> list[dict[str, Any]]:
    text = await watched.page.evaluate("JSON.stringify(window.received)")
    result = json.loads(text)
    assert isinstance(result, list)
    return result


async def test_a_page_of_an_allowed_origin_plays_through_the_browsers_websocket() -> None:
    async with page_server() as origin, page_server() as stranger:
        allowed = [o for o in DEFAULT_ORIGINS if o != "localhost"] + [origin]
        async with rig(VirtualBoard(), origins=allowed) as r, chromium() as browser:
            watched = await open_page(browser, f"{origin}/?ws={r.url}")
            await watched.page.wait_for_function(
                "window.received.some(m => m.response === 'call' && m.id === 3)"
            )
            await r.move("e2e4")  # the opponent's move made on the board: no move listed
            await r.move("e7e5")
            await watched.page.wait_for_function(
                "window.received.some(m => m.response === 'feed'"
                " && JSON.stringify(m.param.san) === '[\"e5\"]')",
                timeout=10_000,
            )
            messages = await received(watched)
            assert messages[0]["response"] == "call"
            assert messages[0]["param"][0]["serialnr"] == "12345"
            feeds = [m["param"] for m in messages if m["response"] == "feed"]
            assert feeds[-1]["board"] == r.position.board_fen()
            assert watched.page_errors == []
            # a page of an origin not in the list: the handshake is refused
            other = await open_page(browser, f"{stranger}/?ws={r.url}")
            await other.page.wait_for_function("window.socketClosed")
            assert await received(other) == []
            assert r.play.refused == 1
            assert any("403" in problem for problem in other.problems)
