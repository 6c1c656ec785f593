"""The frozen dataclasses the driver builds on every frame set their slots straight
(``dgt.protocol.slots``): their hand-written ``__init__`` must take exactly what the
generated one would, and the objects must behave as dataclasses built the usual way."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle

import pytest

from dgt.events import ClockUpdate, LeverMoved, Side, SquareChanged
from dgt.protocol import BoardDump, ClockAck, ClockTimes, Piece

SAMPLES = [
    ClockUpdate(1.5, 60.0, 59.0, True, Side.LEFT, False, True, False, Side.RIGHT),
    ClockUpdate(2.0, 1.0, 2.0, False, Side.RIGHT),
    SquareChanged(3.0, 12, Piece.EMPTY, Piece.WPAWN),
    LeverMoved(4.0, Side.RIGHT),
    ClockTimes(bytes((0, 0x03, 0, 0, 0x02, 0x59, 0x09))),
    BoardDump(bytes(range(64))),
    ClockAck(0x10, 0x88, 0x01, 0x33),
]


@pytest.mark.parametrize("obj", SAMPLES, ids=lambda o: type(o).__name__)
def test_signature_is_the_dataclass_one(obj: object) -> None:
    cls = type(obj)
    params = list(inspect.signature(cls).parameters.values())
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    assert [p.name for p in params] == [f.name for f in fields]
    for p, f in zip(params, fields, strict=True):
        assert p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
        if f.default is dataclasses.MISSING:
            assert p.default is inspect.Parameter.empty
        else:
            assert p.default == f.default


@pytest.mark.parametrize("obj", SAMPLES, ids=lambda o: type(o).__name__)
def test_behaves_as_a_frozen_dataclass(obj: object) -> None:
    cls = type(obj)
    values = dataclasses.astuple(obj)  # type: ignore[call-overload]
    by_keyword = cls(**{f.name: v for f, v in zip(dataclasses.fields(cls), values, strict=True)})  # type: ignore[arg-type]
    assert by_keyword == obj
    assert hash(by_keyword) == hash(obj)
    assert repr(by_keyword) == repr(obj)
    assert copy.copy(obj) == obj
    assert copy.deepcopy(obj) == obj
    assert pickle.loads(pickle.dumps(obj)) == obj
    first = dataclasses.fields(cls)[0].name  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(obj, first, getattr(obj, first))
    assert not hasattr(obj, "__dict__")


def test_defaults_and_replace() -> None:
    update = ClockUpdate(1.0, 2.0, 3.0, True, Side.LEFT)
    assert (update.left_flag, update.right_flag, update.battery_low, update.turn) == (
        False, False, False, None,
    )  # fmt: skip
    moved = dataclasses.replace(update, time=9.0, turn=Side.LEFT)
    assert moved == ClockUpdate(9.0, 2.0, 3.0, True, Side.LEFT, turn=Side.LEFT)
    with pytest.raises(TypeError):
        ClockUpdate(1.0, 2.0, 3.0, True)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        SquareChanged(1.0, 2, Piece.EMPTY, Piece.EMPTY, 5)  # type: ignore[call-arg]
