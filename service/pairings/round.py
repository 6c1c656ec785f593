"""A round's pairings as a pairing program gives them: :class:`Round`, board number to
:class:`Pairing` (two :class:`Player` s with their details), and the players without a
game (:class:`Bye`).  Read from a FIDE TRF file (:mod:`service.pairings.trf`) or a CSV
(:mod:`service.pairings.csv_pairings`); pure: no files, no clock.

A bad file is a :class:`PairingsError` whose one-line message names the file and the line.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from service.errors import UsageError

__all__ = ["Bye", "ByeKind", "Pairing", "PairingsError", "Player", "Round", "decode"]


class PairingsError(UsageError):
    """A pairings file that cannot be read; the message (one line) names ``FILE:LINE``."""


def decode(data: bytes, source: str) -> str:
    """The text of a pairings file: UTF-8 (with or without a byte order mark), else
    Windows-1252, which pairing programs on Windows write."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    try:
        return data.decode("cp1252")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise PairingsError(
            f"{source}:{line}: neither UTF-8 nor Windows-1252 text: save the file as UTF-8"
        ) from None


@dataclass(frozen=True, slots=True)
class Player:
    """A player as the pairing program has them: the name ``Last, First`` and what else
    it knows (None where it does not)."""

    name: str
    title: str | None = None
    elo: str | None = None
    federation: str | None = None
    fide_id: str | None = None
    team: str | None = None
    start_rank: int | None = None
    """The starting rank (TRF: the player's number in the file)."""
    score: float | None = None
    """Points before the round (TRF: from the results of the rounds before it)."""

    def details(self, side: str) -> dict[str, str | None]:
        """The table settings of this player playing ``side`` (``white``/``black``): the
        name and every detail, None for an unknown one (it clears what a player before
        had)."""
        return {
            side: self.name,
            f"{side}_title": self.title,
            f"{side}_elo": self.elo,
            f"{side}_federation": self.federation,
            f"{side}_fide_id": self.fide_id,
            f"{side}_team": self.team,
        }

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        for key in ("title", "elo", "federation", "fide_id", "team"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out


class ByeKind(StrEnum):
    """Why a player has no game in the round (TRF result letters of a round without an
    opponent)."""

    HALF = "half-point bye"
    """``H``"""
    FULL = "full-point bye"
    """``F``"""
    ALLOCATED = "pairing-allocated bye"
    """``U``, and ``+`` (a win without an opponent) as some programs write it"""
    ZERO = "zero-point bye"
    """``Z`` or blank: a known absence"""
    ABSENT = "not paired"
    """``-`` without an opponent, no entry for the round, or a CSV row without black"""


@dataclass(frozen=True, slots=True)
class Pairing:
    """One game of the round on board ``board``."""

    board: int
    white: Player
    black: Player
    line: int = 0
    """The line of the file it was read from (for messages)."""

    def to_json(self) -> dict[str, Any]:
        return {"board": self.board, "white": self.white.to_json(), "black": self.black.to_json()}


@dataclass(frozen=True, slots=True)
class Bye:
    """A player without a game in the round."""

    player: Player
    kind: ByeKind

    def to_json(self) -> dict[str, Any]:
        return {**self.player.to_json(), "kind": str(self.kind)}


@dataclass(frozen=True, slots=True)
class Round:
    """A round's pairings by board number (ascending) and its byes."""

    source: str
    """The file it came from (its name)."""
    number: int | None
    """The round (None: a CSV read without one)."""
    pairings: tuple[Pairing, ...]
    byes: tuple[Bye, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "round": self.number,
            "pairings": [p.to_json() for p in self.pairings],
            "byes": [b.to_json() for b in self.byes],
        }
