"""Reading ahead on a presence-only board: the sequences of legal actions that take a position
of the game to what the board shows.

A presence-only board reads occupancy only, and some handlings leave no trace of an action on
it but the squares it emptied (a capture whose captured piece was swept off as the capturing
piece landed never shows its square empty).  When the opponent's reply follows before such an
action was read, no single action explains the board any more.  Every action turns the
occupancy it starts from into another by flipping the squares it empties or fills, so the
board is reached from a position exactly when the flips of a sequence of actions, one after
the other, add up to the squares where the board differs from it.  The search below keeps to
actions whose flips are all among the squares still to flip (a square flipped twice -- a piece
leaving it, another arriving -- is left out: within a few plies it is rare), which narrows it
to a handful of actions per ply.

It is pure: the game is left as it was; the handling seen since the position (when each
square was lifted and set down) ranks the sequences found.  In a game of standard chess the
positions beyond the game's own are stepped through on bit masks (:data:`Position`), each
square's legal moves asked of python-chess on a scratch board that nothing is pushed on, and
kept across searches (a stretch of board events searches the same positions again and
again): the same actions in the same order as the game's, at a fraction of a ``push`` and a
position of the game each.  Other variants, and positions that the seventy-five-move rule or
a fivefold repetition may end, step the game itself forward and back.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import compress

import chess

from service.variants.base import LegalAction, Move, VariantGame
from service.variants.standard import (
    ChessGame,
    _legal_move,
    free_piece_moves,
    free_piece_targets,
    may_lack_material,
    may_repeat,
    with_special_moves,
)

AHEAD_PLIES = 4
"""The most actions a reading ahead makes in one go."""
AHEAD_NODES = 200
"""The most positions one search visits (each asks the variant for the actions changing a few
squares): bounds the cost of a board event that nothing explains."""
PLACE_NODES = 40
"""The most positions one search visits after a place (mid-move, most places are explained
by the next change; the move complete -- clock press, settle delay -- searches again with
:data:`AHEAD_NODES`)."""


@dataclass(frozen=True, slots=True)
class Handled:
    """When squares were handled since the position searched from (seconds; a square not in
    a map was not handled that way): the first and the last lift, and the last place."""

    first_lift: Mapping[int, float]
    last_lift: Mapping[int, float]
    last_place: Mapping[int, float]


@dataclass(frozen=True, slots=True)
class Reading:
    """A sequence of legal actions that ends in what the board shows, with its rank (lower is
    likelier): handled squares it leaves unexplained, promotions to a kind not chosen, its
    length, captures other than on the square the action before set a piece down on (most
    captures in a game take the piece that just moved), captures whose captured square was
    never handled (swept off)."""

    actions: tuple[LegalAction, ...]
    rank: tuple[int, int, int, int, int]


@cache
def between(origin: int, target: int) -> tuple[int, ...]:
    """The squares strictly between two squares on a rank, file or diagonal (none for other
    pairs)."""
    file_step = (target % 8 > origin % 8) - (target % 8 < origin % 8)
    rank_step = (target // 8 > origin // 8) - (target // 8 < origin // 8)
    files, ranks = abs(target % 8 - origin % 8), abs(target // 8 - origin // 8)
    if files and ranks and files != ranks:
        return ()
    step = rank_step * 8 + file_step
    return tuple(range(origin + step, target, step)) if step else ()


_Bits = tuple[LegalAction, int, int, int, tuple[int, ...]]
_BITS: dict[int, _Bits] = {}
""":func:`_bits` of the actions seen, by ``id`` (the entry holds the action, so the ``id``
stays its own; a chess variant makes one :class:`LegalAction` per move and the pieces on its
squares, so few are ever made)."""
_BITS_MOST = 1 << 14


def _bits(action: LegalAction) -> _Bits:
    """``action`` with the squares (bit masks) it sets a piece down on, it empties and it
    sets a white piece down on, and the squares it empties in the order of its changes."""
    known = _BITS.get(id(action))
    if known is not None and known[0] is action:
        return known
    filled = emptied = whites = 0
    empties = []
    for square, symbol in action.changes:
        bit = 1 << square
        if symbol:
            filled |= bit
            if symbol.isupper():
                whites |= bit
        else:
            emptied |= bit
            empties.append(square)
    if len(_BITS) >= _BITS_MOST:
        _BITS.clear()
    known = _BITS[id(action)] = (action, filled, emptied, whites, tuple(empties))
    return known


action_bits = _bits
""":func:`_bits`, for the recogniser's bit-mask tests (the same kept entries)."""


