"""The admin commands a table takes: their names (:class:`AdminCommand`, the one registry
the web and the tests read) and the checks of their arguments, each in one place.

A table calls the check of a command at the point of its work where a bad argument is
found (some checks need the game: what a decision may be, which drop a ply names), so the
hall and the web pass the arguments on as they came and never check them again.  Every
check raises :class:`~service.table.settings.TableError` with a one-line message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Any, Literal

from service.table.events import Phase, TableEvent
from service.table.settings import PAIRING_KEYS, RESULTS, TableError, TableSettings

__all__ = [
    "DROP_KINDS",
    "REALTIME_COMMANDS",
    "AdminCommand",
    "ChooseArgs",
    "ClaimArgs",
    "CorrectArgs",
    "DropKindArgs",
    "RuleArgs",
    "admin_command",
    "check_admin_args",
    "choose_arguments",
    "claim_arguments",
    "correct_arguments",
    "drop_kind_arguments",
    "end_arguments",
    "next_players_event",
    "player_changes",
    "players_now",
    "players_wait",
    "replay_only",
    "replayed_admin_args",
    "rule_arguments",
    "start_changes",
]


class AdminCommand(StrEnum):
    """An organiser's or arbiter's command to a table (the last part of its web address)."""

    START = "start"
    """A new game, with settings changed (any :class:`TableSettings` field)."""
    END = "end"
    """End the game: ``result``, optionally ``reason``."""
    PLAYERS = "players"
    """Rename the players: ``white`` and/or ``black``."""
    RULE = "rule"
    """Decide on a claim: ``claim`` (its id), ``decision`` (accept or reject)."""
    CLAIM = "claim"
    """A player's claim: ``side``, ``kind``, optionally ``uci``."""
    CORRECT = "correct"
    """Correct the move at ``ply`` to ``uci`` (the game is rewritten)."""
    CHOOSE = "choose"
    """A decision the board cannot show (20-chess): ``value``, optionally ``what``."""
    DROP_KIND = "drop_kind"
    """The kind of a 20-chess drop a presence-only board guessed: ``ply``, ``kind``."""


REALTIME_COMMANDS = (AdminCommand.START, AdminCommand.END, AdminCommand.PLAYERS)
"""The commands a realtime table takes (no turns: no claims, no moves by ply)."""

DROP_KINDS = ("p", "n", "b", "r", "q")
"""The kinds of captured piece a 20-chess drop may set down."""


def _names(commands: Sequence[AdminCommand]) -> str:
    """``start, end or players``."""
    values = [str(c) for c in commands]
    return ", ".join(values[:-1]) + " or " + values[-1]


def admin_command(command: str, args: Any, known: Sequence[AdminCommand]) -> AdminCommand:
    """``command`` as one of ``known`` with its arguments a mapping, or a TableError."""
    check_admin_args(args)
    if command in known:
        return AdminCommand(command)
    if known == REALTIME_COMMANDS and command in (
        AdminCommand.RULE, AdminCommand.CLAIM, AdminCommand.CORRECT
    ):  # fmt: skip
        raise TableError(
            f"{command!r} does not apply to realtime chess: it has no turns, claims or "
            "moves by ply; the service rules on the board itself"
        )
    raise TableError(f"unknown command {command!r}: use {_names(known)}")


def check_admin_args(args: Any) -> None:
    """An admin command's arguments must be a mapping."""
    if not isinstance(args, Mapping):
        raise TableError("admin arguments must be a mapping")


def start_changes(args: Mapping[str, Any], known: frozenset[str] | None = None) -> dict[str, Any]:
    """The ``start`` command's changes of the settings (``known``: the setting names,
    :class:`TableSettings` fields by default)."""
    names = known if known is not None else _SETTING_NAMES
    unknown = set(args) - names
    if unknown:
        raise TableError(f"unknown setting(s): {', '.join(sorted(unknown))}")
    return dict(args)


