"""Time controls that cannot be played are refused where a game is set up (the config, the
command line, the admin ``start``), with one line saying why; every time control that was
valid stays valid, and a stored one still reads (a stored game replays as it was played)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import aiohttp
import pytest

from dgt.emulator.board import VirtualBoard
from dgt.transports.emulator import EmulatorTransport
from service.config import ConfigError, TableConfig, check_setting, parse_config
from service.hall import Hall
from service.store import Store
from service.time_control import TimeControl, TimeControlError, UnplayableTimeControlError
from service.web import WebServer

UNPLAYABLE = [
    "0+0",
    "0",
    "0.0+0.0",
    "00+00",
    "0+5",  # the increment comes after a move: the first one is never made
    "40/0",
    "40/0+0",
    "40/0+30",
    "40/0:0",
    "40/5400+30:0",  # a later period that gives nothing
    "40/5400+30:0+0",
    "86401+0",
    "300+3601",
    "501/5400+30:1800",
    "9" * 99,
]

PLAYABLE = [
    "-",
    "",
    "?",
    "1+0",
    "2+0",
    "3+0",
    "60+0",
    "60+1",
    "180+0",
    "180+2",
    "300+0",
    "300+2",
    "600+0",
    "600+5",
    "900+10",
    "5400+30",
    "40/5400+30:1800+30",
    "40/5400+30:0+30",  # a later period of increment only
    "40/7200:20/3600:1800",
    "0.5+0",
    "86400+3600",
    "500/86400",
]


@pytest.mark.parametrize("text", UNPLAYABLE)
def test_an_unplayable_time_control_is_refused_in_one_line(text: str) -> None:
    with pytest.raises(UnplayableTimeControlError, match=r"cannot be played: ") as info:
        TimeControl.parse_playable(text)
    assert "\n" not in str(info.value)
    assert isinstance(info.value, TimeControlError)  # a ValueError, as every parse error


@pytest.mark.parametrize("text", PLAYABLE)
def test_a_playable_time_control_stays_valid(text: str) -> None:
    assert TimeControl.parse_playable(text) == TimeControl.parse(text)
    if text:  # the config and the admin API take no empty time control (write -)
        assert check_setting("time_control", text) == text


@pytest.mark.parametrize("text", ["0+0", "40/0", "0+5"])
def test_a_stored_time_control_still_reads(text: str) -> None:
    """A table or a start stored before the check replays: plain ``parse`` reads it."""
    assert TimeControl.parse(text).timed


@pytest.mark.parametrize("text", ["0+0", "40/0", "0+5", "00+00", "40/5400+30:0"])
def test_the_config_refuses_it_naming_file_line_and_key(text: str) -> None:
    config = f"[defaults]\nround = '1'\n\n[[table]]\nport = 'x'\ntime_control = '{text}'\n"
    with pytest.raises(ConfigError) as info:
        parse_config(config, "hall.toml")
    message = str(info.value)
    assert message.startswith("hall.toml:6: [[table]] table 1: time_control ")
    assert "cannot be played" in message
    assert "\n" not in message
    with pytest.raises(ConfigError, match=r"^hall\.toml:2: \[defaults\] time_control '"):
        parse_config(f"[defaults]\ntime_control = '{text}'\n", "hall.toml")


def test_the_command_line_refuses_it(capsys: pytest.CaptureFixture[str]) -> None:
    from service.cli import main

    assert main(["run", "emulator", "--time-control", "0+0", "--db", "/nonexistent/x.db"]) == 2
    assert "--time-control: time_control '0+0' cannot be played" in capsys.readouterr().err


async def test_the_admin_start_refuses_it(tmp_path: Path) -> None:
    store = Store(tmp_path / "t.db")
    hall = Hall(store, tick_interval=0)
    transport = EmulatorTransport(VirtualBoard(now=time.monotonic(), clock=None), name="emu")
    hall.add_table(TableConfig("1", "emu", None, {"time_control": "600+5"}), transport)
    server = WebServer(hall, "start-test-token-0123", port=0)
    url = (await server.start()).rstrip("/")
    await hall.start()
    auth = {"Authorization": "Bearer start-test-token-0123"}
    try:
        assert await hall.runners["1"].wait_ready(5)
        async with aiohttp.ClientSession() as session:
            for text in ("0+0", "40/0", "0+5"):
                body = json.dumps({"time_control": text})
                path = f"{url}/api/admin/tables/1/start"
                async with session.post(path, data=body, headers=auth) as response:
                    answer = await response.json()
                    assert response.status == 400, answer
                    assert "cannot be played" in answer["error"]
                    assert "\n" not in answer["error"]
            async with session.get(f"{url}/api/tables/1") as response:
                state = await response.json()
            assert state["settings"]["time_control"] == "600+5"
            body = json.dumps({"time_control": "180+2"})
            path = f"{url}/api/admin/tables/1/start"
            async with session.post(path, data=body, headers=auth) as response:
                assert response.status == 200, await response.text()
    finally:
        await server.close()
        await hall.close()
        store.close()
