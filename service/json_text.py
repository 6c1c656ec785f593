"""Compact JSON text for the log and the web: orjson, and the standard library for what
orjson refuses.

Every row of the log and every update on the push stream is encoded: at 1,000 tables that
is thousands of objects a second, and the standard library's encoder takes about 30 µs for
a 1 KB update where orjson takes 3 µs.  The text may be spelled differently (UTF-8 rather
than ``\\u`` escapes, ``1e-7`` for ``1e-07``, ``null`` for a NaN, which JSON has no word
for) but reads back as the same values.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

__all__ = ["ORJSON_OPTIONS", "dumps", "encodable", "utf8_dumps"]

ORJSON_OPTIONS = orjson.OPT_NON_STR_KEYS
"""Keys that are numbers (or None, or booleans) written as strings, as ``json`` does: what
:func:`dumps` asks of orjson (a caller on a hot path may call orjson itself with it, and
:func:`utf8_dumps` for what orjson refuses)."""
_OPTIONS = ORJSON_OPTIONS

_FALLBACK = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
"""For what orjson refuses (an integer beyond 64 bits, say); built once, as ``json.dumps``
with options builds a new encoder on every call."""


def dumps(obj: Any) -> str:
    """``obj`` as compact JSON text (no spaces, UTF-8 characters as they are)."""
    try:
        return orjson.dumps(obj, option=_OPTIONS).decode()
    except TypeError:
        return _FALLBACK.encode(obj)


def utf8_dumps(obj: Any) -> str | None:
    """:func:`dumps`, or None when the text has no UTF-8 form (a lone surrogate in a string).
    orjson refuses such a string, so a text it wrote needs no check: only the standard
    library's is checked (:func:`encodable`)."""
    try:
        return orjson.dumps(obj, option=_OPTIONS).decode()
    except TypeError:
        text = _FALLBACK.encode(obj)
    return text if encodable(text) else None


def encodable(text: str) -> bool:
    """Whether ``text`` can be written as UTF-8 (a lone surrogate, say, from a ``"\\ud800"``
    escape in JSON or an undecodable byte in a header, cannot)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
