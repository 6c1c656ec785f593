"""Feeds a relay can follow: stable order across polls, GameId and Board tags, an empty
round as an empty 200, ETag/304 and gzip, the lichess-ready feed and its counterpart, and a
standing illegal move as lichess reads it."""

from __future__ import annotations

import gc
import io
import weakref
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import chess.pgn
import pytest
from broadcast_stand_in import ScriptTable, check_game
from test_table_helpers import Hands

from dgt.transports.emulator import EmulatorTransport
from service.broadcast.hall_feeds import FeedOrder, hall_feeds
from service.broadcast.lichess_pgn import (
    FeedGame,
    Problem,
    chunks,
    entries,
    pack,
    split_games,
    tags_of,
    with_tags,
)
from service.config import TableConfig
from service.hall import Hall
from service.store import Store
from service.table import TableSettings
from service.web import WebServer
from service.web import feeds as web_feeds
from service.web.feeds import GZIP_MIN

TOKEN = "test-token-0123456789"


def read_all(text: str) -> list[chess.pgn.Game]:
    stream = io.StringIO(text)
    games = []
    while (game := chess.pgn.read_game(stream)) is not None:
        games.append(game)
    return games


# --- pure -----------------------------------------------------------------------------------


def test_an_illegal_move_that_stood_goes_on_as_its_own_game_lichess_reads() -> None:
    """US speed 11: the writer splits the record at the illegal move; lichess gets the part
    before it as GameId 3-1 and the part after it as 3-1.2 (same players and board), each
    legal from its own start, so neither is refused and the game goes on (README,
    "Broadcasting on lichess")."""
    hands = Hands(TableSettings(rules="uscf-speed", white="Ann Able", black="Bob Baker"))
    hands.play("e2e4", "P", True)
    hands.play("e7e5", "p", False)
    hands.move("g1g3", "N")  # a knight moved like a rook: stands, unclaimed
    hands.press(True)
    hands.play("d7d6", "p", False)
    hands.play("g3f5", "N", True)
    pgn = hands.table.pgn()
    assert len(split_games(pgn)) == 2
    feed = entries(FeedGame("3-1", "3", 1, 5, "?", pgn))
    assert [e.game_id for e in feed] == ["3-1", "3-1.2"]
    assert [e.tags["GameId"] for e in feed] == ["3-1", "3-1.2"]
    assert [e.tags["Board"] for e in feed] == ["5", "5"]
    assert all(e.lichess_ready for e in feed)
    games = [read_all(e.text)[0] for e in feed]
    assert [check_game(g) for g in games] == [None, None]
    assert [len(list(g.mainline_moves())) for g in games] == [2, 2]
    assert games[1].headers["FEN"]  # goes on from the position after the illegal move
    assert games[0].headers["White"] == games[1].headers["White"] == "Ann Able"


def test_games_lichess_cannot_read_or_would_drop_are_flagged() -> None:
    base = '[Event "e"]\n[White "Ann"]\n[Black "Bob"]\n[Result "*"]\n\n1. e4 *\n'
    assert entries(FeedGame("1-1", "1", 1, 1, "1", base))[0].problems == ()
    for white in ("?", "", "A"):
        game = FeedGame("1-1", "1", 1, 1, "1", base.replace('"Ann"', f'"{white}"'))
        assert entries(game)[0].problems == (Problem.UNNAMED,)
    variant = with_tags(base, {"Variant": "20-chess"})
    assert entries(FeedGame("1-1", "1", 1, 1, "1", variant))[0].problems == (Problem.VARIANT,)


def test_tags_are_added_after_the_games_own_and_replaced_once() -> None:
    text = '[Event "a \\"b\\""]\n[Board "3"]\n\n1. e4 *\n'
    again = with_tags(text, {"Board": "4", "GameId": "x-1"})
    assert again == '[Event "a \\"b\\""]\n[Board "4"]\n[GameId "x-1"]\n\n1. e4 *\n'
    assert tags_of(again) == {"Event": 'a "b"', "Board": "4", "GameId": "x-1"}


def test_pushes_are_cut_between_games_under_the_limit() -> None:
    texts = [f'[GameId "{i}"]\n\n' + "1. e4 e5 " * 50 + "*\n" for i in range(10)]
    one = len(chunks(texts[:1])[0].encode())
    parts = pack(texts, limit=3 * one)
    assert parts == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    bodies = chunks(texts, limit=3 * one)
    assert all(len(b.encode()) <= 3 * one for b in bodies)
    assert [tags_of(g)["GameId"] for b in bodies for g in split_games(b)] == [
        str(i) for i in range(10)
    ]
    assert pack(texts, limit=one - 1) == []  # a game is never cut


def test_feed_order_appends_and_never_moves() -> None:
    order = FeedOrder()
    order.note([("2", 1), ("1", 1)])
    order.note([("1", 2), ("2", 1)])
    assert [order.place(k) for k in (("2", 1), ("1", 1), ("1", 2))] == [0, 1, 2]
    assert order.place(("3", 1)) == 3


def test_a_halls_feeds_do_not_keep_it_alive(tmp_path: Path) -> None:
    store = Store(tmp_path / "gone.db")
    hall = Hall(store, table_factory=ScriptTable, tick_interval=0)
    hall.add_table(TableConfig("1", "emu-1", None, {"round": "1"}), EmulatorTransport(name="e"))
    feeds = hall_feeds(hall)
    assert [g.game_id for g in feeds.games()] == ["1-1"]
    gone = weakref.ref(hall)
    del hall, feeds
    gc.collect()
    assert gone() is None
    store.close()


