"""Variants: the rules the recogniser and the arbiter ask about (see :mod:`.base`).

``get_variant(id)`` returns a :class:`Variant` (ids: ``standard``, ``chess960``, ``t20``,
``twenty-chess``, ``realtime``); ``variant.new_game()`` starts a :class:`VariantGame`.
"""

from __future__ import annotations

from service.variants.base import (
    BLACK,
    EMPTY,
    WHITE,
    Action,
    Choice,
    Color,
    Drop,
    GameEnd,
    IllegalActionError,
    LegalAction,
    Move,
    NothingToUndoError,
    Remove,
    ScoreEvent,
    SquareMap,
    StartPosition,
    Swap,
    Tandem,
    UnknownStartError,
    UnknownVariantError,
    Variant,
    VariantError,
    VariantGame,
)
from service.variants.chess960 import Chess960
from service.variants.realtime import Realtime
from service.variants.standard import Standard
from service.variants.t20 import T20
from service.variants.twenty_chess import TwentyChess

VARIANTS: dict[str, type[Variant]] = {
    cls.id: cls for cls in (Standard, Chess960, T20, TwentyChess, Realtime)
}
"""Registered variants by id."""


def get_variant(variant_id: str) -> Variant:
    """The variant registered under ``variant_id``."""
    try:
        return VARIANTS[variant_id]()
    except KeyError:
        raise UnknownVariantError(variant_id, list(VARIANTS)) from None


__all__ = [
    "BLACK",
    "EMPTY",
    "T20",
    "VARIANTS",
    "WHITE",
    "Action",
    "Chess960",
    "Choice",
    "Color",
    "Drop",
    "GameEnd",
    "IllegalActionError",
    "LegalAction",
    "Move",
    "NothingToUndoError",
    "Realtime",
    "Remove",
    "ScoreEvent",
    "SquareMap",
    "Standard",
    "StartPosition",
    "Swap",
    "Tandem",
    "TwentyChess",
    "UnknownStartError",
    "UnknownVariantError",
    "Variant",
    "VariantError",
    "VariantGame",
    "get_variant",
]
