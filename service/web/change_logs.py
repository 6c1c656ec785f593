"""``GET /api/games/TABLE-N/corrections``: the change log of one game of a table (what
admin commands changed in it: corrections, drop kinds, players, result), also once a new
game replaced it at its table (``/api/tables/ID/corrections`` is the game at the table)."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable

from aiohttp import web

from service.hall import HallError
from service.json_text import dumps
from service.web.source import HallSource

__all__ = ["game_changes_handler"]

_GAME = re.compile(r"^(?P<table>[A-Za-z0-9][A-Za-z0-9_.-]{0,31})-(?P<number>\d{1,6})$")


def game_changes_handler(
    hall_of: Callable[[web.Request], HallSource],
) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    """The handler, reading the tables ``hall_of`` gives for a request."""

    async def handler(request: web.Request) -> web.StreamResponse:
        name = request.match_info["game"]
        match = _GAME.match(name)
        hall = hall_of(request)
        hall.settle()
        found = None if match is None else hall.game(match["table"], int(match["number"]))
        if match is None or found is None:
            raise HallError(f"no game {name[:40]!r} (games are TABLE-N, see /api/games)", 404)
        runner, entry = found
        if entry.changes is not None:
            changes = entry.changes
        elif entry is runner.games[-1]:
            changes = runner.table.change_log()
        else:  # replaced before its change log was kept with it
            changes = []
        body = {"game": name, "table": runner.id, "number": entry.number, "corrections": changes}
        return web.Response(text=dumps(body), content_type="application/json")

    return handler
