"""The web's part of the pairings: ``POST /api/admin/pairings`` (admin token) seats a
round's pairings uploaded as the file's bytes (a FIDE TRF file with ``?round=N``, or a
pairings CSV; ``?name=FILE`` names it in messages), ``GET /api/pairings`` shows the last
round imported (its byes, tables without a game, boards without a table) to the pages.

A bad file is a 400 with the one-line error naming the file and the line."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from service.hall import Hall, HallError
from service.json_text import dumps
from service.pairings import MAX_FILE, PairingsError, read_pairings
from service.pairings.hall_import import desk, import_round

__all__ = ["MAX_UPLOAD", "pairings_handlers"]

MAX_UPLOAD = 512 * 1024
"""Largest pairings file taken by upload (a TRF of 1,000 players and 15 rounds fits)."""
assert MAX_UPLOAD <= MAX_FILE
_NAME = re.compile(r"^[^\x00-\x1f\x7f/\\]{1,100}$")
_CHUNK = 64 * 1024

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _json(obj: Any) -> web.Response:
    return web.Response(text=dumps(obj), content_type="application/json")


def pairings_handlers(
    hall_of: Callable[[web.Request], Hall | None], check_token: Callable[[web.Request], None]
) -> tuple[Handler, Handler]:
    """The upload handler (behind ``check_token``) and the public view of the last round;
    ``hall_of`` gives None where no hall of this process runs the tables (a read replica:
    pairings are imported at the edge, and none is shown here)."""

    async def upload(request: web.Request) -> web.StreamResponse:
        check_token(request)
        name = request.query.get("name", "upload").replace("\\", "/").rsplit("/", 1)[-1]
        if not _NAME.fullmatch(name):
            raise HallError("name must be a file name of at most 100 characters", 400)
        number: int | None = None
        text = request.query.get("round", "").strip()
        if text:
            if not text.isdigit() or not 1 <= int(text) <= 999:
                raise HallError(f"round must be a round number 1-999, not {text[:20]!r}", 400)
            number = int(text)
        if request.content_length is not None and request.content_length > MAX_UPLOAD:
            raise HallError(f"the file is larger than {MAX_UPLOAD // 1024} kB", 413)
        data = bytearray()
        while chunk := await request.content.read(_CHUNK):
            data += chunk
            if len(data) > MAX_UPLOAD:
                raise HallError(f"the file is larger than {MAX_UPLOAD // 1024} kB", 413)
        if not data.strip():
            raise HallError("no file: send the pairings file as the request's body", 400)
        try:
            round_ = read_pairings(bytes(data), name, number)
        except PairingsError as exc:
            raise HallError(str(exc), 400) from None
        hall = hall_of(request)
        if hall is None:
            raise HallError(
                "pairings are imported at the hall that runs the boards, not on a read replica",
                409,
            )
        return _json(await import_round(hall, round_))

    async def last(request: web.Request) -> web.StreamResponse:
        hall = hall_of(request)
        report = None if hall is None else desk(hall).last
        if report is None:
            return _json({"round": None, "tables": [], "byes": [], "unpaired_tables": [],
                          "no_table": []})  # fmt: skip
        return _json(report)

    return upload, last
