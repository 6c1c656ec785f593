"""What a board's square LEDs should show, from a table's state: pure functions, no I/O.

Boards with LEDs are the DGT Pegasus (any set of squares per frame, pulsing or blinking, as
the Pegasus's Bluetooth LE LED command has it) and the Revelation II (a from/to pair per
frame, the LED update in DGT's "Protocol description for DGT chess board", 2017).
:class:`service.led_driver.LedDriver` asks :func:`plan_leds` after every batch of table
events and sends the plan when it changed.

Rules, first match wins:

0. a game waiting in set-up for its start position (``state["awaiting_start"]``): ``fix``
   on the squares to set right (``state["set_right"]``) until the board shows it;
1. no game being played (set-up, game over): ``off``;
1a. realtime chess (``state["realtime"]``): ``fix`` on the squares of the corrections the
   players must make (a refused move: the square to clear and the one to put the piece
   back on; a piece captured by collision: its square; a piece to put on: its square),
   until the board matches the virtual game -- else the rules below (last move);
2. ``fix``, squares to set right after a ruling: while a ruling wants an earlier position
   back (FIDE 7.5.1 illegal move, an upheld touch-move claim, US speed 11 backing up:
   a ``restore`` ruling) or wants moves taken back on the board set up again (a takeback
   irregularity: completed moves stand), the squares where the board differs from that
   position (the *target*, tracked by :func:`follow_target`), until it matches;
3. ``fix``, a mismatch: the squares the recogniser reports as differing from the nearest
   explainable position (``state["mismatch"]``) -- this wins over the last move;
4. ``last-move``: the from and to squares of the last move, once completed (final); in
   20-chess the squares of every action of the last completed part (a drop's square, both
   squares of a swap, the four of a tandem, a gift's square, a move's two); while the next
   action is still provisional the lights go ``off``;
5. else ``off``.

Patterns on a Pegasus (choice): ``last-move`` blinks once (``repeat`` 1, like the DGT app's
confirmation), so the board does not glow through the whole game; ``fix`` keeps pulsing,
faster, until the plan changes.  The Revelation II has no blink: it lights the pair steadily.

Frames: the table works in the game frame (a1 = White's queen's rook corner); the LEDs in
the board's own frame, the one its dumps use.  A board turned round (the table's
``orientation`` is ``"black"``) reports the game's square ``s`` as ``63 - s``, so plans are
mapped.  (A Revelation II that auto-reverses flips its reports and its LED numbering
together, so its own frame stays consistent with this.)

Revelation II: one frame lights two squares, and each frame replaces what was lit, so
:func:`fit_to` keeps at most two squares: a move's from and to (of a 20-chess part, the last
action's first pair), or the two lowest-numbered (board frame) squares to set right -- as
those are set right the plan changes and the next ones light up.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import chess

from dgt.board import LedKind
from service.table import TableEvent

__all__ = [
    "FIX",
    "LAST_MOVE",
    "OFF",
    "LedPlan",
    "Pattern",
    "SquareMap",
    "differing",
    "fit_to",
    "follow_target",
    "plan_leds",
]

Pattern = Literal["last-move", "fix", "off"]

SquareMap = tuple[str, ...]
"""64 symbols in the game frame, index = python-chess square: ``""`` empty, a FEN letter,
``"*"`` occupied (presence-only boards), ``"?"`` unreadable (as :meth:`Table.physical`)."""


@dataclass(frozen=True, slots=True)
class LedPlan:
    """What the LEDs show: ``squares`` in the board's own frame (python-chess numbers),
    ``pattern``, and the Pegasus hints ``speed`` (1..7, faster), ``repeat`` (0 keeps
    pulsing, 1 blinks once) and ``intensity`` (lower is brighter) -- the arguments of
    :meth:`dgt.Board.set_leds`.  ``off`` plans have no squares."""

    squares: frozenset[int] = frozenset()
    pattern: Pattern = "off"
    speed: int = 3
    repeat: int = 0
    intensity: int = 1
    pair: tuple[int, ...] = ()
    """For a plan of more than two squares: the two a board that lights one pair shows
    (the last action of a 20-chess part); empty: the two lowest-numbered."""


OFF = LedPlan()
"""All LEDs off."""
LAST_MOVE = LedPlan(pattern="last-move", speed=3, repeat=1, intensity=1)
"""Template of a last-move plan: one confirmation blink."""
FIX = LedPlan(pattern="fix", speed=6, repeat=0, intensity=1)
"""Template of a set-it-right plan: pulsing until the plan changes."""


def _occupied(symbol: str) -> bool:
    return bool(symbol) and symbol != "?"


def _same(target: str, physical: str) -> bool:
    """A square holds what it should: the same piece, or (presence-only) something where
    a piece belongs."""
    if physical == "*":
        return bool(target)
    return target == physical


def differing(target: Sequence[str], physical: Sequence[str]) -> frozenset[int]:
    """Game-frame squares where ``physical`` does not hold what ``target`` wants (pieces
    compared by occupancy where the board reads only occupancy; an unreadable square
    differs)."""
    return frozenset(sq for sq in range(64) if not _same(target[sq], physical[sq]))


def _physical_of(state: Mapping[str, Any]) -> SquareMap:
    """The physical board from ``state["board"]`` (a board FEN, piece boards only)."""
    board = chess.BaseBoard(str(state.get("board") or chess.BaseBoard.empty().board_fen()))
    return _squares_of(board)


def _squares_of(board: chess.BaseBoard) -> SquareMap:
    cells = [""] * 64
    for square, piece in board.piece_map().items():
        cells[square] = piece.symbol()
    return tuple(cells)


def _board_frame(squares: Iterable[int], rotated: bool) -> frozenset[int]:
    return frozenset(63 - sq if rotated else sq for sq in squares)


def _action_squares(uci: str) -> tuple[int, ...]:
    """The squares an action's text names, in order: a move's from and to (castling: the
    king's), a drop ``N@e4`` its square, a swap ``b1<>c1`` both, a tandem ``g1f3&b1a3``
    all four, a gift ``-a2`` the square emptied (as the mirror marks them)."""
    names = [uci[i : i + 2] for i in range(len(uci) - 1) if uci[i : i + 2] in _SQUARE_NAMES]
    if len(uci) in (4, 5) and len(names) >= 2 and uci[:4] == names[0] + names[1]:
        names = names[:2]
    return tuple(chess.parse_square(name) for name in names)


def _last_final_part(state: Mapping[str, Any]) -> tuple[frozenset[int], tuple[int, ...]] | None:
    """The squares of the last completed part and of its last action.  A part is one move
    in orthodox chess; in 20-chess the actions one side made under one turn number (a drop
    and a move, a swap and a move, two moves), all completed by the press.  None while the
    last action is provisional or names no square."""
    moves = [m for m in state.get("moves") or [] if isinstance(m, Mapping)]
    if not moves or not moves[-1].get("final"):
        return None
    last = moves[-1]
    part = [last]
    for earlier in reversed(moves[:-1]):
        same = (
            earlier.get("final")
            and last.get("side") is not None
            and last.get("number") is not None
            and earlier.get("side") == last.get("side")
            and earlier.get("number") == last.get("number")
        )
        if not same:
            break
        part.append(earlier)
    squares = frozenset(sq for m in part for sq in _action_squares(str(m.get("uci") or "")))
    pair = _action_squares(str(last.get("uci") or ""))[:2]
    return (squares, pair) if squares else None


_SQUARE_NAMES = frozenset(chess.SQUARE_NAMES)


def plan_leds(
    state: Mapping[str, Any],
    *,
    physical: Sequence[str] | None = None,
    target: Sequence[str] | None = None,
) -> LedPlan:
    """The LED plan for a table ``state`` (:meth:`Table.state`: ``phase``, ``orientation``,
    ``moves``, ``mismatch``; ``board`` if ``physical`` is not given).  ``physical``: the
    board as it stands, game frame (:meth:`Table.physical`, needed for presence-only
    boards); ``target``: the position a ruling wants set up (:func:`follow_target`), or
    None.  Rules and frames: see the module docstring."""
    rotated = state.get("orientation") == "black"
    if state.get("awaiting_start"):
        unset = [chess.parse_square(entry["square"]) for entry in state.get("set_right") or ()]
        if unset:
            return replace(FIX, squares=_board_frame(unset, rotated))
    if state.get("phase") != "playing":
        return OFF
    realtime = state.get("realtime")
    if isinstance(realtime, Mapping):
        pending = _correction_squares(realtime.get("corrections") or ())
        if pending:
            return replace(FIX, squares=_board_frame(pending, rotated))
    if target is not None:
        here = tuple(physical) if physical is not None else _physical_of(state)
        wrong = differing(target, here)
        if wrong:
            return replace(FIX, squares=_board_frame(wrong, rotated))
    mismatch = state.get("mismatch") or []
    if mismatch:
        squares = (chess.parse_square(name) for name in mismatch)
        return replace(FIX, squares=_board_frame(squares, rotated))
    last = _last_final_part(state)
    if last is not None:
        lit, pair = last
        plan = replace(LAST_MOVE, squares=_board_frame(lit, rotated))
        if len(lit) > 2:
            flipped = tuple(63 - sq if rotated else sq for sq in pair)
            plan = replace(plan, pair=flipped)
        return plan
    return OFF


def _correction_squares(corrections: Iterable[Any]) -> frozenset[int]:
    """The squares of realtime corrections (``square`` and, for a move back, ``from``)."""
    out: set[int] = set()
    for item in corrections:
        if not isinstance(item, Mapping):
            continue
        for key in ("square", "from"):
            name = item.get(key)
            if isinstance(name, str):
                try:
                    out.add(chess.parse_square(name))
                except ValueError:
                    continue
    return frozenset(out)


def fit_to(plan: LedPlan, kind: LedKind) -> LedPlan:
    """``plan`` as a board with LEDs of ``kind`` can show it: a Pegasus shows any set; a
    Revelation II one pair, so at most the two lowest-numbered squares are kept."""
    if kind is LedKind.REV2 and len(plan.squares) > 2:
        kept = plan.pair[:2] if plan.pair else sorted(plan.squares)[:2]
        return replace(plan, squares=frozenset(kept), pair=())
    return plan


def _position_at(history: chess.Board, undo: int) -> SquareMap | None:
    if not 0 <= undo <= len(history.move_stack):
        return None
    board = history.copy()
    for _ in range(undo):
        board.pop()
    return _squares_of(board)


def _position_after(history: chess.Board, moves: Sequence[str]) -> SquareMap | None:
    board = history.copy(stack=False)
    try:
        for uci in moves:
            board.push_uci(uci)
    except ValueError:
        return None
    return _squares_of(board)


def follow_target(
    previous: SquareMap | None,
    events: Iterable[TableEvent],
    *,
    history: chess.Board | None,
    plies: int,
    physical: Sequence[str],
) -> SquareMap | None:
    """The position a ruling wants on the board after ``events`` (game frame), or None.

    ``previous``: the target before them; ``history``: the game as it stands after the
    events (:meth:`Table.history`); ``plies``: moves in the record (``len(Table.moves())``);
    ``physical``: the board (:meth:`Table.physical`).

    * a ``restore`` ruling: the position after ``restore_ply`` moves (the moves beyond it
      are undone from ``history``);
    * a ``takeback`` irregularity (completed moves taken back stand): the position before
      the takeback (its moves pushed on ``history`` again);
    * a new game or a result drops the target; so does a board that matches it.

    A position that cannot be worked out (no history, too few moves) leaves no target:
    the recogniser's mismatch still shows what it can."""
    target = previous
    taken_back: list[str] = []
    for event in events:
        data = event.data
        if event.type in ("new_game", "result"):
            target = None
        elif event.type == "takeback":
            taken_back = [str(uci) for uci in data.get("moves", [])]
        elif event.type == "ruling" and data.get("kind") == "restore":
            ply = data.get("restore_ply")
            if history is not None and isinstance(ply, int):
                target = _position_at(history, max(0, plies - ply))
        elif (
            event.type == "irregularity"
            and data.get("kind") == "takeback"
            and history is not None
            and taken_back
        ):
            target = _position_after(history, list(reversed(taken_back)))
    if target is not None and not differing(target, physical):
        return None
    return target
