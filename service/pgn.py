"""The one PGN writer of the service: every table, the realtime table and the recogniser's
record write their games through it.

* tags: the seven tag roster first (:func:`seven_tag_roster`), values escaped
  (:func:`escape`);
* movetext: tokens joined by spaces in lines of at most :data:`LINE_WIDTH` characters
  (:func:`game_text`); move numbers with a side's part of several actions (20-chess) under
  one number (:func:`movetext`); comments in braces (a ``}`` inside reads ``)``), among them
  ``[%clk h:mm:ss]``, scores, notes and the note on a move the board could not tell from
  others (:func:`ambiguity_note`);
* a turn-based table's game (:func:`table_pgn`): an illegal move that stood under US speed
  chess rule 11 splits the record into game segments (``GameSegment "k/n"``), each from the
  position after the one before;
* a realtime game (:func:`realtime_movetext`): each move numbered on its own, with its
  virtual start and arrival times, and the rulings as comments at their time.

Pure: values in, text out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol

from service.time_control import clk
from service.variants import STANDARD_ID, get_variant
from service.variants.base import StartPosition

__all__ = [
    "LINE_WIDTH",
    "SEVEN_TAG_ROSTER",
    "UNKNOWN_DATE",
    "PgnMove",
    "RecordEntry",
    "TableGame",
    "ambiguity_note",
    "comment",
    "escape",
    "game_text",
    "movetext",
    "pgn_date",
    "player_tags",
    "realtime_movetext",
    "seven_tag_roster",
    "table_pgn",
]

UNKNOWN_DATE = "????.??.??"
LINE_WIDTH = 79
"""Characters at most on a movetext line (PGN export format)."""
SEVEN_TAG_ROSTER = ("Event", "Site", "Date", "Round", "White", "Black", "Result")


class Players(Protocol):
    """What the roster reads of a table's settings."""

    @property
    def event(self) -> str: ...
    @property
    def site(self) -> str: ...
    @property
    def round(self) -> str: ...
    @property
    def white(self) -> str: ...
    @property
    def black(self) -> str: ...


def seven_tag_roster(settings: Players, result: str, date: str | None = None) -> dict[str, str]:
    """Event, Site, Date (``date``, or unknown), Round, White, Black and Result, in that
    order."""
    s = settings
    return {
        "Event": s.event, "Site": s.site, "Date": date or UNKNOWN_DATE, "Round": s.round,
        "White": s.white, "Black": s.black, "Result": result,
    }  # fmt: skip


PLAYER_TAGS = (
    ("title", "Title"), ("elo", "Elo"), ("fide_id", "FideId"), ("federation", "Federation"),
    ("team", "Team"),
)  # fmt: skip
"""A player's detail (its setting after ``white_``/``black_``) and its tag after
``White``/``Black``.  ``WhiteFederation`` is no tag lichess reads (it takes the federation
from the FIDE id); it is written so that the record keeps it where no FIDE id is known."""


def player_tags(details: Mapping[str, str]) -> dict[str, str]:
    """The tags of the known players' details (``details`` by setting name: ``white_elo``,
    ..., ``board``): ``WhiteTitle``, ``WhiteElo``, ``WhiteFideId``, ``WhiteFederation``,
    ``WhiteTeam``, the same for Black, then ``Board``; none for what is unknown."""
    tags: dict[str, str] = {}
    for side in ("white", "black"):
        for key, tag in PLAYER_TAGS:
            value = details.get(f"{side}_{key}")
            if value:
                tags[side.capitalize() + tag] = value
    if details.get("board"):
        tags["Board"] = details["board"]
    return tags


def escape(value: str) -> str:
    """A tag value with its backslashes and quotes escaped."""
    return value.replace("\\", "\\\\").replace('"', '\\"')


def comment(parts: Iterable[str]) -> str:
    """A comment of ``parts`` (joined by spaces); a ``}`` in them reads ``)``."""
    return "{" + " ".join(parts).replace("}", ")") + "}"


def ambiguity_note(alternatives: Sequence[str]) -> str:
    """The comment text for a move the board could not tell from ``alternatives``."""
    return f"(the board could not tell this from {' or '.join(alternatives)})"


