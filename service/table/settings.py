"""What a table plays (:class:`TableSettings`; a realtime table's :class:`RealtimeSettings`)
and the checks of every setting.

Pure: a setting is checked here once, whoever gives it (the hall's config, an admin
``start`` or ``players`` command, a replay); a bad one is a :class:`TableError` with a
one-line message.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

import chess

from service.arbiter import get_rules
from service.arbiter.base import RuleSet, UnknownRuleSetError
from service.time_control import TimeControl, TimeControlError
from service.variants import get_variant
from service.variants.base import StartPosition, Variant, VariantError
from service.variants.realtime import FASTEST_TICK, STANDARD_TICK, realtime_start
from service.variants.standard import squares_of

__all__ = [
    "DETAIL_KEYS",
    "PAIRING_KEYS",
    "RESULTS",
    "RealtimeSettings",
    "TableError",
    "TableSettings",
    "check_setting_text",
    "check_settings",
    "check_table_id",
    "clear_replaced_details",
    "details_json",
    "details_summary",
    "next_players_shown",
    "realtime_settings",
    "start_position",
]

RESULTS = ("1-0", "0-1", "1/2-1/2")

_DETAILS = ("title", "elo", "federation", "fide_id", "team")
DETAIL_KEYS = (
    *(f"{side}_{item}" for side in ("white", "black") for item in _DETAILS),
    "board",
)
"""A player's details beside the name (``white_title``, ``white_elo``, ``white_federation``,
``white_fide_id``, ``white_team``, the same for ``black_``) and the game's board number:
optional settings, None when unknown (a pairing imported from a pairing program gives
them, :mod:`service.pairings`)."""
PAIRING_KEYS = ("white", "black", "round", *DETAIL_KEYS)
"""What a ``players`` command may change: the names, the round and the details."""
_TITLE = re.compile(r"^[A-Z]{1,4}$")
_DIGITS = re.compile(r"^[0-9]{1,12}$")
_FEDERATION = re.compile(r"^[A-Z]{2,3}$")


class TableError(ValueError):
    """A bad admin command or setting (one-line message)."""


@dataclass(frozen=True)
class _Game:
    """The settings every kind of table has before its own (players, event, time control,
    rule set, variant, start FEN): a part of :class:`TableSettings` and
    :class:`RealtimeSettings`, written once.  The parts hold no slots of their own (the
    settings classes do), so a class can be made of several; a dataclass lists its bases'
    fields in the reverse order of its bases, so a settings class names its parts last to
    first."""

    __slots__ = ()

    white: str = "?"
    black: str = "?"
    event: str = "?"
    site: str = "?"
    round: str = "?"
    time_control: str = "300+0"
    rules: str = "casual"
    variant: str = "standard"
    start: str | None = None


@dataclass(frozen=True)
class _Details:
    """The players' details and the board number (:data:`DETAIL_KEYS`), the last settings
    of every kind of table (see :class:`_Game`)."""

    __slots__ = ()

    white_title: str | None = None
    white_elo: str | None = None
    white_federation: str | None = None
    white_fide_id: str | None = None
    white_team: str | None = None
    black_title: str | None = None
    black_elo: str | None = None
    black_federation: str | None = None
    black_fide_id: str | None = None
    black_team: str | None = None
    board: str | None = None


@dataclass(frozen=True)
class _Options:
    """A turn-based table's variant options (see :class:`TableSettings`)."""

    __slots__ = ()

    options: str | None = None


@dataclass(frozen=True, slots=True)
class TableSettings(_Details, _Options, _Game):
    """What a table plays: players, event, time control (PGN ``TimeControl`` form), rule set,
    variant, optionally a start FEN (e.g. a Chess960 position) and the variant's options
    (20-chess: ``schedule=12,13 cast stand-ins=special``, see
    :meth:`service.variants.twenty_chess.TwentyChess.from_options`), then the players'
    details."""