_SETTING_NAMES = frozenset(f.name for f in fields(TableSettings))


def end_arguments(args: Mapping[str, Any]) -> tuple[str, str]:
    """The ``end`` command's ``result`` (one of :data:`RESULTS`) and ``reason`` (a string of
    at most 200 characters, ``arbiter`` when not given)."""
    result = args.get("result")
    if result not in RESULTS:
        raise TableError(f"result must be one of {', '.join(RESULTS)}")
    reason = args.get("reason", "arbiter")
    if not isinstance(reason, str) or len(reason) > 200:
        raise TableError("reason must be a string of at most 200 characters")
    return str(result), reason


def player_changes(args: Mapping[str, Any]) -> dict[str, Any]:
    """The ``players`` command's changes: ``white`` and/or ``black``, optionally the
    ``round`` and the players' details (:data:`~service.table.settings.DETAIL_KEYS`, None
    to clear one), nothing else.  A pairing imported from a pairing program is one such
    command per table (:mod:`service.pairings`)."""
    changes = {k: _number_text(k, args[k]) for k in PAIRING_KEYS if k in args}
    allowed = {*PAIRING_KEYS, "applies"} if players_now(args) else set(PAIRING_KEYS)
    if not changes or set(args) - allowed:
        raise TableError("players takes white and/or black")
    return changes


_NUMBERS = ("white_elo", "black_elo", "white_fide_id", "black_fide_id", "board", "round")


def _number_text(key: str, value: Any) -> Any:
    """A rating, FIDE id, board or round given as a JSON number, as its text (settings are
    text)."""
    if key in _NUMBERS and isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return str(value)
    return value


def players_wait(phase: Phase, moves: int) -> str | None:
    """Why a change of the players waits for the table's next game, or None when it
    applies to the game under way (set-up, or a game with no move yet).  A finished game
    and a game with moves are the record: their tags never change by a command."""
    if phase is Phase.FINISHED:
        return "applies to the next game: the game under way is finished"
    if moves:
        return "applies to the next game: the game under way has moves"
    return None


def next_players_event(now: float, white: str, black: str, wait: str) -> TableEvent:
    """The ``players`` event of a change that waits for the next game (``wait``: why)."""
    data = {"white": white, "black": black, "applies": "next game", "message": wait}
    return TableEvent(now, "players", data)


@dataclass(frozen=True, slots=True)
class RuleArgs:
    claim: str
    decision: str


def rule_arguments(args: Mapping[str, Any]) -> RuleArgs:
    """The ``rule`` command's ``claim`` (an id) and ``decision``."""
    claim = args.get("claim")
    decision = args.get("decision")
    if not isinstance(claim, str) or not isinstance(decision, str):
        raise TableError("rule takes claim (an id) and decision (accept or reject)")
    return RuleArgs(claim, decision)


@dataclass(frozen=True, slots=True)
class ClaimArgs:
    white: bool
    kind: str
    uci: str | None


def claim_arguments(args: Mapping[str, Any]) -> ClaimArgs:
    """The ``claim`` command's ``side`` (white or black), ``kind`` and optional ``uci``."""
    side = args.get("side")
    kind = args.get("kind")
    uci = args.get("uci")
    if side not in ("white", "black") or not isinstance(kind, str):
        raise TableError("claim takes side (white or black), kind and optionally uci")
    if uci is not None and not isinstance(uci, str):
        raise TableError("uci must be a string")
    return ClaimArgs(side == "white", kind, uci)


@dataclass(frozen=True, slots=True)
class CorrectArgs:
    ply: int
    uci: str
    confirm: bool | None = False
    """Whether the request confirms dropping later moves; None: a correction stored before
    corrections were confirmed (it dropped them unasked, and replays so)."""


STORED_UNCONFIRMED = "stored-unconfirmed"
"""The ``confirm`` a replay gives a stored ``correct`` command that had none."""


