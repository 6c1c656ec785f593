"""The aiohttp application: routes, the admin check, error handling, the server."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.web_urldispatcher import MatchInfoError

from service.broadcast.hall_feeds import FeedTable
from service.broadcast.push import RoundSettingError, feeds_pusher, round_change
from service.config import RULE_SETS, VARIANTS
from service.hall import GameEntry, Hall, HallError
from service.json_text import dumps
from service.table import RESULTS, AdminCommand
from service.web import feeds
from service.web.admin_args import admin_args
from service.web.change_logs import game_changes_handler, table_games_handler
from service.web.edge import (
    HostPolicy,
    token_matches,
)
from service.web.limits import (
    HEADER_TIMEOUT,
    ConnectionGuard,
    connection_cap,
    raise_open_files_limit,
)
from service.web.local import LocalHall
from service.web.pairings_upload import pairings_handlers
from service.web.source import HallSource
from service.web.stream import StreamHub

logger = logging.getLogger(__name__)

STATIC = Path(__file__).parent / "static"
MAX_BODY = 16 * 1024
"""Largest request body accepted (admin commands are small)."""

ADMIN_COMMANDS = tuple(AdminCommand)
"""The admin commands, from the table's one registry (:class:`service.table.AdminCommand`)."""
CLAIM_KINDS = ("threefold", "fifty-moves", "insufficient-losing-chances", "michigan", "flag")
"""The claims a player may make through the arbiter (``claim``); the rule set says which
of them it knows."""
DECISIONS = ("accept", "reject")
"""What ``rule`` decides on a pending claim."""
_STATIC_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,40}\.(css|js|svg|html|ico)$")
_CONTENT_TYPES = {
    "css": "text/css",
    "js": "text/javascript",
    "svg": "image/svg+xml",
    "html": "text/html",
    "ico": "image/x-icon",
}
_GAME_ID = re.compile(r"^(?P<table>[A-Za-z0-9][A-Za-z0-9_.-]{0,31})-(?P<number>\d{1,6})$")
_SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
    ),
}


class _MalformedRequestFilter(logging.Filter):
    """aiohttp logs a request it cannot parse at error level with a traceback; the client
    got its 400 already, so it becomes one line at info level here."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, HttpProcessingError):
            message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            logger.info("malformed request refused: %s", message[:200])
            return False
        return True


_FILTER = _MalformedRequestFilter()


def quiet_malformed_requests() -> None:
    """Install the filter on aiohttp's server logger (idempotent)."""
    server_logger = logging.getLogger("aiohttp.server")
    if _FILTER not in server_logger.filters:
        server_logger.addFilter(_FILTER)


SOURCE_KEY: web.AppKey[HallSource] = web.AppKey("source")
"""The tables the app shows (:class:`service.web.source.HallSource`): the app reads
nothing else of them."""
HUB_KEY: web.AppKey[StreamHub] = web.AppKey("hub", StreamHub)
TOKEN_KEY: web.AppKey[str] = web.AppKey("token", str)
HOSTS_KEY: web.AppKey[HostPolicy] = web.AppKey("hosts", HostPolicy)
GUARD_KEY: web.AppKey[ConnectionGuard] = web.AppKey("guard", ConnectionGuard)


def json_error(status: int, message: str) -> web.Response:
    """The one error shape: ``{"error": "one line"}``."""
    line = (message.strip().splitlines() or ["error"])[0][:300]
    return web.Response(
        status=status, text=dumps({"error": line}) + "\n", content_type="application/json"
    )


def json_response(obj: Any, status: int = 200) -> web.Response:
    return web.Response(status=status, text=dumps(obj), content_type="application/json")


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def errors_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Every failure becomes a one-line JSON error; the service keeps running.

    No exception outlives the request with its traceback: aiohttp raises the one
    exception an unmatched route holds, so route, exception, traceback and the handler's
    frame make a reference cycle that only the cycle collector frees, and while the hall
    paces the collector that garbage waits in the frozen generation (a flood of requests
    to unknown paths grew the process by kilobytes a request).  An unmatched route is
    answered without raising (:func:`unmatched_middleware`), and every exception caught
    here drops its traceback."""
    try:
        response = await handler(request)
    except web.HTTPException as exc:
        exc.__traceback__ = None
        if exc.status < 400:
            raise
        return _http_error(exc)
    except HallError as exc:
        exc.__traceback__ = None
        return json_error(exc.status, str(exc))
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        logger.exception("request %s %s failed", request.method, request.path)
        exc.__traceback__ = None
        return json_error(500, "internal error (see the service log)")
    return response


@web.middleware
async def connection_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Counts the requests being answered on each connection: a connection with none is
    the first closed when the connections reach their cap (see :mod:`service.web.limits`)."""
    guard = request.app[GUARD_KEY]
    transport = request.transport
    guard.answering(transport, 1)
    try:
        return await handler(request)
    finally:
        guard.answering(transport, -1)


