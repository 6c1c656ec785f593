"""The PGN feeds a relay can follow, and answers a poller can cache.

* ``/games.pgn`` and ``/rounds/R.pgn``: every game keeps its place across polls (new games
  appended in the order they began: :class:`service.broadcast.hall_feeds.FeedOrder`), with
  ``GameId`` (``TABLE-NUMBER``) and ``Board`` tags; the part of a game after an illegal move
  that stood is a game of its own, ``GameId "TABLE-NUMBER.2"`` (README, "Broadcasting on
  lichess").  A round without games answers an empty 200.
* ``?feed=lichess``: only games lichess reads (no 20-chess or realtime; both players
  named), at most the first 100 of a round; ``?feed=other``: the games left out of it
  (unreadable or unnamed), in the same order; ``?feed=all`` (the default): every game.
* :func:`conditional_middleware`: every 200 JSON or PGN answer carries an ``ETag`` (a 304
  when ``If-None-Match`` names it) and is gzipped when the client takes gzip.
* ``GET /api/broadcast`` (admin token): the lichess pushes: each round's last answer per
  game, refusals, games flagged (no player name) and the link's state.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable

from aiohttp import web

from service.broadcast.lichess_pgn import joined
from service.broadcast.push import MAX_GAMES
from service.hall import HallError
from service.json_text import dumps
from service.web.edge import content_disposition
from service.web.source import HallSource

FEEDS = ("all", "lichess", "other")
"""What ``?feed=`` takes."""
GZIP_MIN = 200
"""Bytes an answer needs before it is worth compressing."""
_CACHED_TYPES = frozenset({"application/json", "application/x-chess-pgn"})

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _feed(request: web.Request) -> str:
    feed = request.query.get("feed", "all")
    if feed not in FEEDS:
        raise HallError(f"feed must be one of {', '.join(FEEDS)}", 400)
    return feed


def _chosen(source: HallSource, round_name: str | None, feed: str) -> list[str]:
    feeds = source.feeds()
    if feed == "lichess":
        shown: dict[str, int] = {}
        texts = []
        for entry in feeds.lichess_entries(round_name):
            shown[entry.round] = shown.get(entry.round, 0) + 1
            if shown[entry.round] <= MAX_GAMES:  # more would fail lichess's whole sync
                texts.append(entry.text)
        return texts
    entries = feeds.entries(round_name)
    if feed == "other":
        return [e.text for e in entries if not e.lichess_ready]
    return [e.text for e in entries]


def pgn_response(text: str, name: str) -> web.Response:
    return web.Response(
        text=text,
        content_type="application/x-chess-pgn",
        headers={"Content-Disposition": content_disposition(name), "Cache-Control": "no-cache"},
    )


def feed_text(source: HallSource, round_name: str | None, feed: str = "all") -> str:
    """The feed of every game (``round_name`` None) or of one round, as of the last
    commit."""
    source.settle()
    return joined(_chosen(source, round_name, feed))


def game_text(source: HallSource, table_id: str, number: int) -> str | None:
    """One game (its segments, if any) as the feeds show it; None: no such game."""
    source.settle()
    found = source.feeds().game_entries(table_id, number)
    return None if found is None else joined(e.text for e in found)


def make_handlers(hall_of: Callable[[web.Request], HallSource]) -> tuple[Handler, Handler]:
    """The handlers of ``/games.pgn`` and ``/rounds/{round}.pgn``."""

    async def pgn_all(request: web.Request) -> web.StreamResponse:
        return pgn_response(feed_text(hall_of(request), None, _feed(request)), "games.pgn")

    async def pgn_round(request: web.Request) -> web.StreamResponse:
        wanted = request.match_info["round"]
        text = feed_text(hall_of(request), wanted, _feed(request))
        return pgn_response(text, f"round-{wanted}.pgn")

    return pgn_all, pgn_round


# --- ETag, 304 and gzip ------------------------------------------------------------------


def etag_of(body: bytes) -> str:
    """A weak validator of ``body`` (weak: the gzipped and plain answers share it)."""
    return 'W/"' + hashlib.blake2b(body, digest_size=12).hexdigest() + '"'


def _matches(header: str | None, etag: str) -> bool:
    if not header:
        return False
    wanted = etag.removeprefix("W/")
    for part in header.split(","):
        tag = part.strip()
        if tag == "*" or tag.removeprefix("W/") == wanted:
            return True
    return False


@web.middleware
async def conditional_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """A 200 JSON or PGN answer to GET gets an ETag (304 when the client has it) and gzip
    when the client takes it."""
    response = await handler(request)
    if (
        request.method not in ("GET", "HEAD")
        or response.status != 200
        or not isinstance(response, web.Response)
        or response.content_type not in _CACHED_TYPES
        or not isinstance(response.body, bytes)
    ):
        return response
    body = response.body
    etag = etag_of(body)
    vary = "Accept-Encoding"
    if _matches(request.headers.get("If-None-Match"), etag):
        headers = {"ETag": etag, "Vary": vary}
        cache = response.headers.get("Cache-Control")
        if cache is not None:
            headers["Cache-Control"] = cache
        return web.Response(status=304, headers=headers)
    response.headers["ETag"] = etag
    response.headers["Vary"] = vary
    accepted = request.headers.get("Accept-Encoding", "").lower()
    if len(body) >= GZIP_MIN and "gzip" in accepted:
        response.enable_compression(web.ContentCoding.gzip)
    return response


def broadcast_handler(
    hall_of: Callable[[web.Request], HallSource], check_token: Callable[[web.Request], None]
) -> Handler:
    """``GET /api/broadcast``: what the lichess pusher of the hall reports (see
    :meth:`service.broadcast.push.Pusher.status`); ``{"rounds": []}`` without one."""

    async def api_broadcast(request: web.Request) -> web.StreamResponse:
        check_token(request)
        status = hall_of(request).broadcast_status()
        return web.Response(text=dumps(status), content_type="application/json")

    return api_broadcast