_Entry = tuple[LegalAction, str, int, int, int, tuple[int, ...]]
_ENTRIES: dict[int, tuple[Sequence[LegalAction], tuple[_Entry, ...]]] = {}
""":func:`_entries` of the lists of actions seen, by ``id`` (the entry holds the list; a chess
variant keeps one list per position and square it was asked about)."""
_ENTRIES_MOST = 1 << 12


def _entries(actions: Sequence[LegalAction]) -> tuple[_Entry, ...]:
    """Each of ``actions`` with its UCI and its :func:`_bits` but itself, worked out once
    per list (a list of actions is never changed once a variant hands it out)."""
    known = _ENTRIES.get(id(actions))
    if known is not None and known[0] is actions:
        return known[1]
    entries = []
    for action in actions:
        _, filled, emptied, whites, empties = _bits(action)
        entries.append((action, action.uci, filled, emptied, whites, empties))
    result = tuple(entries)
    if len(_ENTRIES) >= _ENTRIES_MOST:
        _ENTRIES.clear()
    _ENTRIES[id(actions)] = (actions, result)
    return result


_MASKS: tuple[dict[int, tuple[Sequence[str], int]], dict[int, tuple[Sequence[str], int]]] = (
    {},
    {},
)
""":func:`_occupied` and :func:`_white` of the square maps seen, by ``id`` (the entry holds
the map)."""
_MASKS_MOST = 1 << 10
_BIT = tuple(1 << square for square in range(64))


def occupied_mask(squares: Sequence[str]) -> int:
    """The squares (a bit mask) of ``squares`` that hold a piece (kept for a tuple: the
    positions and views of a game are)."""
    known = _MASKS[0].get(id(squares))
    if known is not None and known[0] is squares:
        return known[1]
    # the bits of the squares that hold a piece, summed in C (a loop over the squares in
    # Python costs several times more)
    return _keep(0, squares, sum(compress(_BIT, squares)))


def _white(squares: Sequence[str]) -> int:
    """The squares (a bit mask) of ``squares`` that hold a white piece (kept as
    :func:`_occupied`)."""
    known = _MASKS[1].get(id(squares))
    if known is not None and known[0] is squares:
        return known[1]
    return _keep(1, squares, sum(compress(_BIT, map(str.isupper, squares))))


def _keep(table: int, squares: Sequence[str], mask: int) -> int:
    if type(squares) is tuple:
        kept = _MASKS[table]
        if len(kept) >= _MASKS_MOST:
            kept.clear()
        kept[id(squares)] = (squares, mask)
    return mask


Position = tuple[int, int, int, int, int, int, int, int, int, int]
"""A position of chess as reading ahead steps through it without a game (no python-chess
``push``): the squares (bit masks) of the pawns, knights, bishops, rooks, queens and kings,
of the white and the black pieces, python-chess's castling rights (the rooks' squares) and
the en passant square (-1: none)."""

_Down = Callable[[int, int, int, float, int, int, int, Position | None, bool], None]
""":func:`search`'s step down (see there)."""

_PAIRS = ("pP", "nN", "bB", "rR", "qQ", "kK")
_KIND = {symbol: kind for kind, pair in enumerate(_PAIRS) for symbol in pair}
_SYMBOL = ("p", "n", "b", "r", "q", "k")
_SCRATCH = chess.Board(None)
"""The board a position of :data:`Position` is set on to ask python-chess for its moves (its
move stack stays empty: nothing is pushed on it)."""
_EXPANDED: dict[tuple[Position, bool, int], tuple[_Entry, ...]] = {}
""":func:`_expand` of the positions and squares seen (a stretch of board events searches the
same positions again and again)."""
_EXPANDED_MOST = 1 << 12
_LEGAL: dict[tuple[Position, bool, int], list[chess.Move]] = {}
""":func:`legal_from` of the positions and squares seen."""


