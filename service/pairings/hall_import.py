"""A round's pairings into a running hall: each pairing is its table's ``players`` command
(stored and replayed as any admin command, applied to the game under way while it has no
move, else to the table's next game), and the last round imported kept for the pages (its
byes, its tables without a game, its boards without a table).

The last round imported is kept beside the hall's database (:mod:`service.pairings.kept_round`)
and read back when the hall's desk is first asked for (at start): a restart shows it again.
A start that imports its round again (``run --pairings``, the config) shows that round,
unless the round kept is a later one (imported on the admin page since): that one stays."""

from __future__ import annotations

import logging
import weakref
from pathlib import Path
from typing import Any

from service.hall import Hall, HallError
from service.pairings.assign import Assignment, TableOrder, assign
from service.pairings.kept_round import load_report, save_report
from service.pairings.round import Round
from service.table import AdminCommand

__all__ = ["PairingsDesk", "board_numbers", "desk", "import_round"]

logger = logging.getLogger(__name__)


class PairingsDesk:
    """The last round imported into a hall, as the pages show it (None before one), kept
    beside the database ``database`` (None: in memory only)."""

    def __init__(self, database: Path | None = None) -> None:
        self.database = database
        self.last: dict[str, Any] | None = None if database is None else load_report(database)

    def keep(self, report: dict[str, Any]) -> None:
        """Show ``report`` from now on, and after a restart."""
        self.last = report
        if self.database is not None:
            save_report(self.database, report)


_DESKS: weakref.WeakKeyDictionary[Hall, PairingsDesk] = weakref.WeakKeyDictionary()


def desk(hall: Hall) -> PairingsDesk:
    """The hall's pairings desk (made on first use: the round kept beside the hall's
    database read back)."""
    found = _DESKS.get(hall)
    if found is None:
        found = _DESKS[hall] = PairingsDesk(hall.store.path)
    return found


def board_numbers(hall: Hall) -> dict[str, int]:
    """Each table's board number: its config's ``board``, else its position in the hall
    (the rule the feeds' ``Board`` tag follows, :meth:`HallFeeds.boards`)."""
    return {
        runner.id: runner.config.board if runner.config.board is not None else position
        for position, runner in enumerate(hall.runners.values(), 1)
    }


async def import_round(hall: Hall, round_: Round, *, at_start: bool = False) -> dict[str, Any]:
    """Seat ``round_``'s pairings at the hall's tables; the answer (also kept for the
    pages, :func:`desk`): per table whether the players sit at the game under way
    (``"now"``), at the next game (``"next game"``: the game under way has moves or is
    over), were seated already (``"already"``), or the table's one-line error; the byes,
    the tables without a game in the round and the pairings on boards with no table.

    ``at_start``: the round a start imports again (the command line, the config), which
    leaves a table that plays, or waits for, a later round as it is (``"later round"``)."""
    assignment = assign(round_, board_numbers(hall))
    tables = [await _seat(hall, order, round_.number if at_start else None)
              for order in assignment.orders]  # fmt: skip
    report = _report(round_, assignment, tables)
    shown = desk(hall)
    if at_start and shown.last is not None and _later(shown.last, round_.number):
        logger.info(
            "pairings: round %s, imported since, stays shown rather than the start's round %s",
            shown.last["round"], round_.number,
        )  # fmt: skip
    else:
        shown.keep(report)
    seated = sum(1 for t in tables if "error" not in t)
    logger.info(
        "pairings %s round %s: %d table(s) seated, %d bye(s), %d board(s) without a table",
        round_.source, round_.number, seated, len(round_.byes), len(assignment.no_table),
    )  # fmt: skip
    return report


def _later(kept: dict[str, Any], number: int | None) -> bool:
    """Whether the round ``kept`` is a later round than ``number``."""
    later = kept.get("round")
    return isinstance(later, int) and number is not None and later > number


def _round_number(value: object) -> int | None:
    text = value.strip() if isinstance(value, str) else ""
    return int(text) if text.isdigit() else None


async def _seat(hall: Hall, order: TableOrder, later_than: int | None) -> dict[str, Any]:
    shown: dict[str, Any] = {
        "table": order.table,
        "board": order.pairing.board,
        "white": order.pairing.white.to_json(),
        "black": order.pairing.black.to_json(),
    }
    state = hall.state(order.table)
    settings = state.get("settings") or {}
    if all(settings.get(key) == value for key, value in order.args.items()):
        return {**shown, "applies": "already"}
    if later_than is not None:
        waiting = state.get("next_players") or {}
        rounds = [_round_number(settings.get("round")), _round_number(waiting.get("round"))]
        if any(r is not None and r > later_than for r in rounds):
            return {**shown, "applies": "later round"}
    try:
        outs = await hall.admin(order.table, AdminCommand.PLAYERS, order.args)
    except HallError as exc:
        return {**shown, "error": str(exc)}
    waits = any(out.get("applies") == "next game" for out in outs)
    return {**shown, "applies": "next game" if waits else "now"}


def _report(round_: Round, assignment: Assignment, tables: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "source": round_.source.replace("\\", "/").rsplit("/", 1)[-1],
        "round": round_.number,
        "tables": tables,
        "byes": [bye.to_json() for bye in assignment.byes],
        "unpaired_tables": [{"table": t, "board": b} for t, b in assignment.unpaired],
        "no_table": [pairing.to_json() for pairing in assignment.no_table],
    }
