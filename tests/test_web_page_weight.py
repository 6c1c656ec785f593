"""The table page stays light: its HTML, every script and style sheet it loads, and the first
state of its stream, for a table whose game has 171 plies (the longest of the test games),
add up to less than 100 KB (bytes as sent, without compression); a move then costs a diff of
a few hundred bytes, not the whole state again."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import chess
import pytest
from chromium import HallSite, hall_site
from games import lichess_games
from test_table_helpers import CODES

from service.commands.demo import TransportLine

BUDGET = 100_000
"""Bytes the page for one table may take in all."""
PLAYERS = {"white": "Ann Able", "black": "Bob Baker", "round": "1", "rules": "casual"}

pytestmark = pytest.mark.slow


@pytest.fixture
async def site(tmp_path: Path) -> AsyncIterator[HallSite]:
    async with hall_site(tmp_path, {"1": PLAYERS}, token="weight-test-token") as built:
        yield built


def physical(line: TransportLine, board: chess.Board, move: chess.Move) -> None:
    """Make ``move`` on the emulated board as hands would (captured piece off first)."""
    device = line.device

    def lift(square: int) -> None:
        line.act(lambda now: device.lift(square, now))

    def place(square: int, symbol: str) -> None:
        line.act(lambda now: device.place(square, CODES[symbol], now))

    piece = board.piece_at(move.from_square)
    assert piece is not None
    if board.is_castling(move):
        rank = chess.square_rank(move.from_square)
        kingside = chess.square_file(move.to_square) > chess.square_file(move.from_square)
        rook_from = chess.square(7 if kingside else 0, rank)
        rook_to = chess.square(5 if kingside else 3, rank)
        king_to = chess.square(6 if kingside else 2, rank)
        lift(move.from_square)
        place(king_to, piece.symbol())
        lift(rook_from)
        place(rook_to, "R" if piece.color else "r")
    else:
        lift(move.from_square)
        if board.is_en_passant(move):
            lift(move.to_square + (-8 if piece.color else 8))
        elif board.piece_at(move.to_square) is not None:
            lift(move.to_square)
        symbol = piece.symbol()
        if move.promotion:
            symbol = chess.piece_symbol(move.promotion)
            symbol = symbol.upper() if piece.color else symbol
        place(move.to_square, symbol)
    line.act(device.press_lever)


async def test_the_page_for_one_table_is_under_100_kb(site: HallSite) -> None:
    game = max(lichess_games(), key=lambda g: len(g.moves))
    moves = list(game.moves)
    line = TransportLine(site.boards["1"])
    board = chess.Board()
    for move in moves:
        physical(line, board, move)
        board.push(move)
        await asyncio.sleep(0.02)
    for _ in range(200):
        shown = site.hall.state("1")["moves"]
        if len(shown) == len(moves) and shown[-1]["final"]:
            break
        await asyncio.sleep(0.05)
    assert [m["uci"] for m in site.hall.state("1")["moves"]] == [m.uci() for m in moves]

    sizes: dict[str, int] = {}
    async with aiohttp.ClientSession(auto_decompress=False) as session:
        async with session.get(site.url + "/tables/1") as response:
            html = await response.read()
        sizes["/tables/1"] = len(html)
        for path in re.findall(rb'(?:src|href)="(/static/[^"]+)"', html):
            async with session.get(site.url + path.decode()) as response:
                assert response.status == 200
                sizes[path.decode()] = len(await response.read())
        script = re.search(rb"table\.js", html)
        assert script is not None
        async with session.get(site.url + "/api/stream?table=1&diff=1") as response:
            first = b""
            while not first.endswith(b"\n\n") or b"event: state" not in first:
                first += await asyncio.wait_for(response.content.readany(), 5)
        sizes["first state"] = len(first)
        # A piece lifted: a diff, not the state again.
        async with session.get(site.url + "/api/stream?table=1&diff=1") as response:
            opening = b""
            while not opening.endswith(b"\n\n"):
                opening += await asyncio.wait_for(response.content.readany(), 5)
            occupied = next(iter(board.piece_map()))
            line.act(lambda now: line.device.lift(occupied, now))
            diff = await asyncio.wait_for(response.content.readany(), 5)
    assert {"/static/app.css", "/static/common.js", "/static/table.js"} <= set(sizes)
    total = sum(sizes.values())
    print(f"table page: {total:,} bytes in all ({sizes})")
    assert total < BUDGET, sizes
    assert diff.startswith(b"event: diff\n")
    assert len(diff) < 1_000, diff
