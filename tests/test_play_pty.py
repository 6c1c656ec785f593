"""``dgt-service play`` as the sites use it: a client that follows exactly what lichess's DGT
page sends (connect, ``eboards``, ``subscribe``, ``setup``) over a real WebSocket, against
the emulated board on a pseudo-terminal opened through the serial code a USB board goes
through: a game in progress set up, captures, castling both ways, a promotion, a takeback,
a board turned round, a Pegasus with its LEDs; and the origins refused."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import chess
import pytest
from conftest import wait_until

from dgt.board import Board
from dgt.emulator import EmulatorServer, VirtualBoard
from dgt.protocol.constants import Piece
from service.play.server import BoardLink, OriginPolicy, PlayServer

SETTLE = 0.6
"""The settle delay of these tests (short, to keep them quick)."""
GAP = 0.08
"""Seconds between two square changes of a move."""


@dataclass
class Site:
    """What a site's page does with the socket, in the order lichess's page does it."""

    ws: aiohttp.ClientWebSocketResponse
    serialnr: str = ""
    boards: list[dict[str, Any]] = field(default_factory=list)
    feeds: list[dict[str, Any]] = field(default_factory=list)
    """Every feed param received, in order."""
    answers: list[dict[str, Any]] = field(default_factory=list)

    async def receive(self, within: float = 5.0) -> dict[str, Any]:
        message = json.loads(await self.ws.receive_str(timeout=within))
        assert isinstance(message, dict)
        if message["response"] == "feed":
            self.feeds.append(message["param"])
        else:
            self.answers.append(message)
        return message

    async def start(self) -> None:
        await self.ws.send_str('{"id":1,"call":"eboards"}')
        message = await self.receive()
        assert message["response"] == "call"
        assert message["id"] == 1
        self.boards = message["param"]
        self.serialnr = self.boards[0]["serialnr"]
        assert self.boards[0]["state"] in ("ACTIVE", "INACTIVE")
        subscription = {"id": 2, "call": "subscribe",
                        "param": {"feed": "eboardevent", "id": 1,
                                  "param": {"serialnr": self.serialnr}}}  # fmt: skip
        await self.ws.send_str(json.dumps(subscription))
        answer = await self.receive()
        assert answer == {"response": "call", "id": 2, "param": None}
        feed = await self.receive()
        assert feed["response"] == "feed"
        assert feed["id"] == 1

    async def setup(self, fen: str) -> None:
        message = {"id": 3, "call": "call",
                   "param": {"id": 1, "method": "setup", "param": {"fen": fen}}}  # fmt: skip
        await self.ws.send_str(json.dumps(message))
        while True:
            answer = await self.receive()
            if answer["response"] != "feed":
                break
        assert answer == {"response": "call", "id": 3, "param": None}
        await self.san([])  # the reading starts again from the setup

    async def until(self, check: Callable[[dict[str, Any]], bool], within: float = 8.0) -> None:
        """Read feeds until one passes ``check``."""
        if self.feeds and check(self.feeds[-1]):
            return
        deadline = time.monotonic() + within
        while True:
            left = deadline - time.monotonic()
            assert left > 0, f"no such feed; last: {self.feeds[-1] if self.feeds else None}"
            message = await self.receive(left)
            if message["response"] == "feed" and check(message["param"]):
                return

    async def san(self, expected: list[str]) -> None:
        await self.until(lambda p: p["san"] == expected)

    def san_lists(self, start: int = 0) -> list[list[str]]:
        """The distinct SAN lists the feeds from ``start`` on showed, in order."""
        out: list[list[str]] = []
        for param in self.feeds[start:]:
            if not out or out[-1] != param["san"]:
                out.append(param["san"])
        return out


@dataclass
class Rig:
    server: EmulatorServer
    device: VirtualBoard
    play: PlayServer
    url: str
    position: chess.Board

    async def change(self, square: int, piece: Piece) -> None:
        await asyncio.sleep(GAP)
        device = self.device
        if piece is Piece.EMPTY:
            self.server.act(lambda now: device.lift(square, now))
        else:
            self.server.act(lambda now: device.place(square, piece, now))

    async def move(self, uci: str, *, rook_first: bool = False) -> None:
        """Make ``uci`` with one hand: a captured piece off first, then the mover."""
        board = self.position
        move = board.parse_uci(uci)
        before = dict(board.piece_map())
        board.push(move)
        after = board.piece_map()
        lifts = [s for s in before if s not in after or after[s] != before[s]]
        places = [s for s in after if before.get(s) != after[s]]
        if rook_first:
            lifts.sort(key=lambda s: before[s].piece_type != chess.ROOK)
            places.sort(key=lambda s: after[s].piece_type != chess.ROOK)
            for lift, place in zip(lifts, places, strict=True):
                await self.change(lift, Piece.EMPTY)
                await self.change(place, Piece.from_symbol(after[place].symbol()))
            return
        lifts.sort(key=lambda s: s not in after)
        for square in lifts:
            await self.change(square, Piece.EMPTY)
        for square in places:
            await self.change(square, Piece.from_symbol(after[square].symbol()))

    async def set_up(self, board: chess.Board) -> None:
        """Put the pieces of ``board`` on the board by hand."""
        target = {s: Piece.from_symbol(p.symbol()) for s, p in board.piece_map().items()}
        for square in range(64):
            if self.device.squares[square] is not Piece.EMPTY and square not in target:
                await self.change(square, Piece.EMPTY)
        for square, piece in target.items():
            if self.device.squares[square] is not piece:
                await self.change(square, piece)
        self.position = board.copy()


@contextlib.asynccontextmanager
async def rig(device: VirtualBoard, *, origins: list[str] | None = None) -> AsyncIterator[Rig]:
    async with EmulatorServer(device) as server:
        board = Board(server.path)
        await board.open()
        try:
            link = BoardLink(board, settle=SETTLE)
            policy = OriginPolicy(origins) if origins is not None else None
            play = PlayServer([link], port=0, origins=policy)
            url = await play.start()
            try:
                yield Rig(server, device, play, url, chess.Board())
            finally:
                await play.close()
        finally:
            await board.close()


@contextlib.asynccontextmanager
async def site(url: str, origin: str = "https://lichess.org") -> AsyncIterator[Site]:
    async with (
        aiohttp.ClientSession() as http,
        http.ws_connect(url, headers={"Origin": origin}) as ws,
    ):
        yield Site(ws)


@pytest.mark.slow
async def test_a_game_as_lichess_plays_it() -> None:
    async with rig(VirtualBoard()) as r, site(r.url) as s:
        await s.start()
        assert s.serialnr == "12345"
        assert s.feeds[-1]["board"] == chess.STARTING_BOARD_FEN
        # a game in progress: lichess sets up the position after 1. e4 c5 2. Nf3 while the
        # board still shows 1. e4 c5; the opponent's Nf3 is then made on the board
        for uci in ("e2e4", "c7c5"):
            await r.move(uci)
        position = chess.Board()
        for uci in ("e2e4", "c7c5", "g1f3"):
            position.push_uci(uci)
        await s.setup(position.fen())
        mark = len(s.feeds) - 1
        await r.move("g1f3")
        moves = ["d7d6", "d2d4", "c5d4", "f3d4", "g8f6", "b1c3", "a7a6", "c1e3", "e7e5",
                 "d4b3", "c8e6", "f2f3", "f8e7", "d1d2", "e8g8", "e1c1"]  # fmt: skip
        for uci in moves:
            await r.move(uci, rook_first=uci == "e8g8")
        await s.san(["d6", "d4", "cxd4", "Nxd4", "Nf6", "Nc3", "a6", "Be3", "e5", "Nb3",
                     "Be6", "f3", "Be7", "Qd2", "O-O", "O-O-O"])  # fmt: skip
        assert s.feeds[-1]["board"] == r.position.board_fen()
        # a takeback: the last move taken back on the board
        await r.change(chess.C1, Piece.EMPTY)
        await r.change(chess.D1, Piece.EMPTY)
        await r.change(chess.E1, Piece.WKING)
        await r.change(chess.A1, Piece.WROOK)
        r.position.pop()
        await s.san(["d6", "d4", "cxd4", "Nxd4", "Nf6", "Nc3", "a6", "Be3", "e5", "Nb3",
                     "Be6", "f3", "Be7", "Qd2", "O-O"])  # fmt: skip
        await r.move("e1c1")
        await s.until(lambda p: p["san"][-1:] == ["O-O-O"])
        # never a provisional move, never a castling twice: the list only grew by one move
        # at a time, except for the takeback
        lists = s.san_lists(mark)
        assert lists[0] == []
        for before, after in itertools.pairwise(lists):
            assert after[:-1] == before or after == before[:-1]
        assert lists[-1].count("O-O") == 1
        assert lists[-1].count("O-O-O") == 1


@pytest.mark.slow
async def test_a_promotion_a_clock_and_a_board_turned_round() -> None:
    async with rig(VirtualBoard(reversed=True)) as r, site(r.url) as s:
        await s.start()
        assert s.feeds[-1]["flipped"] is True
        assert s.feeds[-1]["board"] == chess.STARTING_BOARD_FEN  # White at the bottom
        promotion = chess.Board("r3k3/1P4pp/8/8/8/8/6PP/4K3 w q - 0 30")
        await r.set_up(promotion)
        await s.setup(promotion.fen())
        await r.move("b7a8q")
        await s.san(["bxa8=Q+"])
        assert s.feeds[-1]["board"] == r.position.board_fen()
        assert s.feeds[-1]["flipped"] is True
        # a clock press completes a move at once (no settle delay)
        await r.move("e8e7")
        r.server.act(lambda now: r.device.press_lever(now))
        started = time.monotonic()
        await s.san(["bxa8=Q+", "Ke7"])
        assert time.monotonic() - started < SETTLE
        await s.until(lambda p: p["clock"] is not None)


@pytest.mark.slow
async def test_a_pegasus_reads_presence_and_lights_the_squares_to_set_up() -> None:
    device = VirtualBoard(pegasus=True)
    async with rig(device) as r, site(r.url) as s:
        await s.start()
        assert r.play.links[s.serialnr].board.info.leds is not None
        position = chess.Board()
        position.push_uci("e2e4")
        await s.setup(position.fen())
        # the squares of the opponent's move, to be made on the board, are lit
        await wait_until(lambda: device.leds == {chess.E2, chess.E4})
        await r.move("e2e4")
        await wait_until(lambda: device.leds == frozenset())
        for uci in ("e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "b5c6", "d7c6", "e1g1"):
            await r.move(uci)
        await s.san(["e5", "Nf3", "Nc6", "Bb5", "a6", "Bxc6", "dxc6", "O-O"])
        assert s.feeds[-1]["board"] == r.position.board_fen()


@pytest.mark.slow
async def test_origins_other_sites_are_refused_the_sites_and_this_machine_allowed() -> None:
    async with rig(VirtualBoard()) as r:
        for origin in ("https://lichess.org", "https://www.chess.com", "http://localhost:8000"):
            async with site(r.url, origin) as s:
                await s.start()
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            async with site(r.url, "https://evil.example"):
                pass
        assert refused.value.status == 403
        assert r.play.refused == 1
        async with aiohttp.ClientSession() as http, http.ws_connect(r.url) as ws:
            await ws.send_str('{"id":9,"call":"nonsense"}')  # no Origin: a local script
            answer = await ws.receive_json(timeout=5)
            assert answer["response"] == "error"
            await ws.send_str('{"id":1,"call":"eboards"}')  # the connection stays open
            assert (await ws.receive_json(timeout=5))["response"] == "call"


@pytest.mark.slow
async def test_a_board_unplugged_is_not_responding_and_active_again_when_back() -> None:
    async with rig(VirtualBoard()) as r, site(r.url) as s:
        await s.start()

        async def state() -> str:
            await s.ws.send_str('{"id":1,"call":"eboards"}')
            while True:
                message = await s.receive()
                if message["response"] == "call":
                    return str(message["param"][0]["state"])

        r.server.unplug()
        await wait_until(lambda: r.play.links[s.serialnr].eboard.state == "NOTRESPONDING")
        assert await state() == "NOTRESPONDING"
        r.server.plug()
        await wait_until(lambda: r.play.links[s.serialnr].eboard.state == "ACTIVE", within=10)
        assert await state() == "ACTIVE"
        await r.move("e2e4")
        await s.san(["e4"])