@web.middleware
async def unmatched_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """A request no route matches gets its 404 or 405 without the exception aiohttp keeps
    for it being raised (see :func:`errors_middleware`)."""
    match_info = request.match_info
    if isinstance(match_info, MatchInfoError):
        return _http_error(match_info.http_exception)
    return await handler(request)


def _http_error(exc: web.HTTPException) -> web.Response:
    """``exc`` as the one-line JSON error (405 keeps its ``Allow`` header)."""
    reason = exc.text if exc.text and not exc.text.startswith(f"{exc.status}:") else exc.reason
    response = json_error(exc.status, reason or "error")
    allow = exc.headers.get("Allow")
    if allow is not None:
        response.headers["Allow"] = allow
    return response


@web.middleware
async def host_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """A request for a name the service is not bound to or configured for (a page on a
    foreign name resolving to this address: DNS rebinding) is refused with 421."""
    if not request.app[HOSTS_KEY].allows(request.headers.get("Host")):
        raise web.HTTPMisdirectedRequest(
            text="this service does not answer to that Host name "
            "(add it to [service] hosts in the config)"
        )
    return await handler(request)


async def _security_headers(request: web.Request, response: web.StreamResponse) -> None:
    for key, value in _SECURITY_HEADERS.items():
        response.headers.setdefault(key, value)


def _source(request: web.Request) -> HallSource:
    return request.app[SOURCE_KEY]


def _pairings_hall(request: web.Request) -> Hall | None:
    source = _source(request)
    return source.hall if isinstance(source, LocalHall) else None


def _table_id(request: web.Request) -> str:
    """The table the path names (404 when there is no such table)."""
    table_id = request.match_info["table"]
    if not _source(request).has_table(table_id):
        raise HallError(f"no table {table_id[:40]!r}", 404)
    return table_id


# --- pages --------------------------------------------------------------------------


async def overview_page(request: web.Request) -> web.StreamResponse:
    return web.FileResponse(STATIC / "index.html")


async def admin_page(request: web.Request) -> web.StreamResponse:
    """The organiser's page: public like the others; the token guards the API it calls."""
    response = web.FileResponse(STATIC / "admin.html")
    response.headers["Cache-Control"] = "no-store"
    return response


async def table_page(request: web.Request) -> web.StreamResponse:
    _table_id(request)
    return web.FileResponse(STATIC / "table.html")


async def static_file(request: web.Request) -> web.StreamResponse:
    name = request.match_info["name"]
    match = _STATIC_NAME.match(name)
    if match is None:
        raise HallError("no such file", 404)
    path = (STATIC / name).resolve()
    if path.parent != STATIC.resolve() or not path.is_file():
        raise HallError("no such file", 404)
    response = web.FileResponse(path)
    response.content_type = _CONTENT_TYPES[match.group(1)]
    return response


# --- JSON ---------------------------------------------------------------------------


async def api_tables(request: web.Request) -> web.StreamResponse:
    source = _source(request)
    source.settle()
    tables = [source.summary(tid) for tid in source.table_ids()]
    return json_response({"tables": tables})


async def api_table(request: web.Request) -> web.StreamResponse:
    table_id = _table_id(request)
    source = _source(request)
    source.settle()
    return json_response(source.state(table_id))


async def api_table_log(request: web.Request) -> web.StreamResponse:
    table_id = _table_id(request)
    source = _source(request)
    source.settle()
    after = _int_query(request, "after", 0)
    limit = min(_int_query(request, "limit", 500), 5000)
    rows = source.outputs(table_id, after=after, limit=limit)
    return json_response({"table": table_id, "events": [{"seq": s, **e} for s, e in rows]})


