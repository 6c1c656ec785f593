"""``service.store_recovery``: the rows a stopping service could not commit, in a file.

When the store cannot write at the end (a full disk, a database gone read-only), the rows it
still holds are written, in order, to ``DB.recovery.jsonl`` beside the database: one JSON
object a line, written to a temporary file, fsynced and renamed into place, so the file is
either whole or absent.  When the database's own directory cannot take it either (the full
disk is usually that directory's), the file goes to the system's temporary directory under a
name made from the database's absolute path.  The next start folds every such file in (in
order, before anything new) and removes it.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from service.atomic_file import sync_directory, write_atomically

Row = tuple[str, str, str, float, str]
"""One log row: table id, role, kind, time, data (JSON text)."""

ROLES = ("in", "echo", "out", "table")


class RecoveryError(Exception):
    """A recovery file cannot be written or read; the message names it."""


def recovery_path(db: Path) -> Path:
    """The recovery file beside the database."""
    return db.with_name(db.name + ".recovery.jsonl")


def fallback_path(db: Path) -> Path:
    """Where the recovery file goes when the database's directory cannot take it."""
    digest = hashlib.sha256(str(db.resolve()).encode("utf-8", "surrogateescape")).hexdigest()
    return Path(tempfile.gettempdir()) / f"dgt-service-{digest[:12]}-{db.name}.recovery.jsonl"


def recovery_paths(db: Path) -> list[Path]:
    """Every recovery file of ``db`` that exists, beside it first."""
    return [path for path in (recovery_path(db), fallback_path(db)) if path.exists()]


def write_recovery(db: Path, rows: Sequence[Row]) -> Path:
    """Write ``rows`` (after the rows of a recovery file already there) to the recovery file
    of ``db``, beside it or else in the temporary directory; returns where.  Raises
    :class:`RecoveryError` when neither place can take them."""
    errors: list[str] = []
    for path in (recovery_path(db), fallback_path(db)):
        try:
            earlier = read_recovery(path) if path.exists() else []
            _write_atomically(path, [*earlier, *rows])
        except (OSError, RecoveryError) as exc:
            errors.append(f"{path}: {getattr(exc, 'strerror', None) or exc}")
            continue
        return path
    raise RecoveryError("; ".join(errors))


def read_recovery(path: Path) -> list[Row]:
    """The rows of a recovery file, in order."""
    rows: list[Row] = []
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RecoveryError(f"cannot read the recovery file {path}: {exc}") from None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append(_row(json.loads(line)))
        except (ValueError, TypeError, KeyError) as exc:
            raise RecoveryError(
                f"{path}, line {number}: not a row of the log ({exc}); move the file away "
                "to start without it"
            ) from None
    return rows


def remove_recovery(path: Path) -> None:
    """Remove a recovery file once its rows are committed (and make the removal durable)."""
    path.unlink()
    sync_directory(path.parent)


def _row(obj: Any) -> Row:
    if not isinstance(obj, dict):
        raise TypeError("not an object")
    table, role, kind, t, data = obj["table"], obj["role"], obj["kind"], obj["t"], obj["data"]
    if not (isinstance(table, str) and isinstance(kind, str) and isinstance(data, str)):
        raise TypeError("table, kind and data must be text")
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}")
    if isinstance(t, bool) or not isinstance(t, int | float):
        raise TypeError("t must be a number")
    json.loads(data)
    return (table, role, kind, float(t), data)


def _write_atomically(path: Path, rows: Sequence[Row]) -> None:
    lines = "".join(
        json.dumps(
            {"table": table, "role": role, "kind": kind, "t": t, "data": data},
            ensure_ascii=False,
        )
        + "\n"
        for table, role, kind, t, data in rows
    )
    write_atomically(path, lines.encode("utf-8"))


