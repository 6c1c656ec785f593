"""What a table says: its events (:class:`TableEvent`), its phase and how its board's link
stands (:class:`Phase`, :class:`Link`: the strings the log and the web have always held),
and the small pure steps both kinds of table take on every board event."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

import chess

from dgt.events import (
    BoardEvent,
    ClockConnection,
    ClockUpdate,
    LeverMoved,
    LinkLost,
    LinkRestored,
    Side,
    SquareChanged,
)
from dgt.protocol.constants import Piece
from dgt.recording import event_to_json
from service.recognize.events import MoveEvent

__all__ = [
    "Link",
    "Phase",
    "TableEvent",
    "clock_present_after",
    "event_data",
    "lever_json",
    "link_after",
    "move_data",
    "players_event",
    "square_data",
    "square_json",
]

_SQUARE_NAMES = chess.SQUARE_NAMES

_SYMBOLS = {piece: piece.symbol for piece in Piece}

_SIDE_VALUES = {side: side.value for side in Side}

_LEFT = Side.LEFT  # (an enum member off its class is read through the enum's metaclass)
_RIGHT = Side.RIGHT


class Phase(StrEnum):
    """Where a table's game stands: set-up (no game yet), playing, finished."""

    SETUP = "setup"
    PLAYING = "playing"
    FINISHED = "finished"


class Link(StrEnum):
    """The board's link as the table saw it: unknown (no event yet), up, down."""

    UNKNOWN = "unknown"
    UP = "up"
    DOWN = "down"


@dataclass(slots=True)
class TableEvent:
    """One entry of a table's event log.  Not changed once made (nothing assigns its
    fields; not frozen: a table makes two or three an input, and a frozen dataclass's
    fields cost a call each to set)."""

    time: float
    type: str
    data: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"time": self.time, "type": self.type, **self.data}


class _ToJson(Protocol):
    def to_json(self) -> dict[str, Any]: ...


def event_data(item: _ToJson) -> dict[str, Any]:
    """An event's JSON without its ``type`` and ``time`` (a table event carries both)."""
    data = item.to_json()
    data.pop("type", None)
    data.pop("time", None)
    return data


def square_data(square: int, piece: str) -> dict[str, Any]:
    """:func:`event_data` of a recogniser's :class:`~service.recognize.Lift` or
    :class:`~service.recognize.Place` on ``square`` (``piece``), built straight."""
    return {"square": _SQUARE_NAMES[square], "piece": piece}


def move_data(item: MoveEvent) -> dict[str, Any]:
    """:func:`event_data` of a recogniser's :class:`~service.recognize.MoveEvent`, built
    straight (the same members in the same order: a move is made many times a second in a
    hall)."""
    data: dict[str, Any] = {
        "ply": item.ply,
        "number": item.number,
        "side": "white" if item.side else "black",
        "uci": item.uci,
        "san": item.san,
        "final": item.final,
    }
    if item.scores:
        data["scores"] = [
            {"side": "white" if s.side else "black", "points": s.points, "reason": s.reason}
            for s in item.scores
        ]
    if item.alternatives:
        data["alternatives"] = [{"uci": uci, "san": san} for uci, san in item.alternatives]
    return data


def square_json(event: SquareChanged) -> dict[str, Any]:
    """``event_to_json(event)`` of a square change, written straight (a hall's tables take
    many of these a second: the table's echo and the store's input row each write one)."""
    square = event.square
    if type(square) is int and 0 <= square < 64:
        symbols = _SYMBOLS
        piece, previous = event.piece, event.previous
        if type(piece) is Piece and type(previous) is Piece:
            return {"event": "square", "square": _SQUARE_NAMES[square],
                    "piece": symbols[piece], "previous": symbols[previous]}  # fmt: skip
    return event_to_json(event)


def lever_json(event: LeverMoved) -> dict[str, Any]:
    """``event_to_json(event)`` of a lever press, written straight."""
    high = event.high
    if high is _LEFT or high is _RIGHT:
        return {"event": "lever", "high": _SIDE_VALUES[high]}
    return event_to_json(event)


def players_event(now: float, white: str, black: str) -> TableEvent:
    """The ``players`` event: the players are now ``white`` and ``black``."""
    return TableEvent(now, "players", {"white": white, "black": black})


def link_after(link: Link, event: BoardEvent) -> Link:
    """The board link after ``event``: down after a :class:`LinkLost`, up after a
    :class:`LinkRestored` or any first event."""
    if isinstance(event, LinkLost):
        return Link.DOWN
    if isinstance(event, LinkRestored) or link is Link.UNKNOWN:
        return Link.UP
    return link


def clock_present_after(present: bool, event: BoardEvent) -> bool:
    """Whether the board has a clock after ``event``: as a :class:`ClockConnection` says,
    yes after a :class:`ClockUpdate`, else as before."""
    if isinstance(event, ClockConnection):
        return event.connected
    if isinstance(event, ClockUpdate):
        return True
    return present
