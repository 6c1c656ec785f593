"""Stepping through a 20-chess game on the table page (twenty.js replays the record's
actions; table.js steps through them), in Chromium:

* the replay against the variant itself: random games through all twenty rules (drops,
  swaps, tandems, gifts, the extra piece as fool, elephant and mountain, promotions) give,
  at every ply, the placement the game had then (an extra piece's capacity too, but for the
  moment between two parts, where the game changes it before the next part's first action);
  with the rules cast (not in the record) the pieces stand right, their capacity aside;
* the page on a hall's 20-chess table played on an emulated board: the step buttons show,
  and each ply shows the position the game had after it."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import chess
import pytest
from chromium import HallSite, chromium, hall_site, open_page
from conftest import FAST
from playwright.async_api import Browser, expect

from dgt.protocol import Piece
from service.variants.base import Choice
from service.variants.twenty_chess import TwentyChess

pytestmark = pytest.mark.timeout(120)

WAIT = 10_000
TABLES = {
    "tw": {"variant": "twenty-chess", "options": "schedule=1,2,12", "time_control": "600+0",
           "white": "Cleo", "black": "Dan"},
}  # fmt: skip


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    async with chromium() as launched:
        yield launched


def random_game(seed: int, *, cast: bool, plies: int = 160) -> dict[str, Any]:
    """A 20-chess game of random actions: its record as the table state has it and the
    placement after each ply."""
    rng = random.Random(seed)
    game = TwentyChess(cast=cast).new_game()
    moves: list[dict[str, Any]] = []
    placements: list[str] = []
    while len(moves) < plies and game.outcome() is None:
        pending = game.pending_choice()
        if pending is not None:
            what, _by, options = pending
            game.decide(Choice(what, rng.choice(options)))
            continue
        actions = game.legal_actions()
        if not actions:
            break
        action = rng.choice(actions).action
        (side,) = game.sides_to_act()
        entry = {"uci": str(action), "san": game.san(action), "number": game.move_number(),
                 "side": "white" if side else "black"}  # fmt: skip
        game.apply(action)
        moves.append(entry)
        placements.append(game.fen().split("[", 1)[0])
    return {"options": "cast" if cast else "", "moves": moves, "placements": placements}


REPLAY = """games => games.map(g => {
  const rules = twentyRules({options: g.options});
  let board = parsePlacement(TWENTY_START);
  return g.moves.map((m, i) => {
    board = board && twentyApply(board, m, i > 0 ? g.moves[i - 1] : null, rules);
    return board ? placementText(board) : null;
  });
})"""


def plain(placement: str) -> str:
    return placement.translate(str.maketrans("FEMfem", "XXXxxx"))


async def test_the_replay_gives_the_games_placements(tmp_path: Path, browser: Browser) -> None:
    games = [random_game(seed, cast=False) for seed in range(12)]
    cast = [random_game(100 + seed, cast=True) for seed in range(4)]
    kinds = {
        kind
        for g in games
        for m in g["moves"]
        for kind, mark in (("drop", "@"), ("swap", "<>"), ("tandem", "&"), ("gift", "-"))
        if mark in m["uci"]
    }
    assert kinds == {"drop", "swap", "tandem", "gift"}
    assert any(m["san"][0] in "FEM" and "@" not in m["san"] for g in games for m in g["moves"])
    async with hall_site(tmp_path, TABLES, token="twenty-steps", board_options=FAST) as site:
        watched = await open_page(browser, site.url + "/tables/tw")
        page = watched.page
        await expect(page.locator("#twenty")).to_be_visible(timeout=WAIT)
        replayed = await page.evaluate(REPLAY, games + cast)
        assert watched.problems == []
    compared = 0
    for g, shown in zip(games + cast, replayed, strict=True):
        moves, placements = g["moves"], g["placements"]
        assert len(shown) == len(placements)
        for i, (want, got) in enumerate(zip(placements, shown, strict=True)):
            assert got is not None, (g["options"], i, moves[i])
            after = moves[i + 1] if i + 1 < len(moves) else None
            changes_capacity = (  # a part under rules 12-14 begins: the game changes it now
                after is not None
                and (after["number"], after["side"]) != (moves[i]["number"], moves[i]["side"])
                and TwentyChess().rule_of(after["number"]) in (12, 13, 14)
            )
            if g["options"] == "cast" or changes_capacity:
                assert plain(got) == plain(want), (g["options"], i, moves[i])
            else:
                assert got == want, (i, moves[i])
                compared += 1
    assert compared > 1000


class Hands:
    """A player's hands at an emulated board."""

    def __init__(self, site: HallSite) -> None:
        self.transport = site.boards["tw"]

    def symbol(self, name: str) -> str:
        return str(self.transport.board.squares[chess.parse_square(name)].symbol)

    async def move(self, uci: str) -> None:
        piece = self.symbol(uci[:2])
        self.transport.lift(chess.parse_square(uci[:2]))
        await asyncio.sleep(0.05)
        if self.symbol(uci[2:4]) != ".":
            self.transport.lift(chess.parse_square(uci[2:4]))
            await asyncio.sleep(0.05)
        self.transport.place(chess.parse_square(uci[2:4]), Piece.from_symbol(piece))
        await asyncio.sleep(0.05)

    async def put(self, name: str, symbol: str) -> None:
        self.transport.place(chess.parse_square(name), Piece.from_symbol(symbol))
        await asyncio.sleep(0.05)

    async def press(self) -> None:
        await asyncio.sleep(0.3)
        self.transport.press_lever()
        await asyncio.sleep(0.05)


async def test_a_twenty_chess_game_is_stepped_through_on_the_table_page(
    tmp_path: Path, browser: Browser
) -> None:
    async with hall_site(tmp_path, TABLES, token="twenty-steps", board_options=FAST) as site:
        watched = await open_page(browser, site.url + "/tables/tw")
        page = watched.page
        board = page.locator("#board")
        await expect(page.locator("#twenty")).to_be_visible(timeout=WAIT)
        hands = Hands(site)
        seen: list[str] = []

        async def ply(count: int) -> None:
            for _ in range(200):
                state = site.hall.state("tw")
                if len(state.get("moves") or []) >= count:
                    break
                await asyncio.sleep(0.05)
            assert len(state["moves"]) == count
            seen.append(state["variant_panel"]["placement"])

        # Turn 1 orthodox; turn 2 two moves a side with captures; turn 3 the fool comes in.
        for uci, press in (("e2e4", True), ("d7d5", True), ("e4d5", False), ("g1f3", True),
                           ("d8d5", False), ("b8c6", True)):  # fmt: skip
            await hands.move(uci)
            if press:
                await hands.press()
            await ply(len(seen) + 1)
        await hands.put("e3", "q")  # White's extra piece (its stand-in: the black queen)
        await ply(7)
        await hands.move("b1c3")
        await hands.press()
        await ply(8)
        await expect(board).to_have_attribute("data-placement", seen[-1], timeout=WAIT)
        await expect(page.locator("#steps")).to_be_visible()
        for back in range(7, -1, -1):
            await page.keyboard.press("ArrowLeft")
            await expect(board).to_have_attribute("data-ply", str(back))
            want = seen[back - 1] if back else "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"
            await expect(board).to_have_attribute("data-placement", want)
        await page.locator('#moves .mv[data-ply="7"]').click()  # F@e3
        await expect(board).to_have_attribute("data-placement", seen[6])
        await expect(page.locator('#board [data-square="e3"] .pc')).to_have_attribute(
            "data-piece", "F"
        )
        await page.keyboard.press("End")
        await expect(board).to_have_attribute("data-ply", "live")
        assert watched.problems == []