def _set_up(position: Position, turn: bool) -> chess.Board:
    """:data:`_SCRATCH` set to ``position`` with ``turn`` to move."""
    board = _SCRATCH
    (
        board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings,
        white, black, board.castling_rights, ep_square,
    ) = position  # fmt: skip
    board.occupied_co[chess.WHITE] = white
    board.occupied_co[chess.BLACK] = black
    board.occupied = white | black
    board.promoted = 0
    board.ep_square = None if ep_square < 0 else ep_square
    board.turn = turn
    return board


def chess_position(board: chess.Board) -> Position | None:
    """The position of ``board`` as a :data:`Position`, if it is one of standard chess with
    castling rights as python-chess cleans them (else None)."""
    if type(board) is not chess.Board or board.chess960:
        return None
    ep_square = board.ep_square
    castling = board.castling_rights
    position = (
        board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings,
        board.occupied_co[chess.WHITE], board.occupied_co[chess.BLACK], castling,
        -1 if ep_square is None else ep_square,
    )  # fmt: skip
    if _set_up(position, board.turn).clean_castling_rights() != castling:
        return None
    return position


def _root(game: VariantGame, plies: int) -> Position | None:
    """``game``'s position as a :data:`Position`, if reading ahead ``plies`` actions from it
    may step without the game: a game of chess on a python-chess board (see
    :func:`chess_position`), no position within ``plies`` that may end the game by the
    seventy-five-move rule or a fivefold repetition (their tests need the game's history)."""
    if type(game) is not ChessGame:
        return None
    board = game.chess_board()
    if board is None or may_repeat(board, 5) or board.halfmove_clock + plies - 1 >= 4 * (5 - 1):
        return None
    return chess_position(board)


def _symbol(position: Position, square: int) -> str:
    """The piece on ``square`` of ``position`` (FEN letter; empty: none)."""
    bit = 1 << square
    if not (position[6] | position[7]) & bit:
        return ""  # (no piece of either side there: no kind holds it, no loop over them)
    for kind in range(6):
        if position[kind] & bit:
            return _SYMBOL[kind].upper() if position[6] & bit else _SYMBOL[kind]
    return ""


def legal_from(position: Position, turn: bool, square: int) -> list[chess.Move]:
    """python-chess's legal moves of the piece on ``square`` in ``position`` with ``turn``
    to move (``generate_legal_moves`` of that square, in its order; the end of the game not
    asked).  Kept: do not change the list."""
    key = (position, turn, square)
    known = _LEGAL.get(key)
    if known is not None:
        return known
    board = _set_up(position, turn)
    free = free_piece_moves(board, square)
    bb = chess.BB_SQUARES[square]
    moves = list(board.generate_legal_moves(bb, chess.BB_ALL)) if free is None else free
    if len(_LEGAL) >= _EXPANDED_MOST:
        _LEGAL.clear()
    _LEGAL[key] = moves
    return moves


def is_legal(position: Position, turn: bool, move: chess.Move) -> bool:
    """python-chess's ``is_legal(move)`` in ``position`` with ``turn`` to move."""
    origin, target = move.from_square, move.to_square
    if position[5] >> origin & 1 and (
        abs((origin & 7) - (target & 7)) > 1 or position[3] >> target & 1
    ):  # a king's castling (or a move python-chess may read as one): python-chess decides
        return _set_up(position, turn).is_legal(move)
    known = _LEGAL.get((position, turn, origin))
    if known is None:
        targets = free_piece_targets(_set_up(position, turn), origin)
        if targets is not None:  # a free piece goes where it attacks: no list of moves made
            return move.promotion is None and move.drop is None and bool(targets >> target & 1)
        known = legal_from(position, turn, origin)
    return move in known