# --- over HTTP ------------------------------------------------------------------------------


@dataclass
class Fed:
    url: str
    hall: Hall
    session: aiohttp.ClientSession

    async def admin(self, table: str, command: str, **args: str) -> None:
        await self.hall.admin(table, command, args)

    async def get(self, path: str, **headers: str) -> aiohttp.ClientResponse:
        response = await self.session.get(self.url + path, headers=headers)
        await response.read()
        return response

    async def game_ids(self, path: str) -> list[str]:
        response = await self.get(path)
        assert response.status == 200
        return [tags_of(g)["GameId"] for g in split_games(await response.text())]


@pytest.fixture
async def fed(tmp_path: Path) -> AsyncIterator[Fed]:
    store = Store(tmp_path / "feeds.db")
    hall = Hall(store, table_factory=ScriptTable, tick_interval=0)
    for table_id, board, variant in (
        ("1", 1, "standard"),
        ("2", 7, "standard"),
        ("3", 3, "realtime"),
    ):
        settings = {"round": "1", "variant": variant}
        config = TableConfig(table_id, f"emu-{table_id}", None, settings, board=board)
        hall.add_table(config, EmulatorTransport(name=f"emu-{table_id}"))
    server = WebServer(hall, TOKEN, port=0)
    url = (await server.start()).rstrip("/")
    async with aiohttp.ClientSession(auto_decompress=True) as session:
        fed = Fed(url, hall, session)
        for table in ("1", "2", "3"):
            await fed.admin(table, "players", white=f"White {table}", black=f"Black {table}")
        yield fed
    await server.close()
    await hall.close()
    store.close()


async def test_games_keep_their_place_and_new_ones_are_appended(fed: Fed) -> None:
    """The games there when the feeds first looked are in board order (table 2 is board 7);
    every later one is appended as it begins."""
    assert await fed.game_ids("/rounds/1.pgn") == ["1-1", "3-1", "2-1"]
    await fed.admin("3", "move", san="e4")
    await fed.admin("3", "next")  # table 3's second game began first
    await fed.admin("1", "move", san="d4")
    await fed.admin("1", "next")
    await fed.admin("2", "move", san="c4")
    expected = ["1-1", "3-1", "2-1", "3-2", "1-2"]
    assert await fed.game_ids("/rounds/1.pgn") == expected
    assert await fed.game_ids("/games.pgn") == expected
    text = await (await fed.get("/rounds/1.pgn")).text()
    assert [tags_of(g)["Board"] for g in split_games(text)] == ["1", "3", "7", "3", "1"]
    one = await (await fed.get("/games/2-1.pgn")).text()
    assert tags_of(one)["GameId"] == "2-1"
    assert tags_of(one)["Board"] == "7"


async def test_an_empty_round_is_an_empty_200(fed: Fed) -> None:
    response = await fed.get("/rounds/9.pgn")
    assert response.status == 200
    assert response.content_type == "application/x-chess-pgn"
    assert await response.text() == ""


async def test_lichess_feed_and_the_other_one(fed: Fed) -> None:
    await fed.admin("2", "players", white="?", black="Black 2")
    assert await fed.game_ids("/rounds/1.pgn?feed=lichess") == ["1-1"]
    assert await fed.game_ids("/rounds/1.pgn?feed=other") == ["3-1", "2-1"]
    assert await fed.game_ids("/games.pgn?feed=lichess") == ["1-1"]
    response = await fed.get("/rounds/1.pgn?feed=nonsense")
    assert response.status == 400
    await fed.admin("1", "move", san="e4")
    await fed.admin("1", "next")
    assert await fed.game_ids("/rounds/1.pgn?feed=lichess") == ["1-1", "1-2"]
    await fed.admin("2", "players", white="Wanda", black="Black 2")  # named only now
    assert await fed.game_ids("/rounds/1.pgn?feed=lichess") == ["1-1", "1-2", "2-1"]
    assert await fed.game_ids("/rounds/1.pgn") == ["1-1", "3-1", "2-1", "1-2"]


async def test_etag_304_and_gzip(fed: Fed) -> None:
    await fed.admin("1", "move", san="e4")
    for path in ("/rounds/1.pgn", "/games.pgn", "/api/tables", "/api/games", "/games/1-1.pgn"):
        first = await fed.get(path, **{"Accept-Encoding": "gzip"})
        assert first.status == 200, path
        etag = first.headers["ETag"]
        assert etag.startswith('W/"')
        if len(await first.read()) >= GZIP_MIN:
            assert first.headers.get("Content-Encoding") == "gzip", path
        again = await fed.get(path, **{"If-None-Match": etag})
        assert again.status == 304, path
        assert again.headers["ETag"] == etag
    before = (await fed.get("/rounds/1.pgn")).headers["ETag"]
    await fed.admin("1", "move", san="e5")
    after = await fed.get("/rounds/1.pgn", **{"If-None-Match": before})
    assert after.status == 200
    assert after.headers["ETag"] != before


async def test_the_lichess_feed_holds_at_most_the_first_games_of_a_round(
    fed: Fed, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(web_feeds, "MAX_GAMES", 2)  # lichess: 100
    await fed.admin("3", "players", white="Ann", black="Bob")  # still realtime: left out
    await fed.admin("1", "move", san="e4")
    await fed.admin("1", "next")
    assert await fed.game_ids("/rounds/1.pgn?feed=lichess") == ["1-1", "2-1"]
    assert await fed.game_ids("/rounds/1.pgn?feed=all") == ["1-1", "3-1", "2-1", "1-2"]
