"""The rounds of the lichess pushes changed while the service runs
(``POST /api/admin/broadcast``, the admin page's broadcast panel), against the lichess
stand-in: a new lichess round id gets the whole round, a round switched off pushes nothing
until it is on again, a new delay holds the games back, a round can be added; bad settings
are one-line 400s, the token guards it, and the lichess token is never in an answer."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from test_broadcast_push import LICHESS_TOKEN, TOKEN, Setup, setup, until

from service.web import WebServer

__all__ = ["setup"]  # the fixture, shared with the pusher's tests


@pytest.fixture
async def web(setup: Setup) -> AsyncIterator[str]:
    server = WebServer(setup.hall, TOKEN, port=0)
    url = (await server.start()).rstrip("/")
    yield url
    await server.close()


async def post(url: str, body: Any, token: str | None = TOKEN) -> tuple[int, Any]:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    async with (
        aiohttp.ClientSession() as session,
        session.post(url + "/api/admin/broadcast", json=body, headers=headers) as response,
    ):
        text = await response.text()
        assert LICHESS_TOKEN not in text
        return response.status, await response.json()


async def test_without_pushes_or_token_it_says_why(setup: Setup, web: str) -> None:
    status, answer = await post(web, {"round": "1", "enabled": False})
    assert status == 409
    assert "[broadcast]" in answer["error"]
    setup.make()
    status, answer = await post(web, {"round": "1", "enabled": False}, token=None)
    assert status == 401
    status, answer = await post(web, {"round": "1", "enabled": False}, token="wrong-token!")
    assert status == 401


async def test_bad_settings_are_one_line_errors(setup: Setup, web: str) -> None:
    setup.make()
    for body, said in (
        ({"round": "1", "lichess_id": "short"}, "lichess_id must be"),
        ({"round": "1", "delay": -1}, "delay must be 0 to 3600"),
        ({"round": "1", "delay": True}, "delay must be"),
        ({"round": "1", "enabled": "yes"}, "enabled must be true or false"),
        ({"round": "1", "token": "x"}, "unknown key 'token'"),
        ({"enabled": True}, "round is missing"),
        ({"round": "9", "enabled": True}, "give its lichess round id"),
        (["round"], "must be a JSON object"),
    ):
        status, answer = await post(web, body)
        assert status == 400, body
        assert said in answer["error"], answer
        assert "\n" not in answer["error"]


async def test_a_new_lichess_round_id_gets_the_whole_round(setup: Setup, web: str) -> None:
    lichess = setup.lichess
    setup.make()
    await until(lambda: len(lichess.pushes) == 1)
    assert lichess.pushes[0].round_id == "AbCd1234"
    status, answer = await post(web, {"round": "1", "lichess_id": "NewRnd99"})
    assert status == 200, answer
    assert answer["rounds"][0]["lichess_id"] == "NewRnd99"
    await until(lambda: len(lichess.pushes) == 2)
    second = lichess.pushes[1]
    assert second.round_id == "NewRnd99"
    assert [g["tags"]["GameId"] for g in second.games] == ["1-1", "2-1", "3-1", "4-1"]


@pytest.mark.slow
async def test_a_round_switched_off_pushes_nothing_until_it_is_on(setup: Setup, web: str) -> None:
    lichess = setup.lichess
    pusher = setup.make()
    await until(lambda: len(lichess.pushes) == 1)
    status, answer = await post(web, {"round": "1", "enabled": False})
    assert status == 200
    assert answer["rounds"][0]["state"] == "off"
    await setup.move("1", "e4")
    await setup.move("2", "d4")
    await asyncio.sleep(0.5)  # several intervals: a switched-off round is never due
    assert len(lichess.pushes) == 1
    status, answer = await post(web, {"round": "1", "enabled": True})
    assert status == 200
    await until(lambda: len(lichess.pushes) == 2)
    moves = {g["tags"]["GameId"]: g["moves"] for g in lichess.pushes[1].games}
    assert moves == {"1-1": 1, "2-1": 1, "3-1": 0, "4-1": 0}
    assert pusher.status()["rounds"][0]["state"] == "ok"


@pytest.mark.slow
async def test_a_new_delay_holds_each_game_back(setup: Setup, web: str) -> None:
    lichess = setup.lichess
    setup.make()
    await until(lambda: len(lichess.pushes) == 1)
    status, answer = await post(web, {"round": "1", "delay": 0.6})
    assert status == 200
    assert answer["rounds"][0]["delay"] == 0.6
    moved = time.monotonic()
    await setup.move("3", "c4")
    await until(lambda: any(g["moves"] == 1 for g in lichess.pushes[-1].games))
    assert time.monotonic() - moved >= 0.6


async def test_a_round_can_be_added(setup: Setup, web: str) -> None:
    setup.make()
    status, answer = await post(
        web, {"round": "2", "lichess_id": "Round222", "delay": 5, "enabled": True}
    )
    assert status == 200, answer
    rounds = {r["round"]: r for r in answer["rounds"]}
    assert rounds["2"]["lichess_id"] == "Round222"
    assert rounds["2"]["delay"] == 5.0
    assert rounds["2"]["state"] == "waiting"
    assert rounds["2"]["games"] == []
