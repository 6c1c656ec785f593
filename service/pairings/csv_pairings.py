"""A round's pairings from a CSV file: one row a game, the first row the header.

Columns (by name, in any order; only ``white`` and ``black`` must be there)::

    board,white,white_title,white_elo,white_federation,white_fide_id,white_team,
    black,black_title,black_elo,black_federation,black_fide_id,black_team

Names are ``Last, First`` (quote a name with a comma: ``"Carlsen, Magnus"``).  ``board``
numbers the game's board; without a ``board`` column the rows are boards 1, 2, ... in
order.  A row with an empty ``black`` is a player without a game (a bye; its ``board`` is
left empty).  Separated by commas, or by semicolons when the header has no comma (a
spreadsheet in a language with decimal commas saves so).
"""

from __future__ import annotations

import csv
import re

from service.pairings.round import Bye, ByeKind, Pairing, PairingsError, Player, Round

__all__ = ["COLUMNS", "parse_csv"]

_DETAILS = ("title", "elo", "federation", "fide_id", "team")
_SUFFIXES = tuple(f"_{d}" for d in _DETAILS)
COLUMNS = (
    "board",
    *(f"{side}{item}" for side in ("white", "black") for item in ("", *_SUFFIXES)),
)
"""The columns a pairings CSV may have."""
_FORMS = {
    "title": (re.compile(r"^[A-Za-z]{1,4}$"), "a title like GM"),
    "elo": (re.compile(r"^[0-9]{1,4}$"), "a rating"),
    "federation": (re.compile(r"^[A-Za-z]{2,3}$"), "a federation like GER"),
    "fide_id": (re.compile(r"^[0-9]{1,12}$"), "a FIDE id"),
    "team": (None, ""),
}


def parse_csv(text: str, source: str = "<csv>", round_number: int | None = None) -> Round:
    """The pairings in the CSV ``text``.  Raises :class:`PairingsError` (``FILE:LINE``)."""
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        raise PairingsError(f"{source}:1: no header row (board,white,...,black,...)")
    delimiter = ";" if "," not in lines[0] and ";" in lines[0] else ","
    reader = csv.reader(lines, delimiter=delimiter)
    try:
        rows = list(reader)
    except csv.Error as exc:
        raise PairingsError(f"{source}:{reader.line_num}: not CSV: {exc}") from None
    header = [name.strip().lower() for name in rows[0]]
    unknown = [name for name in header if name not in COLUMNS]
    if unknown:
        raise PairingsError(
            f"{source}:1: unknown column {unknown[0][:40]!r} (known: {', '.join(COLUMNS)})"
        )
    for name in ("white", "black"):
        if name not in header:
            raise PairingsError(f"{source}:1: the header has no {name!r} column")
    if len(set(header)) != len(header):
        raise PairingsError(f"{source}:1: a column is named twice")
    pairings: list[Pairing] = []
    byes: list[Bye] = []
    boards: dict[int, int] = {}
    for number, row in enumerate(rows[1:], 2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) > len(header):
            raise PairingsError(
                f"{source}:{number}: {len(row)} fields for {len(header)} columns "
                "(quote a name with a comma)"
            )
        cells = dict(zip(header, (cell.strip() for cell in row), strict=False))
        white = _player(cells, "white", source, number)
        black = _player(cells, "black", source, number) if cells.get("black") else None
        board_text = cells.get("board", "")
        if white is None:
            raise PairingsError(f"{source}:{number}: white is empty")
        if black is None:
            if board_text:
                raise PairingsError(
                    f"{source}:{number}: board {board_text} has no black: leave the board "
                    "of a bye empty"
                )
            byes.append(Bye(white, ByeKind.ABSENT))
            continue
        if "board" in header:
            if not board_text.isdigit() or not 1 <= int(board_text) <= 9999:
                raise PairingsError(
                    f"{source}:{number}: board must be a number 1-9999, not {board_text[:20]!r}"
                )
            board = int(board_text)
        else:
            board = len(pairings) + 1
        if board in boards:
            raise PairingsError(
                f"{source}:{number}: board {board} is already the game of line {boards[board]}"
            )
        boards[board] = number
        pairings.append(Pairing(board, white, black, number))
    if not pairings and not byes:
        raise PairingsError(f"{source}:1: no pairings below the header")
    pairings.sort(key=lambda p: p.board)
    return Round(source, round_number, tuple(pairings), tuple(byes))


def _player(cells: dict[str, str], side: str, source: str, number: int) -> Player | None:
    name = " ".join(cells.get(side, "").split())
    if not name:
        return None
    if len(name) > 100 or any(ord(c) < 32 for c in name):
        raise PairingsError(f"{source}:{number}: {side} is longer than 100 characters")
    found: dict[str, str | None] = {}
    for detail in _DETAILS:
        value = cells.get(f"{side}_{detail}", "") or None
        pattern, what = _FORMS[detail]
        if value is not None and pattern is not None and not pattern.match(value):
            raise PairingsError(f"{source}:{number}: {side}_{detail} {value[:40]!r} is not {what}")
        if value is not None and detail in ("title", "federation"):
            value = value.upper()
        if value is not None and detail == "team" and len(value) > 100:
            raise PairingsError(f"{source}:{number}: {side}_team is longer than 100 characters")
        if value is not None and detail == "elo":
            value = value.lstrip("0") or None
        found[detail] = value
    return Player(name, found["title"], found["elo"], found["federation"], found["fide_id"],
                  found["team"])  # fmt: skip
