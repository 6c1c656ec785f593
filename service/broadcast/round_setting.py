"""A change of one lichess round's settings as the admin page sends it
(``POST /api/admin/broadcast``) and as :mod:`service.broadcast.kept_rounds` keeps it:
:class:`RoundChange`, read and checked by :func:`round_change` (pure)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from service.config import MAX_DELAY, check_setting

__all__ = ["LICHESS_ROUND_ID", "RoundChange", "RoundSettingError", "round_change"]


class RoundSettingError(ValueError):
    """A round setting the pusher cannot take (one line, for the admin page)."""


LICHESS_ROUND_ID = re.compile(r"[A-Za-z0-9]{8}")
"""A lichess broadcast round id, as ``[broadcast]`` takes it (from the round's address)."""


@dataclass(frozen=True, slots=True)
class RoundChange:
    """What the admin page changes of one round (None: left as it is)."""

    round: str
    lichess_id: str | None = None
    enabled: bool | None = None
    delay: float | None = None


def round_change(body: Mapping[str, object]) -> RoundChange:
    """A :class:`RoundChange` from a JSON object (``round``; optional ``lichess_id``,
    ``enabled``, ``delay``).  Raises :class:`RoundSettingError`."""
    unknown = set(body) - {"round", "lichess_id", "enabled", "delay"}
    if unknown:
        raise RoundSettingError(
            f"unknown key {sorted(unknown)[0][:30]!r}: give round, lichess_id, enabled, delay"
        )
    if body.get("round") is None:
        raise RoundSettingError("round is missing: the name of the round, as the tables have it")
    try:
        name = check_setting("round", body.get("round"))
    except ValueError as exc:
        raise RoundSettingError(str(exc)) from None
    if not name:
        raise RoundSettingError("round is missing: the name of the round, as the tables have it")
    lichess_id = body.get("lichess_id")
    if lichess_id is not None and (
        not isinstance(lichess_id, str) or not LICHESS_ROUND_ID.fullmatch(lichess_id)
    ):
        raise RoundSettingError(
            "lichess_id must be the lichess round id (8 letters or digits, from the round's "
            "address)"
        )
    enabled = body.get("enabled")
    if enabled is not None and not isinstance(enabled, bool):
        raise RoundSettingError("enabled must be true or false")
    delay = body.get("delay")
    if delay is not None and (
        not isinstance(delay, int | float) or isinstance(delay, bool) or not 0 <= delay <= MAX_DELAY
    ):
        raise RoundSettingError(f"delay must be 0 to {MAX_DELAY:g} seconds")
    return RoundChange(
        name,
        lichess_id,
        enabled,
        None if delay is None else float(delay),
    )