def after_move(position: Position, move: chess.Move) -> Position:
    """``position`` after ``move`` (legal there), as python-chess's ``push`` leaves it."""
    origin, target = move.from_square, move.to_square
    bit = 1 << origin
    kind = 0
    while not position[kind] & bit:
        kind += 1
    if kind == 5 or (
        kind == 0 and (origin ^ target) & 7 and not (position[6] | position[7]) >> target & 1
    ):
        # a king's move (castling among them) or an en passant capture: as its changes say
        action = _legal_move(
            origin, target, move.promotion, _symbol(position, origin), _symbol(position, target)
        )
        _, filled, emptied, whites, _ = _bits(action)
        return _after(position, action, filled, emptied, whites)
    # a plain move or a capture, a promotion among them
    keep = ~(bit | 1 << target)
    landed = (kind if move.promotion is None else move.promotion - 1, 1 << target)
    kinds = [(position[each] & keep) | (landed[1] if each == landed[0] else 0) for each in range(6)]
    white = position[6] & keep
    black = position[7] & keep
    if position[6] & bit:
        white |= landed[1]
    else:
        black |= landed[1]
    ep_square = (origin + target) // 2 if kind == 0 and abs(target - origin) == 16 else -1
    return (
        kinds[0], kinds[1], kinds[2], kinds[3], kinds[4], kinds[5], white, black,
        position[8] & keep, ep_square,
    )  # fmt: skip


def _expand(position: Position, turn: bool, square: int) -> tuple[_Entry, ...]:
    """As :func:`_entries` of the game's ``actions_changing(square)`` in ``position`` with
    ``turn`` to move (the same actions, in the same order: the same python-chess move
    generation, the same end of the game by material)."""
    key = (position, turn, square)
    known = _EXPANDED.get(key)
    if known is not None:
        return known
    bb = chess.BB_SQUARES[square]
    if (position[6] if turn else position[7]) & bb:
        moves = legal_from(position, turn, square)
        board = _set_up(position, turn)
    else:
        board = _set_up(position, turn)
        origins = board.attackers_mask(turn, square) | chess.BB_FILES[square & 7]
        moves = list(board.generate_legal_moves(origins, bb))
    moves = with_special_moves(board, square, moves)
    entries: list[_Entry] = []
    if moves and not (may_lack_material(board) and board.is_insufficient_material()):
        # (most moves here leave from the same square: its piece read once for them)
        mover_square, mover = -1, ""
        for move in moves:
            origin, target = move.from_square, move.to_square
            if origin != mover_square:
                mover_square, mover = origin, _symbol(position, origin)
            action = _legal_move(origin, target, move.promotion, mover, _symbol(position, target))
            for changed, _ in action.changes:
                if changed == square:
                    _, filled, emptied, whites, empties = _bits(action)
                    entries.append((action, action.uci, filled, emptied, whites, empties))
                    break
    result = tuple(entries)
    if len(_EXPANDED) >= _EXPANDED_MOST:
        _EXPANDED.clear()
    _EXPANDED[key] = result
    return result


def _after(
    position: Position, action: LegalAction, filled: int, emptied: int, whites: int
) -> Position:
    """``position`` after ``action`` (legal there; its :func:`_bits` given), as python-chess's
    ``push`` leaves the board."""
    keep = ~(filled | emptied)
    kinds = [  # (no comprehension: a call of its own)
        position[0] & keep, position[1] & keep, position[2] & keep,
        position[3] & keep, position[4] & keep, position[5] & keep,
    ]  # fmt: skip
    for square, symbol in action.changes:
        if symbol:
            kinds[_KIND[symbol]] |= 1 << square
    castling = position[8] & keep
    ep_square = -1
    move = action.action
    if isinstance(move, Move):
        origin = 1 << move.from_square
        if position[5] & origin:  # a king's move gives up its side's castlings
            castling &= ~(chess.BB_RANK_1 if action.side else chess.BB_RANK_8)
        elif position[0] & origin and abs(move.to_square - move.from_square) == 16:
            ep_square = (move.from_square + move.to_square) // 2
    return (
        kinds[0], kinds[1], kinds[2], kinds[3], kinds[4], kinds[5],
        (position[6] & keep) | whites, (position[7] & keep) | (filled & ~whites),
        castling, ep_square,
    )  # fmt: skip


