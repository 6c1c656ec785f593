"""The lichess rounds as changed on the admin page, kept beside the database:
``DB.broadcast.json`` (``DB`` the database's file name, as its ``DB.lock``) holds, for each
round changed while the service ran, its lichess round id, whether it is pushed and its
delay, as they stood after the last change::

    {"rounds": [{"round": "3", "lichess_id": "AbCd1234", "enabled": false, "delay": 60.0}]}

:class:`~service.broadcast.push.Pusher` reads it at start and applies it over the config's
``[broadcast]`` (the admin's last change wins; a round added on the page is added again), and
writes it whole after each change.  The lichess token is never in it (a round's settings
have no place for one).  A missing file is no change; a file that cannot be read or holds
something else is a one-line warning and the config alone, never a failed start."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

from service.atomic_file import write_atomically
from service.broadcast.round_setting import RoundChange, RoundSettingError, round_change
from service.json_text import dumps
from service.kept_json import KeptJsonError, read_kept_json

__all__ = ["MAX_KEPT", "kept_path", "load_rounds", "save_rounds"]

logger = logging.getLogger(__name__)

MAX_KEPT = 1024 * 1024
"""Largest file read back (a round's settings are under 100 bytes)."""


def kept_path(database: Path) -> Path:
    """Where the rounds changed on the admin page are kept for the hall of ``database``."""
    return database.with_name(database.name + ".broadcast.json")


def save_rounds(database: Path, rounds: Iterable[RoundChange]) -> bool:
    """Keep ``rounds`` (each round's whole settings) beside ``database``, whole or not at
    all.  A file that cannot be written is a warning (the change holds until the service
    stops): returns False."""
    body = {
        "rounds": [
            {"round": r.round, "lichess_id": r.lichess_id, "enabled": r.enabled, "delay": r.delay}
            for r in rounds
        ]
    }
    path = kept_path(database)
    try:
        write_atomically(path, (dumps(body) + "\n").encode())
    except OSError as exc:
        logger.warning(
            "lichess pushes: cannot keep the admin page's round settings in %s: %s "
            "(they hold until the service stops)",
            path,
            exc.strerror or exc,
        )
        return False
    return True


def load_rounds(database: Path) -> list[RoundChange]:
    """The rounds kept beside ``database`` (none when there is no file, or, with a one-line
    warning, when it cannot be read or is not such a file)."""
    path = kept_path(database)
    try:
        obj = read_kept_json(path, MAX_KEPT)
        return [] if obj is None else _rounds(obj)
    except OSError as exc:
        logger.warning(
            "lichess pushes: cannot read %s: %s; the config's [broadcast] alone",
            path,
            exc.strerror or exc,
        )
        return []
    except (KeptJsonError, RoundSettingError) as exc:
        logger.warning(
            "lichess pushes: %s is not the admin page's round settings: %s; the config's "
            "[broadcast] alone (delete the file, or change the round again on the page)",
            path,
            exc,
        )
        return []


def _rounds(obj: object) -> list[RoundChange]:
    rounds = obj.get("rounds") if isinstance(obj, dict) else None
    if not isinstance(obj, dict) or not isinstance(rounds, list) or set(obj) != {"rounds"}:
        raise RoundSettingError('not an object {"rounds": [...]}')
    out: dict[str, RoundChange] = {}
    for index, body in enumerate(rounds):
        if not isinstance(body, dict):
            raise RoundSettingError(f"rounds[{index}] is not a JSON object")
        try:
            change = round_change(body)
        except RoundSettingError as exc:
            raise RoundSettingError(f"rounds[{index}]: {exc}") from None
        if change.lichess_id is None or change.enabled is None or change.delay is None:
            raise RoundSettingError(f"rounds[{index}]: lichess_id, enabled and delay are needed")
        out[change.round] = change
    return list(out.values())
