"""What the web edge checks in a request's text before any of it reaches the hall.

Pure functions: each takes the text a client sent and either returns what may be used or
raises :class:`ValueError` with one line the client can act on.
"""

from __future__ import annotations

import hmac
import ipaddress
import math
from collections.abc import Iterable

from service.json_text import encodable

MAX_EXACT_INT = 2**53
"""Largest whole number an admin argument may carry (every JSON reader reads it exactly)."""


def unencodable(text: str) -> bool:
    """Whether ``text`` cannot be written as UTF-8 (:func:`service.json_text.encodable`)."""
    return not encodable(text)


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


# --- header values built from user text ----------------------------------------------

_TOKEN_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.-_")
_ATTR_CHAR = _TOKEN_SAFE | frozenset("!#$&+^`|~")
"""RFC 5987 ``attr-char``: what a ``filename*`` value carries unescaped."""


def content_disposition(name: str, kind: str = "inline") -> str:
    """A ``Content-Disposition`` value naming the file ``name`` (RFC 6266): a quoted
    ``filename`` of safe ASCII characters only (anything else becomes ``_``), and, where
    that differs from ``name``, the exact name in ``filename*`` (RFC 5987, UTF-8,
    percent-encoded).  No text in ``name`` can close the quotes or add a parameter."""
    plain = "".join(ch if ch in _TOKEN_SAFE else "_" for ch in name)[:120] or "download"
    value = f'{kind}; filename="{plain}"'
    if plain != name:
        data = name.encode("utf-8", "replace")[:400]
        encoded = "".join(chr(b) if chr(b) in _ATTR_CHAR else f"%{b:02X}" for b in data)
        value += f"; filename*=UTF-8''{encoded}"
    return value


# --- the Host header (DNS rebinding) ------------------------------------------------


def _host_name(host: str) -> str | None:
    """The name in a ``Host`` header value (``name``, ``name:port``, ``[v6]:port``),
    lower case; None when the value is not of that form."""
    host = host.strip().lower()
    if host.startswith("["):
        end = host.find("]")
        if end < 0:
            return None
        name, rest = host[1:end], host[end + 1 :]
        if rest and not (rest.startswith(":") and rest[1:].isdigit()):
            return None
        return name
    name, colon, port = host.partition(":")
    if colon and not (port.isdigit() and len(port) <= 5):
        return None
    return name.rstrip(".")


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


class HostPolicy:
    """Which ``Host`` headers the service answers: its bound address, ``localhost`` (and
    the loopback addresses when bound to one), the names it is configured for, and, when
    bound to every address (``0.0.0.0``, ``::``), any address literal.  A page that got a
    browser to a foreign name resolving to the service (DNS rebinding) sends that name
    and is refused; a request without a ``Host`` (HTTP/1.0 tools) is answered."""

    def __init__(self, bind: str = "127.0.0.1", hosts: Iterable[str] = ()) -> None:
        self.names = {"localhost"} | {_host_name(h) or "" for h in hosts} - {""}
        bound = _ip(bind)
        self.any_address = bound is not None and bound.is_unspecified
        self.addresses: set[ipaddress.IPv4Address | ipaddress.IPv6Address] = set()
        if bound is not None and not bound.is_unspecified:
            self.addresses.add(bound)
        if bind == "localhost" or (bound is not None and bound.is_loopback):
            self.addresses |= {ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1")}

    def allows(self, host: str | None) -> bool:
        """Whether a request with this ``Host`` header value is for this service."""
        if host is None:
            return True
        if unencodable(host):
            return False
        name = _host_name(host)
        if name is None:
            return False
        if name in self.names:
            return True
        address = _ip(name)
        if address is None:
            return False
        return self.any_address or address in self.addresses
