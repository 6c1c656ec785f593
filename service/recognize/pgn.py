"""The record of a recognised game and its PGN text."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from service.variants.base import Color, StartPosition

SEVEN_TAG_ROSTER = ("Event", "Site", "Date", "Round", "White", "Black", "Result")
_DEFAULTS = {
    "Event": "?",
    "Site": "?",
    "Date": "????.??.??",
    "Round": "?",
    "White": "?",
    "Black": "?",
}
LINE_LENGTH = 79


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


def ambiguity_note(alternatives: Sequence[str]) -> str:
    """The PGN comment text for a move the board could not tell from ``alternatives``."""
    return f"(the board could not tell this from {' or '.join(alternatives)})"


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
    tokens: list[str] = []
    previous: RecordedMove | None = None
    for move in moves:
        if move.side:
            tokens.append(f"{move.number}.")
        elif (
            previous is None
            or not previous.side
            or previous.number != move.number
            or previous.alternatives  # a comment came between
        ):
            tokens.append(f"{move.number}...")
        tokens.append(move.san)
        if move.alternatives:
            tokens.append("{" + ambiguity_note(move.alternatives) + "}")
        previous = move
    return tokens


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
    ordered = [name for name in SEVEN_TAG_ROSTER] + [
        name for name in values if name not in SEVEN_TAG_ROSTER
    ]
    lines = [f'[{name} "{_escape(values[name])}"]' for name in ordered]
    lines.append("")
    line = ""
    for token in [*movetext(moves), values["Result"]]:
        if line and len(line) + 1 + len(token) > LINE_LENGTH:
            lines.append(line)
            line = token
        else:
            line = f"{line} {token}" if line else token
    lines.append(line)
    return "\n".join(lines) + "\n"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')
