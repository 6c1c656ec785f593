"""service.web.limits and the stream caps: the open-files limit raised at start, quiet
connections closed to make room at the cap (never a live stream), a one-line 503 where
nothing can be closed, slow header lines timed out, and a cap on one address's streams."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import resource
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from hall_stand_in import EchoTable

import service.web.app
import service.web.stream
from dgt.transports.emulator import EmulatorTransport
from service.config import TableConfig
from service.hall import Hall
from service.store import Store
from service.web import WebServer
from service.web.limits import HEADROOM, MAX_CONNECTIONS, connection_cap, raise_open_files_limit

TOKEN = "limits-token-0123456789"


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[WebServer]:
    store = Store(tmp_path / "limits.db")
    hall = Hall(store, table_factory=EchoTable, tick_interval=0)
    hall.add_table(TableConfig("1", "emu", None, {}), EmulatorTransport(name="emu"))
    web = WebServer(hall, TOKEN, port=0)
    await web.start()
    await hall.start()
    yield web
    while _WRITERS:
        _WRITERS.pop().close()
    await web.close()
    await hall.close()
    store.close()


_WRITERS: list[asyncio.StreamWriter] = []
"""Kept open until the test ends (a writer collected closes its connection)."""


async def _connect(web: WebServer, request: bytes = b"") -> asyncio.StreamReader:
    reader, writer = await asyncio.open_connection("127.0.0.1", web.port)
    _WRITERS.append(writer)
    if request:
        writer.write(request)
        await writer.drain()
    return reader


def test_the_open_files_soft_limit_is_raised_to_the_hard_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    low = min(soft, 256)
    resource.setrlimit(resource.RLIMIT_NOFILE, (low, hard))
    try:
        limit = raise_open_files_limit()
        assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] == hard
        assert limit == (None if hard == resource.RLIM_INFINITY else hard)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_the_connection_cap_leaves_headroom() -> None:
    assert connection_cap(1024, 10) == 1024 - HEADROOM - 40
    assert connection_cap(1_000_000, 10) == MAX_CONNECTIONS
    assert connection_cap(100, 10) == 16
    assert connection_cap(None, 10) == MAX_CONNECTIONS


async def test_the_limit_is_logged_at_start(
    server: WebServer, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    caplog.set_level(logging.INFO, "service.web.app")
    store = Store(tmp_path / "second.db")
    second = WebServer(Hall(store, table_factory=EchoTable), TOKEN, port=0)
    await second.start()
    await second.close()
    store.close()
    assert any("open files: limit" in r.getMessage() for r in caplog.records)


@pytest.mark.slow
async def test_quiet_connections_make_room_at_the_cap(server: WebServer) -> None:
    server.guard.cap = 20
    url = f"http://127.0.0.1:{server.port}"
    idle = [await _connect(server) for _ in range(20)]
    half = [await _connect(server, b"GET /api/tables HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: ")]
    await asyncio.sleep(0.1)
    async with aiohttp.ClientSession() as session:
        started = time.monotonic()
        async with session.get(url + "/api/tables") as response:
            assert response.status == 200
        assert time.monotonic() - started < 2.0
    # The quietest were closed (they read the end of their stream), the cap holds.
    closed = 0
    for reader in idle + half:
        with contextlib.suppress(TimeoutError):
            closed += await asyncio.wait_for(reader.read(100), 0.5) == b""
    assert closed >= 1
    assert len(server.guard.live) <= 20
    assert server.guard.evicted >= 1


async def test_live_streams_are_never_closed_to_make_room(server: WebServer) -> None:
    server.guard.cap = 4
    url = f"http://127.0.0.1:{server.port}"
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        streams = [await session.get(url + "/api/stream") for _ in range(4)]
        for response in streams:
            assert response.status == 200
            assert (await response.content.readline()).startswith(b"retry:")
        # Every connection is a stream: a newcomer gets one line and is closed.
        reader = await _connect(server, b"GET /api/tables HTTP/1.1\r\nHost: localhost\r\n\r\n")
        answer = await asyncio.wait_for(reader.read(1000), 5)
        assert answer.startswith(b"HTTP/1.1 503 Service Unavailable\r\n")
        assert answer.endswith(b'{"error":"too many connections; try again later"}\n')
        assert server.guard.refused == 1
        for response in streams:
            assert not response.closed
            response.close()
    assert server.guard.evicted == 0


@pytest.mark.slow
async def test_slow_header_lines_are_timed_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(service.web.app, "HEADER_TIMEOUT", 0.5)
    store = Store(tmp_path / "slow.db")
    web = WebServer(Hall(store, table_factory=EchoTable), TOKEN, port=0)
    await web.start()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", web.port)
        writer.write(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        started = time.monotonic()
        closed_after = None
        for _ in range(40):  # one header byte every 0.1 s
            try:
                writer.write(b"X")
                await writer.drain()
                if await asyncio.wait_for(reader.read(100), 0.1) == b"":
                    closed_after = time.monotonic() - started
                    break
            except TimeoutError:
                continue
            except ConnectionError:
                closed_after = time.monotonic() - started
                break
        writer.close()
        assert closed_after is not None
        assert closed_after < 3.0
    finally:
        await web.close()
        store.close()


async def test_one_address_cannot_take_every_stream(
    server: WebServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(service.web.stream, "MAX_CLIENTS_PER_ADDRESS", 3)
    url = f"http://127.0.0.1:{server.port}/api/stream"
    async with (
        aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as one,
        aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=0, local_addr=("127.0.0.2", 0))
        ) as other,
    ):
        mine = [await one.get(url) for _ in range(3)]
        assert [r.status for r in mine] == [200, 200, 200]
        async with one.get(url) as refused:
            assert refused.status == 503
            error = (await refused.json())["error"]
            assert error.startswith("too many open streams from one address (3)")
        async with other.get(url, headers={"Host": "127.0.0.1"}) as response:
            assert response.status == 200  # another address still gets its stream
        mine.pop().close()
        await asyncio.sleep(0.2)
        async with one.get(url) as again:
            assert again.status == 200
        for response in mine:
            response.close()