async def api_table_corrections(request: web.Request) -> web.StreamResponse:
    """The change log of the game at the table (corrections, players, result), as of the
    last commit."""
    table_id = _table_id(request)
    source = _source(request)
    source.settle()
    changes = source.corrections(table_id)
    return json_response({"table": table_id, "corrections": changes})


def _int_query(request: web.Request, key: str, default: int) -> int:
    value = request.query.get(key)
    if value is None:
        return default
    if not value.isdigit() or len(value) > 12:
        raise HallError(f"{key} must be a whole number", 400)
    return int(value)


def _game_info(runner: FeedTable, entry: GameEntry) -> dict[str, Any]:
    pgn = runner.game_pgn(entry)
    headers = {
        key: re.sub(r"\\(.)", r"\1", value)
        for key, value in re.findall(r'^\[(\w+) "((?:[^"\\]|\\.)*)"\]$', pgn, re.MULTILINE)
    }
    return {
        "id": f"{runner.id}-{entry.number}",
        "table": runner.id,
        "number": entry.number,
        "round": headers.get("Round", entry.round),
        "white": headers.get("White", "?"),
        "black": headers.get("Black", "?"),
        "result": headers.get("Result", "*"),
        "finished": entry.pgn is not None,
        "pgn": f"/games/{runner.id}-{entry.number}.pgn",
    }


async def api_status(request: web.Request) -> web.StreamResponse:
    """``{"store": {...}}``: whether the store writes (``state`` ok or failing), the rows
    kept in memory meanwhile (``unstored``), why, and the tables shown as of their last
    commit until it writes again (``tables_behind``)."""
    source = _source(request)
    source.settle()
    return json_response({"store": source.store_status()})


async def api_games(request: web.Request) -> web.StreamResponse:
    source = _source(request)
    source.settle()
    return json_response({"games": [_game_info(r, e) for r, e in source.games()]})


# --- PGN ----------------------------------------------------------------------------


async def pgn_game(request: web.Request) -> web.StreamResponse:
    source = _source(request)
    match = _GAME_ID.match(request.match_info["game"])
    if match is None:
        raise HallError("a game id is TABLE-NUMBER, like 3-1", 404)
    number = int(match["number"])
    text = feeds.game_text(source, match["table"], number)
    if text is None:
        raise HallError("no such game", 404)
    return feeds.pgn_response(text, f"{match['table']}-{number}.pgn")


# --- the stream ---------------------------------------------------------------------


async def stream(request: web.Request) -> web.StreamResponse:
    """``/api/stream`` (overview: every table, summaries) or ``?table=ID`` (one table,
    its whole state; with ``&diff=1`` its whole state once, then ``diff`` events)."""
    source = _source(request)
    hub = request.app[HUB_KEY]
    table = request.query.get("table")
    if table is not None and not source.has_table(table):
        raise HallError(f"no table {table[:40]!r}", 404)
    diff = _diff_query(request, table)
    refusal = hub.refusal(request.remote)
    if refusal is not None:
        raise HallError(refusal, 503)
    response = web.StreamResponse(
        headers={
            "Content-Type": "text/event-stream",
            "Cache-Control": "no-cache",
            "X-Accel-Buffering": "no",
        }
    )
    await response.prepare(request)
    tables = [table] if table is not None else list(source.table_ids())
    full = table is not None
    source.settle()
    client = hub.open(tables if table is not None else None, full, request.remote, diff=diff)
    guard = request.app[GUARD_KEY]
    guard.streaming(request.transport, lambda: hub.hang_up(client))
    try:
        await response.write(hub.opening(client, tables))
        while True:
            data = await hub.next_write(client)
            if data is None:
                break
            await response.write(data)
    except (ConnectionResetError, ConnectionError):
        pass
    finally:
        hub.drop(client)
        guard.streaming(request.transport, None)
    return response


def _diff_query(request: web.Request, table: str | None) -> bool:
    """Whether a stream asks for diffs (``diff=1``, only with ``table``)."""
    value = request.query.get("diff")
    if value is None or value == "0":
        return False
    if value != "1":
        raise HallError("diff must be 1 or 0", 400)
    if table is None:
        raise HallError("diff=1 needs table=ID (the overview's stream sends summaries)", 400)
    return True


# --- admin --------------------------------------------------------------------------


