"""A round's pairings from a pairing program, onto the hall's tables by board number.

* :mod:`~service.pairings.round`: the round (board number to pairing, the byes), its
  errors (:class:`PairingsError`, one line naming ``FILE:LINE``);
* :mod:`~service.pairings.trf`: a FIDE TRF-16 file; :mod:`~service.pairings.csv_pairings`:
  a CSV with a header;
* :mod:`~service.pairings.assign`: which table plays which pairing (pure);
* :mod:`~service.pairings.hall_import`: the import into a running hall (each table's
  ``players`` command) and the last round imported, for the pages.
"""

from __future__ import annotations

from pathlib import Path

from service.pairings.csv_pairings import parse_csv
from service.pairings.round import Bye, ByeKind, Pairing, PairingsError, Player, Round, decode
from service.pairings.trf import parse_trf

__all__ = [
    "MAX_FILE",
    "Bye",
    "ByeKind",
    "Pairing",
    "PairingsError",
    "Player",
    "Round",
    "load_pairings",
    "read_pairings",
]

MAX_FILE = 1024 * 1024
"""Largest pairings file read (a TRF of 2,000 players with 15 rounds is about 500 kB)."""


def is_trf(text: str) -> bool:
    """Whether ``text`` is a TRF file (it has a player record, a line beginning ``001 ``)."""
    return any(line.startswith("001 ") for line in text.splitlines())


def read_pairings(data: bytes, source: str, round_number: int | None) -> Round:
    """The round in a pairings file's bytes: a TRF (``round_number`` says which of its
    rounds) or a CSV (``round_number``, if given, names the round).  Raises
    :class:`PairingsError`."""
    if len(data) > MAX_FILE:
        raise PairingsError(f"{source}: larger than {MAX_FILE // 1024} kB: not a pairings file")
    if b"\0" in data:
        line = data.count(b"\n", 0, data.index(b"\0")) + 1
        raise PairingsError(f"{source}:{line}: a NUL byte: not a text file")
    text = decode(data, source)
    if is_trf(text):
        if round_number is None:
            raise PairingsError(f"{source}: a TRF file holds every round: say which (--round N)")
        return parse_trf(text, round_number, source)
    return parse_csv(text, source, round_number)


def load_pairings(path: str | Path, round_number: int | None) -> Round:
    """:func:`read_pairings` of the file at ``path``."""
    path = Path(path)
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_FILE + 1)
    except FileNotFoundError:
        raise PairingsError(f"{path}: no such pairings file") from None
    except IsADirectoryError:
        raise PairingsError(f"{path}: is a directory, not a pairings file") from None
    except OSError as exc:
        raise PairingsError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return read_pairings(data, str(path), round_number)
