"""The last round imported, kept beside the database: ``DB.pairings.json`` (``DB`` the
database's file name, as its ``DB.lock`` and ``DB.recovery.jsonl``) holds the import's report
as ``GET /api/pairings`` shows it, written whole at every import (:func:`save_report`) and
read back at start (:func:`load_report`), so the pages show the round after a restart.

The tables' ``players`` commands are in the store and replayed; this file is only what the
pages show about the import (its byes, tables without a game, boards without a table).  A
missing file is no round; a file that cannot be read or is not such a report is a one-line
warning and no round, never a failed start."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from service.atomic_file import write_atomically
from service.json_text import dumps
from service.kept_json import KeptJsonError, read_kept_json

__all__ = ["MAX_KEPT", "ReportError", "check_report", "kept_path", "load_report", "save_report"]

logger = logging.getLogger(__name__)

MAX_KEPT = 16 * 1024 * 1024
"""Largest kept report read back (a 1 MB pairings file's report is a few MB at most)."""

_DETAILS = ("title", "elo", "federation", "fide_id", "team")


class ReportError(ValueError):
    """A kept report that is not one (one line: what is wrong and where)."""


def kept_path(database: Path) -> Path:
    """Where the last round imported into the hall of ``database`` is kept."""
    return database.with_name(database.name + ".pairings.json")


def save_report(database: Path, report: dict[str, Any]) -> bool:
    """Keep ``report`` beside ``database`` (whole or not at all).  A file that cannot be
    written is a warning (the import itself is done and stored): returns False."""
    path = kept_path(database)
    try:
        write_atomically(path, dumps(report).encode())
    except OSError as exc:
        logger.warning(
            "pairings: cannot keep the round imported in %s: %s (a restart will not show it)",
            path,
            exc.strerror or exc,
        )
        return False
    return True


def load_report(database: Path) -> dict[str, Any] | None:
    """The report kept beside ``database`` (None when there is none, or, with a one-line
    warning, when it cannot be read or is not a report)."""
    path = kept_path(database)
    try:
        obj = read_kept_json(path, MAX_KEPT)
        return None if obj is None else check_report(obj)
    except OSError as exc:
        logger.warning("pairings: cannot read %s: %s; no round shown", path, exc.strerror or exc)
        return None
    except (KeptJsonError, ReportError) as exc:
        logger.warning(
            "pairings: %s is not a round imported: %s; no round shown (import it again)",
            path,
            exc,
        )
        return None


def check_report(obj: object) -> dict[str, Any]:
    """``obj`` when it is an import's report as :func:`import_round` makes it (every value
    the pages read of the type they read), else :class:`ReportError`."""
    report = _object(obj, "the report")
    _text(report, "source", "the report")
    number = report.get("round")
    if number is not None and (type(number) is not int or number < 1):
        raise ReportError("round is not a round number")
    for index, table in enumerate(_list(report, "tables")):
        where = f"tables[{index}]"
        _object(table, where)
        _text(table, "table", where)
        _pairing(table, where)
        if not isinstance(table.get("applies", table.get("error")), str):
            raise ReportError(f"{where} has neither 'applies' nor 'error'")
    for index, bye in enumerate(_list(report, "byes")):
        _player(bye, f"byes[{index}]")
        _text(bye, "kind", f"byes[{index}]")
    for index, table in enumerate(_list(report, "unpaired_tables")):
        where = f"unpaired_tables[{index}]"
        _object(table, where)
        _text(table, "table", where)
        _board(table, where)
    for index, pairing in enumerate(_list(report, "no_table")):
        _object(pairing, f"no_table[{index}]")
        _pairing(pairing, f"no_table[{index}]")
    return report


def _object(obj: object, where: str) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise ReportError(f"{where} is not a JSON object")
    return obj


def _list(report: dict[str, Any], key: str) -> list[Any]:
    value = report.get(key)
    if not isinstance(value, list):
        raise ReportError(f"{key} is not a list")
    return value


def _text(obj: dict[str, Any], key: str, where: str) -> None:
    if not isinstance(obj.get(key), str):
        raise ReportError(f"{where} has no text '{key}'")


def _board(obj: dict[str, Any], where: str) -> None:
    board = obj.get("board")
    if type(board) is not int:
        raise ReportError(f"{where} has no board number")


def _pairing(obj: dict[str, Any], where: str) -> None:
    _board(obj, where)
    _player(obj.get("white"), f"{where}.white")
    _player(obj.get("black"), f"{where}.black")


def _player(obj: object, where: str) -> None:
    player = _object(obj, where)
    _text(player, "name", where)
    for key in _DETAILS:
        if key in player and not isinstance(player[key], str):
            raise ReportError(f"{where}.{key} is not text")
