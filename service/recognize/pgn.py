"""The record of a recognised game; its PGN text is written by :mod:`service.pgn`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from service import pgn
from service.pgn import SEVEN_TAG_ROSTER, UNKNOWN_DATE, PgnMove, ambiguity_note, game_text
from service.variants.base import Color, StartPosition

__all__ = ["GameRecord", "RecordedMove", "ambiguity_note", "game_pgn", "movetext"]

_DEFAULTS = {
    "Event": "?",
    "Site": "?",
    "Date": UNKNOWN_DATE,
    "Round": "?",
    "White": "?",
    "Black": "?",
}


@dataclass(frozen=True, slots=True)
class RecordedMove:
    """One action of a recognised game (``alternatives``: the SAN of other actions the board
    read the same, see :class:`~service.recognize.events.MoveEvent`)."""

    ply: int
    number: int
    side: Color
    uci: str
    san: str
    final: bool
    alternatives: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class GameRecord:
    """A recognised game: where it started, its actions, and its result (``"*"`` while it
    goes on).  ``tags`` are the tags its variant and start need (Variant, SetUp, FEN)."""

    variant: str
    start: StartPosition
    moves: tuple[RecordedMove, ...]
    result: str = "*"
    tags: Mapping[str, str] = field(default_factory=dict)

    @property
    def final_moves(self) -> tuple[RecordedMove, ...]:
        """The completed actions (a provisional action can only be the last one)."""
        return tuple(move for move in self.moves if move.final)


def movetext(moves: tuple[RecordedMove, ...]) -> list[str]:
    """The SAN tokens of ``moves`` with move numbers (``1.``, ``1...`` where Black starts a
    sequence or follows a comment), and a comment after a move the board could not tell
    from others."""
    return pgn.movetext(
        (
            PgnMove(
                move.number,
                bool(move.side),
                move.san,
                (ambiguity_note(move.alternatives),) if move.alternatives else (),
            )
            for move in moves
        ),
        parts=False,
        number_after_comment=True,
    )


def game_pgn(
    record: GameRecord,
    tags: Mapping[str, str] | None = None,
    *,
    include_provisional: bool = False,
) -> str:
    """The PGN text of ``record``: the seven-tag roster (``tags`` fill in players, event and
    the like), the variant's tags, and the completed moves (``include_provisional``: the
    provisional last move too).  Ends with a newline."""
    moves = record.moves if include_provisional else record.final_moves
    values = dict(_DEFAULTS)
    values["Result"] = record.result
    values.update(record.tags)
    if tags:
        values.update(tags)
    ordered = [*SEVEN_TAG_ROSTER, *(name for name in values if name not in SEVEN_TAG_ROSTER)]
    return game_text({name: values[name] for name in ordered}, [*movetext(moves), values["Result"]])
