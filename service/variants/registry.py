"""The registry of variants: every id a table, the configuration, the command line and the
web know, in the order they are offered, with the class that builds each."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from service.variants.base import StartPosition, UnknownVariantError, Variant
from service.variants.chess960 import Chess960
from service.variants.realtime import Realtime
from service.variants.standard import Standard
from service.variants.t20 import T20
from service.variants.twenty_chess import TwentyChess

VARIANTS: Mapping[str, type[Variant]] = MappingProxyType(
    {cls.id: cls for cls in (Standard, Chess960, T20, TwentyChess, Realtime)}
)
"""Every variant by id: the class (its ``name`` says what it is; ``from_options`` builds one
from a table's options text)."""


def get_variant(variant_id: str, options: str | None = None) -> Variant:
    """The variant registered under ``variant_id``, built from ``options`` (the table's
    options text; only some variants take any).  Raises :class:`UnknownVariantError` for an
    unknown id and :class:`~service.variants.base.VariantError` (a ``ValueError``) for
    options the variant does not take."""
    try:
        cls = VARIANTS[variant_id]
    except KeyError:
        raise UnknownVariantError(variant_id, list(VARIANTS)) from None
    return cls.from_options(options)


def variant_for_start(variant: Variant, start: StartPosition) -> Variant:
    """The variant a game from ``start`` is played in at a table (or by a recogniser) set to
    ``variant``: ``variant`` itself for its own starts and, where it plays from the classical
    set-up (:attr:`Variant.plays_classical_start`), for the standard start; else the
    variant the start belongs to (a T20 start seen at a standard table starts T20)."""
    if start.variant == variant.id:
        return variant
    if start.variant == Standard.id and variant.plays_classical_start:
        return variant
    return get_variant(start.variant)