def search(
    game: VariantGame,
    occupied: int,
    differ: int,
    *,
    shortest: int = 1,
    plies: int = AHEAD_PLIES,
    placed: int | None = None,
    not_first: LegalAction | None = None,
    budget: int = AHEAD_NODES,
    lifted: Mapping[int, float] | None = None,
    slack: float = 0.0,
    first_lifted: Mapping[int, float] | None = None,
    twice: int = 0,
    placed_at: Mapping[int, float] | None = None,
) -> list[tuple[LegalAction, ...]]:
    """The sequences of ``shortest`` to ``plies`` legal actions from ``game``'s position
    (whose occupancy is the bit mask ``occupied``) that flip exactly the squares of
    ``differ``, each flipping only squares still to flip.  ``placed``: the last action must
    set a piece down on that square (the place that completed it).  ``not_first``: an action
    no sequence starts with (the reading being replaced).  ``lifted``: when each square was
    last lifted; an action whose piece was not lifted more than ``slack`` seconds after the
    piece of the action before it is left out (a reply starts after the move it answers
    was made; after the piece is lifted at all if the move before it was set down on
    every square it fills within ``slack`` before its lift, ``placed_at`` telling when each
    square was last set down: see :func:`_gap`); ``first_lifted``: when each square was
    first lifted, the earliest the piece of an action may have started (its square may be
    lifted again later, by a piece of a later action sliding over it).  ``twice``: squares
    (a bit mask) an action may flip though they are not to flip, each at most once: a later
    action must flip them back (a square a piece left and another piece took, a square a
    piece passed through in two moves).  The game is left as it was."""
    found: list[tuple[LegalAction, ...]] = []
    path: list[LegalAction] = []
    visited = 0
    sides = game.sides_to_act()
    if not sides:
        return found
    turns = len(sides) == 1  # one side at a time: its actions leave its own squares
    white = _white(game.squares)

    def starts(occupancy: int, todo: int, left: int, side: bool, whites: int, spare: int) -> int:
        """The squares to flip that an action of ``side`` may empty (0: ``left`` actions
        cannot flip ``todo``)."""
        if not turns:
            return todo | spare
        # every square to empty is emptied by its own side's action, one each (two for a
        # castling)
        own = occupancy & (whites if side else ~whites)
        mine, theirs = (todo & own).bit_count(), (todo & occupancy & ~own).bit_count()
        if mine > (left + 1) // 2 + 1 or theirs > left // 2 + 1:
            return 0
        return (todo | spare) & own  # an action empties a square of the side to act

    root: Position | None = None  # the game's position, once asked (None: step with the game)
    asked = False
    # ``down`` calls itself as ``again[0]``, emptied once the search is done: a nested
    # function that names itself holds itself through its closure, a cycle (with its cells
    # and what they hold) that only the garbage collector frees -- and a slow board event
    # searches several times, so the collections such garbage brings on fall on those
    again: list[_Down] = []

    def down(
        occupancy: int,
        todo: int,
        left: int,
        since: float,
        whites: int,
        squares: int,
        spare: int,
        position: Position | None,
        turn: bool,
    ) -> None:
        """Extend ``path`` by an action emptying one of ``squares`` (from ``position`` with
        ``turn`` to move; None: the game's, which is at its end): a sequence found is kept
        without making its last action, and an action is made only if what is left to flip
        stays within reach (the bit masks tell)."""
        nonlocal visited, root, asked
        if visited >= budget:
            return
        visited += 1
        seen: set[str] = set()
        replacing = not path and not_first is not None  # (no action equals None)
        allowed = todo | spare
        # (once, not per action; within the board's 64 squares: a negative int's bit
        # operations cost more)
        vacant, outside = ~occupancy & chess.BB_ALL, ~allowed & chess.BB_ALL
        vacant_outside = vacant & outside
        while squares:  # (chess.scan_forward inline: no generator)
            lowest = squares & -squares
            square = lowest.bit_length() - 1
            squares ^= lowest
            if position is None:
                entries = _entries(game.actions_changing(square))
            else:
                entries = _expand(position, turn, square)
            for action, uci, filled, emptied, set_white, empties in entries:
                # (the flips first: most actions fail them, most of those by setting a
                # piece down on an empty square not to flip; an action seen twice -- a
                # castling changes two of its side's squares -- flips the same squares)
                if filled & vacant_outside:
                    continue
                mask = (filled & vacant) | (emptied & occupancy)
                if not mask or mask & outside:
                    continue
                if uci in seen or (replacing and same_reading(action, not_first)):
                    continue
                seen.add(uci)
                # when its piece was lifted last, and first (the earliest over the squares
                # it empties; None: never)
                start: float | None = None
                earliest: float | None = None
                if lifted is not None:
                    for sq in empties:
                        when = lifted.get(sq)
                        if when is not None and (start is None or when < start):
                            start = when
                    if start is not None and start <= since:
                        continue  # a reply starts once the move it answers was made
                if first_lifted is not None:
                    for sq in empties:
                        when = first_lifted.get(sq)
                        if when is not None and (earliest is None or when < earliest):
                            earliest = when
                if earliest is None:
                    earliest = start
                rest = todo ^ mask
                if not rest:
                    if len(path) + 1 >= shortest and (placed is None or filled >> placed & 1):
                        found.append((*path, action))
                    continue
                if left == 1:
                    continue
                after = (whites & ~(filled | emptied)) | set_white
                left_spare = spare & ~(mask & ~todo)
                next_squares = starts(
                    occupancy ^ mask, rest, left - 1, not action.side, after, left_spare
                )
                if not next_squares:
                    continue
                if not asked:
                    root, asked = _root(game, plies), True
                base = position if position is not None or path else root
                child = None
                if base is not None:
                    child = _after(base, action, filled, emptied, set_white)
                else:  # the game's own step (see _root)
                    game.apply(action.action)
                path.append(action)
                try:
                    again[0](
                        occupancy ^ mask,
                        rest,
                        left - 1,
                        since
                        if earliest is None
                        else earliest + _gap(action, start, placed_at, slack),
                        after,
                        next_squares,
                        left_spare,
                        child,
                        not action.side,
                    )
                finally:
                    path.pop()
                    if base is None:
                        game.undo()

    first = (
        starts(occupied, differ, plies, next(iter(sides)), white, twice) if differ and plies else 0
    )
    if first:
        again.append(down)
        try:
            down(
                occupied, differ, plies, float("-inf"), white, first, twice, None,
                next(iter(sides)),
            )  # fmt: skip
        finally:
            again.clear()
    return found


