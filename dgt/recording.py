"""The event log: JSON lines that record what a board sent and what the driver made of it.

``dgt-service monitor --record FILE`` writes it, ``dgt-service recognize FILE`` reads it, and
people outside the project can write it by hand or from other tools.  One JSON object per
line, each with ``t`` (seconds, monotonic clock of the recording process; only differences
matter) and ``type``:

* ``{"type": "header", "format": "dgt-record", "version": 1, "source": "/dev/ttyACM0",
  "started": "2026-11-22T10:00:00+00:00"}`` — first line, optional for readers.
* ``{"type": "rx", "data": "8e00050c01"}`` — a chunk of bytes as received, in hex.
* ``{"type": "tx", "data": "42"}`` — bytes the host sent.
* ``{"type": "event", "event": NAME, ...}`` — a decoded board event, one of:

  - ``square``: ``square`` (``"e2"``), ``piece`` and ``previous`` (piece symbols, below);
  - ``snapshot``: ``board`` (placement, below) and ``reason``;
  - ``clock``: ``left``, ``right`` (seconds), ``running``, ``lever_high`` (``"left"`` or
    ``"right"``), optional ``left_flag``, ``right_flag``, ``battery_low``, ``turn``;
  - ``lever``: ``high``;  ``button``: ``button``, ``mask``;
  - ``clock_connection``: ``connected``, ``version`` (``[2, 0]`` or null), ``reason``;
  - ``memory``: ``records`` (count only; the raw bytes are in the ``rx`` lines);
  - ``link_lost``: ``reason``;  ``link_restored``: ``changed`` (square names), ``downtime``.

Piece symbols: FEN letters ``PNBRQK pnbrqk``, ``.`` empty, ``*`` occupied (presence-only
boards), ``?`` unreadable, ``=`` the draw piece, ``W`` white-wins piece, ``X`` black-wins
piece.  A placement is FEN's first field (rank 8 first, digits for runs of empty squares)
written with those symbols, in the board's own frame (connector on White's left).

Readers skip lines they do not understand (with a warning) so a log damaged at the end, or
one written by a newer version, still replays.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from dgt.events import (
    BoardEvent,
    BoardMemory,
    BoardSnapshot,
    ButtonPressed,
    ClockConnection,
    ClockUpdate,
    LeverMoved,
    LinkLost,
    LinkRestored,
    Side,
    SquareChanged,
    clock_update,
    square_changed,
)
from dgt.protocol.constants import Piece

log = logging.getLogger(__name__)

FORMAT = "dgt-record"
VERSION = 1
FILES = "abcdefgh"


def square_name(square: int) -> str:
    return FILES[square & 7] + str((square >> 3) + 1)


def parse_square(name: str) -> int:
    """``"e2"`` -> 12.  Raises ValueError with the bad name."""
    if len(name) != 2 or name[0] not in FILES or name[1] not in "12345678":
        raise ValueError(f"not a square: {name!r} (expected a file a-h and a rank 1-8)")
    return FILES.index(name[0]) + 8 * (int(name[1]) - 1)


def placement(squares: tuple[Piece, ...] | list[Piece]) -> str:
    """64 squares (index 0 = a1) as a FEN-like placement string."""
    ranks = []
    for rank in range(7, -1, -1):
        row, empty = "", 0
        for file in range(8):
            piece = squares[rank * 8 + file]
            if piece is Piece.EMPTY:
                empty += 1
                continue
            if empty:
                row += str(empty)
                empty = 0
            row += piece.symbol
        ranks.append(row + (str(empty) if empty else ""))
    return "/".join(ranks)


def parse_placement(text: str) -> tuple[Piece, ...]:
    """Inverse of :func:`placement`.  Raises ValueError saying what is wrong."""
    rows = text.split("/")
    if len(rows) != 8:
        raise ValueError(f"placement needs 8 ranks separated by '/', got {len(rows)}")
    squares = [Piece.EMPTY] * 64
    for i, row in enumerate(rows):
        rank, file = 7 - i, 0
        for ch in row:
            if ch.isdigit():
                file += int(ch)
            else:
                if file > 7:
                    break
                squares[rank * 8 + file] = Piece.from_symbol(ch)
                file += 1
        if file != 8:
            raise ValueError(f"rank {rank + 1} of the placement has {file} squares, not 8")
    return tuple(squares)


def event_to_json(event: BoardEvent) -> dict[str, Any]:
    """A board event as the JSON object of an ``event`` line (without ``t``/``type``)."""
    # Every board event of a hall passes here twice (its log row and the table's echo):
    # clock reports, the most frequent kind, are written straight away.
    if type(event) is ClockUpdate:
        return _clock_json(event)
    match event:
        case SquareChanged():
            return {
                "event": "square",
                "square": square_name(event.square),
                "piece": event.piece.symbol,
                "previous": event.previous.symbol,
            }
        case BoardSnapshot():
            return {"event": "snapshot", "board": placement(event.squares), "reason": event.reason}
        case ClockUpdate():
            return _clock_json(event)
        case LeverMoved():
            return {"event": "lever", "high": event.high.value}
        case ButtonPressed():
            return {"event": "button", "button": event.button, "mask": event.mask}
        case ClockConnection():
            return {
                "event": "clock_connection",
                "connected": event.connected,
                "version": list(event.version) if event.version else None,
                "reason": event.reason,
            }
        case BoardMemory():
            return {"event": "memory", "records": len(event.records)}
        case LinkLost():
            return {"event": "link_lost", "reason": event.reason}
        case LinkRestored():
            return {
                "event": "link_restored",
                "changed": sorted(square_name(s) for s in event.changed),
                "downtime": event.downtime,
            }
    raise TypeError(f"not a board event: {event!r}")


def _clock_json(event: ClockUpdate) -> dict[str, Any]:
    # ``_value_``: an enum member's value as a plain attribute (``.value`` is a property
    # that runs Python code, twice a clock report).
    turn = event.turn
    return {
        "event": "clock",
        "left": event.left,
        "right": event.right,
        "running": event.running,
        "lever_high": event.lever_high._value_,
        "left_flag": event.left_flag,
        "right_flag": event.right_flag,
        "battery_low": event.battery_low,
        "turn": turn._value_ if turn else None,
    }


_SIDES = {side.value: side for side in Side}


def _side(value: Any) -> Side:
    """``Side(value)``, looked up first among the two texts a log holds."""
    side = _SIDES.get(value) if type(value) is str else None
    return side if side is not None else Side(value)


def event_from_json(t: float, obj: dict[str, Any]) -> BoardEvent:
    """Inverse of :func:`event_to_json`.  Raises ValueError/KeyError/TypeError on bad input."""
    name = obj["event"]
    if name == "clock":
        turn = obj.get("turn")
        return ClockUpdate(
            t,
            float(obj["left"]),
            float(obj["right"]),
            bool(obj["running"]),
            _side(obj["lever_high"]),
            bool(obj.get("left_flag", False)),
            bool(obj.get("right_flag", False)),
            bool(obj.get("battery_low", False)),
            _side(turn) if turn else None,
        )
    if name == "square":
        return SquareChanged(
            t,
            parse_square(obj["square"]),
            Piece.from_symbol(obj["piece"]),
            Piece.from_symbol(obj.get("previous", "?")),
        )
    if name == "snapshot":
        return BoardSnapshot(t, parse_placement(obj["board"]), str(obj.get("reason", "connect")))
    if name == "lever":
        return LeverMoved(t, _side(obj["high"]))
    if name == "button":
        return ButtonPressed(t, str(obj["button"]), int(obj.get("mask", 0)))
    if name == "clock_connection":
        version = obj.get("version")
        return ClockConnection(
            t,
            bool(obj["connected"]),
            (int(version[0]), int(version[1])) if version else None,
            str(obj.get("reason", "")),
        )
    if name == "memory":
        return BoardMemory(t, ())
    if name == "link_lost":
        return LinkLost(t, str(obj.get("reason", "")))
    if name == "link_restored":
        return LinkRestored(
            t,
            frozenset(parse_square(s) for s in obj.get("changed", ())),
            float(obj.get("downtime", 0.0)),
        )
    raise ValueError(f"unknown event {name!r}")


def event_as_logged(t: float, event: BoardEvent) -> BoardEvent:
    """``event`` at time ``t`` exactly as its log line reads back:
    ``event_from_json(t, event_to_json(event))``.  The kinds a driver sends all the time
    (clock reports, square changes, lever presses) are built straight from the event, the
    others (and any event whose fields are not of the types a driver gives) through their
    JSON form."""
    if (
        type(event) is ClockUpdate
        and type(event.lever_high) is Side
        and (event.turn is None or type(event.turn) is Side)
    ):
        return clock_update(  # ClockUpdate(...), built cheaper
            t,
            float(event.left),
            float(event.right),
            bool(event.running),
            event.lever_high,
            bool(event.left_flag),
            bool(event.right_flag),
            bool(event.battery_low),
            event.turn,
        )
    if (
        type(event) is SquareChanged
        and type(event.square) is int
        and 0 <= event.square < 64  # else its name reads back as no square
        and type(event.piece) is Piece
        and type(event.previous) is Piece
    ):
        return square_changed(t, event.square, event.piece, event.previous)
    if type(event) is LeverMoved and type(event.high) is Side:
        return LeverMoved(t, event.high)
    return event_from_json(t, event_to_json(event))


@dataclass(frozen=True, slots=True)
class Chunk:
    """Bytes on the line: ``direction`` is ``"rx"`` (from the board) or ``"tx"``."""

    time: float
    direction: str
    data: bytes


class RecordWriter:
    """Writes a record line by line, flushing each so a crash loses at most the last line."""

    def __init__(self, stream: IO[str], source: str = "") -> None:
        self._stream = stream
        self._write(
            {
                "t": 0.0,
                "type": "header",
                "format": FORMAT,
                "version": VERSION,
                "source": source,
                "started": datetime.now(UTC).isoformat(timespec="seconds"),
            }
        )

    def _write(self, obj: dict[str, Any]) -> None:
        self._stream.write(json.dumps(obj, separators=(",", ":")) + "\n")
        self._stream.flush()

    def chunk(self, time: float, data: bytes, direction: str = "rx") -> None:
        self._write({"t": round(time, 6), "type": direction, "data": data.hex()})

    def event(self, event: BoardEvent) -> None:
        self._write({"t": round(event.time, 6), "type": "event", **event_to_json(event)})


def read_record(path: str | Path) -> Iterator[BoardEvent | Chunk]:
    """Events and chunks of a record in file order.  Lines that cannot be read are skipped
    with a warning naming the line number."""
    with open(path, encoding="utf-8") as stream:
        for number, line in enumerate(stream, 1):
            line = line.strip()
            if not line:
                continue
            try:
                obj = json.loads(line)
                kind = obj["type"]
                t = float(obj["t"])
                if kind == "event":
                    yield event_from_json(t, obj)
                elif kind in ("rx", "tx"):
                    yield Chunk(t, kind, bytes.fromhex(obj["data"]))
                elif kind != "header":
                    log.warning("%s:%d: unknown line type %r, skipped", path, number, kind)
            except (ValueError, KeyError, TypeError, IndexError) as exc:
                log.warning("%s:%d: unreadable line skipped (%s)", path, number, exc)
