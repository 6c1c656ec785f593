"""What a table shows, kept apart from its rules: the board as it stands (cells, the FEN
placement, a presence-only board's squares shown with the game's pieces), the game's FEN,
the settings as JSON and the PGN, each written once per change of what it is written from
(:class:`BoardView`, :class:`FenMemo`, :class:`SettingsMemo`, :class:`PgnMemo`).

Every update of a table is shown to the web, so these are the hot path of a hall: a move
changes one or two ranks of the placement, and only those are written again.
"""

from __future__ import annotations

import bisect
import itertools
import operator
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import chess

from dgt.protocol.constants import Piece
from service.pgn import TableGame
from service.table.record import MEMO_LIMIT, MoveEntry
from service.table.settings import DETAIL_KEYS
from service.variants.base import EMPTY, SquareMap, VariantGame
from service.variants.standard import ChessGame

__all__ = [
    "BoardView",
    "FenMemo",
    "PgnMemo",
    "SetRightMemo",
    "SettingsMemo",
    "chess_fen",
    "next_fen",
    "placement_fen",
    "set_right",
]

_FEN_PIECES = frozenset("PNBRQKpnbrqk")

_RANKS = range(56, -8, -8)
"""The first square of each rank, the eighth first (as a FEN lists them)."""

_CELL_OF = {piece: EMPTY if piece is Piece.EMPTY else piece.symbol for piece in Piece}
"""What :meth:`BoardView.physical` shows for each piece code."""


def _identified(cells: SquareMap, pieces: SquareMap) -> SquareMap:
    """``cells`` read by a presence-only board, each occupied one (``*``) showing what
    ``pieces`` (the game's position, same frame) has on it."""
    return tuple(
        pieces[square] or cell if cell == "*" else cell for square, cell in enumerate(cells)
    )


def placement_fen(cells: SquareMap) -> str:
    """The placement field of a FEN for ``cells`` (``cells[s]``: the symbol on square ``s``,
    a1 = 0), as ``chess.BaseBoard.board_fen()`` writes it; symbols that are no chess piece
    (empty, ``*``, ``?``) read as empty squares."""
    return "/".join(_rank_fen(cells[rank : rank + 8]) for rank in _RANKS)


def _rank_fen(cells: SquareMap) -> str:
    """One rank of :func:`placement_fen` (its eight cells, the a-file first); the same
    ranks come back all game long, so each is written once (up to a bound)."""
    return _known_rank_fen(tuple(cells))


_RANK_FENS: dict[tuple[str, ...], str] = {}
"""Each rank's text by its cells, as written (cleared at :data:`MEMO_LIMIT` ranks): a dict
looked up straight, where an ``lru_cache`` took a call with an argument tuple of its own
and kept its order of use at every change of a square."""


def _known_rank_fen(cells: tuple[str, ...]) -> str:
    """:func:`_rank_fen` of a rank given as a tuple."""
    row = _RANK_FENS.get(cells)
    if row is None:
        if len(_RANK_FENS) >= MEMO_LIMIT:
            _RANK_FENS.clear()
        row = _RANK_FENS[cells] = _write_rank_fen(cells)
    return row


def _write_rank_fen(cells: tuple[str, ...]) -> str:
    row = ""
    empty = 0
    for symbol in cells:
        if symbol in _FEN_PIECES:
            if empty:
                row += str(empty)
                empty = 0
            row += symbol
        else:
            empty += 1
    if empty:
        row += str(empty)
    return row


def chess_fen(game: VariantGame) -> str | None:
    """The FEN of a chess game's position as ``game.fen()`` writes it, but with the
    placement written from the squares the game already keeps (python-chess reads its
    board square by square, most of the cost of a FEN); None for a game that writes its
    FEN otherwise."""
    if type(game).fen is not ChessGame.fen:
        return None
    board = game.chess_board()
    if type(board) is not chess.Board:
        return None
    ep = board.ep_square if board.has_legal_en_passant() else None
    return " ".join((
        placement_fen(game.squares),
        "w" if board.turn else "b",
        _castling_xfen(board),
        chess.SQUARE_NAMES[ep] if ep is not None else "-",
        str(board.halfmove_clock),
        str(board.fullmove_number),
    ))  # fmt: skip


