"""service.web: routes, the SSE stream, the admin token, PGN feeds and hostile requests,
against a real server on 127.0.0.1 (ephemeral port) with emulated boards."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import sqlite3
import types
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from hall_stand_in import EchoTable

from dgt.protocol import Piece
from dgt.transports.emulator import EmulatorTransport
from service.config import TableConfig
from service.hall import Hall
from service.store import Store
from service.web import WebServer

TOKEN = "test-token-0123456789"


@dataclass
class Served:
    url: str
    hall: Hall
    db: Path
    transports: dict[str, EmulatorTransport]
    session: aiohttp.ClientSession


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[Served]:
    db = tmp_path / "web.db"
    store = Store(db)
    hall = Hall(store, table_factory=EchoTable, tick_interval=0)
    transports = {}
    for table_id in ("1", "2"):
        transport = EmulatorTransport(name=f"emu-{table_id}")
        transports[table_id] = transport
        hall.add_table(TableConfig(table_id, transport.name, None, {"round": "1"}), transport)
    server = WebServer(hall, TOKEN, port=0)
    url = await server.start()
    await hall.start()
    for runner in hall.runners.values():
        assert await runner.wait_ready(5)
    async with aiohttp.ClientSession() as session:
        yield Served(url.rstrip("/"), hall, db, transports, session)
    await server.close()
    await hall.close()
    store.close()


async def get_json(s: Served, path: str, status: int = 200) -> Any:
    async with s.session.get(s.url + path) as response:
        assert response.status == status, await response.text()
        assert response.content_type == "application/json"
        return await response.json()


async def admin(
    s: Served, path: str, body: bytes | str, token: str | None = TOKEN
) -> tuple[int, Any]:
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    async with s.session.post(s.url + path, data=body, headers=headers) as response:
        return response.status, await response.json()


async def read_events(response: aiohttp.ClientResponse) -> AsyncIterator[dict[str, Any]]:
    """The ``data`` of each SSE message."""
    data: list[str] = []
    async for raw in response.content:
        line = raw.decode().rstrip("\n")
        if line.startswith("data: "):
            data.append(line[6:])
        elif not line and data:
            yield json.loads("\n".join(data))
            data = []


async def test_pages_and_json(served: Served) -> None:
    for path in ("/", "/tables/1"):
        async with served.session.get(served.url + path) as response:
            assert response.status == 200
            assert response.content_type == "text/html"
            assert "default-src 'self'" in response.headers["Content-Security-Policy"]
            assert response.headers["X-Content-Type-Options"] == "nosniff"
    tables = await get_json(served, "/api/tables")
    assert [t["id"] for t in tables["tables"]] == ["1", "2"]
    state = await get_json(served, "/api/tables/1")
    assert state["connection"]["state"] == "up"
    error = await get_json(served, "/api/tables/nope", 404)
    assert error == {"error": "no table 'nope'"}
    error = await get_json(served, "/tables/nope", 404)
    assert "no table" in error["error"]
    for name in ("app.css", "common.js", "table.js", "overview.js"):
        async with served.session.get(f"{served.url}/static/{name}") as response:
            assert response.status == 200


async def test_sse_delivers_a_move_only_after_it_is_committed(served: Served) -> None:
    async with served.session.get(served.url + "/api/stream?table=1") as response:
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/event-stream")
        events = read_events(response)
        first = await asyncio.wait_for(anext(events), 5)
        assert first["table"] == "1"
        assert "moves" in first["state"]
        transport = served.transports["1"]
        transport.lift(12)
        transport.place(28, Piece.WPAWN)
        while True:
            message = await asyncio.wait_for(anext(events), 5)
            moves = [e for e in message.get("events", []) if e["type"] == "move"]
            if moves:
                break
        assert moves[0]["data"]["uci"] == "28"
        assert message["state"]["moves"][-1]["uci"] == "28"
        # On disk (read through another connection) by the time it was shown:
        db = sqlite3.connect(served.db)
        rows = db.execute("SELECT data FROM log WHERE role='out' AND kind='move'").fetchall()
        db.close()
        assert any(json.loads(r[0])["data"]["uci"] == "28" for r in rows)


async def test_overview_stream_has_every_table(served: Served) -> None:
    async with served.session.get(served.url + "/api/stream") as response:
        events = read_events(response)
        seen = {(await asyncio.wait_for(anext(events), 5))["table"] for _ in range(2)}
        assert seen == {"1", "2"}


async def test_admin_needs_the_token(served: Served) -> None:
    body = json.dumps({"white": "Ann", "black": "Bob"})
    status, error = await admin(served, "/api/admin/tables/1/players", body, token=None)
    assert status == 401
    assert "admin token" in error["error"]
    status, _ = await admin(served, "/api/admin/tables/1/players", body, token="wrong-token!")
    assert status == 401
    state = await get_json(served, "/api/tables/1")
    assert state["settings"].get("white") != "Ann"
    status, answer = await admin(served, "/api/admin/tables/1/players", body)
    assert status == 200, answer
    assert answer["events"][0]["type"] == "players"
    state = await get_json(served, "/api/tables/1")
    assert state["settings"]["white"] == "Ann"
    log = await get_json(served, "/api/tables/1/log")
    assert log["events"][-1]["type"] == "players"


async def test_admin_errors(served: Served) -> None:
    status, error = await admin(served, "/api/admin/tables/1/explode", "{}")
    assert (status, error["error"][:16]) == (404, "unknown command ")
    status, error = await admin(served, "/api/admin/tables/9/players", "{}")
    assert status == 404
    status, error = await admin(served, "/api/admin/tables/1/start", "{}")
    assert status == 400  # the table refused: one line back
    assert "\n" not in error["error"]


async def test_hostile_requests(served: Served) -> None:
    path = "/api/admin/tables/1/players"
    status, error = await admin(served, path, b"{" + b" " * 100_000 + b"}")
    assert status == 413
    assert "larger than" in error["error"]
    status, error = await admin(served, path, "{not json")
    assert status == 400
    assert error["error"].startswith("the body is not valid JSON")
    status, error = await admin(served, path, "[1, 2]")
    assert (status, error["error"]) == (400, "the body must be a JSON object")
    status, error = await admin(served, path, json.dumps({"white": "x" * 500}))
    assert (status, error["error"]) == (400, "white is longer than 100 characters")
    status, error = await admin(served, path, json.dumps({"white": {"nested": 1}}))
    assert status == 400
    status, error = await admin(served, path, b"\xff\xfe")
    assert status == 400
    for bad in ("/static/../hall.py", "/static/%2e%2e/app.py", "/static/..%2fapp.py",
                "/static/.hidden.js", "/static/app.py", "/static/%2Fetc%2Fpasswd"):  # fmt: skip
        async with served.session.get(served.url + bad) as response:
            assert response.status == 404, bad
            assert "error" in await response.json()
    error = await get_json(served, "/api/tables/1/log?after=-1", 400)
    assert error["error"] == "after must be a whole number"
    # The service is still answering.
    assert len((await get_json(served, "/api/tables"))["tables"]) == 2


async def test_malformed_http_keeps_the_service_running(served: Served) -> None:
    host, port = served.url.removeprefix("http://").split(":")
    for garbage in (b"\x00\x01\x02 nonsense\r\n\r\n", b"GET / HTTP/9.9\r\n\r\n",
                    b"GET /" + b"a" * 20000 + b" HTTP/1.1\r\n\r\n"):  # fmt: skip
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(garbage)
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(200), 5)
        writer.close()
        await writer.wait_closed()
        assert answer.startswith(b"HTTP/1."), answer
        assert b" 4" in answer[:13], answer
    assert len((await get_json(served, "/api/tables"))["tables"]) == 2


async def test_html_in_player_names_is_data_not_markup(served: Served) -> None:
    name = '<script>alert("x")</script><img src=x onerror=alert(1)>'
    status, _ = await admin(served, "/api/admin/tables/1/players", json.dumps({"white": name}))
    assert status == 200
    state = await get_json(served, "/api/tables/1")
    assert state["settings"]["white"] == name
    async with served.session.get(served.url + "/tables/1") as response:
        page = await response.text()
    assert "<script>alert" not in page
    for name_js in ("common.js", "table.js", "overview.js"):
        async with served.session.get(f"{served.url}/static/{name_js}") as response:
            assert "innerHTML" not in await response.text()


async def test_pgn_feeds(served: Served) -> None:
    served.transports["1"].lift(12)
    served.transports["1"].place(28, Piece.WPAWN)
    await asyncio.sleep(0.3)
    async with served.session.get(served.url + "/games.pgn") as response:
        assert response.status == 200
        assert response.content_type == "application/x-chess-pgn"
        assert (await response.text()).count("[Event ") == 2
    async with served.session.get(served.url + "/games/1-1.pgn") as response:
        assert response.status == 200
        assert (await response.text()).count("[Event ") == 1
    async with served.session.get(served.url + "/rounds/1.pgn") as response:
        assert response.status == 200
    async with served.session.get(served.url + "/games/1-9.pgn") as response:
        assert response.status == 404
    games = await get_json(served, "/api/games")
    assert {g["id"] for g in games["games"]} == {"1-1", "2-1"}


async def test_hostile_admin_requests_get_one_line_errors(
    served: Served, caplog: pytest.LogCaptureFixture
) -> None:
    path = "/api/admin/tables/1/players"
    # The token is checked first: a stranger learns nothing about tables or bodies.
    for body in ("{not json", "[" * 5000):
        status, error = await admin(served, path, body, token="wrong-token!")
        assert (status, error["error"][:19]) == (401, "admin token missing")
    status, _ = await admin(served, "/api/admin/tables/nope/explode", "{}", token=None)
    assert status == 401
    headers = {"Authorization": "Bearer "}
    async with served.session.post(served.url + path, data="{}", headers=headers) as response:
        assert response.status == 401
    # Bodies no JSON reader should choke on.
    status, error = await admin(served, path, "[" * 15000)
    assert (status, error["error"]) == (400, "the body is not valid JSON: nested too deeply")
    status, error = await admin(served, path, '{"white": ' + "9" * 5000 + "}")
    assert status == 400
    assert error["error"].startswith("the body is not valid JSON")
    status, error = await admin(served, path, json.dumps({"White!": "Ann"}))
    assert (status, error["error"]) == (400, "bad key 'White!' in the body")
    status, error = await admin(served, path, json.dumps({"white": "Ann\x07"}))
    assert (status, error["error"]) == (400, "white contains control characters")

    # An oversized body without a Content-Length (chunked) is refused too.
    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"white": "'
        for _ in range(40):
            yield b"x" * 1024
        yield b'"}'

    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    async with served.session.post(served.url + path, data=chunks(), headers=headers) as response:
        assert response.status == 413
        assert "\n" not in (await response.json())["error"]
    # The wrong method on the admin route, and the options without the token.
    async with served.session.get(served.url + path, headers=headers) as response:
        assert response.status == 405
        assert response.content_type == "application/json"
        assert (await response.json())["error"]
    async with served.session.get(served.url + "/api/admin/options") as response:
        assert response.status == 401
    # Nothing reached the table, nothing was logged as an error, the service answers.
    state = await get_json(served, "/api/tables/1")
    assert state["settings"].get("white") in (None, "?")
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len((await get_json(served, "/api/tables"))["tables"]) == 2


async def test_text_that_cannot_be_stored_is_refused_at_the_edge(served: Served) -> None:
    path = "/api/admin/tables/1/players"
    before = (await get_json(served, "/api/tables/1"))["settings"]
    # A lone surrogate ("\ud800" in the JSON) in a setting and in any other text argument.
    for body in ('{"white": "Ann\\ud800"}', '{"event": "\\udfff"}', '{"note": "x\\ud800y"}'):
        status, error = await admin(served, path, body)
        assert status == 400, body
        assert "not valid Unicode" in error["error"]
        assert "\n" not in error["error"]
    # Control characters, absurd lengths, numbers no store reads back the same.
    for body, message in (
        ({"white": "Ann\u0000"}, "white contains control characters"),
        ({"note": "x" * 100_00}, "note is longer than 200 characters"),
        ('{"n": 1e999}', "n must be a finite number"),
        ('{"n": NaN}', "n must be a finite number"),
        ({"n": 2**70}, "n is too large a number"),
        ('{"white\\n": "Ann"}', "bad key 'white\\n' in the body"),
    ):
        text = body if isinstance(body, str) else json.dumps(body)
        status, error = await admin(served, path, text)
        assert (status, error["error"]) == (400, message), body
    # Nothing reached the table; the store still commits and serves every table.
    assert (await get_json(served, "/api/tables/1"))["settings"] == before
    status, _ = await admin(served, path, json.dumps({"white": "Ann"}))
    assert status == 200
    assert len((await get_json(served, "/api/tables"))["tables"]) == 2


async def _raw_request(served: Served, request: bytes) -> bytes:
    host, port = served.url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(request)
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(4096), 5)
    writer.close()
    await writer.wait_closed()
    return answer


async def test_undecodable_headers_get_a_client_error_not_a_traceback(
    served: Served, caplog: pytest.LogCaptureFixture
) -> None:
    for header in (b"Authorization: Bearer \xff\xfe\x80", b"X-Admin-Token: \xc3\x28abcdefgh"):
        for request in (
            b"GET /api/admin/options HTTP/1.1\r\nHost: 127.0.0.1\r\n" + header + b"\r\n\r\n",
            b"POST /api/admin/tables/1/players HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            + header
            + b"\r\nContent-Length: 2\r\n\r\n{}",
        ):
            answer = await _raw_request(served, request)
            assert answer.startswith(b"HTTP/1.1 401 "), answer
            assert b'{"error":"admin token missing' in answer
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len((await get_json(served, "/api/tables"))["tables"]) == 2


async def test_a_round_name_cannot_add_a_parameter_to_the_download(tmp_path: Path) -> None:
    store = Store(tmp_path / "round.db")
    hall = Hall(store, table_factory=EchoTable, tick_interval=0)
    evil = '1"; filename="evil.html'
    hall.add_table(TableConfig("1", "emu", None, {"round": evil}), EmulatorTransport(name="emu"))
    server = WebServer(hall, TOKEN, port=0)
    url = (await server.start()).rstrip("/")
    try:
        async with aiohttp.ClientSession() as session:
            quoted = evil.replace('"', "%22").replace(";", "%3B").replace(" ", "%20")
            async with session.get(f"{url}/rounds/{quoted}.pgn") as response:
                assert response.status == 200
                disposition = response.headers["Content-Disposition"]
            async with session.get(f"{url}/games.pgn") as response:
                assert response.headers["Content-Disposition"] == 'inline; filename="games.pgn"'
    finally:
        await server.close()
        await hall.close()
        store.close()
    assert disposition.count("filename=") == 1
    assert disposition.startswith('inline; filename="round-1___filename__evil.html.pgn"; ')
    assert disposition.endswith("filename*=UTF-8''round-1%22%3B%20filename%3D%22evil.html.pgn")
    assert disposition.count('"') == 2


async def test_a_foreign_host_name_is_refused(served: Served) -> None:
    port = served.url.rsplit(":", 1)[1]
    for host in ("evil.example", f"evil.example:{port}", f"rebind.127.0.0.1.nip.io:{port}",
                 "10.1.2.3", "127.0.0.1:x", "[::1"):  # fmt: skip
        for path in ("/api/tables", "/no/such/page", "/api/admin/options"):
            async with served.session.get(served.url + path, headers={"Host": host}) as response:
                assert response.status == 421, (host, path)
                assert "Host" in (await response.json())["error"]
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", "LOCALHOST", f"[::1]:{port}"):
        async with served.session.get(served.url + "/api/tables", headers={"Host": host}) as r:
            assert r.status == 200, host


async def test_a_request_no_route_matches_leaves_no_garbage_cycle(served: Served) -> None:
    """An unknown path (404) or a wrong method (405) leaves no reference cycle holding the
    request, its exception and a traceback: such garbage waits for the cycle collector,
    and while the hall paces it, for the next thaw."""
    gc.collect()
    gc.disable()
    try:
        for number in range(50):
            async with served.session.get(f"{served.url}/no/such/{number}") as response:
                assert response.status == 404
            async with served.session.put(f"{served.url}/api/tables") as response:
                assert response.status == 405
                assert response.headers["Allow"] == "GET,HEAD"
            async with served.session.get(f"{served.url}/api/tables/1/log?after=x") as response:
                assert response.status == 400
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        kept = [o for o in gc.garbage if isinstance(o, web.BaseRequest | BaseException)]
        kept += [o for o in gc.garbage if isinstance(o, types.FrameType | types.TracebackType)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert not [o for o in kept if not isinstance(o, web.HTTPNotFound | web.HTTPMethodNotAllowed)]
    assert all(o.__traceback__ is None for o in kept if isinstance(o, BaseException))
