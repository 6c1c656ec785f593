"""The frozen dataclasses the driver builds on every frame, and the recogniser's events built
on every square change and action, set their slots straight (``dgt.protocol.slots``): their
hand-written ``__init__`` must take exactly what the generated one would, and the objects
must behave as dataclasses built the usual way."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
import sys

import pytest

from dgt.events import ClockUpdate, LeverMoved, Side, SquareChanged
from dgt.protocol import BoardDump, ClockAck, ClockTimes, Piece
from service.recognize.events import Lift, MoveEvent, Place
from service.variants.base import ScoreEvent

SAMPLES = [
    ClockUpdate(1.5, 60.0, 59.0, True, Side.LEFT, False, True, False, Side.RIGHT),
    ClockUpdate(2.0, 1.0, 2.0, False, Side.RIGHT),
    SquareChanged(3.0, 12, Piece.EMPTY, Piece.WPAWN),
    LeverMoved(4.0, Side.RIGHT),
    ClockTimes(bytes((0, 0x03, 0, 0, 0x02, 0x59, 0x09))),
    BoardDump(bytes(range(64))),
    ClockAck(0x10, 0x88, 0x01, 0x33),
    Lift(1.5, 12, "P"),
    Place(2.0, 28, "*"),
    MoveEvent(3.0, 1, 1, True, "e2e4", "e4", False),
    MoveEvent(4.0, 7, 4, False, "e7e8q", "e8=Q", True, (ScoreEvent(True, 1, "x"),), (("a", "b"),)),
]


def _compiled(cls: type) -> bool:
    """Whether ``cls`` comes from the optional compiled build (``build_compiled.py``)."""
    module = sys.modules[cls.__module__]
    return not str(module.__file__).endswith(".py")


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
    # the fields as they are (astuple would turn a ScoreEvent into a tuple too)
    values = [getattr(obj, f.name) for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
    by_keyword = cls(**{f.name: v for f, v in zip(dataclasses.fields(cls), values, strict=True)})  # type: ignore[arg-type]
    assert by_keyword == obj
    assert hash(by_keyword) == hash(obj)
    assert repr(by_keyword) == repr(obj)
    if not _compiled(cls):  # a compiled class's __new__ calls __init__ (see build_compiled.py)
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


def test_recognizer_events_defaults_and_replace() -> None:
    move = MoveEvent(1.0, 1, 1, True, "e2e4", "e4", False)
    assert (move.scores, move.alternatives) == ((), ())
    assert dataclasses.replace(move, final=True) == MoveEvent(
        1.0, 1, 1, True, "e2e4", "e4", True, (), ()
    )
    lift: object = Lift(1.0, 2, "P")
    assert lift != Place(1.0, 2, "P")
    with pytest.raises(TypeError):
        Lift(1.0, 2)  # type: ignore[call-arg]
