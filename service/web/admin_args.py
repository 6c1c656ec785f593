"""What an admin command's body may carry: one cleaning for every way a command comes in
(``POST /api/admin/tables/ID/COMMAND`` on a hall's or the centre's web, a request to an
edge through the broker), so that an edge applies exactly what its local admin API applies.

:func:`admin_args` checks a body (a JSON object already parsed) and returns the arguments
handed to the table, or raises :class:`~service.hall.HallError` 400 with a one-line reason.
"""

from __future__ import annotations

import re
from typing import Any

from service.config import check_setting, check_text
from service.hall import HallError
from service.table.admin import replay_only
from service.web.edge import check_scalar, check_unicode

MAX_KEYS = 32
"""Most keys a body may have."""

SETTING_KEYS = frozenset(
    {"white", "black", "event", "site", "round", "time_control", "rules", "variant"}
)
"""Keys checked as the config's table settings are checked."""

_KEY = re.compile(r"[a-z_][a-z0-9_]{0,31}")


def clean_args(body: Any) -> dict[str, Any]:
    """The body's keys and values, checked (settings as the config checks them, other
    text bounded, other values scalars); HallError 400 for anything else."""
    if not isinstance(body, dict):
        raise HallError("the body must be a JSON object", 400)
    if len(body) > MAX_KEYS:
        raise HallError("too many keys in the body", 400)
    args: dict[str, Any] = {}
    for key, value in body.items():
        if not isinstance(key, str) or not _KEY.fullmatch(key):
            raise HallError(f"bad key {str(key)[:40]!r} in the body", 400)
        try:
            if isinstance(value, str):
                check_unicode(value, key)
            if key in SETTING_KEYS:
                args[key] = check_setting(key, value)
            elif isinstance(value, str):
                args[key] = check_text(value, key, limit=200)
            else:
                check_scalar(value, key)
                args[key] = value
        except ValueError as exc:
            raise HallError(str(exc), 400) from None
    return args


def admin_args(body: Any) -> dict[str, Any]:
    """:func:`clean_args`, and refused when it gives an argument only a replay of the
    stored log may give."""
    args = clean_args(body)
    replayed = replay_only(args)
    if replayed is not None:
        raise HallError(f"{replayed}: only a replay of the stored log gives that argument", 400)
    return args
