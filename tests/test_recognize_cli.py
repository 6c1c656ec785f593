"""``dgt-service recognize``: a session recorded from the emulated board through the real
driver comes back as the game that was played, from the log and from the raw bytes."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import chess.pgn
import pytest

from service.commands.monitor import demo_games


def dgt_service(*args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "service.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A log of the demo: the emulator replays the first demo game on a pty, the driver
    reads it through pyserial, the monitor records it."""
    path = tmp_path_factory.mktemp("session") / "demo.jsonl"
    result = dgt_service(
        "monitor", "--demo", "--plain", "--seconds", "12", "--speed", "8", "--seed", "5",
        "--record", str(path),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return path


def first_demo_game() -> list[str]:
    with demo_games().open() as stream:
        game = chess.pgn.read_game(stream)
    assert game is not None
    board = game.board()
    sans = []
    for move in game.mainline_moves():
        sans.append(board.san(move))
        board.push(move)
    return sans


def pgn_moves(text: str) -> list[str]:
    game = chess.pgn.read_game(io.StringIO(text))
    assert game is not None
    board = game.board()
    sans = []
    for move in game.mainline_moves():
        sans.append(board.san(move))
        board.push(move)
    return sans


def test_log_gives_back_the_game_played(session: Path) -> None:
    result = dgt_service("recognize", str(session))
    assert result.returncode == 0, result.stderr
    played = pgn_moves(result.stdout)
    assert len(played) >= 10
    assert played == first_demo_game()[: len(played)]


def test_raw_bytes_give_the_same_game(session: Path, tmp_path: Path) -> None:
    raw = b"".join(
        bytes.fromhex(obj["data"])
        for obj in map(json.loads, session.read_text().splitlines())
        if obj["type"] == "rx"
    )
    path = tmp_path / "board.bin"
    path.write_bytes(raw)
    from_raw = dgt_service("recognize", "--raw", str(path))
    from_log = dgt_service("recognize", str(session))
    assert from_raw.returncode == 0, from_raw.stderr
    assert pgn_moves(from_raw.stdout) == pgn_moves(from_log.stdout)


def test_json_lines_carry_every_event_kind(session: Path) -> None:
    result = dgt_service("recognize", str(session), "--json")
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    kinds = {e["type"] for e in events}
    assert {"new_game", "lift", "place", "move"} <= kinds
    moves = [e for e in events if e["type"] == "move" and e["final"]]
    assert moves[0]["uci"] == "e2e4"
    assert moves[0]["san"] == "e4"


def test_log_of_bytes_only_is_decoded_like_the_driver(session: Path, tmp_path: Path) -> None:
    lines = session.read_text().splitlines()
    bytes_only = [line for line in lines if json.loads(line)["type"] != "event"]
    path = tmp_path / "bytes-only.jsonl"
    path.write_text("\n".join(bytes_only) + "\n")
    result = dgt_service("recognize", str(path))
    assert result.returncode == 0, result.stderr
    assert pgn_moves(result.stdout) == pgn_moves(dgt_service("recognize", str(session)).stdout)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["/nonexistent/log.jsonl"], "no such log"),
        (["--raw", "/nonexistent/raw.bin"], "cannot read"),
    ],
)
def test_bad_input_is_one_line(args: list[str], message: str) -> None:
    result = dgt_service("recognize", *args)
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert message in result.stderr


def test_garbage_is_not_a_game(tmp_path: Path) -> None:
    path = tmp_path / "noise.bin"
    path.write_bytes(bytes(range(256)) * 4)
    result = dgt_service("recognize", "--raw", str(path))
    assert result.returncode == 2
    assert "no board events" in result.stderr