def details_json(settings: Any) -> dict[str, str]:
    """The details of ``settings`` (a settings dataclass) that are known, by setting name
    (:data:`DETAIL_KEYS`); empty when none is."""
    out: dict[str, str] = {}
    for key in DETAIL_KEYS:
        value = getattr(settings, key)
        if value is not None:
            out[key] = value
    return out


def details_summary(settings: Any) -> dict[str, dict[str, str]]:
    """``{"details": ...}`` (:func:`details_json`) for a table's summary, the overview's
    part of its state; nothing when no detail is known (the summary stays as it was)."""
    details = details_json(settings)
    return {"details": details} if details else {}


def clear_replaced_details(changes: Mapping[str, Any], target: Any) -> dict[str, Any]:
    """``changes`` of a ``players`` command to ``target`` (the settings they change) with
    the details of a side whose player is replaced cleared where the command does not give
    them: a detail never outlives its player (a rating or a title shown for someone
    else)."""
    out = dict(changes)
    for side in ("white", "black"):
        if side not in changes or changes[side] == getattr(target, side):
            continue
        for key in DETAIL_KEYS:
            if key.startswith(side + "_") and key not in changes and getattr(target, key):
                out[key] = None
    return out


def next_players_shown(waiting: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """``{"next_players": ...}``: the players (and their details, the round) named for the
    table's next game while they wait for it (the game under way is the record); nothing
    when none wait (the state stays as it was)."""
    return {"next_players": dict(waiting)} if waiting else {}


def check_detail(name: str, value: Any) -> None:
    """A detail setting (:data:`DETAIL_KEYS`): None, or its text in its form (a title of
    1-4 capitals, a rating and a FIDE id in digits, a federation of 2-3 capitals, a team
    or board as text)."""
    check_setting_text(name, value)
    if value is None:
        return
    item = name.split("_", 1)[-1]
    checks = {"title": _TITLE, "elo": _DIGITS, "fide_id": _DIGITS, "federation": _FEDERATION}
    pattern = checks.get(item)
    if name == "board":
        pattern = _DIGITS
    if pattern is not None and not pattern.match(value):
        raise TableError(f"setting {name} {value[:40]!r} is not a {item.replace('_', ' ')}")


def check_table_id(table_id: Any) -> str:
    """``table_id`` if it is a table id (a non-empty string of at most 100 characters)."""
    if not isinstance(table_id, str) or not table_id or len(table_id) > 100:
        raise TableError("a table id is a non-empty string of at most 100 characters")
    return table_id


def check_setting_text(name: str, value: Any) -> None:
    """A setting's value: a string of at most 200 characters without control characters
    (None, an unset setting, passes)."""
    if value is not None and not isinstance(value, str):
        raise TableError(f"setting {name} must be a string")
    if isinstance(value, str) and (len(value) > 200 or any(ord(c) < 32 for c in value)):
        raise TableError(f"setting {name} is too long or has control characters")


def check_settings(settings: TableSettings) -> tuple[RuleSet, Variant, TimeControl]:
    """The rule set, variant and time control ``settings`` name, each checked."""
    for item in fields(settings):
        value = getattr(settings, item.name)
        if value is None and item.default is not None:  # only start and options may be unset
            raise TableError(f"setting {item.name} must be a string")
        if item.name in DETAIL_KEYS:
            check_detail(item.name, value)
        else:
            check_setting_text(item.name, value)
    try:
        rules = get_rules(settings.rules)
    except UnknownRuleSetError as exc:
        raise TableError(str(exc)) from None
    try:
        variant = get_variant(settings.variant)
    except VariantError as exc:
        raise TableError(str(exc)) from None
    if settings.start is not None and not variant.accepts_start_fen:
        raise TableError(f"{variant.name} starts from the classical position: leave start unset")
    try:
        variant = get_variant(settings.variant, settings.options)
    except ValueError as exc:
        raise TableError(str(exc)) from None
    try:
        control = TimeControl.parse(settings.time_control)
    except TimeControlError as exc:
        raise TableError(str(exc)) from None
    if settings.start is not None:
        try:
            board = chess.Board(settings.start, chess960=variant.chess960)
        except ValueError as exc:
            raise TableError(f"bad start FEN: {exc}") from None
        if not board.is_valid():
            raise TableError("bad start FEN: not a legal position")
    return rules, variant, control


# -- realtime chess ------------------------------------------------------------------------


@dataclass(frozen=True)
class _Tick:
    """A realtime table's tick (see :class:`RealtimeSettings`)."""

    __slots__ = ()

    tick: float = STANDARD_TICK


@dataclass(frozen=True, slots=True)
class RealtimeSettings(_Details, _Tick, _Game):
    """:class:`service.table.TableSettings` with ``tick`` (seconds per tick, rule 6) where
    that has the variant's options."""

    time_control: str = "-"
    variant: str = "realtime"


_KEYS = frozenset(f.name for f in fields(RealtimeSettings))


def _tick(value: Any) -> float:
    try:
        tick = float(value)
    except (TypeError, ValueError):
        raise TableError(f"tick must be a number of seconds, not {value!r}") from None
    if isinstance(value, bool) or not math.isfinite(tick):
        raise TableError(f"tick must be a number of seconds, not {value!r}")
    if not FASTEST_TICK <= tick <= STANDARD_TICK:
        raise TableError(
            f"tick must be {FASTEST_TICK} to {STANDARD_TICK} seconds (realtime rule 6), "
            f"not {tick:g}"
        )
    return tick


def realtime_settings(
    settings: RealtimeSettings | TableSettings | Mapping[str, Any] | None = None,
    **changes: Any,
) -> RealtimeSettings:
    """Checked settings from a :class:`RealtimeSettings`, a :class:`TableSettings` or a
    mapping (keys that are no setting are ignored, as the hall's config carries others),
    with ``changes`` applied (unknown keys there are an error).  Raises
    :class:`TableError` with a one-line message."""
    if settings is None:
        base: dict[str, Any] = {}
    elif isinstance(settings, (RealtimeSettings, TableSettings)):
        if isinstance(settings, TableSettings) and settings.options:
            raise TableError("variant realtime takes no options")
        base = {k: v for k, v in asdict(settings).items() if k in _KEYS}
    elif isinstance(settings, Mapping):
        base = {k: v for k, v in settings.items() if k in _KEYS and v is not None}
    else:
        raise TableError("settings must be a mapping")
    unknown = set(changes) - _KEYS
    if unknown:
        raise TableError(f"unknown setting(s): {', '.join(sorted(unknown))}")
    base.update(changes)
    base.setdefault("variant", "realtime")
    if base.get("variant") != "realtime":
        raise TableError(f"a realtime table plays variant realtime, not {base['variant']!r}")
    if base.get("start") is not None:
        start_position(base["start"])
    if "time_control" in base and base["time_control"] in ("", None):
        base["time_control"] = "-"
    base["tick"] = _tick(base.get("tick", STANDARD_TICK))
    for key, value in base.items():
        if key in DETAIL_KEYS:
            check_detail(key, value)
            continue
        if key in ("tick", "start"):
            continue
        if not isinstance(value, str):  # None too: no setting here may be unset
            raise TableError(f"setting {key} must be a string")
        check_setting_text(key, value)
    return RealtimeSettings(**base)


def start_position(fen: Any) -> StartPosition:
    """A start FEN (problems, tests; rule 1.1's game starts from the classical position)."""
    if not isinstance(fen, str) or len(fen) > 200:
        raise TableError("start must be a FEN of at most 200 characters")
    try:
        board = chess.Board(fen)
    except ValueError as exc:
        raise TableError(f"bad start FEN: {exc}") from None
    if not (board.kings & board.occupied_co[chess.WHITE]) or not (
        board.kings & board.occupied_co[chess.BLACK]
    ):
        raise TableError("bad start FEN: each side needs a king (rule 5.1)")
    if board.board_fen() == chess.STARTING_BOARD_FEN:
        return realtime_start()
    return StartPosition("realtime", board.fen(), squares_of(board))
