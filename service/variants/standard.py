"""Standard chess (FIDE laws), and the python-chess game the other chess variants build on.

:class:`ChessGame` adapts a :class:`chess.Board` to :class:`~service.variants.base.VariantGame`:
one side acts at a time, each action is a :class:`~service.variants.base.Move`, castling is
written as python-chess writes it (``e1g1`` in standard chess, king takes own rook in
Chess960).  Chess960 and T20 subclass it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache

import chess

from service.variants.base import (
    EMPTY,
    STANDARD_ID,
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

_log = logging.getLogger(__name__)


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


_CASTLING_ENDS = chess.BB_FILE_C | chess.BB_FILE_D | chess.BB_FILE_F | chess.BB_FILE_G
"""The files where a castling king and rook end (in Chess960 too)."""

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


@lru_cache(maxsize=1 << 14)
def _legal_move(
    origin: int, target: int, promotion: chess.PieceType | None, mover: str, taken: str
) -> LegalAction:
    """The :class:`LegalAction` of a legal move, from what stands on its two squares: the
    ``mover`` on ``origin`` and ``taken`` on ``target`` (the rest follows from the move
    being legal: the pawn an en passant capture takes, the rook of a castling, the empty
    squares it ends on), so one object serves every position where the move is made."""
    kind = mover.lower()
    if kind not in ("p", "k"):
        # most moves: the piece leaves its square for the target (a legal move's origin
        # holds a piece and its target none of the mover's side): the two changes the
        # tables below would list, without them
        changes: tuple[tuple[int, str], ...] = ((origin, EMPTY), (target, mover))
        return _legal_action_of(chess.Move(origin, target, promotion), mover, changes)
    current = {origin: mover, target: taken}
    if kind == "p":
        if promotion:
            promoted = chess.piece_symbol(promotion)
            after = {origin: EMPTY, target: promoted.upper() if mover == "P" else promoted}
        elif (origin & 7) != (target & 7) and taken == EMPTY:  # en passant
            passed = (origin & ~7) | (target & 7)
            current[passed] = "p" if mover == "P" else "P"
            after = {origin: EMPTY, target: mover, passed: EMPTY}
        else:
            after = {origin: EMPTY, target: mover}
    elif kind == "k" and (
        abs((origin & 7) - (target & 7)) > 1 or taken == ("R" if mover == "K" else "r")
    ):  # castling: the king goes two files, or onto its own rook (Chess960 encoding)
        rank = origin & ~7
        rook_from = target
        if taken.lower() != "r":  # standard encoding e1g1
            rook_from = rank + (7 if target > origin else 0)
            current[rook_from] = "R" if mover == "K" else "r"
        if rook_from > origin:
            king_to, rook_to = rank + 6, rank + 5
        else:
            king_to, rook_to = rank + 2, rank + 3
        after = {origin: EMPTY, rook_from: EMPTY}
        after[king_to] = mover
        after[rook_to] = current[rook_from]
    else:
        after = {origin: EMPTY, target: mover}
    changes = tuple([(sq, v) for sq, v in after.items() if current.get(sq, EMPTY) != v])
    return _legal_action_of(chess.Move(origin, target, promotion), mover, changes)


def _legal_action_of(
    move: chess.Move, mover: str, changes: tuple[tuple[int, str], ...]
) -> LegalAction:
    """The :class:`LegalAction` of ``move`` by ``mover`` (its symbol) with its ``changes``."""
    return LegalAction(from_chess_move(move), mover.isupper(), changes, move.uci())


_FROM_CHESS: dict[tuple[int, int, chess.PieceType | None], Move] = {}
""":func:`from_chess_move` of the moves seen, by their squares and promotion (a :class:`Move`
is immutable: one object serves every game; at most 64 * 64 * 7 of them)."""


def from_chess_move(move: chess.Move) -> Move:
    key = (move.from_square, move.to_square, move.promotion)
    known = _FROM_CHESS.get(key)
    if known is None:
        promotion = chess.piece_symbol(move.promotion) if move.promotion else None
        known = _FROM_CHESS[key] = Move(move.from_square, move.to_square, promotion)
    return known


def may_lack_material(board: chess.Board) -> bool:
    """False when neither side can lack mating material: a pawn, rook or queen is on the
    board (python-chess's test of insufficient material then says no; this is cheaper)."""
    return not (board.pawns | board.rooks | board.queens)


def may_repeat(board: chess.Board, count: int) -> bool:
    """False when the position cannot have occurred ``count`` times: between occurrences
    no pawn moved and nothing was captured, and a position recurs at the earliest 4 plies
    later (each side's piece must go and come back), so the halfmove clock is at least
    ``4 * (count - 1)`` (python-chess's repetition test, which replays moves, then says
    no; this is cheaper)."""
    return board.halfmove_clock >= 4 * (count - 1)


def piece_attacks(piece: chess.PieceType, color: Color, square: int, occupied: int) -> int:
    """The squares a piece of kind ``piece`` and colour ``color`` on ``square`` attacks when
    the squares of ``occupied`` are occupied."""
    if piece == chess.PAWN:
        return chess.BB_PAWN_ATTACKS[color][square]
    if piece == chess.KNIGHT:
        return chess.BB_KNIGHT_ATTACKS[square]
    if piece == chess.KING:
        return chess.BB_KING_ATTACKS[square]
    attacks = 0
    if piece in (chess.BISHOP, chess.QUEEN):
        attacks |= chess.BB_DIAG_ATTACKS[square][chess.BB_DIAG_MASKS[square] & occupied]
    if piece in (chess.ROOK, chess.QUEEN):
        attacks |= chess.BB_RANK_ATTACKS[square][chess.BB_RANK_MASKS[square] & occupied]
        attacks |= chess.BB_FILE_ATTACKS[square][chess.BB_FILE_MASKS[square] & occupied]
    return attacks


def _lines_through(king: int) -> int:
    """The squares on a rank, file or diagonal through ``king`` (not ``king`` itself): where
    a piece may stand pinned to a king there."""
    rays = chess.BB_RAYS[king]
    return sum(chess.BB_SQUARES[square] for square in chess.SQUARES if rays[square])


_LINES = tuple(_lines_through(square) for square in chess.SQUARES)
""":func:`_lines_through` of each square."""

_NOT_FILE_A = chess.BB_ALL & ~chess.BB_FILE_A
_NOT_FILE_H = chess.BB_ALL & ~chess.BB_FILE_H


def has_free_move(board: chess.Board) -> bool:
    """True when the side to move, not in check, has a piece that no line through its king
    passes (so it cannot be pinned) with a move by the rules of its kind: such a move is
    legal.  False says nothing (python-chess's move generation, which first works out pins
    and checks for every move, then decides); most positions are answered here at a
    fraction of its cost.  The pieces off the king's lines are one mask (:data:`_LINES`),
    their pawns' steps and captures worked out for all of them at once."""
    turn = board.turn
    own = board.occupied_co[turn]
    king_mask = board.kings & own
    if not king_mask or board.is_variant_end():
        return False
    king = king_mask.bit_length() - 1
    if king_mask != chess.BB_SQUARES[king] or board.attackers_mask(not turn, king):
        return False
    free = own & ~_LINES[king] & ~king_mask
    pawns = board.pawns & free
    if pawns:  # a step onto an empty square, or a capture (en passant aside)
        empty = ~board.occupied
        opposing = board.occupied_co[not turn]
        if turn:
            if (pawns << 8) & empty & chess.BB_ALL or (
                (((pawns & _NOT_FILE_A) << 7) | ((pawns & _NOT_FILE_H) << 9)) & opposing
            ):
                return True
        elif (pawns >> 8) & empty or (
            (((pawns & _NOT_FILE_A) >> 9) | ((pawns & _NOT_FILE_H) >> 7)) & opposing
        ):
            return True
    pieces = free & ~pawns
    while pieces:
        low = pieces & -pieces
        pieces ^= low
        if board.attacks_mask(low.bit_length() - 1) & ~own:
            return True
    return False


_short_cuts: bool | None = None
"""Whether :func:`push` and :func:`moves_to` take their short cuts: None until first asked
(:func:`_short_cuts_on`), then whether the python-chess installed has the internals they
work on and answers as python-chess 1.11 (which they were checked against) on the probe
games."""

_PROBES: tuple[tuple[str | int, str], ...] = (
    (
        chess.STARTING_FEN,
        "e2e4 d7d5 e4d5 c7c5 d5c6 g8f6 c6b7 b8d7 b7a8q e7e5 a8a7 f8c5 b1c3 e8g8 d2d3 f8e8 "
        "c1e3 d8b6 d1d2 b6a5 e1c1 c5e3 d2e3 a5a2 e3e5 e8e5 a7d7 f6d7 h2h4 g7g5 h4g5 h7h5 "
        "g5g6 h5h4 g6g7 h4h3 g1f3 g8h7 g7g8n d7f6 g8e7 e5e6 e7c8 e6c6 g2h3 c6c3 b2c3 a2a1 "
        "c1d2 a1d1 d2d1 h7g6 c8e7",
    ),
    (
        331,
        "g2g3 g7g5 d2d4 h8f6 h1f3 b7b5 f3e4 e7e6 e4g6 d7d6 c1g5 g8h6 d1b1 e8d7 g5g4 d8f8 "
        "g6f5 g8h8 g4f3 f8e8 c2c3 f6e7 c1d2 h8g7",
    ),
    ("r3k2r/p7/8/8/8/8/P5B1/R3K2R w KQkq - 0 1", "g2a8 h8h1 e1e2 h1a1 a8d5 a7a5"),
)
"""Games the short cuts are checked on against python-chess, once (a start: its FEN, or its
Chess960 start number; its moves in UCI): double steps, en passant, captures, castling both
ways (standard and Chess960), promotions, a promoted piece moving and captured, checks, a
rook taken on its corner while it may castle."""


def _short_cuts_on() -> bool:
    """Whether :func:`push` and :func:`moves_to` may take their short cuts (decided once:
    when the probe games find python-chess's internals missing or changed, python-chess's
    own code makes every move and generates every move list, only slower)."""
    global _short_cuts
    if _short_cuts is None:
        _short_cuts = True  # the probe runs the short cuts
        problem = _probe_short_cuts()
        _short_cuts = problem is None
        if problem is not None:
            _log.debug(
                "python-chess %s does not answer as the 1.11 the move short cuts were checked "
                "against (%s): python-chess makes and generates every move itself",
                chess.__version__,
                problem,
            )
    return _short_cuts


def _board_state(board: chess.Board) -> dict[str, object]:
    """Everything a python-chess board holds, its state stack entry by entry."""
    state = dict(vars(board))
    state["_stack"] = [vars(entry) for entry in board._stack]
    return state


def _probe_short_cuts() -> str | None:
    """What :func:`push` or :func:`moves_to` answers unlike python-chess on the probe games,
    None when nothing."""
    try:
        for start, ucis in _PROBES:
            if isinstance(start, str):
                ours, theirs = chess.Board(start), chess.Board(start)
            else:
                ours = chess.Board.from_chess960_pos(start)
                theirs = chess.Board.from_chess960_pos(start)
            for ply, uci in enumerate(ucis.split()):
                if ply % 3 == 0:  # (every third position: ~20 ms in all, once)
                    for square in chess.SQUARES:
                        got = moves_to(ours, square)
                        if got is not None and got != generated_moves_to(theirs, square):
                            return f"moves onto {chess.square_name(square)} in {theirs.fen()}"
                move = chess.Move.from_uci(uci)
                push(ours, move)
                theirs.push(move)
                if _board_state(ours) != _board_state(theirs):
                    return f"{uci} made in {theirs.fen()}"
    except Exception as error:  # noqa: BLE001 - internals gone or changed: python-chess decides
        return f"{type(error).__name__}: {error}"
    return None


def push(board: chess.Board, move: chess.Move) -> None:
    """``board.push(move)`` for a legal move: the same board, move stack and state stack
    after it (so ``board.pop()`` undoes it), made here at a fraction of python-chess's cost
    for the common move of a piece other than the king, without promotion or en passant,
    on a board holding no promoted piece; every other move is python-chess's.  (The move
    stack holds ``move`` itself, where python-chess holds an equal copy.)"""
    origin = move.from_square
    target = move.to_square
    from_bb = chess.BB_SQUARES[origin]
    to_bb = chess.BB_SQUARES[target]
    pawn = board.pawns & from_bb
    if (
        move.promotion
        or move.drop
        or type(board) is not chess.Board
        or board.promoted
        or board.kings & (from_bb | to_bb)
        or (pawn and target == board.ep_square)
        or not (_short_cuts or _short_cuts_on())
    ):
        board.push(move)
        return
    turn = board.turn
    occupied_co = board.occupied_co
    if not occupied_co[turn] & from_bb or occupied_co[turn] & to_bb:
        board.push(move)  # not a move of the side to move (python-chess decides)
        return
    state = chess._BoardState(board)
    board.castling_rights = board.clean_castling_rights() & ~(from_bb | to_bb)
    board.move_stack.append(move)
    board._stack.append(state)
    board.ep_square = None
    if not turn:
        board.fullmove_number += 1
    captured = occupied_co[not turn] & to_bb
    if pawn or captured:
        board.halfmove_clock = 0
    else:
        board.halfmove_clock += 1
    if pawn:
        if target - origin == 16 and origin >> 3 == 1:
            board.ep_square = origin + 8
        elif target - origin == -16 and origin >> 3 == 6:
            board.ep_square = origin - 8
    if captured:
        keep = ~to_bb
        board.pawns &= keep
        board.knights &= keep
        board.bishops &= keep
        board.rooks &= keep
        board.queens &= keep
        occupied_co[not turn] &= keep
    both = from_bb | to_bb
    if pawn:
        board.pawns ^= both
    elif board.knights & from_bb:
        board.knights ^= both
    elif board.bishops & from_bb:
        board.bishops ^= both
    elif board.rooks & from_bb:
        board.rooks ^= both
    else:
        board.queens ^= both
    occupied_co[turn] ^= both
    board.occupied = (board.occupied & ~from_bb) | to_bb
    board.turn = not turn


_PROMOTIONS = (chess.QUEEN, chess.ROOK, chess.BISHOP, chess.KNIGHT)
"""The promotion kinds in python-chess's order of generation."""
_BACK_RANKS = chess.BB_RANK_1 | chess.BB_RANK_8
_DOUBLE_STEP_ENDS = (chess.BB_RANK_6 | chess.BB_RANK_5, chess.BB_RANK_3 | chess.BB_RANK_4)
"""Per side (black, white): where python-chess lets a pawn's second step end."""


def _pinned(board: chess.Board, king: int, square: int) -> bool:
    """Whether the piece on ``square`` stands alone between its ``king`` and an opposing
    rook or queen (on their rank or file) or bishop or queen (on their diagonal): a piece
    python-chess counts among the king's blockers (its moves must stay on that line)."""
    line = chess.BB_RAYS[king][square]
    if not line:
        return False
    if (king & 7) == (square & 7) or (king >> 3) == (square >> 3):
        snipers = board.rooks | board.queens
    else:
        snipers = board.bishops | board.queens
    bb = chess.BB_SQUARES[square]
    snipers &= line & board.occupied_co[not board.color_at(square)] & ~bb
    occupied = board.occupied
    while snipers:
        low = snipers & -snipers
        snipers ^= low
        if chess.between(king, low.bit_length() - 1) & occupied == bb:
            return True
    return False


def _free(board: chess.Board, square: int) -> bool:
    """Whether a piece of the side to move stands on ``square``, no king, and its king is
    not in check nor the piece pinned to it (each of its moves by the rules of its kind is
    legal, but a pawn's en passant capture)."""
    own = board.occupied_co[board.turn]
    bb = chess.BB_SQUARES[square]
    king_mask = board.kings & own
    if not own & bb or not king_mask or king_mask & bb:
        return False
    king = _king_at_peace(board, king_mask, board.turn)
    return king is not None and not _pinned(board, king, square)


def free_piece_targets(board: chess.Board, square: int) -> int | None:
    """The squares (a bit mask) the piece of the side to move on ``square`` may move to when
    :func:`free_piece_moves` would list its moves and it is no pawn (a test of one move
    then needs no list); None otherwise."""
    if board.pawns & chess.BB_SQUARES[square] or not _free(board, square):
        return None
    return board.attacks_mask(square) & ~board.occupied_co[board.turn]


_FREE_MOVES: dict[tuple[int, int], list[chess.Move]] = {}
""":func:`free_piece_moves` of a piece (no pawn) by its square and the squares it may go to:
one list wherever they are the same (a piece that did not move, or moved back, has the
same moves in many positions), made once."""
_FREE_MOVES_MOST = 1 << 12


def free_piece_moves(board: chess.Board, square: int) -> list[chess.Move] | None:
    """The legal moves of the piece of the side to move on ``square``, in python-chess's
    order (``board.generate_legal_moves(square's mask)``), when its king is not in check and
    the piece is not pinned to it (each of its moves by the rules of its kind is legal);
    None otherwise (the king's moves, a pawn that may capture en passant or stands on a
    last rank: python-chess decides).  Kept: do not change the list."""
    if not _free(board, square):
        return None
    turn = board.turn
    bb = chess.BB_SQUARES[square]
    if not board.pawns & bb:
        targets = board.attacks_mask(square) & ~board.occupied_co[turn]
        key = (square, targets)
        known = _FREE_MOVES.get(key)
        if known is None:
            if len(_FREE_MOVES) >= _FREE_MOVES_MOST:
                _FREE_MOVES.clear()
            known = [chess.Move(square, target) for target in chess.scan_reversed(targets)]
            _FREE_MOVES[key] = known
        return known
    ep_square = board.ep_square
    if bb & _BACK_RANKS or (
        ep_square is not None and chess.BB_PAWN_ATTACKS[turn][square] & chess.BB_SQUARES[ep_square]
    ):
        return None
    moves: list[chess.Move] = []
    captures = chess.BB_PAWN_ATTACKS[turn][square] & board.occupied_co[not turn]
    for target in chess.scan_reversed(captures):
        if chess.BB_SQUARES[target] & _BACK_RANKS:
            moves += [chess.Move(square, target, kind) for kind in _PROMOTIONS]
        else:
            moves.append(chess.Move(square, target))
    occupied = board.occupied
    step = 8 if turn else -8
    single = square + step
    if not chess.BB_SQUARES[single] & occupied:
        if chess.BB_SQUARES[single] & _BACK_RANKS:
            moves += [chess.Move(square, single, kind) for kind in _PROMOTIONS]
        else:
            moves.append(chess.Move(square, single))
            double = single + step
            if chess.BB_SQUARES[double] & ~occupied & _DOUBLE_STEP_ENDS[turn]:
                moves.append(chess.Move(square, double))
    return moves


def generated_moves_to(board: chess.Board, square: int) -> list[chess.Move]:
    """python-chess's legal moves onto ``square`` from the pieces attacking it and the pawns
    of its file (what :func:`moves_to` answers when it can)."""
    origins = board.attackers_mask(board.turn, square) | chess.BB_FILES[square & 7]
    return list(board.generate_legal_moves(origins, chess.BB_SQUARES[square]))


def _king_at_peace(board: chess.Board, king_mask: int, turn: bool) -> int | None:
    """The square of the side to move's king (``king_mask``, not empty) when it is its only
    one, the game goes on and it is not in check; None otherwise."""
    king = king_mask.bit_length() - 1
    if (
        king_mask != chess.BB_SQUARES[king]
        or board.is_variant_end()
        or board.attackers_mask(not turn, king)
    ):
        return None
    return king


def with_special_moves(
    board: chess.Board, square: int, moves: list[chess.Move]
) -> list[chess.Move]:
    """``moves`` (the legal moves from or onto ``square``) with, after them and each once,
    the castlings that change ``square`` and the en passant capture of a pawn on it."""
    turn = board.turn
    bb = chess.BB_SQUARES[square]
    extra: list[chess.Move] = []
    backrank = chess.BB_RANK_1 if turn else chess.BB_RANK_8
    rooks = board.castling_rights & backrank
    if rooks and bb & (rooks | (_CASTLING_ENDS & backrank & ~board.occupied)):
        # a castling changes its rook's square and empty squares of the c, d, f and g
        # files (and its king's square: the king's moves include castling already)
        extra += board.generate_castling_moves()
    ep_square = board.ep_square
    if ep_square is not None and square == ep_square + (-8 if turn else 8):
        extra += board.generate_legal_ep()
    if extra:  # seldom: the moves given may hold some of them already
        return list(dict.fromkeys([*moves, *extra]))
    return moves


def moves_to(board: chess.Board, square: int) -> list[chess.Move] | None:
    """The legal moves of the side to move onto ``square`` (empty or holding an opposing
    piece) from the pieces attacking it and the pawns of its file, in python-chess's order
    (``board.generate_legal_moves(attackers | file, square's mask)``), when its king is not
    in check, cannot castle from that mask and ``square`` is no en passant target; None
    otherwise (python-chess decides)."""
    turn = board.turn
    own = board.occupied_co[turn]
    king_mask = board.kings & own
    bb = chess.BB_SQUARES[square]
    if (
        not king_mask
        or own & bb
        or square == board.ep_square
        or not (_short_cuts or _short_cuts_on())
    ):
        return None
    king = _king_at_peace(board, king_mask, turn)
    if king is None:
        return None
    attackers = board.attackers_mask(turn, square)
    pawns = board.pawns & own & chess.BB_FILES[square & 7]
    if (king_mask & (attackers | pawns)) and board.castling_rights:
        return None
    moves: list[chess.Move] = []
    for origin in chess.scan_reversed(attackers & ~board.pawns):
        if origin == king:
            if not board.is_attacked_by(not turn, square):
                moves.append(chess.Move(origin, square))
        elif not _pinned(board, king, origin) or chess.ray(origin, square) & king_mask:
            moves.append(chess.Move(origin, square))
    promoting = bb & _BACK_RANKS
    capturers = (attackers | pawns) & board.pawns
    opposing = board.occupied_co[not turn]
    if opposing & bb:
        for origin in chess.scan_reversed(capturers):
            if chess.BB_PAWN_ATTACKS[turn][origin] & bb and (
                not _pinned(board, king, origin) or chess.ray(origin, square) & king_mask
            ):
                if promoting:
                    moves += [chess.Move(origin, square, kind) for kind in _PROMOTIONS]
                else:
                    moves.append(chess.Move(origin, square))
        return moves
    step = -8 if turn else 8
    occupied = board.occupied
    behind = square + step
    if not 0 <= behind < 64:
        return moves
    if chess.BB_SQUARES[behind] & pawns:
        if not _pinned(board, king, behind) or chess.ray(behind, square) & king_mask:
            if promoting:
                moves += [chess.Move(behind, square, kind) for kind in _PROMOTIONS]
            else:
                moves.append(chess.Move(behind, square))
    elif not chess.BB_SQUARES[behind] & occupied and bb & _DOUBLE_STEP_ENDS[turn]:
        start = behind + step
        if (
            0 <= start < 64
            and chess.BB_SQUARES[start] & pawns
            and (not _pinned(board, king, start) or chess.ray(start, square) & king_mask)
        ):
            moves.append(chess.Move(start, square))
    return moves


@dataclass(slots=True, eq=False)
class _Position:
    """What a game has worked out about one of its positions, filled in on demand.

    A position is reached by one history only, so everything here stays true for as long as
    the position exists: an undo keeps it (the parent remembers its children), and making the
    same action again finds it complete -- the recogniser steps back and forth between the
    last two positions all the time."""

    squares: SquareMap
    known: dict[Action, LegalAction] | None = None
    """Every legal action built so far, by action (None: none yet; the three tables here
    are made when first written, so the many positions far behind the current one, which
    :meth:`forget` empties, hold none)."""
    actions: list[LegalAction] | None = None
    """All legal actions, in python-chess order, once asked for."""
    by_square: dict[int, list[LegalAction]] | None = None
    """The legal actions changing a square, per square asked for (every square once
    :attr:`actions` is known)."""
    san: dict[Action, str] | None = None
    outcome: tuple[GameEnd | None] | None = None
    """The end by the rules (no time-out), once asked for."""
    can_move: bool | None = None
    """Whether the side to move has a legal move, once known."""
    children: tuple[tuple[Action, _Position], ...] = ()
    """The positions the actions made from here led to, with their actions (seldom more
    than one or two: a tuple is a third of the size of a dict)."""
    scores: tuple[ScoreEvent, ...] | None = None
    """Score events of the action that led here (variants that score)."""

    def forget(self, keep: _Position) -> None:
        """Drop what was worked out here except the way on to ``keep`` (the next position
        of the game): a position two or more actions back is seldom asked about again, and
        a long game would otherwise hold every position's actions.  Anything asked later is
        worked out again."""
        self.known = None
        self.actions = None
        self.by_square = None
        self.san = None
        if len(self.children) > 1:
            self.children = tuple([(a, p) for a, p in self.children if p is keep])

    def child(self, action: Action) -> _Position | None:
        """The position ``action`` made from here led to, if it was made."""
        for done, after in self.children:
            if done is action or done == action:
                return after
        return None


_NO_SIDE: frozenset[Color] = frozenset()
_WHITE_ONLY: frozenset[Color] = frozenset((chess.WHITE,))
_BLACK_ONLY: frozenset[Color] = frozenset((chess.BLACK,))


class ChessGame(VariantGame):
    """A game of chess (or a chess variant with the FIDE moves) on a python-chess board.

    ``board`` is the python-chess board; read it, never change it (the game keeps a
    :class:`_Position` per position of :attr:`board`'s move stack).

    An action whose position after it is known already (worked out by this game or by a
    game sharing its positions, :meth:`share_positions`: the table's game follows its
    recogniser's) is not made on the python-chess board at once: it waits in
    :attr:`_unmade` until something reads :attr:`board` (most moves of a table's game are
    never asked about on its own board).  Making the waiting moves then gives the same board
    as making them one by one."""

    def __init__(self, variant: Variant, start: StartPosition, *, chess960: bool) -> None:
        self.variant = variant
        self.start = start
        self._board = chess.Board(start.fen, chess960=chess960)
        self._unmade: list[chess.Move] = []
        """Moves made in the game, oldest first, not made on :attr:`_board` yet."""
        self._flagged: GameEnd | None = None
        self._line: list[_Position] = [_Position(squares_of(self._board))]
        """One entry per position from the start to now (the last one is the current)."""
        self._kept = False
        """Whether the caller says when to forget (:meth:`keep_current`)."""
        self._forgotten = 0
        """Positions of :attr:`_line` before this index were forgotten (:meth:`keep_current`)."""

    @property
    def board(self) -> chess.Board:
        """The python-chess board of the game's position (its move stack: the game's
        moves)."""
        unmade = self._unmade
        if unmade:
            board = self._board
            for move in unmade:
                push(board, move)
            unmade.clear()
        return self._board

    def _turn(self) -> Color:
        """The side to move (without making the waiting moves: each move passes the turn)."""
        return self._board.turn != bool(len(self._unmade) & 1)

    def share_positions(self, other: VariantGame) -> None:
        # A position is reached by one path from the start: what is worked out about it
        # (legal actions, SAN, the end, scores) holds for every game on that path.
        if (
            type(other) is type(self)
            and isinstance(other, ChessGame)
            and other.variant.id == self.variant.id
            and other.start == self.start
            and other._board.chess960 == self._board.chess960
            and len(self._line) == 1
            and self.ply == 0
            and other._line[0].squares == self._line[0].squares
        ):
            self._line[0] = other._line[0]

    # -- state -----------------------------------------------------------------------------

    @property
    def squares(self) -> SquareMap:
        return self._line[-1].squares

    def chess_board(self) -> chess.Board:
        return self.board

    def last_step(self) -> tuple[SquareMap, chess.Move] | None:
        """The squares of the position before the last move and that move, read without
        making the waiting moves (a view may follow the game move by move from them); None
        at the start, and for a board that is no plain chess board (Chess960, a subclass)."""
        board = self._board
        if len(self._line) < 2 or board.chess960 or type(board) is not chess.Board:
            return None
        move = self._unmade[-1] if self._unmade else board.move_stack[-1]
        return self._line[-2].squares, move

    @property
    def ply(self) -> int:
        return len(self._board.move_stack) + len(self._unmade)

    def move_number(self) -> int:
        # (without making the waiting moves: black's among them each start a move, and
        # they alternate from the side to move on the python-chess board)
        board = self._board
        return board.fullmove_number + (len(self._unmade) + (not board.turn)) // 2

    def fen(self) -> str:
        return self.board.fen()

    def sides_to_act(self) -> frozenset[Color]:
        if self.outcome() is not None:
            return _NO_SIDE
        return _WHITE_ONLY if self._turn() else _BLACK_ONLY

    # -- actions ---------------------------------------------------------------------------

    def legal_actions(self) -> Sequence[LegalAction]:
        if self.outcome() is not None:
            return []
        here = self._line[-1]
        if here.actions is None:
            here.actions = [self._legal_action(here, move) for move in self.board.legal_moves]
        return here.actions

    def actions_changing(self, square: int) -> Sequence[LegalAction]:
        if self._flagged is not None:
            return []
        here = self._line[-1]
        by_square = here.by_square
        if by_square is None:
            by_square = here.by_square = {}
        cached = by_square.get(square)
        if cached is not None:
            return cached
        if here.actions is not None:
            self._index_all(here)
            return by_square[square]
        moves = self._moves_changing(square)
        if moves:
            here.can_move = True  # spares the outcome a move generation
        if self.outcome() is not None:
            return []
        found = []
        squares = here.squares
        known = here.known
        if known is None:
            known = here.known = {}
        for move in moves:  # (_legal_action, inline: a first visit makes one per move)
            origin = move.from_square
            target = move.to_square
            action = _legal_move(origin, target, move.promotion, squares[origin], squares[target])
            known[action.action] = action
            for changed, _ in action.changes:
                if changed == square:
                    found.append(action)
                    break
        by_square[square] = found
        return found

    def legal_action(self, action: Action) -> LegalAction | None:
        # A move from a square a king does not stand on (no castling) is tested alone,
        # python-chess's test of one move: the same answer as the moves of its square
        # generated, and the same object (_legal_move), at a fraction of the cost.
        here = self._line[-1]
        known = here.known
        if known is not None and self._flagged is None:
            found = known.get(action)
            if found is not None:  # (checked legal here before: it still is)
                return found
        squares = here.squares
        if not isinstance(action, Move) or squares[action.from_square] in ("K", "k"):
            return super().legal_action(action)
        try:
            move = to_chess_move(action)
        except IllegalActionError:
            return None
        if self._flagged is not None or not self.board.is_legal(move):
            return None
        here.can_move = True  # (spares the outcome a move generation, as actions_changing)
        if self.outcome() is not None:
            return None
        return self._legal_action(here, move)

    def _moves_changing(self, square: int) -> list[chess.Move]:
        """The legal moves that may change ``square``, in the order of
        ``board.legal_moves`` (a few more: castlings that leave ``square`` alone).

        A move from ``square`` when it holds a piece of the side to move, else a move to it
        (no side captures its own piece), generated from the pieces that attack it and the
        pawns of its file only; castling when ``square`` holds a rook that may castle or is
        an empty square a castling may end on; the en passant capture of the pawn on
        ``square``."""
        board = self.board
        bb = chess.BB_SQUARES[square]
        turn = board.turn
        if board.occupied_co[turn] & bb:
            free = free_piece_moves(board, square)
            moves = list(board.generate_legal_moves(bb, chess.BB_ALL)) if free is None else free
        else:
            to = moves_to(board, square)
            moves = generated_moves_to(board, square) if to is None else to
        return with_special_moves(board, square, moves)

    @staticmethod
    def _index_all(here: _Position) -> None:
        """Index every legal action of ``here`` by the squares it changes (keeping the order
        of :attr:`_Position.actions`, which is also the order of the per-square
        generation)."""
        assert here.actions is not None
        index: dict[int, list[LegalAction]] = {square: [] for square in chess.SQUARES}
        for action in here.actions:
            for square, _ in action.changes:
                index[square].append(action)
        by_square = here.by_square
        if by_square is None:
            by_square = here.by_square = {}
        for square, actions in index.items():
            by_square.setdefault(square, actions)

    def _legal_action(self, here: _Position, move: chess.Move) -> LegalAction:
        """The legal action of ``move`` (legal in ``here``)."""
        origin = move.from_square
        target = move.to_square
        squares = here.squares
        legal = _legal_move(origin, target, move.promotion, squares[origin], squares[target])
        known = here.known
        if known is None:
            known = here.known = {}
        known[legal.action] = legal
        return legal

    def _checked_move(self, action: Action) -> chess.Move:
        move = to_chess_move(action)
        known = self._line[-1].known
        if (known is None or action not in known) and (
            self.outcome() is not None or not self.board.is_legal(move)
        ):
            board = self.board.copy(stack=False)  # (the FEN only if the message is read)
            raise IllegalActionError(action, lambda: f"position {board.fen()}")
        return move

    def _push(self, action: Action, move: chess.Move) -> _Position:
        """Make a checked move; returns the new current position."""
        here = self._line[-1]
        after = here.child(action)
        if after is None:
            known = here.known.get(action) if here.known is not None else None
            if known is None:  # (checked legal: its changes follow from its two squares, as
                # a generated action's do -- cheaper than a push and a read of every square)
                squares = here.squares
                origin, target = move.from_square, move.to_square
                mover, taken = squares[origin], squares[target]
                known = _legal_move(origin, target, move.promotion, mover, taken)
            self._unmade.append(move)
            cells = list(here.squares)
            for square, symbol in known.changes:
                cells[square] = symbol
            squares = tuple(cells)
            after = _Position(squares)
            here.children = (*here.children, (action, after))
        else:
            self._unmade.append(move)
        self._line.append(after)
        if len(self._line) > 3 and not self._kept:  # the last two positions are used most
            self._line[-4].forget(keep=self._line[-3])
        return after

    def keep_current(self) -> None:
        """The current position is the game's own (the caller made its actions): forget
        what was worked out about every position more than two actions before it, keeping
        their way on to it.  Once this is called, an action made no longer forgets the
        position three actions back: a caller that tries actions ahead and takes them back
        calls this whenever it has made the game's actions, so that the positions it
        returns to keep what was worked out about them."""
        self._kept = True
        line = self._line
        index = self._forgotten
        end = len(line) - 3
        while index < end:
            line[index].forget(keep=line[index + 1])
            index += 1
        self._forgotten = index

    def san(self, action: Action) -> str:
        here = self._line[-1]
        sans = here.san
        if sans is not None and self._flagged is None:
            # written here before: it was checked legal then, and still is (a position's
            # legal actions never change; a flag fall ends the game, see _checked_move)
            known = sans.get(action)
            if known is not None:
                return known
        move = self._checked_move(action)
        if sans is None:
            sans = here.san = {}
        san = sans.get(action)
        if san is None:
            san = sans[action] = self._san(move)
        return san

    def _san(self, move: chess.Move) -> str:
        """SAN of a legal move, exactly as python-chess writes it, cheaper for the common
        moves: a piece move no other piece of its kind could also make needs no search for
        ambiguous rivals, and a move that gives no check needs no trial push to find out
        (castling, en passant and promotions go to python-chess)."""
        board = self.board
        origin, target = move.from_square, move.to_square
        piece = board.piece_type_at(origin)
        if piece is None or move.promotion or board.is_castling(move) or board.is_en_passant(move):
            return board.san(move)
        turn = board.turn
        name = chess.SQUARE_NAMES[target]
        capture = board.occupied_co[not turn] & chess.BB_SQUARES[target]
        if piece == chess.PAWN:
            san = f"{chess.FILE_NAMES[origin & 7]}x{name}" if capture else name
        else:
            rivals = board.pieces_mask(piece, turn) & ~chess.BB_SQUARES[origin]
            # (a piece of its kind attacks the target if it stands where one on the target
            # would attack: only that kind's attacks are worked out, not every attacker's)
            if rivals and rivals & piece_attacks(piece, turn, target, board.occupied):
                return board.san(move)
            san = f"{chess.piece_symbol(piece).upper()}{'x' if capture else ''}{name}"
        king = board.king(not turn)
        if king is None:
            return san
        occupied = (board.occupied & ~chess.BB_SQUARES[origin]) | chess.BB_SQUARES[target]
        by_mover = piece_attacks(piece, turn, target, occupied) & chess.BB_SQUARES[king]
        uncovered = board.attackers_mask(turn, king, occupied) & ~chess.BB_SQUARES[origin]
        if not by_mover and not uncovered:  # no check
            return san
        if _king_escapes(board, move, piece, king, occupied):
            return san + "+"  # (a legal king move: no mate, no trial push)
        push(board, move)
        try:
            return san + ("#" if board.is_checkmate() else "+")
        finally:
            board.pop()

    def apply(self, action: Action) -> list[ScoreEvent]:
        if self._flagged is None:
            # made from here before (the table's game follows its recogniser's, which made
            # it first): it was legal then, so it is now, and its position is known
            line = self._line
            for done, after in line[-1].children:
                if done is action:
                    self._unmade.append(to_chess_move(action))
                    line.append(after)
                    if len(line) > 3 and not self._kept:  # as _push
                        line[-4].forget(keep=line[-3])
                    return []
        self._push(action, self._checked_move(action))
        return []

    def undo(self) -> Action:
        if self._unmade:
            move = self._unmade.pop()
        elif self._board.move_stack:
            move = self._board.pop()
        else:
            raise NothingToUndoError()
        line = self._line
        line.pop()
        if self._forgotten >= len(line):  # forget it again, keeping its new way on
            self._forgotten = len(line) - 1
        self._flagged = None
        return from_chess_move(move)

    # -- the end ---------------------------------------------------------------------------

    def outcome(self) -> GameEnd | None:
        if self._flagged is not None:
            return self._flagged
        here = self._line[-1]
        if here.outcome is None:
            here.outcome = (self._rules_outcome(),)
        return here.outcome[0]

    def _rules_outcome(self) -> GameEnd | None:
        """The end by the laws of chess, without claims: mate, stalemate, insufficient
        material, seventy-five moves, fivefold repetition."""
        board = self.board
        if not self._can_move():
            if board.is_check():
                return GameEnd(result_string(not board.turn), "checkmate", not board.turn)
            return GameEnd("1/2-1/2", "stalemate", None)
        if may_lack_material(board) and board.is_insufficient_material():
            return GameEnd("1/2-1/2", "insufficient material", None)
        if board.halfmove_clock >= 150 and board.is_seventyfive_moves():  # (its own test first)
            return GameEnd("1/2-1/2", "seventy-five moves", None)
        if may_repeat(board, 5) and board.is_fivefold_repetition():
            return GameEnd("1/2-1/2", "fivefold repetition", None)
        return None

    def _can_move(self) -> bool:
        """Whether the side to move has a legal move (the rules' outcome asks)."""
        here = self._line[-1]
        if here.can_move is None:
            board = self.board
            here.can_move = (
                bool(here.known) or has_free_move(board) or any(board.generate_legal_moves())
            )
        return here.can_move

    def flag(self, side: Color) -> GameEnd:
        """The flagged side loses, unless the opponent cannot mate by any series of legal
        moves (then it is a draw)."""
        if self.board.has_insufficient_material(not side):
            end = GameEnd("1/2-1/2", "time-out vs insufficient material", None)
        else:
            end = GameEnd(result_string(not side), "time-out", not side)
        self._flagged = end
        return end


def _king_escapes(
    board: chess.Board, move: chess.Move, piece: chess.PieceType, king: int, occupied: int
) -> bool:
    """Whether the king on ``king`` of the side not to move, checked by ``move`` (a legal
    move of ``piece``: no castling, en passant or promotion), may step after it onto a
    square no piece of the mover attacks then (``occupied``: the squares occupied after
    the move): a legal move, so the check is no mate.  False says nothing (python-chess
    decides, with the move made)."""
    turn = board.turn
    origin = chess.BB_SQUARES[move.from_square]
    target = move.to_square
    # its own pieces after the move (one on the target is taken), and the occupancy the
    # mover's lines see once the king has stepped off its square
    own = board.occupied_co[not turn] & ~chess.BB_SQUARES[target]
    through = occupied & ~chess.BB_SQUARES[king]
    for square in chess.scan_reversed(chess.BB_KING_ATTACKS[king] & ~own):
        if piece_attacks(piece, turn, target, through) & chess.BB_SQUARES[square]:
            continue  # the piece moved attacks it
        if board.attackers_mask(turn, square, through) & ~origin:
            continue  # another piece of the mover does (the moved one stood on the origin)
        return True
    return False


@cache
def _classical_start() -> StartPosition:
    return StartPosition(
        STANDARD_ID, CLASSICAL_FEN, squares_of(chess.Board()), number=518, classical=True
    )


class Standard(Variant):
    """Chess as FIDE plays it, from the classical start."""

    id = STANDARD_ID
    name = "Standard chess"
    pgn_name = "Standard"

    def start_positions(self) -> Sequence[StartPosition]:
        return (_classical_start(),)

    def new_game(self, start: StartPosition | None = None) -> ChessGame:
        return ChessGame(self, self._check_start(start), chess960=False)
