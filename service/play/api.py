"""The calls of the eboards API, pure: a client's message in, the messages to send out.

What a client sends (each a JSON object with an ``id`` it chooses and a ``call``):

* ``{"id":1,"call":"eboards"}`` -- answered ``{"response":"call","id":1,"param":[...]}``,
  one entry per connected board (``serialnr``, ``source``, ``state`` as LiveChess names
  it, ``board``, ``flipped``, ``clock``, ``battery``, ``comment``);
* ``{"id":2,"call":"subscribe","param":{"feed":"eboardevent","id":F,"param":{"serialnr":S}}}``
  -- answered ``{"response":"call","id":2,"param":null}``, then a feed message
  ``{"response":"feed","id":F,"param":{"serialnr","flipped","board","clock","san"}}``
  with the board as it stands, and another each time one of them changes;
* ``{"id":4,"call":"unsubscribe","param":{"id":F}}`` -- the feed ``F`` stops;
* ``{"id":3,"call":"call","param":{"id":F,"method":"setup","param":{"fen":FEN}}}`` -- the
  board of feed ``F`` (or, with ``"serialnr"`` in the inner param, that board; with one
  board, that one) restarts its reading from ``FEN``.

Anything else -- an unknown call or method, a message that is not JSON, a board that is
not there -- is answered with an error object ``{"response":"error","id":ID,"param":
{"message":"..."}}``; the connection stays open.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from service.play.eboard import Eboard, SetupError

__all__ = ["Api", "Call", "Session"]

log = logging.getLogger(__name__)

Message = dict[str, Any]

FEED = "eboardevent"


class Call(StrEnum):
    EBOARDS = "eboards"
    SUBSCRIBE = "subscribe"
    UNSUBSCRIBE = "unsubscribe"
    CALL = "call"


class Method(StrEnum):
    SETUP = "setup"


class ApiError(Exception):
    """A call that cannot be answered; its message goes to the client."""


def answer(call_id: Any, param: Any) -> Message:
    return {"response": "call", "id": call_id, "param": param}


def error(call_id: Any, message: str) -> Message:
    return {"response": "error", "id": call_id, "param": {"message": message}}


def feed_message(feed_id: Any, param: Mapping[str, Any]) -> Message:
    return {"response": "feed", "id": feed_id, "param": dict(param)}


@dataclass
class Session:
    """One client connection: its subscriptions (feed id -> serial number) and, per feed,
    the last param sent (a feed is sent again only when it changed)."""

    feeds: dict[Any, str] = field(default_factory=dict)
    sent: dict[Any, dict[str, Any]] = field(default_factory=dict)

    def updates(self, boards: Mapping[str, Eboard]) -> list[Message]:
        """The feed messages for the boards whose feed changed since last sent."""
        out: list[Message] = []
        for feed_id, serialnr in self.feeds.items():
            board = boards.get(serialnr)
            if board is None:
                continue
            param = board.feed_param()
            if self.sent.get(feed_id) != param:
                self.sent[feed_id] = param
                out.append(feed_message(feed_id, param))
        return out


class Api:
    """The calls over a set of boards (by serial number)."""

    def __init__(self, boards: Mapping[str, Eboard]) -> None:
        self.boards = boards

    def handle(self, session: Session, text: str | bytes, now: float) -> list[Message]:
        """Answer one message; the feed messages it causes come after the answer."""
        try:
            message = json.loads(text)
        except (ValueError, UnicodeDecodeError):
            return [error(None, "not JSON")]
        if not isinstance(message, dict):
            return [error(None, "a message is a JSON object")]
        call_id = message.get("id")
        try:
            return self._dispatch(session, message, call_id, now)
        except ApiError as exc:
            return [error(call_id, str(exc))]

    def _dispatch(
        self, session: Session, message: Mapping[str, Any], call_id: Any, now: float
    ) -> list[Message]:
        name = message.get("call")
        param = message.get("param")
        if name == Call.EBOARDS:
            return [answer(call_id, [board.describe() for board in self.boards.values()])]
        if name == Call.SUBSCRIBE:
            return self._subscribe(session, param, call_id)
        if name == Call.UNSUBSCRIBE:
            inner = _object(param, "unsubscribe")
            feed_id = inner.get("id")
            if feed_id not in session.feeds:
                raise ApiError(f"no feed {feed_id!r} to unsubscribe")
            del session.feeds[feed_id]
            session.sent.pop(feed_id, None)
            return [answer(call_id, None)]
        if name == Call.CALL:
            return self._call(session, param, call_id, now)
        raise ApiError(f"unknown call {name!r}")

    def _subscribe(self, session: Session, param: Any, call_id: Any) -> list[Message]:
        inner = _object(param, "subscribe")
        feed = inner.get("feed")
        if feed != FEED:
            raise ApiError(f"unknown feed {feed!r} (known: {FEED})")
        feed_id = inner.get("id")
        if not isinstance(feed_id, int | str) or isinstance(feed_id, bool):
            raise ApiError("subscribe needs a feed id (param.id)")
        target = inner.get("param")
        serialnr = target.get("serialnr") if isinstance(target, dict) else None
        board = self._board(serialnr)
        session.feeds[feed_id] = board.serialnr
        session.sent.pop(feed_id, None)
        return [answer(call_id, None), *session.updates({board.serialnr: board})]

    def _call(self, session: Session, param: Any, call_id: Any, now: float) -> list[Message]:
        inner = _object(param, "call")
        method = inner.get("method")
        if method != Method.SETUP:
            raise ApiError(f"unknown method {method!r} (known: {Method.SETUP})")
        args = inner.get("param")
        if not isinstance(args, dict) or not isinstance(args.get("fen"), str):
            raise ApiError("setup needs param.fen")
        serialnr = args.get("serialnr")
        if serialnr is None:
            serialnr = session.feeds.get(inner.get("id"))
        board = self._board(serialnr)
        try:
            board.setup(args["fen"], now)
        except SetupError as exc:
            raise ApiError(str(exc)) from None
        return [answer(call_id, None), *session.updates(self.boards)]

    def _board(self, serialnr: Any) -> Eboard:
        if serialnr is None or serialnr == "":
            if len(self.boards) == 1:
                return next(iter(self.boards.values()))
            raise ApiError("name the board (serialnr)")
        board = self.boards.get(str(serialnr))
        if board is None:
            raise ApiError(f"no board {serialnr!r} (boards: {', '.join(self.boards) or 'none'})")
        return board


def _object(param: Any, call: str) -> Mapping[str, Any]:
    if not isinstance(param, dict):
        raise ApiError(f"{call} needs a param object")
    return param
