"""The hall's fast path gives the table exactly the event a replay of the log reads back
(same fields, same types) as dgt.recording.event_as_logged promises."""

import dataclasses
from typing import Any

import pytest

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
)
from dgt.protocol.constants import Piece
from dgt.recording import event_as_logged, event_from_json, event_to_json

EVENTS: list[BoardEvent] = [
    ClockUpdate(1.0, 300, 299.5, True, Side.LEFT),
    ClockUpdate(1.0, 0.0, 12.25, False, Side.RIGHT, True, False, True, Side.RIGHT),
    ClockUpdate(1.0, 5.5, 6, 1, Side.RIGHT, 0, 1, 0, Side.LEFT),  # type: ignore[arg-type]
    *(SquareChanged(2.0, sq, p, q) for sq in (0, 12, 63) for p in Piece
      for q in (Piece.EMPTY, Piece.UNKNOWN, p)),
    LeverMoved(3.0, Side.LEFT), LeverMoved(3, Side.RIGHT),
    BoardSnapshot(4.0, tuple(Piece) * 4, "connect"),
    ButtonPressed(5.0, "ok", 3), ClockConnection(6.0, True, (2, 0), "x"),
    ClockConnection(6.0, False), BoardMemory(7.0, (1, 2)), LinkLost(8.0, "eof"),
    LinkRestored(9.0, frozenset({1, 63}), 2.5),
]  # fmt: skip


def typed_fields(event: Any) -> tuple[Any, ...]:
    values = ((type(v), v) for v in (getattr(event, f.name) for f in dataclasses.fields(event)))
    return (type(event), *values)


@pytest.mark.parametrize("t", [1234.5, 1_700_000_000.123456, 7])
def test_event_as_logged_is_the_json_round_trip(t: float) -> None:
    for event in EVENTS:
        expected = event_from_json(t, event_to_json(event))
        assert typed_fields(event_as_logged(t, event)) == typed_fields(expected), event
