"""A round's pairings from a FIDE Tournament Report File (TRF-16, as pairing programs such
as Swiss-Manager, Vega and JaVaFo export it).

The facts of the format (FIDE Handbook C.04 Annex 2, "TRF16"), each line a record named by
its first three characters:

* ``001``, a player, in fixed columns (1-based, inclusive): 5-8 starting rank, 10 sex, 11-13
  title (GM, IM, WGM, FM, WIM, CM, WFM, WCM), 15-47 name ``Lastname, Firstname``, 49-52
  FIDE rating, 54-56 federation, 58-68 FIDE number, 70-79 birth date, 81-84 points, 86-89
  rank; then per round a block of ten columns from column 92: the opponent's starting rank
  (92-95; ``0000`` or blanks: a bye or not paired), the colour (97: ``w``, ``b``, ``-``)
  and the result (99: ``1 = 0``, ``+ -`` forfeits, ``W D L`` unrated, and for a round
  without an opponent ``H`` half-point bye, ``F`` full-point bye, ``U`` pairing-allocated
  bye, ``Z`` or blank zero-point bye); letters in any case;
* ``013``, a team: its name in 5-36, its players' starting ranks from column 37 in blocks
  of five (37-40, 42-45, ...);
* the others (``012`` tournament name, ``022`` city, ...) are not read here.

The round's column gives who plays whom with which colour but no board numbers: boards
are numbered as pairing programs number them, by the higher score of the pair before the
round (from the results of the rounds before it), then the sum of the pair's scores, then
the better (lower) starting rank in the pair, which the file orders by rating.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from service.pairings.round import Bye, ByeKind, Pairing, PairingsError, Player, Round

__all__ = ["parse_trf"]

_FIRST_ROUND = 91
"""0-based index of column 92, where round 1's block begins."""
_ROUND_WIDTH = 10
_BYES = {
    "H": ByeKind.HALF, "=": ByeKind.HALF, "D": ByeKind.HALF,
    "F": ByeKind.FULL,
    "U": ByeKind.ALLOCATED, "+": ByeKind.ALLOCATED, "1": ByeKind.ALLOCATED,
    "W": ByeKind.ALLOCATED,
    "Z": ByeKind.ZERO, " ": ByeKind.ZERO, "0": ByeKind.ZERO, "L": ByeKind.ZERO,
    "-": ByeKind.ABSENT,
}  # fmt: skip
_POINTS = {"1": 1.0, "+": 1.0, "W": 1.0, "F": 1.0, "U": 1.0, "=": 0.5, "D": 0.5, "H": 0.5}
_TITLE = re.compile(r"^[A-Za-z]{1,4}$")
_FEDERATION = re.compile(r"^[A-Za-z]{2,3}$")


@dataclass(slots=True)
class _Entry:
    """A player's block of one round."""

    opponent: int | None
    colour: str
    result: str


@dataclass(slots=True)
class _Record:
    player: Player
    line: int
    rounds: list[_Entry | None] = field(default_factory=list)


def parse_trf(text: str, round_number: int, source: str = "<trf>") -> Round:
    """The pairings of round ``round_number`` (from 1) in the TRF ``text`` (``source``
    names the file in messages).  Raises :class:`PairingsError` (one line, ``FILE:LINE``)."""
    if round_number < 1:
        raise PairingsError(f"{source}: round {round_number}: rounds are numbered from 1")
    records: dict[int, _Record] = {}
    teams: dict[int, str] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        code = line[:3]
        if code == "001":
            record = _player(line, number, source)
            rank = record.player.start_rank
            assert rank is not None
            if rank in records:
                raise PairingsError(
                    f"{source}:{number}: starting rank {rank} is already the player of line "
                    f"{records[rank].line}"
                )
            records[rank] = record
        elif code == "013":
            name = line[4:36].strip()
            for start in range(36, len(line), 5):
                rank_text = line[start : start + 4].strip()
                if rank_text.isdigit() and name:
                    teams[int(rank_text)] = name
    if not records:
        raise PairingsError(f"{source}:1: no player records (lines beginning 001): not a TRF file")
    for rank, team in teams.items():
        if rank in records:
            records[rank].player = replace(records[rank].player, team=team[:100])
    return _round(records, round_number, source)


