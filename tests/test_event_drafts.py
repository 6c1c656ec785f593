"""The events the driver builds most (``dgt.events.clock_update``, ``square_changed``) are
built as a draft of the same layout made the event: they must be the very events the
classes' own constructors give, and behave as such."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

from dgt.events import (
    ClockUpdate,
    Side,
    SquareChanged,
    _ClockUpdateDraft,
    _SquareChangedDraft,
    clock_update,
    square_changed,
)
from dgt.protocol import Piece

BUILT = [
    (
        clock_update(1.5, 60.0, 59.0, True, Side.LEFT, False, True, False, Side.RIGHT),
        ClockUpdate(1.5, 60.0, 59.0, True, Side.LEFT, False, True, False, Side.RIGHT),
    ),
    (
        clock_update(2.0, 1.0, 2.0, False, Side.RIGHT, False, False, True, None),
        ClockUpdate(2.0, 1.0, 2.0, False, Side.RIGHT, battery_low=True),
    ),
    (
        square_changed(3.0, 12, Piece.EMPTY, Piece.WPAWN),
        SquareChanged(3.0, 12, Piece.EMPTY, Piece.WPAWN),
    ),
]


@pytest.mark.parametrize(
    ("draft", "cls"), [(_ClockUpdateDraft, ClockUpdate), (_SquareChangedDraft, SquareChanged)]
)
def test_a_draft_has_the_slots_of_its_event(draft: type, cls: type) -> None:
    fields = tuple(f.name for f in dataclasses.fields(cls))
    assert draft.__dict__["__slots__"] == cls.__dict__["__slots__"] == fields


@pytest.mark.parametrize(("built", "made"), BUILT, ids=lambda o: type(o).__name__)
def test_built_is_the_event_the_constructor_makes(built: object, made: object) -> None:
    assert type(built) is type(made)
    assert built == made
    assert hash(built) == hash(made)
    assert repr(built) == repr(made)
    assert dataclasses.astuple(built) == dataclasses.astuple(made)  # type: ignore[call-overload]
    assert copy.copy(built) == made
    assert pickle.loads(pickle.dumps(built)) == made
    assert dataclasses.replace(built, time=9.0) == dataclasses.replace(made, time=9.0)  # type: ignore[type-var]
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.time = 0.0  # type: ignore[attr-defined]
    assert not hasattr(built, "__dict__")
    match built:
        case ClockUpdate() | SquareChanged():
            pass
        case _:
            pytest.fail("not matched as its class")
