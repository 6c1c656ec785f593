"""The lichess pusher against a stand-in of lichess's push endpoint on 127.0.0.1
(:class:`broadcast_stand_in.LichessStandIn`): every game of a round arrives once per change,
in one stable order, with Board tags; a refused game is reported (``GET /api/broadcast``);
an unreachable or slow lichess loses no push and never slows the hall; the delay; the size
limit; the token is never logged."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest
from broadcast_stand_in import LichessStandIn, ScriptTable

from dgt.transports.emulator import EmulatorTransport
from service.broadcast.push import LichessClient, Pusher, read_token
from service.config import BroadcastConfig, BroadcastRound, ConfigError, TableConfig
from service.hall import Hall
from service.store import Store
from service.web import WebServer

TOKEN = "test-token-0123456789"
LICHESS_TOKEN = "lip_standin0123"
INTERVAL = 0.15


@dataclass
class Setup:
    hall: Hall
    lichess: LichessStandIn
    make: Callable[..., Pusher]

    async def move(self, table: str, san: str) -> None:
        await self.hall.admin(table, "move", {"san": san})


async def until(check: Callable[[], bool], within: float = 5.0) -> None:
    deadline = time.monotonic() + within
    while not check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


@pytest.fixture
async def setup(tmp_path: Path) -> AsyncIterator[Setup]:
    store = Store(tmp_path / "push.db")
    hall = Hall(store, table_factory=ScriptTable, tick_interval=0)
    for n in range(1, 5):
        config = TableConfig(str(n), f"emu-{n}", None, {"round": "1"}, board=10 + n)
        hall.add_table(config, EmulatorTransport(name=f"emu-{n}"))
        await hall.admin(str(n), "players", {"white": f"White {n}", "black": f"Black {n}"})
    lichess = LichessStandIn(token=LICHESS_TOKEN)
    await lichess.start()
    pushers: list[Pusher] = []

    def make(delay: float = 0.0, timeout: float = 5.0, **options: object) -> Pusher:
        config = BroadcastConfig(
            (BroadcastRound("1", "AbCd1234", delay),), lichess.url, None, "T", INTERVAL
        )
        client = LichessClient(lichess.url, LICHESS_TOKEN, timeout=timeout)
        pusher = Pusher(hall, config, client, backoff=(0.05, 0.2), **options)  # type: ignore[arg-type]
        pusher.start()
        pushers.append(pusher)
        return pusher

    yield Setup(hall, lichess, make)
    for pusher in pushers:
        await pusher.close()
    await lichess.close()
    await hall.close()
    store.close()


def ids(push: object) -> list[str]:
    return [g["tags"]["GameId"] for g in push.games]  # type: ignore[attr-defined]


@pytest.mark.slow
async def test_every_game_arrives_once_per_change_in_a_stable_order(setup: Setup) -> None:
    lichess = setup.lichess
    pusher = setup.make()
    await until(lambda: len(lichess.pushes) == 1)
    first = lichess.pushes[0]
    assert ids(first) == ["1-1", "2-1", "3-1", "4-1"]
    assert [g["tags"]["Board"] for g in first.games] == ["11", "12", "13", "14"]
    assert all(g["error"] is None for g in first.games)
    for count, (table, san) in enumerate([("2", "e4"), ("4", "d4"), ("2", "e5")], 2):
        await setup.move(table, san)
        await until(lambda count=count: len(lichess.pushes) == count)  # type: ignore[misc]
        await asyncio.sleep(3 * INTERVAL)
        assert len(lichess.pushes) == count  # once per change, nothing more
    await setup.hall.admin("4", "next", {})  # a new game: appended
    await until(lambda: len(lichess.pushes) == 5)
    pushes = lichess.pushes
    assert ids(pushes[-1]) == ["1-1", "2-1", "3-1", "4-1", "4-2"]
    assert all(ids(p)[:4] == ["1-1", "2-1", "3-1", "4-1"] for p in pushes)
    moves = [{g["tags"]["GameId"]: g["moves"] for g in p.games} for p in pushes]
    assert [m["2-1"] for m in moves] == [0, 1, 1, 2, 2]
    assert [m["4-1"] for m in moves] == [0, 0, 1, 1, 1]
    assert len(pusher.latencies) == 3  # a move's commit to its push leaving, each move
    assert all(0 <= t < 2 for t in pusher.latencies)


async def test_several_changes_within_the_interval_are_one_push(setup: Setup) -> None:
    lichess = setup.lichess
    setup.make()
    await until(lambda: len(lichess.pushes) == 1)
    for san in ("e4", "e5", "Nf3", "Nc6"):
        await setup.move("1", san)
    await until(lambda: any(g["moves"] == 4 for g in lichess.pushes[-1].games))
    assert len(lichess.pushes) <= 3


async def test_a_refused_game_is_reported_on_the_admin_api(setup: Setup) -> None:
    lichess = setup.lichess
    lichess.refused_games = {"3-1"}
    pusher = setup.make()
    await until(lambda: len(lichess.pushes) == 1)
    await until(lambda: bool(pusher.status()["rounds"][0]["games"]))
    server = WebServer(setup.hall, TOKEN, port=0)
    url = (await server.start()).rstrip("/")
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(url + "/api/broadcast") as response:
                assert response.status == 401
            headers = {"Authorization": f"Bearer {TOKEN}"}
            async with session.get(url + "/api/broadcast", headers=headers) as response:
                assert response.status == 200
                status = await response.json()
    finally:
        await server.close()
    round_status = status["rounds"][0]
    assert round_status["state"] == "ok"
    assert [g["game"] for g in round_status["refused"]] == ["3-1"]
    assert round_status["refused"][0]["error"] == "Refused by the stand-in"
    assert round_status["refused"][0]["board"] == 13
    assert [g["moves"] for g in round_status["games"] if g["game"] != "3-1"] == [0, 0, 0]
    assert LICHESS_TOKEN not in str(status)


async def test_unnamed_players_are_flagged_and_not_pushed(setup: Setup) -> None:
    await setup.hall.admin("2", "players", {"white": "?", "black": "B"})
    pusher = setup.make()
    await until(lambda: len(setup.lichess.pushes) == 1)
    assert ids(setup.lichess.pushes[0]) == ["1-1", "3-1", "4-1"]
    flagged = pusher.status()["rounds"][0]["flagged"]
    assert [(f["game"], f["board"], f["why"]) for f in flagged] == [("2-1", 12, ["unnamed"])]


async def test_games_past_the_most_a_round_shows_are_flagged(setup: Setup) -> None:
    pusher = setup.make(max_games=3)
    await until(lambda: len(setup.lichess.pushes) == 1)
    assert ids(setup.lichess.pushes[0]) == ["1-1", "2-1", "3-1"]
    flagged = pusher.status()["rounds"][0]["flagged"]
    assert [(f["game"], f["why"]) for f in flagged] == [("4-1", ["over-limit"])]


@pytest.mark.slow
async def test_an_unreachable_lichess_loses_nothing_and_never_slows_the_hall(
    setup: Setup, caplog: pytest.LogCaptureFixture
) -> None:
    lichess = setup.lichess
    lichess.down = True
    pusher = setup.make()
    slowest = 0.0
    for san in ("e4", "e5", "Nf3", "Nc6", "Bb5"):
        started = time.perf_counter()
        await setup.move("1", san)
        slowest = max(slowest, time.perf_counter() - started)
        await asyncio.sleep(0.1)
    await until(lambda: pusher.status()["rounds"][0]["state"] == "retrying")
    assert lichess.pushes == []
    assert slowest < 0.05
    lichess.down = False
    await until(lambda: bool(lichess.pushes))
    last = {g["tags"]["GameId"]: g["moves"] for g in lichess.pushes[-1].games}
    assert last["1-1"] == 5
    await until(lambda: pusher.status()["rounds"][0]["state"] == "ok")
    assert "unreachable" in caplog.text
    assert LICHESS_TOKEN not in caplog.text


@pytest.mark.slow
async def test_time_outs_are_retried_until_every_change_arrives(setup: Setup) -> None:
    lichess = setup.lichess
    lichess.timeout_share = 0.5
    lichess.hang = 1.0
    setup.make(timeout=0.3)
    for san in ("e4", "e5", "Nf3"):
        await setup.move("2", san)
        await asyncio.sleep(0.2)
    await until(
        lambda: any(
            g["tags"]["GameId"] == "2-1" and g["moves"] == 3
            for p in lichess.pushes
            for g in p.games
        ),
        within=20,
    )


@pytest.mark.slow
async def test_a_round_over_the_limit_is_cut_between_games(setup: Setup) -> None:
    lichess = setup.lichess
    pusher = setup.make(max_bytes=400)
    await until(lambda: len({g["tags"]["GameId"] for p in lichess.pushes for g in p.games}) == 4)
    assert all(p.size <= 400 for p in lichess.pushes)
    assert len(lichess.pushes) >= 2
    sent = [gid for p in lichess.pushes for gid in ids(p)]
    assert sent == sorted(sent)  # in the round's order, each once
    assert pusher.status()["rounds"][0]["state"] == "ok"
    await setup.move("3", "c4")  # only the body holding game 3 goes again
    await until(lambda: ids(lichess.pushes[-1]) and "3-1" in ids(lichess.pushes[-1]))
    await asyncio.sleep(3 * INTERVAL)
    assert "1-1" not in ids(lichess.pushes[-1])


@pytest.mark.slow
async def test_the_delay_pushes_each_game_as_it_stood(setup: Setup) -> None:
    lichess = setup.lichess
    setup.make(delay=0.6)
    await until(lambda: len(lichess.pushes) == 1, within=3)
    await setup.move("1", "e4")
    moved = time.monotonic()
    await until(lambda: any(g["moves"] == 1 for g in lichess.pushes[-1].games), within=3)
    assert time.monotonic() - moved >= 0.55


def test_the_token_comes_from_the_file_or_the_environment(tmp_path: Path) -> None:
    config = BroadcastConfig((), token_env="LICHESS_TOKEN")
    assert read_token(config, {"LICHESS_TOKEN": " lip_abc \n"}) == "lip_abc"
    with pytest.raises(ConfigError) as caught:
        read_token(config, {})
    assert "$LICHESS_TOKEN" in str(caught.value)
    file = tmp_path / "t"
    file.write_text("lip_xyz\n")
    assert read_token(BroadcastConfig((), token_file=file), {}) == "lip_xyz"
    assert "lip_xyz" not in repr(LichessClient("https://lichess.org", "lip_xyz"))


async def test_a_cancel_that_meets_a_change_still_stops_the_pusher(setup: Setup) -> None:
    """Python 3.11's ``wait_for`` returns the change and drops a cancel that meets it in one
    turn of the loop; the pusher must stop all the same (or its close waits for ever)."""
    pusher = setup.make(delay=60.0)
    await setup.move("1", "e4")  # a delayed change: the pusher waits 60 s with a timeout
    await asyncio.sleep(0.1)
    task = pusher._task
    assert task is not None
    assert not task.done()
    pusher._note("2", time.monotonic(), False)  # a change and the cancel in the same turn
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 2.0)
    assert task.cancelled()