_BACKRANKS = chess.BB_RANK_1 | chess.BB_RANK_8

_CASTLING_FENS: dict[tuple[int, ...], str] = {}


def _castling_xfen(board: chess.Board) -> str:
    """``board.castling_xfen()``, written once for each arrangement it depends on (the
    castling rights, the kings, and the rooks on the back ranks with their colours)."""
    rights = board.castling_rights
    if not rights:
        return "-"
    key = (
        rights, board.kings, board.promoted & board.kings, board.rooks & _BACKRANKS,
        board.occupied_co[chess.WHITE] & (board.kings | board.rooks), int(board.chess960),
    )  # fmt: skip
    text = _CASTLING_FENS.get(key)
    if text is None:
        if len(_CASTLING_FENS) >= MEMO_LIMIT:
            _CASTLING_FENS.clear()
        text = _CASTLING_FENS[key] = board.castling_xfen()
    return text


class BoardView:
    """The pieces on the board as the driver last reported them (in the board's frame),
    and what is shown of them: the cells in the game's frame (:meth:`physical`) and the
    FEN placement (:meth:`placement`), each kept until the board or its orientation
    changes."""

    def __init__(self) -> None:
        self.raw: list[Piece] = [Piece.EMPTY] * 64
        self.version = 0
        """Bumped on every change of :attr:`raw` (keys the caches)."""
        self._physical: tuple[int, bool, SquareMap, str | None] | None = None
        self._rows: tuple[SquareMap, list[str]] | None = None
        """The cells :meth:`placement` last wrote, and each rank's text (eighth first)."""
        self._identified: tuple[tuple[int, int, SquareMap], str] | None = None
        """A presence-only board's placement, by the board and position it shows."""
        self.last_step: tuple[SquareMap, SquareMap, int] | None = None
        """The cells (game frame) before and after the last :meth:`set_square` that followed
        them one square on, and that square's index in them (None: not known)."""

    def snapshot(self, squares: Sequence[Piece]) -> None:
        """The board reported all its squares."""
        self.raw = list(squares)
        self.version += 1

    def physical(self, rotated: bool) -> SquareMap:
        """What stands on each square of the board (in the game's frame: a board turned
        round, ``rotated``, is read turned back)."""
        cache = self._physical
        if cache is not None and cache[0] == self.version and cache[1] == rotated:
            return cache[2]
        raw = self.raw[::-1] if rotated else self.raw
        cells = tuple(map(_CELL_OF.__getitem__, raw))
        self._physical = (self.version, rotated, cells, None)
        return cells

    def set_square(self, square: int, piece: Piece) -> None:
        """One square of the board changed.  When :meth:`physical` was written for the
        board just before, its cells and the ranks of :meth:`placement` follow the one
        square (a cell and a rank rewritten) instead of being written anew."""
        self.raw[square] = piece
        version = self.version
        self.version = version + 1
        cache = self._physical
        if cache is None or cache[0] != version or square < 0:
            return
        rotated, before = cache[1], cache[2]
        index = 63 - square if rotated else square
        changed = list(before)  # (a list changed and made a tuple: fewer copies than slices)
        changed[index] = _CELL_OF[piece]
        cells = tuple(changed)
        self._physical = (version + 1, rotated, cells, None)
        self.last_step = (before, cells, index)
        last = self._rows
        if last is not None and last[0] is before:
            rank = index & ~7
            rows = list(last[1])
            rows[7 - (rank >> 3)] = _known_rank_fen(cells[rank : rank + 8])  # (a tuple already)
            self._rows = (cells, rows)

    def placement(
        self, rotated: bool, game: VariantGame | None, position_version: int, presence_only: bool
    ) -> str:
        """The pieces on the board as the placement field of a FEN (other symbols read as
        empty).  A presence-only board tells only that a square is occupied (``*``): such
        a square shows ``game``'s piece there (its position as of ``position_version``),
        if it has one."""
        cells = self.physical(rotated)
        if presence_only and game is not None:
            key = (self.version, position_version, cells)
            kept = self._identified
            if kept is None or kept[0] != key:
                kept = self._identified = (key, placement_fen(_identified(cells, game.squares)))
            return kept[1]
        cache = self._physical
        assert cache is not None
        written = cache[3]
        if written is None:
            written = self._placement_rows(cells)
            self._physical = (cache[0], cache[1], cells, written)
        return written

    def _placement_rows(self, cells: SquareMap) -> str:
        """:func:`placement_fen` of ``cells``, writing again only the ranks that changed
        since the last one written (a move changes one or two)."""
        last = self._rows
        if last is not None and last[0] is cells:
            return "/".join(last[1])  # written by set_square
        if last is None:
            rows = [_rank_fen(cells[rank : rank + 8]) for rank in _RANKS]
        else:
            before, written = last
            rows = [
                row if before[rank : rank + 8] == cells[rank : rank + 8]
                else _rank_fen(cells[rank : rank + 8])
                for rank, row in zip(_RANKS, written, strict=True)
            ]  # fmt: skip
        self._rows = (cells, rows)
        return "/".join(rows)


