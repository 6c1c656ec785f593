"""``dgt-service run`` with a ``[broadcast]`` section and ``--pgn-dir``, end to end in a
subprocess: the round reaches a stand-in of lichess, the folder is written, and the token
is never printed."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest
from broadcast_stand_in import LichessStandIn

pytestmark = pytest.mark.slow

LICHESS_TOKEN = "lip_cli_secret_0123"


async def test_run_pushes_to_lichess_and_writes_the_folder(tmp_path: Path) -> None:
    lichess = LichessStandIn(token=LICHESS_TOKEN)
    await lichess.start()
    config = tmp_path / "hall.toml"
    config.write_text(
        f"""
[defaults]
round = "4"

[[table]]
port = "emulator"
board = 9
white = "Ann Able"
black = "Bob Baker"

[broadcast]
url = "{lichess.url}"
token_env = "LICHESS_TEST_TOKEN"
interval = 2

[[broadcast.round]]
round = "4"
id = "AbCd1234"
"""
    )
    env = {**os.environ, "LICHESS_TEST_TOKEN": LICHESS_TOKEN, "PYTHONPATH": os.getcwd()}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "service.cli", "run", "--config", str(config),
        "--seconds", "4", "--port", "0", "--db", str(tmp_path / "hall.db"),
        "--admin-token", "cli-admin-token", "--pgn-dir", str(tmp_path / "pgn"),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
    )  # fmt: skip
    try:
        out, err = await asyncio.wait_for(process.communicate(), 60)
    finally:
        await lichess.close()
    text = out.decode() + err.decode()
    assert process.returncode == 0, text
    assert LICHESS_TOKEN not in text
    assert "pushing to http://127.0.0.1:" in text
    assert lichess.pushes, text
    game = lichess.pushes[0].games[0]
    assert lichess.pushes[0].round_id == "AbCd1234"
    assert (game["tags"]["GameId"], game["tags"]["Board"], game["error"]) == ("1-1", "9", None)
    index = json.loads((tmp_path / "pgn" / "index.json").read_text())
    assert index["live"] is False
    assert index["rounds"][0]["games"][0]["board"] == 9
    assert (tmp_path / "pgn" / "round-4" / "game-9.pgn").is_file()


async def test_run_without_the_token_is_one_line(tmp_path: Path) -> None:
    config = tmp_path / "hall.toml"
    config.write_text(
        '[[table]]\nport = "emulator"\n\n[broadcast]\ntoken_env = "NO_SUCH_TOKEN_VAR"\n\n'
        '[[broadcast.round]]\nround = "1"\nid = "AbCd1234"\n'
    )
    env = {k: v for k, v in os.environ.items() if k != "NO_SUCH_TOKEN_VAR"}
    env["PYTHONPATH"] = os.getcwd()
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "service.cli", "run", "--config", str(config), "--seconds", "1",
        "--port", "0", "--db", str(tmp_path / "hall.db"), "--admin-token", "cli-admin-token",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
    )  # fmt: skip
    _, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode != 0
    lines = err.decode().strip().splitlines()
    assert len(lines) == 1, lines
    assert "no lichess token in $NO_SUCH_TOKEN_VAR" in lines[0]
