"""Stand-ins for the broadcast tests (no tests here).

* :class:`ScriptTable`: a table driven by admin commands (``move`` with a SAN, ``end`` with a
  result, ``next`` to start a new game, ``players``), writing real PGN (python-chess reads
  it), so the hall's games, feeds and pushes can be checked without boards;
* :class:`LichessStandIn`: lichess's push endpoint on 127.0.0.1 (an aiohttp app): the Bearer
  check, the 512 KiB limit, an answer per game, a share of refusals and of time-outs, and its
  own check of each game with python-chess against what lichess's relay reads (variants,
  player names, legal SAN).
"""

from __future__ import annotations

import asyncio
import io
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import chess
import chess.pgn
from aiohttp import web
from hall_stand_in import EchoTable

from service.table import TableEvent

VARIANT_TAGS = {"twenty-chess": "20-chess", "realtime": "Realtime"}


class ScriptTable(EchoTable):
    """See the module docstring."""

    def __init__(self, table_id: str, settings: Mapping[str, Any] | None = None) -> None:
        super().__init__(table_id, settings)
        self._sans: list[str] = []
        self._ended: list[str] = []
        self._result = "*"

    def admin(self, command: str, args: Mapping[str, Any], now: float) -> list[TableEvent]:
        if command == "move":
            self._sans.append(str(args["san"]))
            return [TableEvent(now, "move", {"data": {"san": args["san"]}})]
        if command == "end":
            self._result = str(args["result"])
            return [TableEvent(now, "result", {"data": {"result": self._result}})]
        if command == "next":
            if self._sans:
                self._ended.append(self.pgn())
            self._sans, self._result = [], "*"
            return [TableEvent(now, "new_game", {"data": {}})]
        return super().admin(command, args, now)

    def take_ended_games(self) -> list[str]:
        out, self._ended = self._ended, []
        return out

    def take_ended_change_logs(self) -> list[list[dict[str, Any]]]:
        return []

    @property
    def result(self) -> str:
        return self._result

    def moves(self) -> list[dict[str, Any]]:
        return [{"san": san} for san in self._sans]

    def pgn(self) -> str:
        s = self.settings
        tags = {
            "Event": s.event, "Site": s.site, "Date": "????.??.??", "Round": s.round,
            "White": s.white, "Black": s.black, "Result": self._result,
        }  # fmt: skip
        if s.variant in VARIANT_TAGS:
            tags["Variant"] = VARIANT_TAGS[s.variant]
        tokens: list[str] = []
        for ply, san in enumerate(self._sans):
            if ply % 2 == 0:
                tokens.append(f"{ply // 2 + 1}.")
            tokens.append(san)
        tokens.append(self._result)
        head = "".join(f'[{k} "{v}"]\n' for k, v in tags.items())
        return head + "\n" + " ".join(tokens) + "\n"


MAX_BODY = 512 * 1024
LICHESS_VARIANTS = {"Standard", "Chess960", "From Position"}


@dataclass
class Received:
    """One push as the stand-in read it."""

    round_id: str
    games: list[dict[str, Any]]
    size: int


@dataclass
class LichessStandIn:
    """lichess's push endpoint (see the module docstring)."""

    token: str = "lip_standin0123"
    refuse_share: float = 0.0
    timeout_share: float = 0.0
    hang: float = 30.0
    down: bool = False
    """Answer nothing (the connection is dropped), as an unreachable lichess."""
    seed: int = 1
    pushes: list[Received] = field(default_factory=list)
    refused_games: set[str] = field(default_factory=set)
    url: str = ""
    _runner: web.AppRunner | None = None

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    async def start(self) -> str:
        app = web.Application(client_max_size=4 * MAX_BODY)
        app.router.add_post("/api/broadcast/round/{id}/push", self._push)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None
        port = server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"
        return self.url

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _push(self, request: web.Request) -> web.StreamResponse:
        if self.down:
            assert request.transport is not None
            request.transport.close()
            await asyncio.sleep(0.05)
            raise web.HTTPServiceUnavailable()
        if request.headers.get("Authorization") != f"Bearer {self.token}":
            return web.json_response({"error": "No such token"}, status=401)
        body = await request.read()
        if len(body) > MAX_BODY:
            return web.json_response({"error": "PGN too large"}, status=413)
        if self.rng.random() < self.timeout_share:
            await asyncio.sleep(self.hang)
        answers = []
        games = []
        stream = io.StringIO(body.decode())
        while (game := chess.pgn.read_game(stream)) is not None:
            tags = dict(game.headers)
            error = check_game(game)
            game_id = tags.get("GameId", "")
            if error is None and (game_id in self.refused_games or (
                self.refuse_share and self.rng.random() < self.refuse_share
            )):  # fmt: skip
                error = "Refused by the stand-in"
            moves = len(list(game.mainline_moves()))
            answers.append(
                {"tags": tags, "error": error} if error else {"tags": tags, "moves": moves}
            )
            games.append({"tags": tags, "moves": moves, "error": error})
        self.pushes.append(Received(request.match_info["id"], games, len(body)))
        return web.json_response({"games": answers})


def check_game(game: chess.pgn.Game) -> str | None:
    """What lichess's relay would say of ``game`` (None: it takes it)."""
    variant = game.headers.get("Variant", "Standard")
    if variant not in LICHESS_VARIANTS:
        return f"Unknown variant {variant}"
    for side in ("White", "Black"):
        if len(game.headers.get(side, "").strip()) <= 1:
            return f"{side} has no name"
    if game.errors:
        return f"Illegal move: {game.errors[0]}"
    return None
