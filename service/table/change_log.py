"""The change log of a table's game: every change an organiser or arbiter made to the game
under way by an admin command (a corrected move, a corrected drop, its players, its result
given by ``end``), each with what changed, when, and the old and the new value.

Pure: a table keeps one :class:`ChangeLog` per game and adds to it when a command changed the
game.  Replaying a table's stored inputs rebuilds the same log (the commands and their times
are inputs), so a restart shows it unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from service.table.record import MoveEntry

__all__ = ["Change", "ChangeKind", "ChangeLog", "move_text"]


class ChangeKind(StrEnum):
    """What an admin command changed in the game under way."""

    CORRECTION = "correction"
    DROP_KIND = "drop_kind"
    PLAYERS = "players"
    RESULT = "result"


@dataclass(frozen=True, slots=True)
class Change:
    """One change: ``what``, at table time ``time``, from ``old`` to ``new`` (texts or
    small mappings); ``ply`` for a move; ``dropped``: the moves a correction dropped."""

    time: float
    what: ChangeKind
    old: Any
    new: Any
    ply: int | None = None
    dropped: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"time": self.time, "what": self.what}
        if self.ply is not None:
            data["ply"] = self.ply
        data["old"] = self.old
        data["new"] = self.new
        if self.dropped:
            data["dropped"] = list(self.dropped)
        return data


def move_text(entry: MoveEntry) -> str:
    """``12. Nf3`` or ``12... Nc6``."""
    return f"{entry.number}{'.' if entry.side else '...'} {entry.san}"


@dataclass(slots=True)
class ChangeLog:
    """The changes made to one game, oldest first."""

    changes: list[Change] = field(default_factory=list)

    def clear(self) -> None:
        """A new game: its log starts empty."""
        self.changes.clear()

    def correction(
        self, time: float, old: MoveEntry, new: MoveEntry, dropped: Sequence[MoveEntry]
    ) -> None:
        self.changes.append(
            Change(
                time,
                ChangeKind.CORRECTION,
                move_text(old),
                move_text(new),
                old.ply,
                tuple(move_text(e) for e in dropped),
            )
        )

    def drop_kind(self, time: float, ply: int, old: str, new: str) -> None:
        self.changes.append(Change(time, ChangeKind.DROP_KIND, old, new, ply))

    def players(self, time: float, old: tuple[str, str], new: tuple[str, str]) -> None:
        if old != new:
            self.changes.append(
                Change(
                    time,
                    ChangeKind.PLAYERS,
                    {"white": old[0], "black": old[1]},
                    {"white": new[0], "black": new[1]},
                )
            )

    def result(self, time: float, old: tuple[str, str], new: tuple[str, str]) -> None:
        self.changes.append(
            Change(
                time,
                ChangeKind.RESULT,
                {"result": old[0], "reason": old[1]},
                {"result": new[0], "reason": new[1]},
            )
        )

    def to_json(self) -> list[dict[str, Any]]:
        return [change.to_json() for change in self.changes]