def _check_token(request: web.Request) -> None:
    expected = request.app[TOKEN_KEY]
    header = request.headers.get("Authorization", "")
    given = header[7:].strip() if header[:7].lower() == "bearer " else ""
    given = given or request.headers.get("X-Admin-Token", "")
    if not token_matches(given, expected):
        raise web.HTTPUnauthorized(
            text="admin token missing or wrong (send 'Authorization: Bearer TOKEN')",
            headers={"WWW-Authenticate": 'Bearer realm="dgt-service"'},
        )


async def admin_command(request: web.Request) -> web.StreamResponse:
    _check_token(request)
    table_id = _table_id(request)
    command = request.match_info["command"]
    if command not in ADMIN_COMMANDS:
        raise HallError(f"unknown command {command[:30]!r}: use {', '.join(ADMIN_COMMANDS)}", 404)
    if request.content_length is not None and request.content_length > MAX_BODY:
        raise HallError(f"the body is larger than {MAX_BODY} bytes", 413)
    raw = await request.read()
    if len(raw) > MAX_BODY:
        raise HallError(f"the body is larger than {MAX_BODY} bytes", 413)
    try:
        body = json.loads(raw.decode("utf-8")) if raw.strip() else {}
    except RecursionError:
        raise HallError("the body is not valid JSON: nested too deeply", 400) from None
    except ValueError as exc:  # bad UTF-8, bad JSON, a number of too many digits
        raise HallError(f"the body is not valid JSON: {exc}", 400) from None
    args = admin_args(body)
    events = await _source(request).admin(table_id, command, args)
    return json_response({"table": table_id, "command": command, "events": events})


async def admin_options(request: web.Request) -> web.StreamResponse:
    """What the admin commands accept (also how the admin page checks its token)."""
    _check_token(request)
    return json_response(
        {
            "commands": list(ADMIN_COMMANDS),
            "rules": list(RULE_SETS),
            "variants": list(VARIANTS),
            "results": list(RESULTS),
            "decisions": list(DECISIONS),
            "claim_kinds": list(CLAIM_KINDS),
        }
    )


async def admin_broadcast(request: web.Request) -> web.StreamResponse:
    """``POST /api/admin/broadcast``: change one round of the lichess pushes while the
    service runs (``round``; ``lichess_id``, ``enabled``, ``delay``, each optional; a new
    round needs its ``lichess_id``); answers what ``GET /api/broadcast`` answers.  The
    lichess token is the config's: it never comes or goes here."""
    _check_token(request)
    pusher = feeds_pusher(_source(request).feeds())  # a hall's, or a centre's replica's
    if pusher is None:
        raise HallError(
            "no lichess pushes here: start the service with [broadcast] in its config "
            "(the lichess token is read from there)",
            409,
        )
    if request.content_length is not None and request.content_length > MAX_BODY:
        raise HallError(f"the body is larger than {MAX_BODY} bytes", 413)
    raw = await request.read()
    try:
        body = json.loads(raw.decode("utf-8")) if raw.strip() else {}
    except RecursionError:
        raise HallError("the body is not valid JSON: nested too deeply", 400) from None
    except ValueError as exc:
        raise HallError(f"the body is not valid JSON: {exc}", 400) from None
    if not isinstance(body, dict):
        raise HallError("the body must be a JSON object", 400)
    try:
        pusher.configure_round(round_change(body))
    except RoundSettingError as exc:
        raise HallError(str(exc), 400) from None
    return json_response(pusher.status())


async def api_edges(request: web.Request) -> web.StreamResponse:
    """``{"edges": [...]}``: the edges whose tables a read replica shows, each with its
    last heartbeat; ``{"edges": null}`` for a hall of its own."""
    return json_response({"edges": _source(request).edges()})


def source_of(hall: Hall | HallSource) -> HallSource:
    """What the app reads: a hall of this process through its adapter, any other source
    as it is."""
    return LocalHall(hall) if isinstance(hall, Hall) else hall


