"""Where a key of a TOML text is written: line numbers for config errors.

:mod:`tomllib` keeps no positions, so :class:`KeyLines` reads the text once, line by line,
and notes the line of every ``[table]`` / ``[[array]]`` header and every ``key = ...``,
under its whole path: ``("table", 2, "options")`` is the ``options`` key of the third
``[[table]]``.  It is an approximation made for the usual layouts (one key a line, headers
on their own lines): a value inside an inline table or a multi-line array is found at the
line of the key that holds it, and :meth:`KeyLines.line` falls back to the nearest enclosing
path it knows (the table's header), then to line 1.  Pure: no I/O.
"""

from __future__ import annotations

import re
import tomllib

KeyPath = tuple[str | int, ...]
"""A key's path: names, with the index of each element of an array of tables."""

_KEY = r"""(?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|'[^']*')"""
_DOTTED = rf"{_KEY}(?:\s*\.\s*{_KEY})*"
_HEADER = re.compile(rf"^\s*(\[\[|\[)\s*({_DOTTED})\s*\]\]?\s*(?:#.*)?$")
_ASSIGN = re.compile(rf"^\s*({_DOTTED})\s*=(.*)$")
_PART = re.compile(_KEY)


def _names(dotted: str) -> tuple[str, ...]:
    """``a."b.c".d`` -> ``("a", "b.c", "d")``: quotes dropped, escapes read."""
    return tuple(_name(part) for part in _PART.findall(dotted))


def _name(part: str) -> str:
    if part[0] == '"' and "\\" in part:
        try:
            return str(tomllib.loads(f"k = {part}")["k"])
        except tomllib.TOMLDecodeError:
            pass
    return part[1:-1] if part[0] in "\"'" else part


class KeyLines:
    """The line (1-based) of each header and key of a TOML ``text``."""

    def __init__(self, text: str) -> None:
        self._lines: dict[KeyPath, int] = {}
        arrays: dict[KeyPath, int] = {}  # an array of tables -> how many elements so far
        section: KeyPath = ()
        open_string: str | None = None  # the quotes of a multi-line string being read

        def resolve(names: tuple[str, ...]) -> KeyPath:
            path: KeyPath = ()
            for name in names:
                path = (*path, name)
                if path in arrays:
                    path = (*path, arrays[path] - 1)  # its last element so far
            return path

        for number, line in enumerate(text.splitlines(), 1):
            if open_string is not None:
                if line.count(open_string) % 2 == 1:
                    open_string = None
                continue
            header = _HEADER.match(line)
            if header is not None:
                names = _names(header.group(2))
                if header.group(1) == "[[":
                    array = (*resolve(names[:-1]), names[-1])
                    arrays[array] = arrays.get(array, 0) + 1
                    self._lines.setdefault(array, number)
                    section = (*array, arrays[array] - 1)
                else:
                    section = resolve(names)
                self._lines.setdefault(section, number)
                continue
            assign = _ASSIGN.match(line)
            if assign is None:
                continue
            names = _names(assign.group(1))
            for end in range(1, len(names) + 1):
                self._lines.setdefault((*section, *names[:end]), number)
            rest = assign.group(2)
            for quotes in ('"""', "'''"):
                if rest.count(quotes) % 2 == 1:
                    open_string = quotes
                    break

    def find(self, path: KeyPath) -> int | None:
        """The line of exactly ``path``, if it is written on a line of its own."""
        return self._lines.get(path)

    def line(self, path: KeyPath) -> int:
        """The line of ``path``, else of the nearest enclosing path written in the text,
        else 1."""
        for end in range(len(path), 0, -1):
            found = self._lines.get(path[:end])
            if found is not None:
                return found
        return 1