STORED_NOW = "stored-now"
"""The ``applies`` a replay gives a stored ``players`` command that named the players of the
game under way (a command stored before the record was kept apart did so even for a game
with moves or finished)."""


def replayed_admin_args(
    command: str, args: Mapping[str, Any], outputs: Sequence[Mapping[str, Any]] = ()
) -> dict[str, Any]:
    """The arguments a stored admin command is replayed with (``outputs``: what it gave when
    it was stored).  A refused command is never stored, so each is replayed as it was
    taken then: a ``correct`` stored without ``confirm`` even if it dropped later moves, a
    ``players`` whose answer did not say it waits for the next game on the game under way
    (a log written before the record was kept apart)."""
    if command == AdminCommand.CORRECT and "confirm" not in args:
        return {**args, "confirm": STORED_UNCONFIRMED}
    if command == AdminCommand.PLAYERS and any(_named_at_once(out) for out in outputs):
        return {**args, "applies": STORED_NOW}
    return dict(args)


def _named_at_once(output: Mapping[str, Any]) -> bool:
    """A table's ``players`` answer (its ``white`` and ``black``) that does not say the
    players wait for the next game."""
    return (
        output.get("type") == "players"
        and "white" in output
        and "black" in output
        and "applies" not in output
    )


def replay_only(args: Mapping[str, Any]) -> str | None:
    """The argument of ``args`` only a replay may give (a request with it is refused)."""
    if args.get("confirm") == STORED_UNCONFIRMED:
        return "confirm"
    if "applies" in args:
        return "applies"
    return None


def players_now(args: Mapping[str, Any]) -> bool:
    """Whether a replayed ``players`` command named the players of the game under way."""
    return args.get("applies") == STORED_NOW


def correct_arguments(args: Mapping[str, Any]) -> CorrectArgs:
    """The ``correct`` command's ``ply`` (an integer), ``uci`` and optional ``confirm``
    (true: drop the later moves the correction makes illegal)."""
    ply = args.get("ply")
    uci = args.get("uci")
    if not isinstance(ply, int) or isinstance(ply, bool) or not isinstance(uci, str):
        raise TableError("correct takes ply (an integer) and uci (a move)")
    confirm = args.get("confirm", False)
    if confirm == STORED_UNCONFIRMED:
        return CorrectArgs(ply, uci, None)
    if not isinstance(confirm, bool):
        raise TableError("confirm must be true or false")
    return CorrectArgs(ply, uci, confirm)


@dataclass(frozen=True, slots=True)
class ChooseArgs:
    what: str
    value: str


def choose_arguments(args: Mapping[str, Any], due: str, options: Sequence[str]) -> ChooseArgs:
    """The ``choose`` command's ``value`` (one of ``options``; a number is read as its
    text) and ``what`` (``due``, the decision the game waits for, when not given)."""
    what = args.get("what", due)
    value = args.get("value")
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(what, str) or not isinstance(value, str):
        raise TableError(f"choose takes value (one of {', '.join(options)}) and optionally what")
    return ChooseArgs(what, value.strip().lower())


@dataclass(frozen=True, slots=True)
class DropKindArgs:
    ply: int | Literal["last"]
    kind: str


def drop_kind_arguments(args: Mapping[str, Any]) -> DropKindArgs:
    """The ``drop_kind`` command's ``ply`` (a number, a number's text or ``"last"``, the
    default) and ``kind`` (one of :data:`DROP_KINDS`)."""
    ply = args.get("ply", "last")
    kind = args.get("kind")
    if not isinstance(kind, str) or kind.strip().lower() not in DROP_KINDS:
        raise TableError('drop_kind takes ply (a number or "last") and kind (p, n, b, r or q)')
    if isinstance(ply, str) and ply.strip().isdigit():
        ply = int(ply.strip())
    if ply != "last" and (not isinstance(ply, int) or isinstance(ply, bool)):
        raise TableError('ply must be a number or "last"')
    return DropKindArgs(ply, kind.strip().lower())