def _holds(want: str, have: str, loose: bool) -> bool:
    """A square holds what it should: the same piece; on a presence-only board (``*``)
    anything where a piece belongs; ``loose`` (any of several start positions will do, as
    in Chess960 without a given one): a pawn where a pawn belongs, else a piece of the
    right colour."""
    if have == "*":
        return bool(want)
    if want == have:
        return True
    if not loose or not want or not have or want in "Pp" or have in "Pp":
        return False
    return want.isupper() == have.isupper()


def set_right(want: SquareMap, have: SquareMap, *, loose: bool = False) -> list[dict[str, str]]:
    """The squares where the board (``have``, game frame) does not hold what ``want``
    wants, a1 first: ``{"square": "e2", "want": "P", "have": ""}`` (``""``: empty; ``*``:
    a presence-only board's occupied square; ``?``: unreadable)."""
    if want == have:
        return []  # the common case while a game is played: nothing to compare square by square
    names = chess.SQUARE_NAMES
    return [  # the squares that differ found without a Python step per square
        {"square": names[square], "want": want[square], "have": have[square]}
        for square in itertools.compress(range(64), map(operator.ne, want, have))
        if not _holds(want[square], have[square], loose)
    ]


class SetRightMemo:
    """:func:`set_right`, written once per wanted position and board (both immutable square
    maps, known by identity: a board or a position that changed is a new object).  When the
    board moved on by one square since the last one written (``step``, from
    :attr:`BoardView.last_step`) and the wanted position is the same, only that square is
    looked at again."""

    def __init__(self) -> None:
        self._written: (
            tuple[SquareMap, SquareMap, bool, tuple[int, ...], list[dict[str, str]]] | None
        ) = None
        """The wanted position and the board last written from, ``loose``, the squares of
        the entries written (in their order) and the entries."""

    def squares(
        self,
        want: SquareMap,
        have: SquareMap,
        *,
        loose: bool = False,
        step: tuple[SquareMap, SquareMap, int] | None = None,
    ) -> list[dict[str, str]]:
        """A fresh list (callers may change it; its entries are shared)."""
        written = self._written
        if written is not None and written[0] is want and written[2] == loose:
            if written[1] is have:
                return list(written[4])
            if step is not None and step[1] is have and step[0] is written[1]:
                entries, indices = _one_square_on(
                    written[4], written[3], want, have, step[2], loose
                )
                self._written = (want, have, loose, indices, entries)
                return list(entries)
        entries = set_right(want, have, loose=loose)
        names = _SQUARE_INDEX
        indices = tuple(names[entry["square"]] for entry in entries)
        self._written = (want, have, loose, indices, entries)
        return list(entries)


