"""The LiveChess folder layout, written live (``--pgn-dir DIR``).

DGT LiveChess writes a tournament's games as files the lichess Broadcaster app and other
tools watch; this writes the same layout::

    DIR/index.json                 # rounds, pairings by board, players, results, live flags
    DIR/round-1/game-1.pgn         # the game at board 1 (its latest game of the round)
    DIR/round-1/game-2.pgn
    DIR/round-1/games.pgn          # the game files one after another, by board number

The Broadcaster app pushes the concatenation of the game files in the order of their
numbers, so a game file holds what lichess reads: the feed's lichess form (``GameId``,
``Board``; the part after an illegal move that stood as a game of its own).  Games lichess
cannot read (20-chess, realtime) get no game file; they are in ``index.json`` with their
flags, as are games whose player has no name.

Each file is written atomically (a temporary file in the same directory, fsync, rename),
only when its text changed, on a worker thread: the hall's loop only builds the texts
(:func:`layout`, pure) after a commit noted by :class:`FolderWriter`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import logging
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from dgt.tasks import cancel_and_wait
from service.atomic_file import write_atomically
from service.broadcast.hall_feeds import hall_feeds
from service.broadcast.lichess_pgn import FeedEntry, FeedGame, Problem, joined
from service.hall import Hall

logger = logging.getLogger(__name__)

WRITE_SPACING = 0.5
"""Seconds at least between two rounds of writes (changes meanwhile share the next)."""
PLAYER_TAGS = ("Elo", "Title", "FideId", "Team", "Federation")
"""The player details copied from a game's tags into ``index.json`` (White…/Black…)."""


def round_dir(name: str) -> str:
    """``round-N``: the round's name made safe for a file name."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", name.strip())[:40].strip(".") or "_"
    return f"round-{safe}"


def layout(
    games: Sequence[FeedGame], entries: Mapping[str, list[FeedEntry]], live: bool
) -> dict[str, str]:
    """Every file of the folder (path relative to it → text) for ``games`` in feed order;
    ``entries`` are each game's feed entries by game id.  A board's file holds its latest
    game of the round."""
    rounds: dict[str, dict[int, FeedGame]] = {}
    for game in games:
        rounds.setdefault(game.round, {})[game.board] = game
    files: dict[str, str] = {}
    index: list[dict[str, Any]] = []
    for name, boards in rounds.items():
        folder = round_dir(name)
        listed: list[dict[str, Any]] = []
        texts: list[str] = []
        for board in sorted(boards):
            game = boards[board]
            parts = entries[game.game_id]
            readable = [e for e in parts if Problem.VARIANT not in e.problems]
            tags = parts[0].tags if parts else {}
            path = f"{folder}/game-{board}.pgn"
            if readable:
                text = joined(e.text for e in readable)
                files[path] = text
                texts.append(text)
            flags = sorted({str(p) for e in parts for p in e.problems})
            listed.append(
                {
                    "board": board,
                    "game": game.game_id,
                    "white": _player(tags, "White"),
                    "black": _player(tags, "Black"),
                    "result": (parts[-1].tags if parts else {}).get("Result", "*"),
                    "live": not game.finished,
                    "file": path if readable else None,
                    "flags": flags,
                }
            )
        files[f"{folder}/games.pgn"] = "".join(texts)
        index.append({"round": name, "folder": folder, "games": listed})
    files["index.json"] = json.dumps({"live": live, "rounds": index}, indent=1) + "\n"
    return files


def _player(tags: Mapping[str, str], side: str) -> dict[str, str]:
    player = {"name": tags.get(side, "")}
    for detail in PLAYER_TAGS:
        value = tags.get(f"{side}{detail}")
        if value:
            player[detail[0].lower() + detail[1:]] = value
    return player


def _write_all(root: Path, files: Mapping[str, str]) -> None:
    # index.json last: a reader that follows it finds every file it names written
    for name in sorted(files, key=lambda n: n == "index.json"):
        write_atomically(root / name, files[name].encode())


class FolderWriter:
    """Keeps ``root`` in the LiveChess layout while the hall runs (see the module
    docstring)."""

    def __init__(self, hall: Hall, root: Path, *, spacing: float = WRITE_SPACING) -> None:
        self.hall = hall
        self.root = root
        self.spacing = spacing
        self.feeds = hall_feeds(hall)
        self._written: dict[str, str] = {}
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._worker = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="dgt-pgn-dir"
        )
        self._failing: str | None = None
        self.writes = 0

    def start(self) -> None:
        self.feeds.listen(self._note)
        self._task = asyncio.get_running_loop().create_task(self._run(), name="pgn folder")
        self._wake.set()

    async def close(self) -> None:
        """Stop; the folder is written once more with ``live`` false."""
        self.feeds.unlisten(self._note)
        await cancel_and_wait(self._task)
        self._task = None
        with contextlib.suppress(OSError):
            await self.write(live=False)
        self._worker.shutdown(wait=True)

    def _note(self, table_id: str, when: float, moved: bool) -> None:
        self._wake.set()

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            try:
                await self.write(live=True)
            except OSError as exc:
                message = f"{exc.strerror or exc}"
                if message != self._failing:
                    logger.warning(
                        "cannot write the PGN folder %s: %s (trying again on the next change)",
                        self.root,
                        message,
                    )
                self._failing = message
                self._wake.set()
            else:
                if self._failing is not None:
                    logger.info("the PGN folder %s is written again", self.root)
                self._failing = None
            await asyncio.sleep(self.spacing)

    async def write(self, *, live: bool) -> int:
        """Write the files whose text changed; returns how many."""
        self.hall.settle()
        games = self.feeds.games()
        entries = {g.game_id: self.feeds.entries_of(g) for g in games}
        files = layout(games, entries, live)
        changed = {name: text for name, text in files.items() if self._written.get(name) != text}
        if not changed:
            return 0
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._worker, _write_all, self.root, changed)
        self._written.update(changed)
        self.writes += len(changed)
        return len(changed)
