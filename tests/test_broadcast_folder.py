"""The LiveChess folder layout (``--pgn-dir``), read back as the lichess Broadcaster app
reads it: the game files of a round concatenated in the order of their numbers."""

from __future__ import annotations

import asyncio
import io
import json
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import chess.pgn
import pytest
from broadcast_stand_in import ScriptTable, check_game

from dgt.transports.emulator import EmulatorTransport
from service.atomic_file import write_atomically
from service.broadcast.folder import FolderWriter, round_dir
from service.config import TableConfig
from service.hall import Hall
from service.store import Store


async def until(check: Callable[[], bool], within: float = 5.0) -> None:
    deadline = time.monotonic() + within
    while not check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


def text(path: Path) -> str:
    return path.read_text() if path.is_file() else ""


def broadcaster_read(folder: Path) -> str:
    """What the Broadcaster app pushes for a round: its game files by number."""
    files = sorted(folder.glob("game-*.pgn"), key=lambda p: int(p.stem.split("-")[1]))
    return "".join(p.read_text() for p in files)


def games_of(text: str) -> list[chess.pgn.Game]:
    stream = io.StringIO(text)
    out = []
    while (game := chess.pgn.read_game(stream)) is not None:
        out.append(game)
    return out


@pytest.fixture
async def hall(tmp_path: Path) -> AsyncIterator[Hall]:
    store = Store(tmp_path / "folder.db")
    hall = Hall(store, table_factory=ScriptTable, tick_interval=0)
    for table_id, board, variant in (
        ("a", 3, "standard"),
        ("b", 1, "standard"),
        ("c", 2, "realtime"),
    ):
        config = TableConfig(
            table_id, f"emu-{table_id}", None, {"round": "1", "variant": variant}, board=board
        )
        hall.add_table(config, EmulatorTransport(name=f"emu-{table_id}"))
        await hall.admin(table_id, "players", {"white": f"W {table_id}", "black": f"B {table_id}"})
    yield hall
    await hall.close()
    store.close()


async def test_the_folder_reads_back_as_the_broadcaster_reads_it(
    hall: Hall, tmp_path: Path
) -> None:
    root = tmp_path / "pgn"
    writer = FolderWriter(hall, root, spacing=0.02)
    writer.start()
    try:
        for table, san in (("a", "e4"), ("b", "d4"), ("a", "e5")):
            await hall.admin(table, "move", {"san": san})
        folder = root / "round-1"
        await until(
            lambda: (
                (folder / "game-3.pgn").is_file() and "e5" in (folder / "game-3.pgn").read_text()
            )
        )
        await until(lambda: "d4" in text(folder / "games.pgn"))
        await until(lambda: bool(text(root / "index.json")))  # written last
        pushed = broadcaster_read(folder)
        assert pushed == (folder / "games.pgn").read_text()
        games = games_of(pushed)
        assert [(g.headers["Board"], g.headers["GameId"]) for g in games] == [
            ("1", "b-1"),
            ("3", "a-1"),
        ]
        assert [check_game(g) for g in games] == [None, None]
        assert [len(list(g.mainline_moves())) for g in games] == [1, 2]
        assert not (folder / "game-2.pgn").exists()  # realtime: lichess cannot read it
        index = json.loads((root / "index.json").read_text())
        assert index["live"] is True
        listed = index["rounds"][0]
        assert (listed["round"], listed["folder"]) == ("1", "round-1")
        assert [
            (g["board"], g["game"], g["white"]["name"], g["live"], g["flags"])
            for g in listed["games"]
        ] == [
            (1, "b-1", "W b", True, []),
            (2, "c-1", "W c", True, ["variant"]),
            (3, "a-1", "W a", True, []),
        ]
        await hall.admin("b", "end", {"result": "1-0"})
        await until(lambda: '"1-0"' in text(folder / "game-1.pgn"))
        await hall.admin("b", "next", {})  # board 1's new game replaces its file
        await hall.admin("b", "move", {"san": "c4"})
        await until(lambda: "c4" in text(folder / "game-1.pgn"))
        assert games_of(text(folder / "game-1.pgn"))[0].headers["GameId"] == "b-2"
    finally:
        await writer.close()
    assert json.loads((root / "index.json").read_text())["live"] is False
    assert not list(root.rglob("*.tmp"))


def test_round_dirs_and_atomic_writes(tmp_path: Path) -> None:
    assert round_dir("1") == "round-1"
    assert round_dir("../x y") == "round-_x_y"
    path = tmp_path / "d" / "game-1.pgn"
    write_atomically(path, b"one")
    write_atomically(path, b"two")
    assert path.read_bytes() == b"two"
    assert [p.name for p in path.parent.iterdir()] == ["game-1.pgn"]


def test_pgn_dir_option_is_checked(tmp_path: Path) -> None:
    from service.commands.run import check_pgn_dir
    from service.errors import UsageError

    assert check_pgn_dir(None) is None
    made = check_pgn_dir(str(tmp_path / "a" / "b"))
    assert made == tmp_path / "a" / "b"
    assert made.is_dir()
    (tmp_path / "file").write_text("x")
    with pytest.raises(UsageError, match="exists and is not a directory"):
        check_pgn_dir(str(tmp_path / "file"))