_SQUARE_INDEX = {name: square for square, name in enumerate(chess.SQUARE_NAMES)}


def _one_square_on(
    entries: list[dict[str, str]],
    indices: tuple[int, ...],
    want: SquareMap,
    have: SquareMap,
    square: int,
    loose: bool,
) -> tuple[list[dict[str, str]], tuple[int, ...]]:
    """:func:`set_right` of ``want`` and ``have`` from the ``entries`` written for a board
    that differed from ``have`` on ``square`` only (their squares: ``indices``)."""
    if square in indices:
        at = indices.index(square)
        entries = entries[:at] + entries[at + 1 :]
        indices = indices[:at] + indices[at + 1 :]
    w, h = want[square], have[square]
    if w != h and not _holds(w, h, loose):
        at = bisect.bisect(indices, square)
        entry = {"square": chess.SQUARE_NAMES[square], "want": w, "have": h}
        entries = [*entries[:at], entry, *entries[at:]]
        indices = (*indices[:at], square, *indices[at:])
    return entries, indices


_CASTLING_LOST = {chess.A1: "Q", chess.H1: "K", chess.A8: "q", chess.H8: "k"}
_CASTLING_LOST |= {chess.E1: "KQ", chess.E8: "kq"}
"""Standard chess: the castling rights a move from or to a square takes away."""

_FEN_STEPS = 4
"""Positions :class:`FenMemo` keeps the FEN of (the recogniser steps back and forth)."""


def next_fen(
    fen: str, before: SquareMap, after: SquareMap, move: chess.Move, placement: str | None = None
) -> str | None:
    """The FEN after ``move`` (standard chess, not Chess960) from ``fen``, the FEN
    python-chess wrote for the position before it (its squares ``before``; ``after``: the
    squares after it), as python-chess writes it; None where only a board can tell (a
    double step next to a pawn that might take en passant).  ``placement``: the placement
    field of ``after`` when the caller has it (a board that shows the position)."""
    was, turn, castling, _, halfmove, fullmove = fen.split(" ")
    origin, target = move.from_square, move.to_square
    if placement is None:
        rows = was.split("/")  # a move changes the ranks of its squares only (castling,
        for rank in {origin >> 3, target >> 3}:  # en passant: the ranks of its king, pawn)
            first = rank << 3
            rows[7 - rank] = _rank_fen(after[first : first + 8])
        placement = "/".join(rows)
    piece = before[origin]
    pawn = piece in ("P", "p")
    ep = "-"
    if pawn and abs(target - origin) == 16:
        enemy = "p" if piece == "P" else "P"
        file = target & 7
        if (file > 0 and after[target - 1] == enemy) or (file < 7 and after[target + 1] == enemy):
            return None
    if castling != "-":
        lost = _CASTLING_LOST.get(origin, "") + _CASTLING_LOST.get(target, "")
        if lost:
            castling = "".join(right for right in castling if right not in lost) or "-"
    return " ".join((
        placement,
        "b" if turn == "w" else "w",
        castling,
        ep,
        "0" if pawn or before[target] != EMPTY else str(int(halfmove) + 1),
        fullmove if turn == "w" else str(int(fullmove) + 1),
    ))  # fmt: skip


