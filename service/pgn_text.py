"""The PGN text both tables write (:mod:`service.table`, :mod:`service.realtime_table`).

The seven tag roster from a table's settings, tag pairs with their values escaped, and the
movetext wrapped at 79 characters.  Pure: strings in, strings out.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["escape", "game_text", "seven_tag_roster"]

UNKNOWN_DATE = "????.??.??"
LINE_WIDTH = 79
"""Characters at most on a movetext line (PGN export format)."""


class _Players(Protocol):
    """What the roster reads of a table's settings."""

    @property
    def event(self) -> str: ...
    @property
    def site(self) -> str: ...
    @property
    def round(self) -> str: ...
    @property
    def white(self) -> str: ...
    @property
    def black(self) -> str: ...


def seven_tag_roster(settings: _Players, result: str) -> dict[str, str]:
    """Event, Site, Date (unknown), Round, White, Black and Result, in that order."""
    s = settings
    return {
        "Event": s.event, "Site": s.site, "Date": UNKNOWN_DATE, "Round": s.round,
        "White": s.white, "Black": s.black, "Result": result,
    }  # fmt: skip


def escape(value: str) -> str:
    """A tag value with its backslashes and quotes escaped."""
    return value.replace("\\", "\\\\").replace('"', '\\"')


def game_text(tags: dict[str, str], tokens: list[str]) -> str:
    """One game: the tag pairs, a blank line, then ``tokens`` (the movetext, the result
    last) joined by spaces in lines of at most :data:`LINE_WIDTH` characters (a longer
    token stands alone on its line)."""
    text = "\n".join(f'[{k} "{escape(v)}"]' for k, v in tags.items()) + "\n\n"
    line = ""
    for token in tokens:
        if line and len(line) + 1 + len(token) > LINE_WIDTH:
            text += line + "\n"
            line = token
        else:
            line = f"{line} {token}" if line else token
    return text + line + "\n"
