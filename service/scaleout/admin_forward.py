"""Admin commands from the centre to an edge by request and reply: an
:data:`~service.scaleout.replica.AdminForward` over any request function (the broker's
``request(subject, payload, timeout)``; no ``nats`` import here).

A request is ``{"id": "...", "table": "7", "command": "players", "args": {...}}`` on the
edge's admin subject; the answer is ``{"id": "...", "status": 200, "body": {...}}`` with
what the edge's own admin API answers (``{"table", "command", "events"}``, or ``{"error":
"one line"}`` with its status).  Each command gets an id of its own, so an edge that got a
request twice applies it once.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from service.hall import HallError
from service.json_text import dumps
from service.scaleout.log_wire import admin_subject
from service.scaleout.replica import AdminForward, EdgeUnreachable

Request = Callable[[str, bytes, float], Awaitable[bytes]]
"""``request(subject, payload, timeout)`` -> the reply's payload.  Raises ``TimeoutError``
when no answer came in time, anything else when the request could not be made (no edge
listening, no link to the broker)."""


def forward_by_request(
    request: Request,
    timeout: float,
    subject_of: Callable[[str], str] = admin_subject,
) -> AdminForward:
    """An :data:`~service.scaleout.replica.AdminForward` sending each command with
    ``request`` and waiting ``timeout`` seconds for its answer."""

    async def forward(
        edge_id: str, table_id: str, command: str, args: dict[str, Any]
    ) -> list[dict[str, Any]]:
        request_id = uuid.uuid4().hex
        payload = dumps({"id": request_id, "table": table_id, "command": command, "args": args})
        reply = await request(subject_of(edge_id), payload.encode(), timeout)
        try:
            answer = json.loads(reply)
            status, body = answer["status"], answer["body"]
            if answer.get("id") != request_id:
                raise ValueError("it answers another request")
            if not isinstance(status, int) or not isinstance(body, dict):
                raise TypeError("status or body")
        except (ValueError, TypeError, KeyError) as exc:
            raise EdgeUnreachable(f"edge {edge_id} answered what is no answer: {exc}") from None
        if status == 200:
            events = body.get("events")
            return list(events) if isinstance(events, list) else []
        raise HallError(str(body.get("error") or f"refused ({status})"), status)

    return forward