def in_turn(actions: Sequence[LegalAction], handled: Handled, gap: float) -> bool:
    """Whether the piece of each action of ``actions`` was lifted more than ``gap`` seconds
    after the piece of the action before it (a reply starts after the move it answers;
    after it at all if that move was seen landing as its lift was: :func:`_gap`): its last
    lift, or its first for a square the piece of a later action passes over (which lifted
    it again)."""
    since = float("-inf")
    for index, action in enumerate(actions):
        passed: set[int] = set()
        for other in actions[index + 1 :]:
            move = other.action
            if isinstance(move, Move):
                passed.update(between(move.from_square, move.to_square))
        times = []
        for square, symbol in action.changes:
            when = handled.first_lift if square in passed else handled.last_lift
            if not symbol and square in when:
                times.append(when[square])
        if times:
            started = min(times)
            if started <= since:
                return False
            since = started + _gap(action, started, handled.last_place, gap)
    return True


def _gap(
    action: LegalAction, lifted: float | None, placed: Mapping[int, float] | None, gap: float
) -> float:
    """How much later than ``action``'s piece, lifted at ``lifted``, the piece of the action
    after it must be lifted: ``gap`` (a move takes time), none if every square ``action``
    sets a piece down on was last set down within ``gap`` before that lift was reported
    (one scan saw the piece land and its square empty: the move was made by then)."""
    if lifted is None or placed is None or not gap:
        return gap
    landed = False
    for square, symbol in action.changes:
        if symbol:
            when = placed.get(square)
            if when is None or not lifted - gap <= when <= lifted:
                return gap
            landed = True
    return 0.0 if landed else gap


def in_order(
    actions: Sequence[LegalAction], handled: Handled, slack: float, gap: float | None = None
) -> bool:
    """Whether the handling allows ``actions`` one after the other: no action's piece was
    lifted (its last lift) more than ``slack`` seconds before an earlier action's piece was
    set down (its last place; squares a later action changes again left out) -- a reply
    starts once the move before it is made.  ``gap`` (default ``slack``): see below."""
    starts: list[float | None] = []
    for action in actions:
        lifts = [handled.last_lift[sq] for sq, symbol in action.changes if not symbol and sq in
                 handled.last_lift]  # fmt: skip
        starts.append(min(lifts) if lifts else None)
    for index, action in enumerate(actions):
        for square, symbol in action.changes:
            placed = handled.last_place.get(square)
            if not symbol or placed is None:
                continue
            # the last place of a square that a later action sets down again, its piece
            # taken off (the last lift) more than a scan after this action started, is that
            # action's (the captured piece may come off before the capturing piece is lifted);
            # with the move complete (``gap`` 0), taken off after it started at all: a swept
            # capture's lift may be seen only as it lands, and one hand cannot take the
            # captured piece off as it lands the capturing one
            taken = handled.last_lift.get(square)
            began = starts[index]
            if (
                taken is not None
                and placed >= taken
                and (began is None or taken > began + (slack if gap is None else gap))
                and any(square in other.changed_squares for other in actions[index + 1 :])
            ):
                continue
            for start in starts[index + 1 :]:
                if start is not None and start + slack < placed:
                    return False
    return True


