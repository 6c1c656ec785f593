"""JSON files the service keeps beside its database (``DB.pairings.json``,
``DB.broadcast.json``): :func:`read_kept_json` reads one back with a cap on its size, and
says in one line why a file is not JSON text.  They are written with
:func:`service.atomic_file.write_atomically` (whole or not at all)."""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["KeptJsonError", "read_kept_json"]


class KeptJsonError(ValueError):
    """A kept file that is larger than its cap or not JSON text (one line: what is wrong)."""


def read_kept_json(path: Path, limit: int) -> object | None:
    """The JSON value in ``path``, None when there is no such file.  :class:`OSError` when
    it cannot be read; :class:`KeptJsonError` when it holds more than ``limit`` bytes or is
    not UTF-8 JSON text."""
    try:
        with path.open("rb") as handle:
            data = handle.read(limit + 1)
    except FileNotFoundError:
        return None
    if len(data) > limit:
        raise KeptJsonError(f"larger than {_size(limit)}")
    try:
        value: object = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise KeptJsonError(f"not JSON text ({str(exc).splitlines()[0][:80]})") from None
    return value


def _size(limit: int) -> str:
    mb = 1024 * 1024
    return f"{limit // mb} MB" if limit >= mb else f"{limit // 1024} kB"
