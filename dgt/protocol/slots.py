"""Quick ``__init__`` for the frozen, slotted dataclasses built on every frame.

A frozen dataclass's generated ``__init__`` sets each field through
``object.__setattr__`` (the class's own ``__setattr__`` refuses); setting the slots
straight, through the setters :func:`slot_setters` returns, is two to three times cheaper,
and the driver builds a message and an event for every clock report and square change.
A class that does so writes its ``__init__`` out by hand with the generated one's
signature and defaults (the tests compare them); everything else (reading, comparing,
hashing, copying, ``dataclasses.replace``, refusing assignment) stays the dataclass's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

__all__ = ["slot_setters"]


def slot_setters(cls: type) -> tuple[Callable[[Any, Any], None], ...]:
    """The setters of the slots of ``cls`` (a slotted dataclass), in the order of its
    fields."""
    return tuple(cls.__dict__[f.name].__set__ for f in dataclasses.fields(cls))
