"""``service.scaleout.edge_admin``: an edge's answers to admin commands sent through the
broker (no ``nats`` import: :mod:`service.scaleout.edge` hands the requests in).

A request is a JSON object ``{"id": "...", "table": "7", "command": "result", "args":
{...}}``, its ``args`` cleaned as the hall's web cleans an admin command's body
(:func:`service.web.admin_args.admin_args`: an edge applies exactly what its local admin API
applies); the answer is ``{"id": "...", "status": 200, "body": {...}}`` where status and
body are what the hall's own admin API answers (``{"table", "command", "events"}``, or
``{"error": "one line"}`` with its status).  A request whose id was seen is answered from
memory (the last :data:`MEMORY` answers), never applied twice; a repeat that comes while
the first is being applied waits for its answer.
"""

from __future__ import annotations

import asyncio
import json
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, Protocol

from service.hall import HallError
from service.json_text import dumps
from service.web.admin_args import admin_args

MEMORY = 4096
"""Answers kept for repeated requests."""

MAX_REQUEST = 16 * 1024
"""Largest request accepted (admin commands are small)."""


class AdminHall(Protocol):
    """What the desk needs of the hall (:class:`service.hall.Hall` fits)."""

    async def admin(
        self, table_id: str, command: str, args: Mapping[str, Any]
    ) -> list[dict[str, Any]]: ...


class AdminDesk:
    """Answers an edge's admin requests, each id once."""

    def __init__(self, hall: AdminHall, commands: frozenset[str] | None = None) -> None:
        self.hall = hall
        self.commands = commands
        """The command names taken (None: whatever the hall takes)."""
        self._answers: OrderedDict[str, asyncio.Future[bytes]] = OrderedDict()
        self.applied = 0
        self.repeats = 0

    async def answer(self, payload: bytes) -> bytes:
        """The answer (JSON bytes) to one request."""
        try:
            request = _request(payload)
        except ValueError as exc:
            return _answer(None, 400, {"error": str(exc)})
        request_id = request["id"]
        known = self._answers.get(request_id)
        if known is not None:
            self.repeats += 1
            self._answers.move_to_end(request_id)
            return await asyncio.shield(known)
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._answers[request_id] = future
        while len(self._answers) > MEMORY:
            self._answers.popitem(last=False)
        try:
            answer = await self._apply(request)
        except BaseException:
            self._answers.pop(request_id, None)
            future.cancel()
            raise
        future.set_result(answer)
        return answer

    async def _apply(self, request: dict[str, Any]) -> bytes:
        request_id, table_id, command = request["id"], request["table"], request["command"]
        args = request["args"]
        if self.commands is not None and command not in self.commands:
            return _answer(request_id, 404, {"error": f"unknown command {command[:30]!r}"})
        try:
            cleaned = admin_args(args)
        except HallError as exc:
            return _answer(request_id, exc.status, {"error": str(exc)})
        self.applied += 1
        try:
            events = await self.hall.admin(table_id, command, cleaned)
        except HallError as exc:
            return _answer(request_id, exc.status, {"error": str(exc)})
        return _answer(request_id, 200, {"table": table_id, "command": command, "events": events})


def _request(payload: bytes) -> dict[str, Any]:
    if len(payload) > MAX_REQUEST:
        raise ValueError(f"the request is larger than {MAX_REQUEST} bytes")
    try:
        request = json.loads(payload)
    except (ValueError, RecursionError):
        raise ValueError("the request is not valid JSON") from None
    if not isinstance(request, dict):
        raise ValueError("the request must be a JSON object")
    request_id, table, command = request.get("id"), request.get("table"), request.get("command")
    args = request.get("args", {})
    if not isinstance(request_id, str) or not 1 <= len(request_id) <= 64:
        raise ValueError("the request needs an id: a string of 1-64 characters")
    if not isinstance(table, str) or not isinstance(command, str):
        raise ValueError("the request needs a table and a command (strings)")
    if not isinstance(args, dict):
        raise ValueError("args must be a JSON object")
    return {"id": request_id, "table": table, "command": command, "args": args}


def _answer(request_id: str | None, status: int, body: dict[str, Any]) -> bytes:
    return dumps({"id": request_id, "status": status, "body": body}).encode("utf-8")
