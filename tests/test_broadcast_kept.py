"""The lichess rounds changed on the admin page survive a restart: kept beside the database
(``DB.broadcast.json``: lichess round id, on/off, delay; never the token) and applied over
the config's ``[broadcast]`` at start; deleting the file gives the config back; a malformed
file is a one-line warning and the config alone, never a failed start."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from broadcast_stand_in import LichessStandIn, ScriptTable
from test_broadcast_push import LICHESS_TOKEN, TOKEN, until

from dgt.transports.emulator import EmulatorTransport
from service.broadcast.kept_rounds import kept_path
from service.broadcast.push import LichessClient, Pusher
from service.config import BroadcastConfig, BroadcastRound, TableConfig
from service.hall import Hall
from service.store import Store
from service.web import WebServer

pytestmark = pytest.mark.timeout(60)

INTERVAL = 0.15
CONFIG_ID = "AbCd1234"


@asynccontextmanager
async def service(
    tmp_path: Path, lichess: LichessStandIn, first: bool = False
) -> AsyncIterator[tuple[Pusher, str]]:
    """The hall of ``tmp_path/push.db`` (4 tables of round 1) with its pusher (the config
    pushes round 1 to CONFIG_ID) and web server, as a start builds them."""
    store = Store(tmp_path / "push.db")
    hall = Hall(store, table_factory=ScriptTable, tick_interval=0)
    for n in range(1, 5):
        config = TableConfig(str(n), f"emu-{n}", None, {"round": "1"}, board=n)
        hall.add_table(config, EmulatorTransport(name=f"emu-{n}"))
        if first:
            await hall.admin(str(n), "players", {"white": f"White {n}", "black": f"Black {n}"})
    config = BroadcastConfig(
        (BroadcastRound("1", CONFIG_ID, 0.0),), lichess.url, None, "T", INTERVAL
    )
    pusher = Pusher(hall, config, LichessClient(lichess.url, LICHESS_TOKEN), backoff=(0.05, 0.2))
    pusher.start()
    server = WebServer(hall, TOKEN, port=0)
    url = (await server.start()).rstrip("/")
    try:
        yield pusher, url
    finally:
        await server.close()
        await pusher.close()
        await hall.close()
        store.close()


async def post(url: str, body: dict[str, Any]) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with (
        aiohttp.ClientSession() as session,
        session.post(url + "/api/admin/broadcast", json=body, headers=headers) as response,
    ):
        assert response.status == 200, await response.text()
        answer: dict[str, Any] = await response.json()
        return answer


def rounds(pusher: Pusher) -> dict[str, tuple[str, str, float]]:
    return {
        r["round"]: (r["lichess_id"], r["state"], r["delay"]) for r in pusher.status()["rounds"]
    }


@pytest.fixture
async def lichess() -> AsyncIterator[LichessStandIn]:
    stand_in = LichessStandIn(token=LICHESS_TOKEN)
    await stand_in.start()
    yield stand_in
    await stand_in.close()


@pytest.mark.slow
async def test_admin_changes_are_applied_over_the_config_after_a_restart(
    tmp_path: Path, lichess: LichessStandIn, caplog: pytest.LogCaptureFixture
) -> None:
    async with service(tmp_path, lichess, first=True) as (pusher, url):
        await until(lambda: len(lichess.pushes) == 1)
        await post(url, {"round": "1", "lichess_id": "NewRnd99", "delay": 0.5})
        await post(url, {"round": "2", "lichess_id": "Round222", "enabled": False})
        await post(url, {"round": "2", "delay": 5})
        await until(lambda: len(lichess.pushes) == 2)
        before = rounds(pusher)
    assert before == {"1": ("NewRnd99", "ok", 0.5), "2": ("Round222", "off", 5.0)}
    kept = kept_path(tmp_path / "push.db")
    assert kept == tmp_path / "push.db.broadcast.json"
    text = kept.read_text("utf-8")
    assert LICHESS_TOKEN not in text
    assert json.loads(text) == {
        "rounds": [
            {"round": "1", "lichess_id": "NewRnd99", "enabled": True, "delay": 0.5},
            {"round": "2", "lichess_id": "Round222", "enabled": False, "delay": 5.0},
        ]
    }
    pushed = len(lichess.pushes)
    with caplog.at_level(logging.INFO, logger="service.broadcast.push"):
        async with service(tmp_path, lichess) as (pusher, url):
            assert rounds(pusher) == {
                "1": ("NewRnd99", "waiting", 0.5),
                "2": ("Round222", "off", 5.0),
            }
            # Switched on again after the restart: its settings are kept again.
            await post(url, {"round": "2", "enabled": True})
    said = [r.getMessage() for r in caplog.records if "push.db.broadcast.json" in r.getMessage()]
    assert len(said) == 2
    assert "the admin page's settings over the config's (lichess round AbCd1234" in said[0]
    assert "added on the admin page" in said[1]
    assert all(LICHESS_TOKEN not in r.getMessage() for r in caplog.records)
    assert json.loads(kept.read_text("utf-8"))["rounds"][1]["enabled"] is True
    assert len(lichess.pushes) >= pushed
    assert all(p.round_id in {"NewRnd99", "Round222"} for p in lichess.pushes[pushed:])
    # Deleting the file gives the config back.
    kept.unlink()
    async with service(tmp_path, lichess) as (pusher, _url):
        assert rounds(pusher) == {"1": (CONFIG_ID, "waiting", 0.0)}


async def test_a_round_pushed_elsewhere_after_a_restart_goes_on_there(
    tmp_path: Path, lichess: LichessStandIn
) -> None:
    async with service(tmp_path, lichess, first=True) as (_pusher, url):
        await until(lambda: len(lichess.pushes) == 1)
        await post(url, {"round": "1", "lichess_id": "NewRnd99"})
        await until(lambda: len(lichess.pushes) == 2)
    async with service(tmp_path, lichess) as (_pusher, _url):
        await until(lambda: len(lichess.pushes) == 3)
    assert [p.round_id for p in lichess.pushes] == [CONFIG_ID, "NewRnd99", "NewRnd99"]
    assert [g["tags"]["GameId"] for g in lichess.pushes[2].games] == ["1-1", "2-1", "3-1", "4-1"]


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (b"{", "not JSON text"),
        (b'{"rounds": {}}', 'not an object {"rounds": [...]}'),
        (b'{"rounds": [], "token": "x"}', 'not an object {"rounds": [...]}'),
        (b'{"rounds": [{"round": "1", "lichess_id": "short", "enabled": true, "delay": 0}]}',
         "rounds[0]: lichess_id must be"),
        (b'{"rounds": [{"round": "1", "enabled": true}]}',
         "rounds[0]: lichess_id, enabled and delay are needed"),
    ],
)  # fmt: skip
async def test_a_malformed_file_is_a_warning_and_the_config_alone(
    tmp_path: Path,
    lichess: LichessStandIn,
    caplog: pytest.LogCaptureFixture,
    text: bytes,
    said: str,
) -> None:
    (tmp_path / "push.db.broadcast.json").write_bytes(text)
    with caplog.at_level(logging.WARNING):
        async with service(tmp_path, lichess) as (pusher, _url):
            assert rounds(pusher) == {"1": (CONFIG_ID, "waiting", 0.0)}
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert said in warnings[0]
    assert "push.db.broadcast.json" in warnings[0]
    assert "\n" not in warnings[0]


@pytest.mark.slow
async def test_run_applies_the_kept_rounds_over_its_config(
    tmp_path: Path, lichess: LichessStandIn
) -> None:
    """``dgt-service run`` end to end: the round the config pushes to AbCd1234 goes where
    the admin page last sent it, and the start says so."""
    config = tmp_path / "hall.toml"
    config.write_text(
        f'[defaults]\nround = "4"\n\n[[table]]\nport = "emulator"\nwhite = "Ann Able"\n'
        f'black = "Bob Baker"\n\n[broadcast]\nurl = "{lichess.url}"\n'
        f'token_env = "LICHESS_TEST_TOKEN"\ninterval = 2\n\n'
        f'[[broadcast.round]]\nround = "4"\nid = "{CONFIG_ID}"\n'
    )
    (tmp_path / "hall.db.broadcast.json").write_text(
        '{"rounds": [{"round": "4", "lichess_id": "NewRnd99", "enabled": true, "delay": 0},'
        ' {"round": "5", "lichess_id": "Round555", "enabled": false, "delay": 0}]}'
    )
    env = {**os.environ, "LICHESS_TEST_TOKEN": LICHESS_TOKEN, "PYTHONPATH": os.getcwd()}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "service.cli", "run", "--config", str(config),
        "--seconds", "4", "--port", "0", "--db", str(tmp_path / "hall.db"),
        "--admin-token", "cli-admin-token",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), 60)
    text = out.decode() + err.decode()
    assert process.returncode == 0, text
    assert LICHESS_TOKEN not in text
    assert "round 4 -> NewRnd99, 5 -> Round555 (off)" in text
    assert lichess.pushes, text
    assert {p.round_id for p in lichess.pushes} == {"NewRnd99"}