class FenMemo:
    """The game's FEN, written once per position (``version``: bumped by the table whenever
    the position may have changed).  A chess game's FEN after a move is worked out from
    the one before it (:func:`next_fen`), so the game's python-chess board need not make
    its waiting moves; the last few positions' FENs are kept, by position."""

    def __init__(self) -> None:
        self._kept: tuple[int, str | None] | None = None
        self._steps: dict[int, tuple[object, int, SquareMap, str]] = {}
        """(game, ply, squares, FEN) of the last positions written, oldest first, by the
        identity of their squares (a chess game keeps one squares object per position; the
        entry holds it, so no other object takes its id while it is here)."""

    def fen(
        self, version: int, game: VariantGame | None, shown: tuple[SquareMap, str] | None = None
    ) -> str | None:
        """``shown``: the cells a board shows and their placement field (a move's FEN
        takes it when they are the game's position)."""
        kept = self._kept
        if kept is not None and kept[0] == version:
            return kept[1]
        fen = None if game is None else self._chess_fen(game, shown)
        if fen is None and game is not None:
            fen = game.fen()
        self._kept = (version, fen)
        return fen

    def _chess_fen(
        self, game: VariantGame, shown: tuple[SquareMap, str] | None = None
    ) -> str | None:
        if type(game).fen is not ChessGame.fen:
            return None
        assert isinstance(game, ChessGame)
        squares, ply = game.squares, game.ply
        steps = self._steps
        step = steps.get(id(squares))
        if step is not None and step[0] is game and step[1] == ply and step[2] is squares:
            return step[3]
        fen = None
        last = game.last_step() if type(game) is ChessGame else None  # variants: the board
        if last is not None:
            before, move = last
            step = steps.get(id(before))  # (the newest, as a rule)
            if step is not None and step[0] is game and step[1] == ply - 1 and step[2] is before:
                placement = None
                if shown is not None and (shown[0] is squares or shown[0] == squares):
                    placement = shown[1]
                fen = next_fen(step[3], before, squares, move, placement)
        if fen is None:
            fen = chess_fen(game)
            if fen is None:
                return None
        steps.pop(id(squares), None)  # (another game's position, or another ply of it)
        if len(steps) >= _FEN_STEPS:
            del steps[next(iter(steps))]
        steps[id(squares)] = (game, ply, squares, fen)
        return fen


class SettingsMemo:
    """Settings (a dataclass) as JSON, built once per change of the settings object; the
    details (:data:`~service.table.settings.DETAIL_KEYS`) only when known."""

    def __init__(self) -> None:
        self._kept: tuple[object, dict[str, Any]] | None = None

    def json(self, settings: Any) -> dict[str, Any]:
        """A fresh copy (callers may change it)."""
        kept = self._kept
        if kept is None or kept[0] is not settings:
            shown = {
                k: v for k, v in asdict(settings).items() if v is not None or k not in DETAIL_KEYS
            }  # a detail is shown only when known: the state of a table without them stays
            kept = self._kept = (settings, shown)
        return dict(kept[1])


@dataclass(slots=True)
class _PgnKey:
    """Tells whether a PGN written earlier still reads right: the same objects (settings,
    start, game, each move entry with its JSON, which a change of the entry drops) and the
    same values (time control, result, reason, variant tags, scores, notes per move)."""

    objects: tuple[object, ...]
    values: tuple[object, ...]

    def same(self, other: _PgnKey) -> bool:
        return (
            len(self.objects) == len(other.objects)
            and all(a is b for a, b in zip(self.objects, other.objects, strict=True))
            and self.values == other.values
        )


class PgnMemo:
    """A table's PGN, written once per change of what it shows."""

    def __init__(self) -> None:
        self._kept: tuple[_PgnKey, str] | None = None

    def clear(self) -> None:
        self._kept = None

    def pgn(
        self,
        source: TableGame,
        game: object,
        record: Sequence[MoveEntry],
        write: Callable[[TableGame], str],
    ) -> str:
        """``write(source)``, or the text it wrote last if nothing it shows changed
        (``game``: the game object; ``record``: the entries of ``source``)."""
        key = _key(source, game, record)
        kept = self._kept
        if kept is not None and kept[0].same(key):
            return kept[1]
        text = write(source)
        self._kept = (key, text)
        return text


def _key(source: TableGame, game: object, record: Sequence[MoveEntry]) -> _PgnKey:
    objects: list[object] = [source.settings, source.start, game]
    notes: list[int] = []
    for entry in record:
        objects += (entry, entry.to_json())
        notes.append(len(entry.notes))
    values = (
        source.time_control, source.result, source.reason, source.game_tags,
        tuple(source.scores.items()), tuple(notes), source.date,
    )  # fmt: skip
    return _PgnKey(tuple(objects), values)
