"""What the web edge checks in a request's text before any of it reaches the hall.

Pure functions: each takes the text a client sent and either returns what may be used or
raises :class:`ValueError` with one line the client can act on.
"""

from __future__ import annotations

import hmac
import math

MAX_EXACT_INT = 2**53
"""Largest whole number an admin argument may carry (every JSON reader reads it exactly)."""


def unencodable(text: str) -> bool:
    """Whether ``text`` cannot be written as UTF-8 (a lone surrogate, say, from a
    ``"\\ud800"`` escape in JSON or an undecodable byte in a header)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def check_unicode(text: str, where: str) -> str:
    """``text`` when it is valid Unicode; else ValueError naming ``where``."""
    if unencodable(text):
        raise ValueError(f"{where} contains a character that is not valid Unicode")
    return text


def check_scalar(value: object, where: str) -> None:
    """A number, true/false or null an admin argument may carry: finite, and a whole
    number no larger than :data:`MAX_EXACT_INT`.  Raises ValueError."""
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, int):
        if abs(value) > MAX_EXACT_INT:
            raise ValueError(f"{where} is too large a number")
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{where} must be a finite number")
        return
    raise ValueError(f"{where} must be a string, number, true/false or null")


def token_matches(given: str, expected: str) -> bool:
    """Whether the token a client sent is the admin token.  A header's undecodable bytes
    (kept by the HTTP parser as surrogates) make it a wrong token, never an error."""
    if not given or unencodable(given):
        return False
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))
