"""The 64-square mirror of a board, in the board's own frame (connector on White's left).

Squares are python-chess numbers (0 = a1 ... 63 = h8).  Piece-identity boards keep each
square's piece; presence-only boards (Pegasus) keep ``Piece.OCCUPIED`` / ``Piece.EMPTY``
(and ``Piece.UNKNOWN`` where the board reports 0x7F).  Pure: no I/O, times injected.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from dgt.events import BoardFamily, BoardSnapshot, SquareChanged, square_changed
from dgt.protocol import BoardDump, FieldUpdate, Piece
from dgt.protocol.constants import wire_pieces

# The value of the piece each square byte decodes to, per family (presence only or not),
# as a bytes.translate table: a dump's 64 bytes become its pieces' values in one call.
_VALUE_OF_CODE: dict[bool, bytes] = {
    presence_only: bytes(wire_pieces(presence_only)) for presence_only in (False, True)
}


def _values(squares: list[Piece]) -> bytearray | None:
    """The pieces' values, square by square (None if a square holds no piece value)."""
    try:
        return bytearray(squares)
    except (TypeError, ValueError):
        return None


class Mirror:
    """What the host believes stands on each square.

    >>> m = Mirror()
    >>> m.apply_update(FieldUpdate(index=52, code=1), now=1.0)  # e2 (board field 52)
    SquareChanged(time=1.0, square=12, piece=<Piece.WPAWN: 1>, previous=<Piece.EMPTY: 0>)
    """

    __slots__ = ("_family", "_piece_of", "_squares", "_value_of_code", "_values")

    def __init__(
        self,
        family: BoardFamily = BoardFamily.PIECE_IDENTITY,
        squares: Iterable[Piece] | None = None,
    ) -> None:
        self.family = family
        self._squares: list[Piece] = list(squares) if squares is not None else [Piece.EMPTY] * 64
        if len(self._squares) != 64:
            raise ValueError("a mirror has 64 squares")
        self._values = _values(self._squares)
        """The squares' piece values (kept with them; a settle re-dump is compared with
        them as bytes)."""

    @property
    def family(self) -> BoardFamily:
        return self._family

    @family.setter
    def family(self, family: BoardFamily) -> None:
        self._family = family
        presence_only = family is BoardFamily.PRESENCE_ONLY
        self._piece_of = wire_pieces(presence_only)
        """The piece of each square byte for the family (a field update decodes one)."""
        self._value_of_code = _VALUE_OF_CODE[presence_only]

    @property
    def presence_only(self) -> bool:
        return self._family is BoardFamily.PRESENCE_ONLY

    @property
    def squares(self) -> tuple[Piece, ...]:
        """Contents by square (0 = a1)."""
        return tuple(self._squares)

    def __getitem__(self, square: int) -> Piece:
        return self._squares[square]

    def __len__(self) -> int:
        return 64

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mirror):
            return self._squares == other._squares
        if isinstance(other, (tuple, list)):
            return self._squares == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return f"Mirror({self.family.value}, {self.ascii()!r})"

    def copy(self) -> Mirror:
        return Mirror(self.family, self._squares)

    def ascii(self) -> str:
        """Eight ranks from rank 8 down, one symbol per square, separated by ``/``."""
        return "/".join(
            "".join(self._squares[rank * 8 + file].symbol for file in range(8))
            for rank in range(7, -1, -1)
        )

    def _decode(self, code: int) -> Piece:
        return Piece.from_wire(code, self.presence_only)

    def apply_update(self, update: FieldUpdate, now: float) -> SquareChanged | None:
        """Apply one field update; the change it made, or None if it changed nothing."""
        # update.square and self._decode(update.code), without the two calls: one update
        # a square change
        index = update.index
        square = (7 - (index >> 3)) * 8 + (index & 7)
        try:
            piece = self._piece_of[update.code]
        except IndexError:
            piece = Piece.UNKNOWN
        squares = self._squares
        previous = squares[square]
        if piece is previous:
            return None
        squares[square] = piece
        values = self._values
        if values is not None:
            values[square] = piece
        return square_changed(now, square, piece, previous)

    def apply_dump(self, dump: BoardDump, now: float) -> list[SquareChanged]:
        """Take a full dump as the truth; one event per square that differed, in square
        order."""
        fields = dump.fields
        if len(fields) == 64 and self._values is not None:
            # The usual answer to a settle re-dump, nothing lost: told from the bytes (the
            # dump's piece values, its ranks from 8 down turned into squares from a1 up).
            v = fields.translate(self._value_of_code)
            by_square = (
                v[56:64] + v[48:56] + v[40:48] + v[32:40] + v[24:32] + v[16:24] + v[8:16] + v[0:8]
            )
            if by_square == self._values:
                return []
        return self.load(dump.pieces(self.presence_only), now)

    def load(self, squares: Sequence[Piece], now: float) -> list[SquareChanged]:
        """Replace every square; one event per square that differed."""
        changes: list[SquareChanged] = []
        if len(squares) == 64 and self._squares == list(squares):
            return changes  # the usual answer to a settle re-dump: nothing lost
        for square, piece in enumerate(squares):
            previous = self._squares[square]
            if piece is not previous:
                self._squares[square] = piece
                changes.append(SquareChanged(now, square, piece, previous))
        self._values = _values(self._squares)
        return changes

    def snapshot(self, now: float, reason: str) -> BoardSnapshot:
        return BoardSnapshot(now, tuple(self._squares), reason)

    def to_dump(self) -> BoardDump:
        return BoardDump.from_pieces(self._squares)

    def diff(self, other: Mirror | Sequence[Piece]) -> frozenset[int]:
        """Squares whose content differs from ``other``."""
        theirs = other._squares if isinstance(other, Mirror) else list(other)
        if len(theirs) != 64:
            raise ValueError("a board has 64 squares")
        return frozenset(s for s in range(64) if self._squares[s] != theirs[s])
