"""Variants: the rules the recogniser and the arbiter ask about (see :mod:`.base`).

``get_variant(id, options)`` returns a :class:`Variant` (the ids are those of
:data:`VARIANTS`, :mod:`.registry`); ``variant.new_game()`` starts a :class:`VariantGame`.
"""

from __future__ import annotations

from service.variants.base import (
    BLACK,
    EMPTY,
    STANDARD_ID,
    WHITE,
    Action,
    Choice,
    Color,
    Drop,
    GameEnd,
    IllegalActionError,
    LegalAction,
    Move,
    NoDecisionError,
    NothingToUndoError,
    Remove,
    ScoreEvent,
    SquareMap,
    StartPosition,
    Swap,
    Tandem,
    TimeOutRule,
    UnknownStartError,
    UnknownVariantError,
    Variant,
    VariantError,
    VariantGame,
    VariantOptionsError,
)
from service.variants.chess960 import Chess960
from service.variants.realtime import Realtime
from service.variants.registry import VARIANTS, get_variant, variant_for_start
from service.variants.standard import Standard
from service.variants.t20 import T20
from service.variants.twenty_chess import TwentyChess

__all__ = [
    "BLACK",
    "EMPTY",
    "STANDARD_ID",
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
    "NoDecisionError",
    "NothingToUndoError",
    "Realtime",
    "Remove",
    "ScoreEvent",
    "SquareMap",
    "Standard",
    "StartPosition",
    "Swap",
    "Tandem",
    "TimeOutRule",
    "TwentyChess",
    "UnknownStartError",
    "UnknownVariantError",
    "Variant",
    "VariantError",
    "VariantGame",
    "VariantOptionsError",
    "get_variant",
    "variant_for_start",
]