def unexplained(actions: Sequence[LegalAction], handled: Handled) -> set[int]:
    """The squares handled (see :class:`Handled`) that ``actions`` neither change nor pass
    over (see :func:`rank`)."""
    explained: set[int] = set()
    for action in actions:
        explained.update(square for square, _ in action.changes)
        move = action.action
        if isinstance(move, Move):
            explained.update(between(move.from_square, move.to_square))
    return (handled.first_lift.keys() | handled.last_place.keys()) - explained


def rank(
    actions: Sequence[LegalAction],
    view: Sequence[str],
    handled: Handled,
    promotion: str,
    last: Sequence[int] = (),
    told: tuple[str, float] | None = None,
) -> tuple[int, int, int, int, int]:
    """The rank of a reading (see :class:`Reading`); ``view`` is the occupancy of the
    position searched from (truthy: occupied), ``promotion`` the kind chosen, ``last`` the
    squares the action before that position set a piece down on, ``told``: the kind
    chosen before ``promotion`` was told and the time of the last board change before
    the telling (a promotion answered before then, the next action's piece lifted by that
    time, was made before the telling: the kind chosen before stands for it)."""
    touched = handled.first_lift.keys() | handled.last_place.keys()
    explained: set[int] = set()
    wrong_kind = 0
    swept = 0
    elsewhere = 0
    occupied: dict[int, bool] = {}  # the squares the actions changed (else: ``view``)
    landed = set(last)
    for index, action in enumerate(actions):
        move = action.action
        set_down = set()
        for square, symbol in action.changes:
            explained.add(square)
            was = occupied.get(square)
            if symbol and (bool(view[square]) if was is None else was):
                swept += square not in touched
                elsewhere += square not in landed
            occupied[square] = bool(symbol)
            if symbol:
                set_down.add(square)
        landed = set_down
        if isinstance(move, Move):
            explained.update(between(move.from_square, move.to_square))
            if move.promotion is not None:
                # answered before the kind was told: the kind told before stands for it
                answered = (
                    told is not None
                    and index + 1 < len(actions)
                    and _begun_by(actions[index + 1], handled, told[1])
                )
                if move.promotion != (told[0] if told is not None and answered else promotion):
                    wrong_kind += 1
    return len(touched - explained), wrong_kind, len(actions), elsewhere, swept


def _begun_by(action: LegalAction, handled: Handled, time: float) -> bool:
    """Whether ``action``'s piece was lifted (the last lift of each square it empties) by
    ``time``."""
    lifted = False
    for square, symbol in action.changes:
        if not symbol:
            when = handled.last_lift.get(square)
            if when is None or when > time:
                return False
            lifted = True
    return lifted