def game_text(tags: Mapping[str, str], tokens: Iterable[str]) -> str:
    """One game: the tag pairs, a blank line, then ``tokens`` (the movetext, the result
    last) joined by spaces in lines of at most :data:`LINE_WIDTH` characters (a longer
    token stands alone on its line)."""
    text = "\n".join(f'[{k} "{escape(v)}"]' for k, v in tags.items()) + "\n\n"
    line = ""
    for token in tokens:
        if line and len(line) + 1 + len(token) > LINE_WIDTH:
            text += line + "\n"
            line = token
        else:
            line = f"{line} {token}" if line else token
    return text + line + "\n"


@dataclass(frozen=True, slots=True)
class PgnMove:
    """One action for :func:`movetext`: its move number, side, notation and comments."""

    number: int
    white: bool
    san: str
    comments: Sequence[str] = ()


def movetext(
    moves: Iterable[PgnMove], *, parts: bool = True, number_after_comment: bool = False
) -> list[str]:
    """The tokens of ``moves``: ``1.`` before White's, ``1...`` before Black's where it
    does not follow White's of the same number, each move's comments after it.

    ``parts``: consecutive actions of one side under one number are one part of a turn
    (20-chess), written under one number (``5. Q@d3 Ng1-f3``); a Black part after a White
    one of several actions is numbered again.  ``number_after_comment``: Black's move is
    numbered again after a comment (the recogniser's record does so)."""
    tokens: list[str] = []
    previous: PgnMove | None = None
    part = 0  # actions in the side's part so far
    for move in moves:
        new_part = (
            not parts
            or previous is None
            or previous.white != move.white
            or previous.number != move.number
        )
        if new_part and move.white:
            tokens.append(f"{move.number}.")
        elif new_part and (
            previous is None
            or not previous.white
            or previous.number != move.number
            or part > 1
            or (number_after_comment and bool(previous.comments))
        ):
            tokens.append(f"{move.number}...")
        part = 1 if new_part else part + 1
        tokens.append(move.san)
        if move.comments:
            tokens.append(comment(move.comments))
        previous = move
    return tokens


def realtime_movetext(
    moves: Iterable[tuple[float, PgnMove]], notes: Iterable[tuple[float, str]]
) -> list[str]:
    """Realtime chess has no turns: each move (with the time it started) is numbered on
    its own (``1. e2-e4 2... e7-e5``), followed by its comments; each note is a comment at
    its time (after the moves that started then)."""
    items: list[tuple[float, int, list[str]]] = []
    for when, move in moves:
        dots = "." if move.white else "..."
        group = [f"{move.number}{dots}", move.san]
        if move.comments:
            group.append(comment(move.comments))
        items.append((when, 0, group))
    for when, text in notes:
        items.append((when, 1, [comment([text])]))
    return [token for _, _, group in sorted(items, key=lambda i: (i[0], i[1])) for token in group]


# -- a turn-based table's game ---------------------------------------------------------------


class RecordEntry(Protocol):
    """What :func:`table_pgn` reads of a move of a table's record."""

    @property
    def number(self) -> int: ...
    @property
    def side(self) -> bool: ...
    @property
    def uci(self) -> str: ...
    @property
    def san(self) -> str: ...
    @property
    def final(self) -> bool: ...
    @property
    def clock(self) -> float | None: ...
    @property
    def scores(self) -> Sequence[Mapping[str, object]]: ...
    @property
    def illegal(self) -> bool: ...
    @property
    def notes(self) -> Sequence[str]: ...
    @property
    def fen_after(self) -> str | None: ...
    @property
    def article(self) -> str: ...
    @property
    def alternatives(self) -> Sequence[tuple[str, str]]: ...


def pgn_date(epoch: float | None, t: float | None) -> str | None:
    """The PGN ``Date`` (``2026.11.22``, UTC) of table time ``t`` when table times are
    ``epoch`` plus UNIX seconds; None when either is unknown."""
    if epoch is None or t is None:
        return None
    try:
        return datetime.fromtimestamp(epoch + t, UTC).strftime("%Y.%m.%d")
    except (OverflowError, OSError, ValueError):
        return None


@dataclass(slots=True)
class TableGame:
    """What a table's game is written from."""

    settings: Players
    time_control: str
    """The ``TimeControl`` tag."""
    result: str
    reason: str
    start: StartPosition | None
    game_tags: tuple[tuple[str, str], ...] | None
    """The variant's own tags (None before a game)."""
    scores: dict[str, int]
    record: tuple[RecordEntry, ...]
    date: str | None = None
    """The ``Date`` tag (None: unknown, ``????.??.??``)."""
    details: Mapping[str, str] = field(default_factory=dict)
    """The players' known details and the board number (:func:`player_tags`)."""


