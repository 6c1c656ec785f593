"""Standard chess (FIDE laws), and the python-chess game the other chess variants build on.

:class:`ChessGame` adapts a :class:`chess.Board` to :class:`~service.variants.base.VariantGame`:
one side acts at a time, each action is a :class:`~service.variants.base.Move`, castling is
written as python-chess writes it (``e1g1`` in standard chess, king takes own rook in
Chess960).  Chess960 and T20 subclass it.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import chess

from service.variants.base import (
    EMPTY,
    Action,
    Color,
    GameEnd,
    IllegalActionError,
    LegalAction,
    Move,
    NothingToUndoError,
    ScoreEvent,
    SquareMap,
    StartPosition,
    Variant,
    VariantGame,
    result_string,
)

CLASSICAL_FEN = chess.STARTING_FEN


def squares_of(board: chess.BaseBoard) -> SquareMap:
    """The square map of a python-chess board."""
    cells = [EMPTY] * 64
    for color, masks in zip((chess.WHITE, chess.BLACK), _COLOR_MASKS, strict=True):
        own = board.occupied_co[color]
        for kind, mask in zip(chess.PIECE_TYPES, masks, strict=True):
            bb = getattr(board, mask) & own
            symbol = chess.piece_symbol(kind)
            symbol = symbol.upper() if color else symbol
            while bb:
                low = bb & -bb
                cells[low.bit_length() - 1] = symbol
                bb ^= low
    return tuple(cells)


_MASKS = ("pawns", "knights", "bishops", "rooks", "queens", "kings")
_COLOR_MASKS = (_MASKS, _MASKS)


def to_chess_move(action: Action) -> chess.Move:
    """A :class:`Move` as a python-chess move (other actions do not exist in chess)."""
    if not isinstance(action, Move):
        raise IllegalActionError(action, "a chess game (only moves exist there)")
    promotion = None
    if action.promotion is not None:
        try:
            promotion = chess.PIECE_SYMBOLS.index(action.promotion.lower())
        except ValueError:
            raise IllegalActionError(action, "a chess game (unknown promotion kind)") from None
    return chess.Move(action.from_square, action.to_square, promotion)


@cache
def _move_and_uci(origin: int, target: int, promotion: chess.PieceType | None) -> tuple[Move, str]:
    """Shared :class:`Move` objects and their UCI (there are few distinct moves)."""
    move = chess.Move(origin, target, promotion)
    return from_chess_move(move), move.uci()


def from_chess_move(move: chess.Move) -> Move:
    promotion = chess.piece_symbol(move.promotion) if move.promotion else None
    return Move(move.from_square, move.to_square, promotion)


class ChessGame(VariantGame):
    """A game of chess (or a chess variant with the FIDE moves) on a python-chess board."""

    def __init__(self, variant: Variant, start: StartPosition, *, chess960: bool) -> None:
        self.variant = variant
        self.start = start
        self.board = chess.Board(start.fen, chess960=chess960)
        self._flagged: GameEnd | None = None
        self._squares: SquareMap | None = None
        self._actions: list[LegalAction] | None = None
        self._by_square: dict[int, list[LegalAction]] = {}
        self._known: dict[Action, LegalAction] = {}
        self._outcome: tuple[GameEnd | None] | None = None

    # -- state -----------------------------------------------------------------------------

    def _invalidate(self) -> None:
        self._squares = None
        self._actions = None
        self._by_square = {}
        self._known = {}
        self._outcome = None

    @property
    def squares(self) -> SquareMap:
        if self._squares is None:
            self._squares = squares_of(self.board)
        return self._squares

    @property
    def ply(self) -> int:
        return len(self.board.move_stack)

    def move_number(self) -> int:
        return self.board.fullmove_number

    def fen(self) -> str:
        return self.board.fen()

    def sides_to_act(self) -> frozenset[Color]:
        if self.outcome() is not None:
            return frozenset()
        return frozenset((self.board.turn,))

    # -- actions ---------------------------------------------------------------------------

    def legal_actions(self) -> Sequence[LegalAction]:
        if self._actions is None:
            if self.outcome() is not None:
                self._actions = []
            else:
                self._actions = [self._legal_action(m) for m in self.board.legal_moves]
        return self._actions

    def actions_changing(self, square: int) -> Sequence[LegalAction]:
        cached = self._by_square.get(square)
        if cached is None:
            cached = []
            if self.outcome() is None:
                board = self.board
                bb = chess.BB_SQUARES[square]
                moves = dict.fromkeys(board.generate_legal_moves(from_mask=bb))
                if not board.occupied_co[board.turn] & bb:  # no side captures its own piece
                    moves.update(dict.fromkeys(board.generate_legal_moves(chess.BB_ALL & ~bb, bb)))
                if bb & (chess.BB_RANK_1 if board.turn else chess.BB_RANK_8):
                    moves.update(dict.fromkeys(board.generate_castling_moves()))
                if board.ep_square is not None:
                    moves.update(dict.fromkeys(board.generate_legal_ep()))
                for move in moves:
                    action = self._legal_action(move)
                    for changed, _ in action.changes:
                        if changed == square:
                            cached.append(action)
                            break
            self._by_square[square] = cached
        return cached

    def _legal_action(self, move: chess.Move) -> LegalAction:
        current = self.squares
        origin = move.from_square
        target = move.to_square
        symbol = current[origin]
        kind = symbol.lower()
        if kind == "p":
            if move.promotion:
                promoted = chess.piece_symbol(move.promotion)
                after = {origin: EMPTY, target: promoted.upper() if symbol == "P" else promoted}
            elif (origin & 7) != (target & 7) and current[target] == EMPTY:  # en passant
                after = {origin: EMPTY, target: symbol, (origin & ~7) | (target & 7): EMPTY}
            else:
                after = {origin: EMPTY, target: symbol}
        elif kind == "k" and (
            abs((origin & 7) - (target & 7)) > 1
            or current[target] == ("R" if symbol == "K" else "r")
        ):  # castling: the king goes two files, or onto its own rook (Chess960 encoding)
            rank = origin & ~7
            rook_from = target
            if current[target].lower() != "r":  # standard encoding e1g1
                rook_from = rank + (7 if target > origin else 0)
            if rook_from > origin:
                king_to, rook_to = rank + 6, rank + 5
            else:
                king_to, rook_to = rank + 2, rank + 3
            after = {origin: EMPTY, rook_from: EMPTY}
            after[king_to] = symbol
            after[rook_to] = current[rook_from]
        else:
            after = {origin: EMPTY, target: symbol}
        changes = tuple([(sq, v) for sq, v in after.items() if current[sq] != v])
        action, uci = _move_and_uci(origin, target, move.promotion)
        legal = LegalAction(action, symbol.isupper(), changes, uci)
        self._known[action] = legal
        return legal

    def _checked_move(self, action: Action) -> chess.Move:
        move = to_chess_move(action)
        if action not in self._known and (
            self.outcome() is not None or not self.board.is_legal(move)
        ):
            raise IllegalActionError(action, f"position {self.board.fen()}")
        return move

    def _push(self, action: Action, move: chess.Move) -> None:
        """Make a checked move, keeping the square map up to date cheaply."""
        known = self._known.get(action)
        squares = self._squares
        self.board.push(move)
        self._invalidate()
        if known is not None and squares is not None:
            cells = list(squares)
            for square, symbol in known.changes:
                cells[square] = symbol
            self._squares = tuple(cells)

    def san(self, action: Action) -> str:
        return self.board.san(self._checked_move(action))

    def apply(self, action: Action) -> list[ScoreEvent]:
        self._push(action, self._checked_move(action))
        return []

    def undo(self) -> Action:
        if not self.board.move_stack:
            raise NothingToUndoError()
        move = self.board.pop()
        self._flagged = None
        self._invalidate()
        return from_chess_move(move)

    # -- the end ---------------------------------------------------------------------------

    def outcome(self) -> GameEnd | None:
        if self._flagged is not None:
            return self._flagged
        if self._outcome is None:
            self._outcome = (self._rules_outcome(),)
        return self._outcome[0]

    def _rules_outcome(self) -> GameEnd | None:
        """The end by the laws of chess, without claims: mate, stalemate, insufficient
        material, seventy-five moves, fivefold repetition."""
        board = self.board
        if not any(board.generate_legal_moves()):
            if board.is_check():
                return GameEnd(result_string(not board.turn), "checkmate", not board.turn)
            return GameEnd("1/2-1/2", "stalemate", None)
        if board.is_insufficient_material():
            return GameEnd("1/2-1/2", "insufficient material", None)
        if board.is_seventyfive_moves():
            return GameEnd("1/2-1/2", "seventy-five moves", None)
        if board.is_fivefold_repetition():
            return GameEnd("1/2-1/2", "fivefold repetition", None)
        return None

    def flag(self, side: Color) -> GameEnd:
        """The flagged side loses, unless the opponent cannot mate by any series of legal
        moves (then it is a draw)."""
        if self.board.has_insufficient_material(not side):
            end = GameEnd("1/2-1/2", "time-out vs insufficient material", None)
        else:
            end = GameEnd(result_string(not side), "time-out", not side)
        self._flagged = end
        self._actions = None
        return end


@cache
def _classical_start() -> StartPosition:
    return StartPosition(
        "standard", CLASSICAL_FEN, squares_of(chess.Board()), number=518, classical=True
    )


class Standard(Variant):
    """Chess as FIDE plays it, from the classical start."""

    id = "standard"
    pgn_name = "Standard"

    def start_positions(self) -> Sequence[StartPosition]:
        return (_classical_start(),)

    def new_game(self, start: StartPosition | None = None) -> ChessGame:
        return ChessGame(self, self._check_start(start), chess960=False)