def readings(
    game: VariantGame,
    view: Sequence[str],
    differ: Sequence[int],
    handled: Handled,
    *,
    promotion: str,
    slack: float,
    shortest: int = 1,
    placed: int | None = None,
    not_first: LegalAction | None = None,
    last: Sequence[int] = (),
    gap: float | None = None,
    plies: int = AHEAD_PLIES,
    budget: int = AHEAD_NODES,
    twice: int | None = None,
    promotions: bool = True,
    told: tuple[str, float] | None = None,
) -> list[Reading]:
    """The sequences of legal actions from ``game``'s position (read by the board as
    ``view``) that end in a board differing from it on the squares ``differ`` and fit the
    handling's order, the likeliest first (see :func:`search`; ``last``: see :func:`rank`).
    ``gap``: how much later than the action before it an action's piece must be lifted
    (default ``slack``; a move must be complete when the caller asks, so less may do: a
    capture whose captured piece was swept off is seen landing nowhere, its lift may have
    been seen only as it landed), and than it started a square it captures on must be
    lifted to be a later action's (:func:`in_order`).
    ``plies``: the most actions of a sequence; ``budget``: the most positions visited;
    ``twice``: a square that, if no sequence is found otherwise, one action may empty and a
    later one fill again (a square a piece left and another piece was set down on).
    Without ``promotions`` (the board stood still, no clock pressed: a move need not be
    complete), no sequence ends with a promotion whose square was not set down since (a
    capture read swept: the pawn may be held while the new piece is fetched)."""
    occupied = occupied_mask(view)
    todo = 0
    for square in differ:
        todo |= 1 << square
    result: list[Reading] = []
    # first the sequences flipping each square once; if none, those where the square
    # ``twice`` flips twice (a piece left it and another took it)
    spares = (0,) if twice is None or todo >> twice & 1 else (0, 1 << twice)
    for spare in spares:
        found = search(
            game,
            occupied,
            todo,
            shortest=shortest,
            plies=plies,
            budget=budget,
            placed=placed,
            not_first=not_first,
            lifted=handled.last_lift,
            first_lifted=handled.first_lift,
            slack=slack if gap is None else gap,
            twice=spare,
            placed_at=handled.last_place,
        )
        result = [
            Reading(actions, rank(actions, view, handled, promotion, last, told))
            for actions in found
            if (promotions or not _held(actions[-1], handled))
            and in_order(actions, handled, slack, gap)
            and in_turn(actions, handled, slack if gap is None else gap)
        ]
        if placed is not None:
            # after a place, a promotion to a kind not chosen waits: a piece resting on its
            # path may be what makes the chosen kind illegal (bxc1=Q+ and the bishop from f3
            # on e2 on its way to d1)
            result = [reading for reading in result if not reading.rank[1]]
        if result:
            break
    result.sort(key=lambda reading: reading.rank)
    return result


def same_reading(action: LegalAction, other: LegalAction | None) -> bool:
    """Whether ``action`` is ``other`` or, both being promotions by the same move, reads the
    same as it on a presence-only board (another piece: only a tell or a later move that
    one piece alone can make shows which)."""
    if action == other:
        return True
    if other is None:
        return False
    move, theirs = action.action, other.action
    return (
        isinstance(move, Move)
        and isinstance(theirs, Move)
        and move.promotion is not None
        and theirs.promotion is not None
        and move.from_square == theirs.from_square
        and move.to_square == theirs.to_square
    )


def _held(action: LegalAction, handled: Handled) -> bool:
    """Whether ``action`` is a promotion whose square was not set down since (its pawn may
    still be in the hand)."""
    move = action.action
    return (
        isinstance(move, Move)
        and move.promotion is not None
        and move.to_square not in handled.last_place
    )


def _told(rank: tuple[int, int, int, int, int]) -> tuple[int, ...]:
    """The parts of a reading's rank the board tells (all but its captures other than of
    the piece that just moved: a likelihood, not a reading)."""
    return rank[:3] + rank[4:]


def other_captures(best: Reading, others: Sequence[Reading]) -> list[tuple[LegalAction, ...]]:
    """For each action of ``best``, the other actions read the same in readings as likely as
    it: the same actions but that one, which moves the same piece to another square (a
    capture of another piece; the board cannot tell which).  As likely: the same rank but
    for the captures not of the piece that just moved (a likelier reading, not one the
    board tells apart: exf5 swept, taking the pawn that just came to f5, reads the same as
    exd5 swept)."""
    named: list[list[LegalAction]] = [[] for _ in best.actions]
    told = _told(best.rank)
    for other in others:
        if other is best or _told(other.rank) != told:
            continue
        differing = [
            index
            for index, (mine, theirs) in enumerate(zip(best.actions, other.actions, strict=True))
            if mine.uci != theirs.uci
        ]
        if len(differing) != 1:
            continue
        index = differing[0]
        mine, theirs = best.actions[index].action, other.actions[index].action
        if (
            isinstance(mine, Move)
            and isinstance(theirs, Move)
            and mine.from_square == theirs.from_square
            and mine.promotion == theirs.promotion
            and other.actions[index] not in named[index]
        ):
            named[index].append(other.actions[index])
    return [tuple(each) for each in named]