def _player(line: str, number: int, source: str) -> _Record:
    """A ``001`` line."""
    text = line.ljust(89)

    def fail(what: str) -> PairingsError:
        return PairingsError(f"{source}:{number}: {what}")

    rank_text = text[4:8].strip()
    if not rank_text.isdigit() or not 1 <= int(rank_text) <= 9999:
        raise fail(f"starting rank (columns 5-8) must be a number 1-9999, not {rank_text!r}")
    name = " ".join(text[14:47].split())
    if not name:
        raise fail("the name (columns 15-47) is empty")
    title = text[10:13].strip().upper() or None
    if title is not None and not _TITLE.match(title):
        raise fail(f"title (columns 11-13) {title!r} is not a title like GM, IM, WFM")
    rating = text[48:52].strip()
    if rating and not rating.isdigit():
        raise fail(f"FIDE rating (columns 49-52) {rating!r} is not a number")
    federation = text[53:56].strip().upper() or None
    if federation is not None and not _FEDERATION.match(federation):
        raise fail(f"federation (columns 54-56) {federation!r} is not a federation like GER")
    fide_id = text[57:68].strip()
    if fide_id and not fide_id.isdigit():
        raise fail(f"FIDE number (columns 58-68) {fide_id!r} is not a number")
    player = Player(
        name=name,
        title=title,
        elo=rating.lstrip("0") or None,
        federation=federation,
        fide_id=fide_id.lstrip("0") or None,
        start_rank=int(rank_text),
    )
    record = _Record(player, number)
    for index, start in enumerate(range(_FIRST_ROUND, len(line), _ROUND_WIDTH), 1):
        block = line[start : start + _ROUND_WIDTH].ljust(9)
        if not block.strip():
            record.rounds.append(None)
            continue
        where = f"round {index} (columns {start + 1}-{start + 8})"
        opponent_text = block[0:4].strip()
        if opponent_text and not opponent_text.isdigit():
            raise fail(f"{where}: the opponent {opponent_text!r} is not a starting rank")
        opponent = int(opponent_text) if opponent_text else 0
        colour = block[5].lower()
        result = block[7].upper()
        if colour not in ("w", "b", "-", " "):
            raise fail(f"{where}: the colour {block[5]!r} is not w, b or -")
        if opponent and colour not in ("w", "b"):
            raise fail(f"{where}: a game against {opponent} needs its colour, w or b")
        if result not in "10=+-WDLHFUZ ":
            raise fail(f"{where}: the result {block[7]!r} is none of 1 = 0 + - W D L H F U Z")
        record.rounds.append(_Entry(opponent or None, colour, result))
    return record


def _score(record: _Record, before: int) -> float:
    """Points from the results of the rounds before round ``before``."""
    return sum(
        _POINTS.get(entry.result, 0.0) for entry in record.rounds[: before - 1] if entry is not None
    )


def _round(records: dict[int, _Record], number: int, source: str) -> Round:
    def entry_of(record: _Record) -> _Entry | None:
        return record.rounds[number - 1] if len(record.rounds) >= number else None

    if all(entry_of(r) is None for r in records.values()):
        played = max(len(r.rounds) for r in records.values())
        first = min(r.line for r in records.values())
        have = f"it has rounds 1-{played}" if played else "it has no round columns"
        raise PairingsError(f"{source}:{first}: no pairings for round {number} ({have})")
    pairs: list[tuple[_Record, _Record]] = []
    byes: list[Bye] = []
    seen: set[int] = set()
    for rank in sorted(records):
        record = records[rank]
        entry = entry_of(record)
        scored = replace(record.player, score=_score(record, number))
        if entry is None:
            byes.append(Bye(scored, ByeKind.ABSENT))
            continue
        if entry.opponent is None:
            byes.append(Bye(scored, _BYES.get(entry.result, ByeKind.ABSENT)))
            continue
        if rank in seen:
            continue
        where = f"{source}:{record.line}: round {number}"
        other = records.get(entry.opponent)
        if other is None:
            raise PairingsError(f"{where}: opponent {entry.opponent} is no player of the file")
        if entry.opponent == rank:
            raise PairingsError(f"{where}: the player is paired against themself")
        back = entry_of(other)
        if back is None or back.opponent != rank or back.colour == entry.colour:
            colour = "white" if entry.colour == "w" else "black"
            raise PairingsError(
                f"{where}: plays {entry.opponent} with {colour}, but line {other.line} does "
                f"not have {rank} as the opponent with the other "
                "colour"
            )
        seen.update((rank, entry.opponent))
        pair = (record, other) if entry.colour == "w" else (other, record)
        pairs.append(pair)

    def order(pair: tuple[_Record, _Record]) -> tuple[float, float, int]:
        scores = [_score(r, number) for r in pair]
        ranks = [r.player.start_rank or 0 for r in pair]
        return (-max(scores), -sum(scores), min(ranks))

    pairings = tuple(
        Pairing(
            board,
            replace(white.player, score=_score(white, number)),
            replace(black.player, score=_score(black, number)),
            min(white.line, black.line),
        )
        for board, (white, black) in enumerate(sorted(pairs, key=order), 1)
    )
    return Round(source, number, pairings, tuple(byes))
