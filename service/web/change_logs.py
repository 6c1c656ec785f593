"""The change logs of a table's games (what admin commands changed in each: corrections,
drop kinds, players, result), also once a new game replaced a game at its table:

* ``GET /api/games/TABLE-N/corrections``: one game's change log
  (``/api/tables/ID/corrections`` is the game at the table);
* ``GET /api/tables/ID/games``: the table's games, oldest first, each with its players,
  result and how many changes its log holds (``at_table``: the game at the table now), so
  a page lists them and reads a log when it is asked for."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from service.broadcast.lichess_pgn import tags_of
from service.hall import GameBook, GameEntry, HallError
from service.json_text import dumps
from service.web.source import HallSource

__all__ = ["game_changes_handler", "table_games_handler"]

_GAME = re.compile(r"^(?P<table>[A-Za-z0-9][A-Za-z0-9_.-]{0,31})-(?P<number>\d{1,6})$")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _changes(runner: GameBook, entry: GameEntry) -> list[dict[str, Any]]:
    if entry.changes is not None:
        return entry.changes
    if entry is runner.games[-1]:
        return runner.table.change_log()
    return []  # replaced before its change log was kept with it


def game_changes_handler(hall_of: Callable[[web.Request], HallSource]) -> Handler:
    """The handler of one game's change log, reading the tables ``hall_of`` gives."""

    async def handler(request: web.Request) -> web.StreamResponse:
        name = request.match_info["game"]
        match = _GAME.match(name)
        hall = hall_of(request)
        hall.settle()
        found = None if match is None else hall.game(match["table"], int(match["number"]))
        if match is None or found is None:
            raise HallError(f"no game {name[:40]!r} (games are TABLE-N, see /api/games)", 404)
        runner, entry = found
        changes = _changes(runner, entry)
        body = {"game": name, "table": runner.id, "number": entry.number, "corrections": changes}
        return web.Response(text=dumps(body), content_type="application/json")

    return handler


def table_games_handler(hall_of: Callable[[web.Request], HallSource]) -> Handler:
    """The handler of a table's games (see the module docstring)."""

    async def handler(request: web.Request) -> web.StreamResponse:
        table_id = request.match_info["table"]
        hall = hall_of(request)
        if not hall.has_table(table_id):
            raise HallError(f"no table {table_id[:40]!r}", 404)
        hall.settle()
        runner = hall.shown(table_id)
        games = []
        for entry in runner.games:
            tags = tags_of(runner.game_pgn(entry))
            games.append(
                {
                    "game": f"{runner.id}-{entry.number}",
                    "number": entry.number,
                    "round": tags.get("Round", entry.round),
                    "white": tags.get("White", "?"),
                    "black": tags.get("Black", "?"),
                    "result": tags.get("Result", "*"),
                    "changes": len(_changes(runner, entry)),
                    "at_table": entry is runner.games[-1],
                }
            )
        body = {"table": runner.id, "games": games}
        return web.Response(text=dumps(body), content_type="application/json")

    return handler
