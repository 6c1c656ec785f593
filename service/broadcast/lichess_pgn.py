"""A game's PGN as a relay reads it: ``GameId`` and ``Board`` tags, the game segments of an
illegal move that stood, what lichess cannot read, and pushes cut under the size limit.

The PGN itself comes from the one writer (:mod:`service.pgn`); this module only reads its
tag lines, adds the relay's two tags after them and cuts the text where games begin.
Facts about lichess's relay used here (module ``relay`` of lila, read from its source):

* a game is matched to a chapter by ``GameId`` when both carry one, so two games with the
  same players but different ``GameId`` are two chapters;
* a chapter's initial position cannot change once it has moves (the whole sync is refused),
  and a game whose SAN stops being legal before its last move is refused;
* games whose player is empty, ``"?"`` or one character are silently dropped;
* variants it reads: Standard, Chess960, From Position (and lichess's own variants, which
  this service does not play); a push is at most 512 KiB.

Pure: text in, text out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from service.pgn import escape

__all__ = [
    "LICHESS_VARIANTS",
    "MAX_PUSH_BYTES",
    "FeedEntry",
    "FeedGame",
    "Problem",
    "chunks",
    "entries",
    "joined",
    "pack",
    "split_games",
    "tags_of",
    "unnamed",
    "with_tags",
]

MAX_PUSH_BYTES = 512 * 1024
"""The largest body lichess takes on its push endpoint."""

LICHESS_VARIANTS = frozenset({"Standard", "Chess960", "From Position"})
"""``Variant`` tag values lichess's relay reads (no tag reads as Standard)."""

_TAG = re.compile(r'^\[(\w+) "((?:[^"\\]|\\.)*)"\]\s*$')


class Problem(StrEnum):
    """Why a game is kept out of what goes to lichess."""

    VARIANT = "variant"
    """Its variant is one lichess cannot read (20-chess, realtime)."""
    UNNAMED = "unnamed"
    """A player's name is empty, "?" or one character: lichess would drop it silently."""
    TOO_LARGE = "too-large"
    """The game alone is larger than a push may be."""


@dataclass(frozen=True, slots=True)
class FeedGame:
    """A game of the hall as the feeds see it: the writer's PGN (one game, or the game
    segments of an illegal move that stood) and where it was played."""

    game_id: str
    """``TABLE-NUMBER``: the game's id at its table (stable over restarts)."""
    table_id: str
    number: int
    board: int
    round: str
    pgn: str
    finished: bool = False


@dataclass(frozen=True, slots=True)
class FeedEntry:
    """One game of a feed: the writer's game (or one of its segments) with ``GameId`` and
    ``Board`` added."""

    game_id: str
    board: int
    round: str
    text: str
    tags: Mapping[str, str]
    problems: tuple[Problem, ...] = field(default=())

    @property
    def lichess_ready(self) -> bool:
        return not self.problems


def split_games(text: str) -> list[str]:
    """The games of a multi-game PGN text (each from its first tag line)."""
    games: list[list[str]] = []
    in_tags = False
    for line in text.splitlines(keepends=True):
        is_tag = _TAG.match(line) is not None
        if is_tag and not in_tags:
            games.append([])
        if is_tag or line.strip():
            in_tags = is_tag
        if games:
            games[-1].append(line)
    return ["".join(lines) for lines in games if "".join(lines).strip()]


def tags_of(game: str) -> dict[str, str]:
    """The tag pairs of one game, values unescaped."""
    tags: dict[str, str] = {}
    for line in game.splitlines():
        match = _TAG.match(line)
        if match is None:
            if line.strip():
                break
            continue
        tags[match.group(1)] = re.sub(r"\\(.)", r"\1", match.group(2))
    return tags


def with_tags(game: str, extra: Mapping[str, str]) -> str:
    """``game`` with the tags of ``extra`` set (after its own, replacing any of the same
    name)."""
    lines = game.splitlines(keepends=True)
    end = 0
    while end < len(lines) and _TAG.match(lines[end]) is not None:
        end += 1
    kept = [line for line in lines[:end] if _name(line) not in extra]
    added = [f'[{key} "{escape(value)}"]\n' for key, value in extra.items()]
    return "".join(kept + added + lines[end:])


def _name(line: str) -> str | None:
    match = _TAG.match(line)
    return match.group(1) if match is not None else None


def unnamed(name: str | None) -> bool:
    """A player name lichess drops: empty, ``?`` or one character."""
    text = (name or "").strip()
    return len(text) <= 1


def entries(game: FeedGame) -> list[FeedEntry]:
    """The feed entries of ``game``: one, or one per game segment when an illegal move
    stood.  The first keeps the game's id as ``GameId``; segment ``k`` (from 2) is
    ``GAME.k``, a chapter of its own on lichess that goes on from the position after the
    illegal move (lichess refuses a chapter whose start position changes once it has
    moves, and every game of the round would stop with it)."""
    parts = split_games(game.pgn) or [game.pgn]
    out: list[FeedEntry] = []
    for index, part in enumerate(parts, 1):
        game_id = game.game_id if index == 1 else f"{game.game_id}.{index}"
        text = with_tags(part, {"Board": str(game.board), "GameId": game_id})
        tags = tags_of(text)
        problems: list[Problem] = []
        if tags.get("Variant", "Standard") not in LICHESS_VARIANTS:
            problems.append(Problem.VARIANT)
        if unnamed(tags.get("White")) or unnamed(tags.get("Black")):
            problems.append(Problem.UNNAMED)
        if len(text.encode()) > MAX_PUSH_BYTES - 2:
            problems.append(Problem.TOO_LARGE)
        out.append(FeedEntry(game_id, game.board, game.round, text, tags, tuple(problems)))
    return out


def joined(texts: Iterable[str]) -> str:
    """Games as one PGN text, a blank line after each."""
    return "".join(t.strip() + "\n\n" for t in texts if t.strip())


def pack(texts: Sequence[str], limit: int = MAX_PUSH_BYTES) -> list[list[int]]:
    """The indices of ``texts`` in as few bodies of at most ``limit`` bytes (each text
    joined by :func:`joined`) as keep their order; a game is never cut, and one larger than
    ``limit`` alone is left out."""
    out: list[list[int]] = []
    current: list[int] = []
    size = 0
    for index, text in enumerate(texts):
        length = len(joined([text]).encode())
        if length > limit:
            continue
        if current and size + length > limit:
            out.append(current)
            current, size = [], 0
        current.append(index)
        size += length
    if current:
        out.append(current)
    return out


def chunks(texts: Sequence[str], limit: int = MAX_PUSH_BYTES) -> list[str]:
    """``texts`` as the PGN bodies of :func:`pack`."""
    return [joined(texts[i] for i in part) for part in pack(texts, limit)]