def table_pgn(game: TableGame) -> str:
    """The PGN of a table's game: the seven tag roster, ``TimeControl``, ``Termination``,
    the variant's tags, T20 scores, and the comments of every completed move.  An illegal
    move that stood (US speed 11) is no move a PGN reader can play, so the record is split
    there into game segments: a segment ends with a comment naming the illegal move and
    result ``*``; the next starts from the position after it (``SetUp``/``FEN``) with a
    comment saying so.  Every segment has the game's tags and ``GameSegment "k/n"``; the
    last one the result, its reason and the scores."""
    segments = _segments(game.record)
    return "\n".join(
        _segment(game, index, len(segments), fen, entries, previous, stood)
        for index, (fen, entries, previous, stood) in enumerate(segments, 1)
    )


_Segment = tuple[str | None, list[RecordEntry], RecordEntry | None, RecordEntry | None]


def _segments(record: tuple[RecordEntry, ...]) -> list[_Segment]:
    """The record cut at each standing illegal move: (start FEN, None for the game's own
    start; the completed moves; the illegal move it starts after; the one it ends with)."""
    out: list[_Segment] = []
    fen: str | None = None
    previous: RecordEntry | None = None
    moves: list[RecordEntry] = []
    for entry in record:
        if entry.illegal:
            out.append((fen, moves, previous, entry))
            fen, previous, moves = entry.fen_after, entry, []
        elif entry.final:
            moves.append(entry)
    out.append((fen, moves, previous, None))
    return out


def _segment(
    src: TableGame, index: int, count: int, fen: str | None, entries: list[RecordEntry],
    previous_illegal: RecordEntry | None, stood: RecordEntry | None,
) -> str:  # fmt: skip
    last = index == count
    result = src.result if last else "*"
    tags = seven_tag_roster(src.settings, result, src.date)
    tags.update(player_tags(src.details))
    tags["TimeControl"] = src.time_control
    if count > 1:
        tags["GameSegment"] = f"{index}/{count}"
    if src.reason and last:
        tags["Termination"] = src.reason
    if src.start is not None:
        if src.game_tags is not None:  # the variant's own tags (Variant, and any it adds)
            tags.update({k: v for k, v in src.game_tags if k not in ("SetUp", "FEN")})
        elif src.start.variant != STANDARD_ID:
            tags["Variant"] = get_variant(src.start.variant).pgn_name
        if fen is not None or not src.start.classical:
            tags["SetUp"] = "1"
            tags["FEN"] = fen if fen is not None else src.start.fen
    scores = src.scores
    if scores and last:
        tags["WhiteScore"] = str(scores["white"])
        tags["BlackScore"] = str(scores["black"])
    tokens: list[str] = []
    if previous_illegal is not None:
        tokens.append(comment([f"after {_stood(previous_illegal)}"]))
    moves: list[PgnMove] = []
    for number, entry in enumerate(entries, 1):
        comments: list[str] = []
        if entry.clock is not None:
            comments.append(f"[%clk {clk(entry.clock)}]")
        for score in entry.scores:
            comments.append(f"{score['side']} +{score['points']} {score['reason']}")
        comments += entry.notes
        if entry.alternatives:
            comments.append(ambiguity_note([san for _, san in entry.alternatives]))
        if stood is not None and number == len(entries):
            comments.append(_stood_note(stood))
        moves.append(PgnMove(entry.number, bool(entry.side), entry.san, comments))
    tokens += movetext(moves)
    if stood is not None and not entries:
        tokens.append(comment([_stood_note(stood)]))
    tokens.append(result)
    return game_text(tags, tokens)


def _stood(entry: RecordEntry) -> str:
    """``White's illegal move Ng1-g3 (g1g3), which stood (US speed 11)``."""
    side = "White" if entry.side else "Black"
    return f"{side}'s illegal move {entry.san} ({entry.uci}), which stood ({entry.article})"


def _stood_note(entry: RecordEntry) -> str:
    side = "White" if entry.side else "Black"
    clock = f" at {clk(entry.clock)} on the clock" if entry.clock is not None else ""
    return (
        f"{side}'s illegal move {entry.san} ({entry.uci}) stood{clock} ({entry.article}): "
        "the game goes on from the position after it in the next game segment"
    )