def create_app(
    hall: Hall | HallSource,
    token: str,
    *,
    expose_timing: bool = False,
    hosts: HostPolicy | None = None,
) -> web.Application:
    """The application serving ``hall`` (a hall of this process, or any
    :class:`~service.web.source.HallSource`: a read replica); ``token`` guards the admin
    API; ``hosts`` says which ``Host`` names it answers (by default those of 127.0.0.1)."""
    if len(token) < 8:
        raise ValueError("the admin token must have at least 8 characters")
    quiet_malformed_requests()
    app = web.Application(
        middlewares=[
            connection_middleware,
            errors_middleware,
            host_middleware,
            unmatched_middleware,
            feeds.conditional_middleware,
        ],
        client_max_size=MAX_BODY,
    )
    source = source_of(hall)
    app[SOURCE_KEY] = source
    app[HOSTS_KEY] = hosts or HostPolicy()
    app[GUARD_KEY] = ConnectionGuard()
    hub = StreamHub(source, expose_timing=expose_timing)
    app[HUB_KEY] = hub
    app[TOKEN_KEY] = token
    app.on_response_prepare.append(_security_headers)

    async def shutdown(_app: web.Application) -> None:
        hub.close()

    app.on_shutdown.append(shutdown)
    r = app.router
    r.add_get("/", overview_page)
    r.add_get("/tables/{table}", table_page)
    r.add_get("/admin", admin_page)
    r.add_get("/static/{name}", static_file)
    r.add_get("/api/tables", api_tables)
    r.add_get("/api/tables/{table}", api_table)
    r.add_get("/api/tables/{table}/log", api_table_log)
    r.add_get("/api/tables/{table}/corrections", api_table_corrections)
    r.add_get("/api/games", api_games)
    r.add_get("/api/status", api_status)
    r.add_get("/api/edges", api_edges)
    r.add_get("/api/stream", stream)
    pgn_all, pgn_round = feeds.make_handlers(_source)
    r.add_get("/games.pgn", pgn_all)
    r.add_get("/games/{game}.pgn", pgn_game)
    r.add_get("/rounds/{round}.pgn", pgn_round)
    r.add_get("/api/broadcast", feeds.broadcast_handler(_source, _check_token))
    r.add_get("/api/admin/options", admin_options)
    r.add_post("/api/admin/tables/{table}/{command}", admin_command)
    upload_pairings, last_pairings = pairings_handlers(_pairings_hall, _check_token)
    r.add_post("/api/admin/pairings", upload_pairings)
    r.add_get("/api/pairings", last_pairings)
    r.add_get("/api/games/{game}/corrections", game_changes_handler(_source))
    r.add_get("/api/tables/{table}/games", table_games_handler(_source))
    r.add_post("/api/admin/broadcast", admin_broadcast)
    return app


class WebServer:
    """The application on a TCP port (127.0.0.1 unless told otherwise)."""

    def __init__(
        self,
        hall: Hall | HallSource,
        token: str,
        *,
        bind: str = "127.0.0.1",
        port: int = 8080,
        expose_timing: bool = False,
        hosts: Iterable[str] = (),
    ) -> None:
        self.app = create_app(
            hall, token, expose_timing=expose_timing, hosts=HostPolicy(bind, hosts)
        )
        self.bind = bind
        self.port = port
        self._runner: web.AppRunner | None = None
        self._server: asyncio.AbstractServer | None = None

    @property
    def hub(self) -> StreamHub:
        return self.app[HUB_KEY]

    @property
    def guard(self) -> ConnectionGuard:
        return self.app[GUARD_KEY]

    async def start(self) -> str:
        """Listen; returns the base URL (``http://127.0.0.1:8080/``)."""
        open_files = raise_open_files_limit()
        cap = connection_cap(open_files, len(self.app[SOURCE_KEY].table_ids()))
        logger.info("open files: limit %s; web connections held at most: %d", open_files, cap)
        self._runner = web.AppRunner(
            self.app, access_log=None, shutdown_timeout=1.0, keepalive_timeout=HEADER_TIMEOUT
        )
        await self._runner.setup()
        server = self._runner.server
        assert server is not None  # set up
        self.guard.serve(server, cap)
        try:
            self._server = await asyncio.get_running_loop().create_server(
                self.guard, self.bind, self.port, backlog=128, reuse_address=True
            )
        except OSError as exc:
            await self._runner.cleanup()
            self._runner = None
            raise OSError(
                f"cannot listen on {self.bind}:{self.port}: {exc.strerror or exc} "
                "(another service may be running there: stop it, or start this one with "
                "another --port and another --db)"
            ) from None
        host, port = self._server.sockets[0].getsockname()[:2]
        self.port = port
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}/"

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
