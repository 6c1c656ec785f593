"""The move recogniser: board events in, lifts, places, actions, takebacks, new games,
mismatches and results out.

It is pure: no I/O and no clock of its own.  Every board event carries its time; the caller
calls :meth:`Recognizer.tick` now and then (say every 100 ms) so that a settle delay can
complete a move or report a mismatch.  It knows no chess: it asks the variant which actions
are legal and what each one changes on the board.

How it decides, in short.  The recogniser keeps the board as the sensors report it, in the
game's frame, and compares it with *reference* positions: the position after the last action
(``top``) and the one before it (``prev``).  For each it keeps the set of squares where the
board differs (updated per event, so a comparison costs the size of that set).  After every
change it tries, in this order -- fewest actions first:

1. the board equals ``top``: nothing to do (a piece was put back, a knocked piece set up);
2. the board equals ``prev``: the last action was taken back;
3. the board equals ``prev`` plus one legal action other than the last one: the last action
   is amended (rook h1-f1 then king e1-g1 is castling; a piece slid over squares went
   further), or, if it was completed already, taken back and replaced;
4. the board equals ``top`` plus one legal action: a new action, provisional; the previous
   one is completed by it;
5. the board shows a known start position: a new game (its orientation read from it);
6. the board equals an earlier position of the game: a takeback of several actions;
7. otherwise nothing is emitted (the board is mid-move); if it stays so for the settle delay,
   a mismatch lists the squares that differ from the nearest explainable position (on a
   presence-only board, once an earlier capture read again or a swept capture cannot
   explain it either: see below).

A state matches ``ref + action`` when the squares that differ from ``ref`` are exactly the
squares whose *reading* the action changes, with the right readings.  Piece-identity boards
read pieces, so promotions and under-promotions are read off the board.  Presence-only
boards (Pegasus) read occupancy only, so a capture leaves the captured square occupied; such
an action also needs the order of lifts and places: each square whose content changes while
staying occupied (the captured square, the squares of a king/rook swap) must have been set
down after every other square the action empties or swaps was last lifted (the piece lands
after it left its square for the last time; a flicker of a settling piece is no lift, and a
place one scan, :data:`SCAN_SLACK`, before the lift counts as after it).  A promotion on such a
board is the kind set with :meth:`Recognizer.set_promotion` (queen unless told otherwise;
one read ahead that the board shows answered before the kind was told, the reply's piece
lifted by then, keeps the kind before), and :meth:`Recognizer.amend_promotion` corrects the
last one.

An action is provisional until completed: by a clock press of its side (``LeverMoved``;
the lever side of each colour is learned from the first press after an action), by the next
action, or -- when no clock is in use -- by the board standing still on it for ``settle``
seconds.

Rules for what a presence-only board cannot show directly (each surfaced, never silent):

* several actions read the same (a capture where a neighbour of the move was knocked over
  and set back, the captured square and the knocked one both lifted and set down after the
  mover's lift): the likelier is read -- the chosen promotion kind, then the one explaining
  more of the handling (a Chess960 castling whose king lands where its rook stood, rather
  than a king step), then the one leaving fewer handled squares unexplained (the squares a
  dragged piece passed over belong to its move), then a capture whose captured square was
  not lifted within a scan of the mover's lift (a move is made with one hand, which cannot
  take two pieces off two squares at once: a square emptied together with the mover's was
  knocked over), then the capture whose square was lifted first if every other one was
  lifted more than a scan later (the captured piece comes off as the move starts; a
  neighbour is knocked over as the hand moves on), else the one whose square was set down
  first (a knocked piece is mostly set back after the move is made).  The other captures by
  the same piece are named in the move event (``alternatives``), for a screen to offer;
* a capture read among captures of other pieces by the same piece (the case above: truly
  ambiguous, the sensor histories are the same; and every capture read swept, below) is
  kept with its alternatives for :data:`REREAD_PLIES` actions: when the board stands on
  something nothing explains (after a place, at a clock press, or still for the settle
  delay), the game is read again with that capture read another way if then the actions
  since stay legal -- or become legal with up to :data:`REREAD_CHANGES` of them read as
  other captures by the same piece (a capture read wrong makes its recapture read wrong:
  the piece really taken was on another square) -- and the board shows the position after
  them, or up to :data:`REREAD_AHEAD` legal actions further (read ahead; once a move is
  complete also a swept capture, or actions replacing a provisional last action, a slide
  that rested on its path and went on to capture).  A reading is tried only if it changes
  the piece on a square handled since the last action, or one the lifted pieces attack (a
  swept capture), or gives check on the last action, or leaves a piece that attacks a square
  handled since (a king set down where one reading has it attacked) (:meth:`_may_differ`:
  bit masks, no game made), at most :data:`REREAD_TRIALS` readings and :data:`REREAD_NODES`
  actions made each.
  It emits a ``Takeback`` of the actions since the first capture read again and move events
  for them again, with their completion kept, each naming the readings not taken that the
  later play still allows (read as it is, or with a capture after it read as the recapture
  of the piece that reading takes), a swept capture also the captures by its piece that
  became legal.  A capture the handling settled (its captured square lifted and set down
  in order, or amended in) keeps the other captures by its piece unnamed (``unseen``: a swept
  capture with a neighbour knocked over reads the same); they are read again the same way,
  but only once a move is complete (a piece set down on its path mid-move is no proof).  So
  does a move of a piece whose capture it amends (...Bxd4 swept, then the opponent's piece set
  down on e7 before its lift is reported reads ...Be7 and its capture): the captures it was
  read among are read again the same way.  A capture read as the mover lands, before the
  captured square was handled, keeps the same way the captures of the same piece whose
  squares are handled afterwards but which do not amend it (below).  The last capture of a
  game has nothing after it to tell, nor has one whose later play fits both readings: such
  a capture stays read wrong, its alternatives named.  A swept capture read right after such
  a capture also names the captures by its piece that another reading of that capture
  allows, of a piece the two games differ on (its recapture: Qxe5 Qxe5 swept both, read as
  Qxf7+ Qxf7, the board showing the same to the end, names ...Qxe5 on the second move, with
  its SAN in that game: a correction to it is legal once the first move is corrected to
  the other reading, which drops the moves read after it; no correction takes both); a
  re-reading counts the squares they change among those a later reading may differ on, and
  drops them with that reading;
* a place that makes the board read as a takeback (the position before the last action, or
  an earlier one with more pieces) or as an amendment of the last action is held for one
  scan when it may be a legal action's piece from the current position set down before
  its lift (every square where the board differs from that position is one such an action
  changes): a lift within the scan that, with the place, starts such an action makes the
  place that action's (the king set on c7, which the capturing pawn left, as d8 empties is
  Kd8-c7, not a takeback of the capture); any other change, the clock, or the scan passing
  without a change lets the held reading stand.  A lift of the placed square itself (a
  bounce) waits for it to be set down again;
* the board reads exactly like the last action but another action from the previous
  position explains the handling better -- e.g. king e1-f1 read first, then the rook on g1
  lifted and the king set on g1: castling; a capture read on a knocked-over neighbour, then
  the real captured piece lifted and the mover lifted again (or, the square read as
  captured having been lifted within a scan of the mover's lift, only the real captured
  square lifted and set down) -- the last action is amended (an ``Amend`` event), provided
  it was not completed yet;
* an amendment needs the right order: a piece the provisional action set down on a square
  the new action leaves empty must have been lifted from there before the new action's
  changed-but-occupied squares were set down (an opponent touching a piece first is not the
  capture);
* a move completed only by the settle delay is replaced -- a ``Takeback`` and the new move
  -- only by an action that changes every square it changed and more (a slow castling: the
  rook, then more than ``settle`` seconds later the king); the board cannot tell a hand
  going back to the move from the opponent's hand knocking the moved piece;
* a capture whose captured piece was swept off as the capturing piece landed (the captured
  square never reads empty: the board only lacks the capturing piece) is read when the move
  must be complete -- its side presses the clock, the input ends, or the board stands still
  for the settle delay (a capture that promotes not then: the pawn is held while the new
  piece is fetched, and while a pawn about to promote is lifted, or the pawn of the last
  action, a promotion, is taken off again to be exchanged for the new piece, nothing is
  read ahead or again) -- if a legal capture by that piece reads so and its captured square
  was not handled; it is completed only a further settle delay later.  A piece held still
  in the hand that long reads the same (ambiguous): the reading is replaced when the piece
  is set down elsewhere, and taken back when it is put back;
* the board stands on something no action explains (after a place, at a clock press, or
  still for the settle delay): the recogniser reads ahead (:mod:`service.recognize.ahead`)
  for sequences of legal actions that end in what the board shows -- from the current
  position (at least two actions after a place, the place completing the last), else
  replacing a provisional last action (a slide that rested on a square of its path and went
  on to take in one motion), else from where the last guess started (a swept capture read,
  a re-reading from the last action, or an earlier reading ahead; the board standing still
  or at a clock press, up to :data:`AHEAD_PLIES` + 2 actions, as many as may lie between
  it and the board) -- in the handling's order (a reply starts more than a scan after the
  move it answers was lifted, and is lifted after the move's piece was set down); after a
  place, only a sequence explaining every square handled (but the squares of pieces
  lifted and set back where they stood: adjusted, not moved, the piece the last action set
  down or exchanged for its promoted pawn among them) and no promotion to a kind
  not chosen (a piece resting on its path may be what makes the chosen kind illegal: the
  next change tells), within a smaller budget (``PLACE_NODES``), and nothing while the
  board is part-way through a legal action (a piece set down before its lift is reported:
  the next change tells).  A place that sets a
  piece back where it stood (a neighbour knocked over) completes no action: the sequence
  need not set it down nor explain it, and if the square stood empty a settle delay or
  more (or, the board standing still, the square set back that stood empty longest), one
  action may empty it and a later one fill it again (a swept capture answered by a piece
  set down on the square the capturing piece left).  The likeliest is
  made (fewest handled squares unexplained, the chosen promotion kind, fewest actions, a
  capture of the piece that just moved; a provisional promotion is never replaced by the
  same move to another piece, which reads the same) with move events (an ``Amend``, or a
  ``Takeback`` and the actions again, for what it read again), the other captures the
  board reads the same named as ``alternatives``.  A stretch no legal play explains within
  :data:`AHEAD_PLIES` actions is a mismatch; once the board is back on a position legal
  play reaches, the game goes on;
* a takeback of several actions counts at once when the board holds more pieces than the
  game has (captured pieces came back: only a takeback does that), else once the board
  stands still on the earlier position for the settle delay;
* a king and a rook lifted and put back where a Chess960 swap castling is legal still read as
  that castling (provisional: the clock or the next action completes it).  This is
  ambiguous on such a board (both handlings give the same sensor history) and stays so.

On a piece-identity board, a move completed only by the settle delay (no clock) is still
replaced -- a ``Takeback`` and the new move -- when the same hand continues it (a slow rook
after the king: castling).

:meth:`Recognizer.replace_action` replaces an action of the game told at the table (a
20-chess drop whose kind the board guessed) and makes the later actions again.

Result gestures are never moves: a DGT draw / white-wins / black-wins piece placed on any
square, or both kings on the centre squares (see :data:`CENTRE`).
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from operator import attrgetter, itemgetter, ne
from typing import NamedTuple

import chess

from dgt.events import (
    BoardEvent,
    BoardSnapshot,
    ClockUpdate,
    LeverMoved,
    Side,
    SquareChanged,
)
from dgt.protocol.constants import Piece
from service.recognize.ahead import (
    AHEAD_NODES,
    AHEAD_PLIES,
    PLACE_NODES,
    Handled,
    Position,
    Reading,
    action_bits,
    after_move,
    between,
    chess_position,
    is_legal,
    legal_from,
    occupied_mask,
    other_captures,
    readings,
    search,
    unexplained,
)
from service.recognize.events import (
    Amend,
    Lift,
    Mismatch,
    MoveEvent,
    NewGame,
    Place,
    RecognizerEvent,
    Result,
    Takeback,
)
from service.recognize.pgn import GameRecord, RecordedMove
from service.variants import get_variant, variant_for_start
from service.variants.base import (
    EMPTY,
    STANDARD_ID,
    Action,
    Color,
    IllegalActionError,
    LegalAction,
    Move,
    ScoreEvent,
    SquareMap,
    StartPosition,
    Variant,
    VariantGame,
    occupancy,
    rotated,
)
from service.variants.chess960 import chess960_starts
from service.variants.standard import ChessGame, Standard, piece_attacks, to_chess_move
from service.variants.t20 import t20_start

logger = logging.getLogger(__name__)

OCCUPIED = "*"
"""How a presence-only board reads any piece."""
UNREADABLE = "?"

CENTRE: frozenset[int] = frozenset((27, 28, 35, 36))
"""The centre squares d4, e4, d5, e5.  Result gesture: the white king and the black king
each on one of them (and no other king on the board).  Both on light squares (e4, d5):
1-0; both on dark squares (d4, e5): 0-1; one light, one dark: 1/2-1/2.  Two kings on
neighbouring squares never occur in a game, so the gesture is never a move.  It needs a
piece-identity board (a presence-only board cannot tell kings)."""
LIGHT_CENTRE: frozenset[int] = frozenset((28, 35))

MAGIC_RESULTS = {
    "=": ("1/2-1/2", "draw piece"),
    "W": ("1-0", "white-wins piece"),
    "X": ("0-1", "black-wins piece"),
}
"""The DGT result pieces: placed on any square, they declare the result."""

DEFAULT_SETTLE = 2.0
"""Seconds the board must stand still before a move is completed without a clock: long
enough for the king to follow its rook when castling rook first."""
FLICKER = 0.12
"""A square that reads empty for at most this long was not handled: the piece on it
bounced as it settled, or a sensor flickered."""
SCAN_SLACK = 0.1
"""Seconds by which a board may report a place before the lift that physically came first
(both happened within one scan of the sensors)."""
_INF = float("inf")
_DUE_MARGIN = 0.001
"""Seconds :meth:`Recognizer.due` answers early: more than the rounding of a time of day."""
PROMOTION_KINDS = frozenset("qrbn")
REREAD_PLIES = 40
"""How far back an action read among several may be read again another way."""
REREAD_TRIALS = 6
"""The most other readings of an action one re-reading tries on the game (most are set
aside unseen: they change no piece the handling since the last action touched)."""
REREAD_CHANGES = 3
"""The most actions read another way at once (a capture, its recapture, and the next)."""
REREAD_NODES = 96
"""The most actions one trial of a re-reading makes (bounds its cost)."""
REREAD_AHEAD = 3
"""The most actions after a game read again that may explain the board."""
_SQUARES = tuple(range(64))
_ALTERNATIVES = attrgetter("alternatives")
_UNSEEN = attrgetter("unseen")
_ACTION_UCI = attrgetter("action.uci")
_FIRST = itemgetter(0)
_PIECE_KINDS = {symbol: kind for kind, symbol in enumerate(chess.PIECE_SYMBOLS) if symbol}
"""python-chess's piece kinds by their lower-case symbols."""
_NEVER = float("-inf")
_FEW_SQUARES = 8
"""A mismatch over more squares than this compares the board with every legal action rather
than with those changing a differing square (one query per square)."""


class RecognizerError(Exception):
    """Base of the recogniser's errors."""


class InvalidPromotionError(RecognizerError, ValueError):
    def __init__(self, kind: str) -> None:
        super().__init__(f"promotion kind must be one of q, r, b, n, got {kind!r}")


class ReplacementError(RecognizerError, ValueError):
    """An action of the game cannot be replaced as asked (:meth:`Recognizer.replace_action`)."""


class NoPromotionError(RecognizerError):
    def __init__(self) -> None:
        super().__init__(
            "the last action is not a promotion: amend_promotion() corrects the piece of a "
            "promotion just made"
        )


# -- internal structures -------------------------------------------------------------------


class _Candidate(NamedTuple):
    """A legal action seen through the board's eyes (a tuple: built for every legal action
    that changes a handled square, so it must be cheap to make)."""

    action: LegalAction
    key: frozenset[int]  # squares whose reading changes
    readings: tuple[tuple[int, str], ...]  # (square, reading after) for the key squares
    same: tuple[int, ...]  # squares that stay occupied but change content
    emptied: tuple[int, ...]  # squares the action empties
    promotion: str | None


_Index = dict[frozenset[int], list[_Candidate]]
"""Candidates by the squares whose reading they change."""
_NO_SQUARES: frozenset[int] = frozenset()


def _candidate(
    la: LegalAction, view: SquareMap, presence: bool, reads: Callable[[str], str] = str
) -> _Candidate:
    """``la`` seen through the eyes of a board that reads ``view`` before it; ``reads`` is
    what a piece-identity board reads for a model symbol (the game's ``board_symbol``: a
    variant's new kinds stand on the board as stand-in pieces)."""
    key = []
    readings = []
    same = []
    emptied = []
    for sq, model in la.changes:
        # (``str`` reads a symbol as itself: no call for it)
        symbol = reads(model) if model and reads is not str else model
        if presence:
            after = OCCUPIED if symbol else EMPTY
            if after != view[sq]:
                key.append(sq)
                readings.append((sq, after))
            elif symbol:
                same.append(sq)
        elif symbol != view[sq]:
            key.append(sq)
            readings.append((sq, symbol))
        elif symbol:
            same.append(sq)
        if not symbol:
            emptied.append(sq)
    action = la.action
    return _Candidate(
        la,
        frozenset(key),
        tuple(readings),
        tuple(same),
        tuple(emptied),
        action.promotion if isinstance(action, Move) else None,
    )


_Before = Callable[[SquareMap], object]
"""Reads the squares an action changes off a view (an ``operator.itemgetter``)."""
_SEEN: tuple[dict[int, tuple[LegalAction, _Before, object, _Candidate]], ...] = ({}, {})
""":func:`_candidate` of legal actions already seen, per board family (presence-only
second), by the action's ``id`` (the entry holds the action, so the ``id`` stays its own)
with the readings before it of the squares it changes (and the getter that reads them).  A
chess variant makes one :class:`LegalAction` per move and the pieces on its squares, so the
tables of a hall share most of them."""
_SEEN_MOST = 1 << 14


def _seen(la: LegalAction, view: SquareMap, presence: bool) -> _Candidate:
    """:func:`_candidate` of ``la`` for a board that reads the model's symbols as they
    are, made once per action and readings before it."""
    seen = _SEEN[presence]
    known = seen.get(id(la))
    if known is not None and known[0] is la:
        before = known[1]
        if before(view) == known[2]:
            return known[3]
    else:
        before = itemgetter(*map(_FIRST, la.changes))
    candidate = _candidate(la, view, presence)
    if len(seen) >= _SEEN_MOST:
        seen.clear()
    seen[id(la)] = (la, before, before(view), candidate)
    return candidate


def presence_after(view: SquareMap, changes: Iterable[tuple[int, str]]) -> SquareMap:
    """What a presence-only board reads after an action whose ``changes`` (a legal action's:
    every square it changes, with its content after) are made on a position it reads as
    ``view`` (the same as reading the position after it square by square, at a fraction
    of the cost)."""
    cells = list(view)
    for square, symbol in changes:
        cells[square] = OCCUPIED if symbol else EMPTY
    return tuple(cells)


class _Node:
    """The game's position after ``ply`` actions (a plain class: one is made for every
    action)."""

    __slots__ = ("candidates", "count", "ply", "squares", "view")

    def __init__(self, ply: int, squares: SquareMap, view: SquareMap, count: int = -1) -> None:
        self.ply = ply
        self.squares = squares
        self.view = view  # what the board reads for it
        # the candidates by a square they change (None: none yet)
        self.candidates: dict[int, _Index] | None = None
        # occupied squares (``count``: known already)
        self.count = len(view) - view.count(EMPTY) if count < 0 else count

    def __getnewargs__(self) -> tuple[int, SquareMap, SquareMap, int]:
        """What unpickling passes to ``__new__`` (a read replica pickles the tables): the
        compiled build's ``__new__`` runs ``__init__``, which takes these; the state pickled
        then sets every attribute.  Plain Python's ``__new__`` ignores them."""
        return self.ply, self.squares, self.view, self.count


class _Ref:
    """A position the board is compared with, and how the board differs from it (a plain
    class: one is made for every action, and a dataclass's default factories cost more)."""

    __slots__ = ("diff", "first_lift", "last_lift", "last_place", "lift_before", "node", "view")

    def __init__(self, node: _Node, diff: dict[int, None]) -> None:
        self.node = node
        self.view = node.view  # (every square change compares with it: one object less)
        self.diff = diff  # ordered set of squares whose reading differs
        self.first_lift: dict[int, float] = {}  # times, since created
        self.last_place: dict[int, float] = {}
        self.last_lift: dict[int, float] = {}  # flickers left out
        # to undo a flicker's (None: none yet; a square lifted twice is rare)
        self.lift_before: dict[int, float] | None = None

    def __getnewargs__(self) -> tuple[_Node, dict[int, None]]:
        """What unpickling passes to ``__new__`` (see :meth:`_Node.__getnewargs__`)."""
        return self.node, self.diff


@dataclass(slots=True)
class _Pending:
    """A reading held back for one scan of the sensors: the place that caused it may be
    the next action's piece set down before its lift was reported."""

    time: float
    placed: int | None  # the square set down (None: a lift caused the reading)
    action: LegalAction | None = None  # the last action amended to this one
    ply: int = 0  # else: a takeback to this ply


_Recapture = tuple[LegalAction, str, LegalAction]
"""A capture a presence-only board read the same as an action but legal only with the action
before read another way (see :meth:`Recognizer._recaptures`): the capture, its SAN there and
that reading of the action before."""


@dataclass(slots=True)
class _Played:
    """An action of the game in progress."""

    action: LegalAction
    san: str
    number: int
    scores: tuple[ScoreEvent, ...]
    final: bool = False
    by_settle: bool = False  # completed only by the board standing still
    alternatives: tuple[tuple[LegalAction, str], ...] = ()  # read the same; with their SAN
    swept: bool = False  # read as a capture whose captured piece was swept off
    unseen: tuple[LegalAction, ...] = ()  # other captures a swept capture would read as
    # captures by its piece legal only with the action before read as one of its others
    # (the recapture of the piece that reading takes): Recognizer._recaptures
    recaptures: tuple[_Recapture, ...] = ()
    # Recognizer._touches, with the readings it was worked out from
    touches: tuple[object, object, object, tuple[int, int]] | None = None


_KeptReadings = tuple[tuple[_Played, object, object, bool], ...]
"""Some actions of the game with their readings then: each action, its alternatives, its
unseen captures and whether it was read as a swept capture (see :func:`_readings_of`)."""


def _readings_of(played: Sequence[_Played]) -> _KeptReadings:
    """``played`` with their readings now (a _Played's readings are replaced, never changed
    in place: compared by identity, :func:`_same_readings`)."""
    return tuple([(p, p.alternatives, p.unseen, p.swept) for p in played])


def _same_readings(kept: _KeptReadings, now: _KeptReadings) -> bool:
    """Whether ``now`` holds the very actions and readings ``kept`` holds."""
    if len(kept) != len(now):
        return False
    return all(
        old[0] is new[0] and old[1] is new[1] and old[2] is new[2] and old[3] == new[3]
        for old, new in zip(kept, now, strict=True)
    )


class _Dead(NamedTuple):
    """A test of :meth:`Recognizer._may_explore` that failed: its tries never went past the
    action ``len(key) - 1`` of ``game`` (``key``: the actions up to it, as read), so they
    fail again while the game made those actions, each of them after the one read another
    way still read among the same readings (``later``: those actions, with their
    readings then; a _Played's readings are replaced, never changed in place)."""

    game: VariantGame
    key: tuple[str, ...]
    later: _KeptReadings

    def holds(self, game: VariantGame, key: tuple[str, ...], later: Sequence[_Played]) -> bool:
        """Whether the test fails again for ``game`` having made the actions ``key``,
        ``later`` those from the one read another way on."""
        if game is not self.game or key[: len(self.key)] != self.key:
            return False
        # (the game made the actions of ``key``: ``later`` holds those of ``self.later``)
        return _same_readings(self.later, _readings_of(later[1 : len(self.later) + 1]))


def _named(played: _Played) -> tuple[tuple[str, str], ...]:
    """``(uci, san)`` of the other actions the board read the same as ``played`` (its
    recaptures last: each the reading of the action before it another way too)."""
    alternatives = played.alternatives
    recaptures = played.recaptures
    if not alternatives and not recaptures:
        return ()
    named = [(la.uci, san) for la, san in alternatives]
    named += [(la.uci, san) for la, san, _ in recaptures]
    return tuple(named)


def _other_capture(action: Action, other: LegalAction) -> bool:
    """Whether ``other`` moves the piece ``action`` moves to another square (with the same
    promotion): among actions the board read the same, a capture of another piece."""
    moved = other.action
    return (
        isinstance(action, Move)
        and isinstance(moved, Move)
        and moved.from_square == action.from_square
        and moved.to_square != action.to_square
        and moved.promotion == action.promotion
    )


def _alternatives(matches: Sequence[_Candidate]) -> tuple[LegalAction, ...]:
    """The other readings of an action read among several that only a presence-only
    board confuses and only later play can tell apart: captures by the same piece of
    pieces on different squares (a neighbour knocked over and set back reads like the
    captured piece).  Other kinds of confusion are settled by the handling (castling
    against a king step) or told by the player (a promotion's piece)."""
    if len(matches) < 2:
        return ()
    chosen = matches[0]
    action = chosen.action.action
    if not chosen.same or not isinstance(action, Move):
        return ()
    return tuple(
        candidate.action
        for candidate in matches[1:]
        if _other_capture(action, candidate.action) and len(candidate.same) == len(chosen.same)
    )


def _unseen(
    matches: Sequence[_Candidate], unordered: Sequence[_Candidate]
) -> tuple[LegalAction, ...]:
    """The other captures by the piece of the likeliest of ``matches`` whose captured
    square was not handled in order (``unordered``): had the piece really captured been
    swept off, a neighbour knocked over and set back would read as this capture.  Never
    named; a re-reading tries them when later play disproves the capture read."""
    if not unordered:
        return ()
    action = matches[0].action.action
    named = {c.action for c in matches}
    return tuple(
        c.action
        for c in unordered
        if c.action not in named
        and _other_capture(action, c.action)
        and not any(c.action.changes == other.changes for other in named)
    )


def _same_origin(new: LegalAction, old: LegalAction) -> bool:
    """Whether both actions move a piece from the same square."""
    a, b = new.action, old.action
    return isinstance(a, Move) and isinstance(b, Move) and a.from_square == b.from_square


def _target(la: LegalAction) -> int:
    """The square a move goes to (-1 for other actions)."""
    action = la.action
    return action.to_square if isinstance(action, Move) else -1


def _moved(differ: int, read: chess.Move, made: chess.Move) -> int:
    """:func:`_followed` for python-chess moves (their squares alone)."""
    emptied = chess.BB_SQUARES[read.from_square]
    filled = chess.BB_SQUARES[read.to_square]
    if made == read:
        carried = differ & emptied
        differ &= ~(emptied | filled)
        return differ | filled if carried else differ
    filled |= chess.BB_SQUARES[made.to_square]
    if made.from_square != read.from_square:  # (see _from_elsewhere)
        return differ | filled | emptied | chess.BB_SQUARES[made.from_square]
    return (differ | filled) & ~emptied


def _followed(differ: int, read: LegalAction, made: LegalAction) -> int:
    """The squares (a bit mask) whose piece differs between two games after one makes
    ``read`` and the other ``made`` (the same occupancy either way), from ``differ``
    before: an action leaving such a square takes the difference with it."""
    emptied = filled = 0
    for square, symbol in read.changes:
        if symbol:
            filled |= 1 << square
        else:
            emptied |= 1 << square
    if made == read:
        carried = differ & emptied
        differ &= ~(emptied | filled)
        return differ | filled if carried else differ
    elsewhere = _from_elsewhere(read.action, made)
    for square, symbol in made.changes:
        if symbol:
            filled |= 1 << square
        else:
            emptied |= 1 << square
    if elsewhere:  # the occupancy differs too: every square either changed
        return differ | filled | emptied
    return (differ | filled) & ~emptied


def _from_elsewhere(action: Action, other: LegalAction, origins: int = -1) -> bool:
    """Whether ``other`` moves a piece from another square than ``action`` to the same one
    (with the same promotion): after an earlier capture read another way, the capturing
    piece stands on the square that reading took it to, not on the one the game as read
    has it on, and its next move leaves from there (the board read the move from the
    square as read because a neighbour there was lifted or knocked, as the mover's was);
    ``origins``: the squares (a bit mask) it may leave."""
    moved = other.action
    return (
        isinstance(action, Move)
        and isinstance(moved, Move)
        and moved.to_square == action.to_square
        and moved.from_square != action.from_square
        and moved.promotion == action.promotion
        and bool(origins >> moved.from_square & 1)
    )


@cache
def _start_index() -> dict[SquareMap, tuple[StartPosition, ...]]:
    """Every start position the recogniser knows, by square map."""
    index: dict[SquareMap, list[StartPosition]] = {}
    for start in (*Standard().start_positions(), *chess960_starts(), t20_start()):
        index.setdefault(start.squares, []).append(start)
    return {squares: tuple(starts) for squares, starts in index.items()}


def _stand_ins(variant: Variant) -> frozenset[str]:
    """The readings a variant uses as stand-in pieces (the 20-chess extra piece may be a
    DGT special piece, which then is no result gesture)."""
    return frozenset(variant.stand_ins.values())


def _copy_handling(source: _Ref, target: _Ref) -> None:
    """``target`` (a reference the same occupancy as ``source``) takes over the handling
    seen since ``source`` was made."""
    target.first_lift.update(source.first_lift)
    target.last_place.update(source.last_place)
    target.last_lift.update(source.last_lift)
    if source.lift_before:
        if target.lift_before is None:
            target.lift_before = {}
        target.lift_before.update(source.lift_before)


_SCRATCH: dict[tuple[type[chess.Board], bool], chess.Board] = {}
""":func:`_scratch_board`'s boards, by kind of board and castling notation."""


def _scratch_board(board: chess.Board) -> chess.Board:
    """A board of ``board``'s kind to try moves on, with an empty move stack, its position
    to be set by the caller (a ``_BoardState`` restored onto it); one per kind, made once
    (a copy of a board costs more than the moves tried on it), every move pushed on it
    popped again."""
    key = (type(board), board.chess960)
    scratch = _SCRATCH.get(key)
    if scratch is None:
        scratch = _SCRATCH[key] = board.copy(stack=False)
    elif scratch.move_stack:  # (a try cut short by an error)
        scratch.clear_stack()
    return scratch


def _reread_moves(played: _Played, read: chess.Move, changes: int) -> tuple[list[chess.Move], bool]:
    """The moves a re-reading of the game may try for ``played`` (read as ``read``):
    ``read`` first, then the other readings the board allowed (its alternatives, the
    actions it could not see), unless the re-reading made too many changes already; and
    whether a capture onto a square that changed may be tried too (the move was one the
    board could read otherwise, or a swept capture)."""
    found = [read]
    if not (played.alternatives or played.swept or played.unseen):
        return found, False
    if changes + 1 >= REREAD_CHANGES:
        return found, False
    others = (*(la for la, _ in played.alternatives), *played.unseen)
    found += [to_chess_move(la.action) for la in others]
    return found, True


def _reread_extras(
    later: Sequence[_Played], moves: Sequence[chess.Move], root: chess.Move, left: bool
) -> tuple[int, int]:
    """What a quick test before a re-reading tries beyond the other readings: the index in
    ``later`` of the last action if it is provisional (a slide that may have gone on, see
    :func:`_goes_on`; else -1), and the square where the game as read has the first action's
    piece if ``root``, its reading, puts it elsewhere and the board reads that empty
    (``left``: a later move of it may leave from there, see :func:`_from_elsewhere`; else
    -1)."""
    going_on = len(later) - 1 if len(later) > 1 and not later[-1].final else -1
    moved_from = moves[0].to_square if left and root.to_square != moves[0].to_square else -1
    return going_on, moved_from


def _add_from_elsewhere(found: list[chess.Move], read: chess.Move, square: int) -> None:
    """Add to ``found`` the later move ``read`` made from ``square`` instead: where the
    first action read again puts its piece (see :func:`_from_elsewhere`)."""
    elsewhere = chess.Move(square, read.to_square, read.promotion)
    if elsewhere not in found:
        found.append(elsewhere)


def _goes_on(read: Move | chess.Move, other: Move | chess.Move) -> bool:
    """Whether ``other`` moves the piece ``read`` moves on along the same line past the
    square ``read`` sets it down on (with the same promotion): the last action, still
    provisional, may be a slide that rested there on its way (a re-reading that makes it
    illegal where it rested may find it went on)."""
    return (
        other.from_square == read.from_square
        and other.promotion == read.promotion
        and read.to_square in between(read.from_square, other.to_square)
    )


def _handled(ref: _Ref) -> Handled:
    """The handling seen since ``ref`` was made, for reading ahead."""
    return Handled(ref.first_lift, ref.last_lift, ref.last_place)


def _reading(piece: Piece, presence_only: bool) -> str:
    if piece is Piece.EMPTY:
        return EMPTY
    if piece is Piece.UNKNOWN:
        return UNREADABLE
    if presence_only:
        return OCCUPIED
    return piece.symbol


def _readings(presence_only: bool) -> tuple[str, ...]:
    """:func:`_reading` of every piece, by its value (a lookup per square change)."""
    table = [UNREADABLE] * (max(Piece) + 1)
    for piece in Piece:
        table[piece] = _reading(piece, presence_only)
    return tuple(table)


_READINGS = (_readings(False), _readings(True))
"""What each piece reads as, by the piece's value: on a piece-identity board, then on a
presence-only one."""


class Recognizer:
    """Turns :mod:`dgt.events` board events into :mod:`service.recognize.events`.

    ``variant``: the variant a classical start position means (``"standard"`` or
    ``"chess960"``; a non-classical Chess960 start always means Chess960 and the T20 start
    T20).  ``presence_only``: the board family (None: read it off the first occupied
    square).  ``clock``: whether a clock completes moves (None: yes once a clock press or a
    running clock is seen).  ``settle``: seconds the board must stand still before a move
    is completed without a clock, and before a mismatch is reported.  ``promotion``: the
    kind a promotion on a presence-only board becomes.  ``start``: the start a presence-only
    board's classical occupancy means (e.g. a Chess960 position the arbiter chose).
    ``rotated``: the board's orientation until a start position shows it.
    """

    # slots: a hall holds one recogniser per table and every board event reads a dozen of
    # its attributes (fixed offsets in the object, no instance dict to look them up in)
    __slots__ = (
        "_board",
        "_clock_seen",
        "_counts",
        "_dead",
        "_explorable",
        "_game",
        "_keep_current",
        "_last_change",
        "_lever",
        "_lifted_at",
        "_nearest",
        "_nodes",
        "_occupied",
        "_pending",
        "_placing",
        "_played",
        "_presence_start",
        "_prev",
        "_promotion",
        "_promotion_before",
        "_recheck",
        "_records",
        "_reported",
        "_result",
        "_result_reason",
        "_sure",
        "_sure_failed",
        "_top",
        "clock",
        "presence_only",
        "rotated",
        "settle",
        "variant",
    )

    def __init__(
        self,
        *,
        variant: str | Variant = STANDARD_ID,
        presence_only: bool | None = None,
        clock: bool | None = None,
        settle: float = DEFAULT_SETTLE,
        promotion: str = "q",
        start: StartPosition | None = None,
        rotated: bool = False,
    ) -> None:
        self.variant = get_variant(variant) if isinstance(variant, str) else variant
        self.presence_only = presence_only
        self.clock = clock
        self.settle = settle
        self._promotion = self._check_kind(promotion)
        # the kind before the last one told and the last board change before the telling
        self._promotion_before: tuple[str, float] | None = None
        self._presence_start = start
        self.rotated = rotated
        self._board: list[str] = [UNREADABLE] * 64
        self._occupied = 0
        self._last_change = float("-inf")
        self._lifted_at: dict[int, float] = {}
        self._pending: _Pending | None = None
        self._placing: int | None = None  # the square the change being analysed set down
        self._game: VariantGame | None = None
        # the game's keep_current (ChessGame): after each action made, not after one tried
        self._keep_current: Callable[[], None] | None = None
        self._nodes: list[_Node] = []
        self._played: list[_Played] = []
        self._counts: dict[int, int] = {}  # nodes by pieces: spares most view comparisons
        self._top: _Ref | None = None
        self._prev: _Ref | None = None
        self._sure: _Ref | None = None  # the position the last reading ahead started from
        self._sure_failed: tuple[int, tuple[int, ...], int | None] | None = None
        # actions read again whose other readings the provisional last action has not yet
        # disproved (see _try_reading): once it is final, it does
        self._recheck: tuple[int, ...] = ()
        self._explorable: dict[tuple[str, ...], tuple[bool, _KeptReadings]] = {}  # _may_explore
        self._dead: dict[tuple[int, str], _Dead] = {}  # see _may_explore
        self._clock_seen = False
        self._lever: dict[Side, Color] = {}
        self._reported: tuple[int, ...] = ()
        # _nearest_difference's last answer, with what it was worked out from (the board,
        # the reference position, the game's last node): a lasting mismatch is asked again
        # at every tick
        self._nearest: tuple[tuple[object, ...], tuple[int, ...]] | None = None
        self._result: str | None = None
        self._result_reason = ""
        self._records: list[GameRecord] = []

    # -- public API --------------------------------------------------------------------------

    def feed(self, event: BoardEvent) -> list[RecognizerEvent]:
        """Process one board event; returns what it caused (often nothing)."""
        out: list[RecognizerEvent] = []
        if type(event) is SquareChanged and self._pending is None:  # most changes
            self._on_square(event.time, event.square, event.piece, out)
            return out
        if type(event) is LeverMoved and self._pending is None:  # a clock press
            self._on_lever(event, out)
            return out
        if isinstance(event, ClockUpdate) and self._pending is None:
            # the clock's report about once a second: most events, and nothing to decide
            if event.running:
                self._clock_seen = True
            return out
        if self._pending is not None:
            self._resolve_pending(event, out)
        if isinstance(event, SquareChanged):
            self._on_square(event.time, event.square, event.piece, out)
        elif isinstance(event, BoardSnapshot):
            self._on_snapshot(event, out)
        elif isinstance(event, LeverMoved):
            self._on_lever(event, out)
        elif isinstance(event, ClockUpdate) and event.running:
            self._clock_seen = True
        return out

    def clock_report(self, event: ClockUpdate) -> list[RecognizerEvent]:
        """``tick(event.time)`` then ``feed(event)`` for a clock's report (most inputs, about
        one a second from every running clock), at the cost of a few comparisons while
        nothing is due: no place waits for its lift, and the board changed less than the
        settle delay ago, or stands on the game's position with no move left to complete
        by the settle delay (or no game was seen yet)."""
        top = self._top
        if self._pending is None and (
            top is None
            or event.time - self._last_change < self.settle
            or (not top.diff and (not self._played or self._played[-1].final or self.clock_in_use))
        ):
            if event.running:
                self._clock_seen = True
            return []
        out = self.tick(event.time)
        out += self.feed(event)
        return out

    def quiet_reports(self) -> tuple[float, float, bool] | None:
        """How :meth:`clock_report` stands until the next input changes this recogniser,
        for a caller that decides a clock report without it: ``(since, settle, seen)``, a
        report at ``t`` returning nothing while ``t - since < settle`` (``since`` infinite:
        at any time) and changing nothing either when it is not running or ``seen`` (a
        running clock was seen already); None while a place waits for its lift."""
        if self._pending is not None:
            return None
        top = self._top
        seen = self._clock_seen
        if top is None or (
            not top.diff and (not self._played or self._played[-1].final or self.clock_in_use)
        ):
            return (_INF, self.settle, seen)
        return (self._last_change, self.settle, seen)

    def due(self) -> float:
        """The earliest time :meth:`tick` may return or change anything (infinite: not before
        the next input), a little early rather than late (a caller skips the ticks
        before it)."""
        due = _INF
        pending = self._pending
        if pending is not None:
            due = pending.time + SCAN_SLACK - _DUE_MARGIN
        top = self._top
        if top is not None and (
            top.diff or (self._played and not self._played[-1].final and not self.clock_in_use)
        ):
            due = min(due, self._last_change + self.settle - _DUE_MARGIN)
        return due

    def feed_all(self, events: Iterable[BoardEvent]) -> list[RecognizerEvent]:
        """Feed many events, calling :meth:`tick` at each event's time first."""
        out: list[RecognizerEvent] = []
        for event in events:
            out += self.tick(event.time)
            out += self.feed(event)
        return out

    def tick(self, now: float) -> list[RecognizerEvent]:
        """Let time pass until ``now``: completes a move the board has stood still on for
        the settle delay (when no clock is in use), reports a lasting mismatch."""
        out: list[RecognizerEvent] = []
        if self._pending is not None and now - self._pending.time > SCAN_SLACK:
            self._decide_pending(out)
        top = self._top
        if top is None or now - self._last_change < self.settle:
            return out
        if not top.diff:
            if self._played and not self._played[-1].final and not self.clock_in_use:
                self._finalise(now, out, by_settle=True)
            return out
        if self.presence_only:
            # occupancy alone often repeats an earlier position mid-move: a takeback of
            # several actions counts only once the board stands still on it
            ply = self._history_match()
            if ply is not None:
                self._takeback_to(ply, now, out)
                return out
            # a pawn held while the new piece is fetched: the promotion is not complete (nor
            # is it while the pawn set down is taken off again to be exchanged for it)
            held = self._partway(top, promotions=True) or self._exchanging(top)
            reread = not held and self._reread(now, out, complete=True, promotions=False)
            if self._read_swept(now, out, promotions=False):
                self._last_change = now  # completed only after a further settle delay
                return out
            if reread:
                return out
            if not held and self._follow(now, out, promotions=False):
                return out
        self._report_mismatch(now, out)
        return out

    def finish(self, now: float) -> list[RecognizerEvent]:
        """End of input: complete the provisional move, if any (on a presence-only board,
        the board read as at a clock press: a move is complete, a capture that promotes with
        its captured piece swept off too)."""
        out: list[RecognizerEvent] = []
        if self._pending is not None:
            self._decide_pending(out)
        top = self._top
        if (
            self.presence_only
            and top is not None
            and top.diff
            and not self._reread(now, out, complete=True) | self._read_swept(now, out)
        ):
            self._follow(now, out)
        if self._played and not self._played[-1].final:
            self._finalise(now, out)
        return out

    def start_game(
        self, now: float, start: StartPosition | None = None, *, rotated: bool | None = None
    ) -> list[RecognizerEvent]:
        """Start a game from ``start`` (default: the variant's default start) whatever the
        board shows, e.g. when the service joins a game in progress on a board that does
        not show a start position."""
        out: list[RecognizerEvent] = []
        self._begin(
            start or self.variant.default_start(),
            self.rotated if rotated is None else rotated,
            now,
            out,
        )
        return out

    def set_promotion(self, kind: str) -> None:
        """The piece kind (``q``, ``r``, ``b``, ``n``) promotions on a presence-only board
        become from now on (one the board shows answered already keeps the kind before)."""
        kind = self._check_kind(kind)
        if kind != self._promotion:
            self._promotion_before = (self._promotion, self._last_change)
        self._promotion = kind

    def amend_promotion(self, kind: str, now: float) -> list[RecognizerEvent]:
        """The last action was a promotion to another piece than recognised (a presence-only
        board cannot see which piece was placed): correct it."""
        kind = self._check_kind(kind)
        if not self._played or self._game is None:
            raise NoPromotionError()
        last = self._played[-1]
        action = last.action.action
        if not isinstance(action, Move) or action.promotion is None:
            raise NoPromotionError()
        out: list[RecognizerEvent] = []
        if action.promotion == kind:
            return out
        wanted = Move(action.from_square, action.to_square, kind)
        self._game.undo()
        replacement = next((la for la in self._game.legal_actions() if la.action == wanted), None)
        self._game.apply(action)
        if replacement is None:
            raise NoPromotionError()
        self._replace(replacement, now, out, amend_final=True)
        return out

    def replace_action(self, ply: int, action: Action, now: float) -> list[RecognizerEvent]:
        """Action ``ply`` (1 is the game's first) was ``action``, not what was read -- e.g.
        a 20-chess drop whose kind a presence-only board guessed, corrected at the table.
        The game is taken back to before it, ``action`` made instead and the later actions
        made again, each kept as complete as it was; returns a ``Takeback`` of the actions
        from ``ply`` and the move events for them as made now.  Raises
        :class:`ReplacementError` (leaving everything as it was) when there is no action at
        ``ply`` or ``action`` or a later action would not be legal."""
        game = self._game
        count = len(self._played)
        if game is None or not 1 <= ply <= count:
            raise ReplacementError(
                f"no action at ply {ply}: the game has {count} action(s)"
                if game is not None
                else "no game in progress"
            )
        index = ply - 1
        if self._played[index].action.action == action:
            return []
        old_top, old_prev = self._top, self._prev
        saved, saved_nodes = self._take_back_from(index)
        wanted = [action, *(p.action.action for p in saved[1:])]
        problem = ""
        for made, each in enumerate(wanted):
            legal = next((la for la in game.legal_actions() if la.action == each), None)
            if legal is None:
                problem = (
                    f"{each} is not legal at ply {ply}"
                    if made == 0
                    else f"the later action {saved[made].san} (ply {ply + made}) would no "
                    "longer be legal"
                )
                break
            self._apply(legal)
        if problem:
            self._restore_from(index, saved, saved_nodes)
            self._top, self._prev = old_top, old_prev
            raise ReplacementError(problem)
        top = self._new_ref(self._nodes[-1])
        if old_top is not None:
            _copy_handling(old_top, top)
        self._top = top
        self._pending = None
        result = self._result, self._result_reason
        out: list[RecognizerEvent] = []
        self._commit_reading(index, saved, old_prev, now, out)
        if result[0] is not None and game.outcome() is None:
            # a result declared by a gesture or a claim still stands
            self._result, self._result_reason = result
        elif self._played and self._played[-1].final:
            end = game.outcome()
            if end is not None:
                self._declare(end.result, end.reason, now, out)
        logger.debug("ply %d replaced by %s", ply, self._played[index].san)
        return out

    def reconsider(self, now: float) -> list[RecognizerEvent]:
        """The game's legal actions changed without an action (a decision entered at the
        table: a 20-chess rule cast, the opponent's pick): forget what was worked out for the
        current position and read the board again (an action made before the decision was
        entered is recognised now)."""
        out: list[RecognizerEvent] = []
        if self._nodes:
            self._nodes[-1].candidates = None
        if self._top is not None:
            self._analyse(now, out)
        return out

    @property
    def clock_in_use(self) -> bool:
        return self._clock_seen if self.clock is None else self.clock

    @property
    def game(self) -> VariantGame | None:
        """The game in progress (None before a start position was seen)."""
        return self._game

    def record(self) -> GameRecord | None:
        """The game in progress as a record (provisional last move included, marked)."""
        if self._game is None:
            return None
        moves = []
        for ply, played in enumerate(self._played, start=1):
            moves.append(
                RecordedMove(
                    ply,
                    played.number,
                    played.action.side,
                    played.action.uci,
                    played.san,
                    played.final,
                    tuple(san for _, san in played.alternatives),
                )
            )
        result = self._result or "*"
        return GameRecord(
            self._game.variant.id,
            self._game.start,
            tuple(moves),
            result,
            self._game.pgn_tags(),
        )

    def records(self) -> list[GameRecord]:
        """Every game recognised so far, the one in progress last."""
        current = self.record()
        return [*self._records, *([current] if current is not None else [])]

    # -- board events --------------------------------------------------------------------

    def _decide_family(self, piece: Piece) -> None:
        if self.presence_only is None and piece not in (Piece.EMPTY, Piece.UNKNOWN):
            self.presence_only = piece is Piece.OCCUPIED
            logger.debug("board family: %s", "presence-only" if self.presence_only else "identity")
            if self.presence_only and self._nodes:
                self._view_again()

    def _view_again(self) -> None:
        """A game was started before the board's family was known (a start told before the
        board was read) and the board turns out presence-only: what the board reads for
        each position of the game is worked out again."""
        nodes = self._nodes
        self._nodes, self._counts = [], {}
        for node in nodes:
            self._push_node(_Node(node.ply, node.squares, self._view(node.squares)))
        self._top = self._new_ref(self._nodes[-1])
        self._prev = self._new_ref(self._nodes[-2]) if len(self._nodes) > 1 else None

    def _on_square(
        self, time: float, square: int, piece: Piece, out: list[RecognizerEvent]
    ) -> None:
        presence = self.presence_only
        if presence is None:
            self._decide_family(piece)
            presence = self.presence_only
        if self.rotated:
            square = 63 - square
        new = _READINGS[1 if presence else 0][piece]
        old = self._board[square]
        if new == old:
            return
        if old and old != UNREADABLE:
            known = self._known_piece(square, old) if old == OCCUPIED else old
            out.append(Lift(time, square, known))
        self._set(square, new, time)
        self._last_change = time
        if not new or new == UNREADABLE:  # a lift (or a square gone unreadable)
            self._placing = None
            if new or not self._lifted_only():
                self._analyse(time, out)
            return
        out.append(Place(time, square, new))
        self._placing = square
        if new in MAGIC_RESULTS and not self._stand_in(new):
            result, reason = MAGIC_RESULTS[new]
            self._declare(result, reason, time, out)
            return
        if (new == "K" or new == "k") and square in CENTRE and self._kings_gesture(time, out):
            return
        if presence or not self._placed_action(square, time, out):
            self._analyse(time, out)

    def _on_snapshot(self, event: BoardSnapshot, out: list[RecognizerEvent]) -> None:
        for piece in event.squares:
            self._decide_family(piece)
        presence = bool(self.presence_only)
        changed = False
        for raw, piece in enumerate(event.squares):
            square = 63 - raw if self.rotated else raw
            new = _reading(piece, presence)
            if self._board[square] != new:
                self._set(square, new, event.time)
                changed = True
        if changed:
            self._last_change = event.time
        self._placing = None
        if self._game is None or changed:
            self._analyse(event.time, out)

    def _on_lever(self, event: LeverMoved, out: list[RecognizerEvent]) -> None:
        self._clock_seen = True
        if (
            self.presence_only
            and self._top is not None
            and self._top.diff
            # a move is complete: explain it
            and not self._reread(event.time, out, complete=True) | self._read_swept(event.time, out)
        ):
            self._follow(event.time, out)
        if self._played and not self._played[-1].final:
            side = self._played[-1].action.side
            known = self._lever.get(event.high)
            if known is None:
                other = Side.RIGHT if event.high is Side.LEFT else Side.LEFT
                self._lever = {event.high: side, other: not side}
                known = side
            if known == side:
                self._finalise(event.time, out)
                return
        if self._top is not None and self._top.diff:
            self._report_mismatch(event.time, out)

    def _stand_in(self, reading: str) -> bool:
        """Whether ``reading`` is a piece of the game (a variant's stand-in) rather than a
        result piece."""
        return reading in _stand_ins(self.variant)

    def _known_piece(self, square: int, reading: str) -> str:
        if reading == OCCUPIED and self._top is not None:
            symbol = self._top.node.squares[square]
            if symbol and self._top.node.view[square] == OCCUPIED:
                return symbol
        return reading

    def _compared(self, top: _Ref) -> tuple[_Ref, ...]:
        """The references a square's change is compared with: the top one, the previous
        one and the last sure one, each once."""
        prev, sure = self._prev, self._sure
        if prev is None:
            return (top,) if sure is None or sure is top else (top, sure)
        if sure is None or sure is top or sure is prev:
            return (top, prev)
        return (top, prev, sure)

    def _set(self, square: int, reading: str, time: float) -> None:
        """The board reads ``reading`` on ``square`` from ``time`` (another reading than it
        had: a square set to what it reads is never set), and the references compared with
        it see the change: how the board differs from each, and the handling."""
        board = self._board
        before = board[square]
        board[square] = reading
        top = self._top
        if reading == EMPTY:  # a lift (the reading before was not empty)
            self._lifted_at[square] = time
            if before != UNREADABLE:
                self._occupied -= 1
            if top is None:
                return  # no game yet: nothing to compare with
            for ref in self._compared(top):
                if ref.view[square]:
                    ref.diff[square] = None
                else:
                    ref.diff.pop(square, None)
                ref.first_lift.setdefault(square, time)
                last_lift = ref.last_lift
                earlier = last_lift.get(square)
                if earlier is not None:
                    if ref.lift_before is None:
                        ref.lift_before = {}
                    ref.lift_before[square] = earlier
                last_lift[square] = time
            return
        lifted = _NEVER
        flicker = False
        if before == EMPTY:
            lifted = self._lifted_at.get(square, _NEVER)
            flicker = time - lifted <= FLICKER
        self._occupied += (reading != UNREADABLE) - (before != EMPTY and before != UNREADABLE)
        if top is None:
            return  # no game yet: nothing to compare with
        for ref in self._compared(top):
            if reading == ref.view[square]:
                ref.diff.pop(square, None)
            else:
                ref.diff[square] = None
            if flicker and ref.last_lift.get(square) == lifted:
                # a flicker is no handling
                lift_before = ref.lift_before
                earlier = None if lift_before is None else lift_before.pop(square, None)
                if earlier is None:
                    del ref.last_lift[square]
                else:
                    ref.last_lift[square] = earlier
                if ref.first_lift.get(square) == lifted:
                    del ref.first_lift[square]
                else:  # handled before: the piece settled now
                    ref.last_place[square] = time
            else:
                ref.last_place[square] = time

    # -- analysis ----------------------------------------------------------------------------

    def _analyse(self, time: float, out: list[RecognizerEvent]) -> None:
        top = self._top
        if top is None:
            found = self._find_start()
            if found is not None:
                self._begin(found[0], found[1], time, out)
            return
        if not top.diff:
            if self.presence_only:
                candidate = self._match(top)
                if candidate is not None:
                    self._advance(candidate.action, time, out)
                    return
                if self._amend_by_handling(top, time, out):
                    return
            self._explained(time, out)
            return
        prev = self._prev
        if prev is not None:
            if not prev.diff and self._takeback_fits(top):
                self._take_back(len(self._played) - 1, time, out)
                return
            last = self._played[-1]
            if not last.final or last.by_settle:
                candidate = next(
                    (
                        c
                        for c in self._matches(prev)
                        if c.action.action != last.action.action
                        and self._amend_order_fits(c, last.action, top)
                    ),
                    None,
                )
                if candidate is not None:
                    # a move completed by the settle delay on a presence-only board is
                    # replaced only by an action it is the first part of: no hand is seen
                    amends = self._amends(
                        candidate.action,
                        last.action,
                        top,
                        part_only=last.final and bool(self.presence_only),
                    ) or (last.swept and _same_origin(candidate.action, last.action))
                    if amends and not self._may_be_early_place():
                        self._amend_last(candidate.action, prev, time, out)
                        return
                    if amends or not last.final:
                        # maybe the opponent's reply seen place-before-lift: decide once
                        # the scan had time to report a lift
                        self._pending = _Pending(time, self._placing, candidate.action)
        unordered: list[_Candidate] = []
        matches = self._matches(top, unordered)
        if matches:
            if len(matches) == 1 and not unordered:  # the usual case: one action, in order
                self._advance(matches[0].action, time, out, settled=True)
                return
            self._advance(matches[0].action, time, out, _alternatives(matches), settled=True)
            self._played[-1].unseen = _unseen(matches, unordered)
            return
        found = self._find_start() if self._occupied == 32 else None
        if found is not None:
            self._begin(found[0], found[1], time, out)
            return
        if (not self.presence_only or self._occupied > top.node.count) and self._counts.get(
            self._occupied
        ):
            # a presence-only board with more pieces than the game has now: captured pieces
            # came back, which only a takeback does (no position of the game with as many
            # pieces as the board: no takeback)
            ply = self._history_match()
            if ply is not None:
                self._take_back(ply, time, out)
                return
        if (
            self.presence_only
            and self._placing is not None
            and not self._partway(top)
            and not self._reread(time, out, placed=self._placing)
        ):
            self._follow(time, out, self._placing)

    def _plain_top(self) -> _Ref | None:
        """The top position when :meth:`_analyse` would ask no more of it than a new action
        from it (None otherwise): the board is not on the previous position and the last
        action is complete (completed by the clock or the next action: nothing amends it)."""
        top = self._top
        if top is None or not top.diff or top.node is not self._nodes[-1]:
            return None
        prev = self._prev
        if prev is not None:
            if not prev.diff:
                return None
            last = self._played[-1]
            if not last.final or last.by_settle:
                return None
        return top

    def _lifted_only(self) -> bool:
        """:meth:`_analyse` after a lift, its common case (the board differs from the top
        position by lifts alone, and its count of pieces is neither a start position's 32
        nor one an earlier position had): nothing to do but work out the actions changing
        the first square lifted (for the place that completes one); False when the case is
        another (the caller analyses)."""
        top = self._plain_top()
        if top is None:
            return False
        board = self._board
        for square in top.diff:
            if board[square]:
                return False  # not lifts only
        occupied = self._occupied
        if occupied == 32 or self._counts.get(occupied):
            return False  # a start position, or an earlier one, may stand
        first = next(iter(top.diff))
        game = self._game
        assert game is not None
        if self.presence_only or type(game).board_symbol is not VariantGame.board_symbol:
            # (_matches's lifts-only case: an action that only takes pieces off)
            return not self._candidates(top.node, first).get(frozenset(top.diff))
        # what _candidates asks first, asked now for the place (the game keeps it)
        actions = game.actions_changing(first)
        if isinstance(game, ChessGame):
            return True  # every chess move sets a piece down
        for la in actions:
            for _, symbol in la.changes:
                if symbol:
                    break
            else:
                if la.changes:
                    return False  # it only takes pieces off: _matches decides
        return True

    def _placed_action(self, placed: int, time: float, out: list[RecognizerEvent]) -> bool:
        """:meth:`_analyse` after a place on a piece-identity board, its common case: the
        board reads as one legal action from the top position (the one :meth:`_matches`
        finds, with nothing to sort: an action reads exactly its changes), which is made.
        False when the case is another (the caller analyses)."""
        top = self._plain_top()
        if top is None:
            return False
        diff = top.diff
        if placed not in diff:
            return False  # set back where it stood
        game = self._game
        assert game is not None
        if type(game).board_symbol is not VariantGame.board_symbol:
            return False  # stand-in pieces: _candidate reads them
        board = self._board
        view = top.view
        count = len(diff)
        found: LegalAction | None = None
        # the actions _candidates indexes for the first square that differs (the game keeps
        # them): the candidates _matches reads the board against, in the same order
        for la in game.actions_changing(next(iter(diff))):
            changes = la.changes
            if len(changes) == 2:  # most actions: a piece from one square to another
                (one, one_symbol), (two, two_symbol) = changes
                if (
                    board[one] != one_symbol
                    or board[two] != two_symbol
                    or (one_symbol != view[one]) + (two_symbol != view[two]) != count
                ):
                    continue
            else:
                changed = 0
                for square, symbol in changes:
                    if symbol != view[square]:
                        if board[square] != symbol:
                            changed = -1  # reads otherwise
                            break
                        changed += 1
                if changed != count:
                    continue
            if found is None:
                found = la
            elif la != found:
                return False  # read the same as another: _matches sorts them
        if found is None:
            return False
        self._advance(found, time, out, settled=True)
        return True

    def _partway(self, ref: _Ref, promotions: bool = False) -> bool:
        """Whether the board is part-way through a legal action from ``ref``: every square
        where it differs reads as that action leaves it, and the action changes more
        (a piece set down before its lift is reported, a capture before the captured piece
        is taken off).  The next change will tell: nothing is read ahead yet.
        ``promotions``: through a promotion only (a pawn held while the new piece is
        fetched)."""
        diff = ref.diff
        board = self._board
        if not diff:
            return False
        for candidates in self._candidates(ref.node, next(iter(diff))).values():
            for candidate in candidates:
                key = candidate.key
                if (
                    (candidate.promotion or not promotions)  # (the cheap test first)
                    and len(key) > len(diff)
                    and all(sq in key for sq in diff)
                ):
                    readings = dict(candidate.readings)
                    if all(board[sq] == readings[sq] for sq in diff):
                        return True
        return False

    def _exchanging(self, ref: _Ref) -> bool:
        """Whether the board differs from ``ref``, the top position, only by the square the
        last action, a promotion, set its pawn down on, now empty (the pawn taken off to be
        exchanged for the new piece)."""
        diff = ref.diff
        if len(diff) != 1 or not self._played:
            return False
        move = self._played[-1].action.action
        return (
            isinstance(move, Move)
            and move.promotion is not None
            and move.to_square in diff
            and self._board[move.to_square] == EMPTY
        )

    def _follow(
        self,
        time: float,
        out: list[RecognizerEvent],
        placed: int | None = None,
        *,
        promotions: bool = True,
    ) -> bool:
        """Presence-only, no action explains the board: read ahead (:mod:`.ahead`) for the
        sequences of legal actions from the current position that end in what the board
        shows (at least two after a place, which must complete the last of them: one is
        read by the place itself), else for those from the position before a provisional
        last action that replace it; make the likeliest, naming the other captures the
        board reads the same (``promotions``: see :func:`.ahead.readings`).  Returns
        whether it did."""
        top, game = self._top, self._game
        if top is None or game is None or not top.diff:
            return False
        board = self._board
        if any(board[sq] == UNREADABLE for sq in top.diff):
            return False
        # a piece set back where it stood (knocked over as a move was made): the actions
        # read ahead from here need not set it down, no mid-move place is left to wait for
        ahead = None if placed is not None and placed not in top.diff else placed
        if placed is None:  # the board stood still: a square set back may be flipped twice
            twice = self._set_back(top)
        else:
            twice = placed if ahead is None and self._stood_empty(top, placed) else None
        found = self._readings_here(top, placed, ending=ahead, twice=twice, promotions=promotions)
        if found and (
            ahead is None
            or not found[0].rank[0]
            or self._set_back_only(top, found[0], self._landed(len(self._played) - 1))
        ):
            self._read_ahead(found, top, time, out)
            return True
        return self._follow_last(time, out, placed, promotions) or self._follow_sure(
            time, out, placed, promotions
        )

    def _readings_here(
        self,
        top: _Ref,
        placed: int | None,
        *,
        ending: int | None,
        twice: int | None = None,
        plies: int = AHEAD_PLIES,
        promotions: bool = True,
    ) -> list[Reading]:
        """Readings ahead (:mod:`.ahead`) of two actions at least from ``top``, the current
        position, to the board; none while the side not to act has not begun its reply
        (:meth:`_replied`).  ``placed``: the square whose place asks (a place gets the
        smaller budget and no gap; None: a moment of stillness); ``ending``: the place the
        readings must end with; ``twice``, ``plies``, ``promotions``: see
        :func:`.ahead.readings`."""
        game = self._game
        assert game is not None
        if not self._replied(top.node.squares, top.diff, game.sides_to_act()):
            return []
        return readings(
            game,
            top.node.view,
            list(top.diff),
            _handled(top),
            promotion=self._promotion,
            told=self._promotion_before,
            slack=SCAN_SLACK,
            shortest=2,
            placed=ending,
            twice=twice,
            budget=AHEAD_NODES if placed is None else PLACE_NODES,
            last=self._landed(len(self._played) - 1),
            gap=None if placed is not None else 0.0,
            plies=plies,
            promotions=promotions,
        )

    @staticmethod
    def _set_back_only(ref: _Ref, reading: Reading, landed: Sequence[int] = ()) -> bool:
        """Whether every square handled since ``ref`` that ``reading`` leaves unexplained
        reads as it did, holds a piece of the side of the reading's first action, or is one
        of ``landed`` (the squares the action reaching ``ref`` set a piece down on: the piece
        just moved adjusted, or a promoted pawn exchanged for its piece), and was set down
        after its last lift and before that action's piece was lifted (a piece adjusted
        before the move: no part of a move still under way)."""
        first = reading.actions[0]
        lifts = [ref.first_lift[sq] for sq, symbol in first.changes if not symbol and sq in
                 ref.first_lift]  # fmt: skip
        began = min(lifts, default=float("inf"))
        squares = ref.node.squares
        return all(
            square not in ref.diff
            and bool(squares[square])
            and (squares[square].isupper() == first.side or square in landed)
            and ref.last_lift.get(square, 0.0)
            <= ref.last_place.get(square, float("-inf"))
            <= began + SCAN_SLACK
            for square in unexplained(reading.actions, _handled(ref))
        )

    @staticmethod
    def _set_back(ref: _Ref) -> int | None:
        """Of the squares lifted and set down again since ``ref`` that read as they did, the
        one that stood empty longest (the board standing still: a piece left it and another
        was set down on it by a later move, rather than a piece knocked over and set back at
        once), else None."""
        found, longest = None, 0.0
        for square, placed in ref.last_place.items():
            lifted = ref.first_lift.get(square)
            if square not in ref.diff and lifted is not None and placed - lifted > longest:
                found, longest = square, placed - lifted
        return found

    def _passed_through(self, ref: _Ref) -> int | None:
        """Of the squares empty at ``ref`` that read empty again, the one a piece was set
        down on and lifted from since, the latest lifted (a piece came to it by one action
        and left it by a later one: several actions read from ``ref`` flip it twice), else
        None."""
        board, view = self._board, ref.node.view
        found, latest = None, _NEVER
        for square, placed in ref.last_place.items():
            lifted = ref.last_lift.get(square)
            if (
                lifted is not None
                and placed < lifted
                and lifted > latest
                and not view[square]
                and not board[square]
            ):
                found, latest = square, lifted
        return found

    def _stood_empty(self, ref: _Ref, square: int | None) -> bool:
        """Whether ``square`` read empty for a settle delay or more before it was set down
        again since ``ref`` (a piece left it and another came later, rather than a piece
        knocked over and set back at once)."""
        if square is None:
            return False
        lifted, placed = ref.first_lift.get(square), ref.last_place.get(square)
        return lifted is not None and placed is not None and placed - lifted >= self.settle

    def _replied(self, squares: SquareMap, diff: Iterable[int], sides: frozenset[Color]) -> bool:
        """Whether, in turn-based play, the board shows a square of the side not to act
        emptied since the position ``squares`` (its reply begun: no sequence of two or more
        actions without it), or play is not turn-based."""
        if len(sides) != 1:
            return True
        (side,) = sides
        board = self._board
        for square in diff:
            symbol = squares[square]
            if symbol and not board[square] and symbol.isupper() != side:
                return True
        return False

    def _within_reach(
        self, squares: SquareMap, diff: Iterable[int], plies: int = AHEAD_PLIES
    ) -> bool:
        """Whether ``plies`` actions can empty the squares of each side that the board shows
        emptied since the position ``squares``: one a side's action (two for a castling),
        each side acting every other ply."""
        board = self._board
        white = black = 0
        for square in diff:
            symbol = squares[square]
            if symbol and not board[square]:
                if symbol.isupper():
                    white += 1
                else:
                    black += 1
        most = (plies + 1) // 2 + 1
        return white <= most and black <= most

    def _follow_last(
        self, time: float, out: list[RecognizerEvent], placed: int | None, promotions: bool
    ) -> bool:
        """:meth:`_follow` from the position before a provisional last action."""
        prev = self._prev
        if prev is None or not self._played or self._played[-1].final:
            return False
        found = self._replacing_last(prev, placed, promotions=promotions)
        if not found:
            return False
        self._read_ahead(found, prev, time, out, replace=True)
        return True

    def _replacing_last(
        self, prev: _Ref, placed: int | None, plies: int = AHEAD_PLIES, *, promotions: bool = True
    ) -> list[Reading]:
        """The readings ahead from ``prev``, the position before the last action, that
        replace it (see :meth:`_follow`); ``plies``: the most actions; ``promotions``: see
        :func:`.ahead.readings`.  Once the move is complete (no place asks) an action's
        piece need only be lifted after the piece of the action before it, as reading ahead
        from the current position allows (a swept capture's lift may be seen as it lands)."""
        game, board = self._game, self._board
        assert game is not None
        if not self._played or not prev.diff:
            return []
        last = self._played[-1]
        if any(board[sq] == UNREADABLE for sq in prev.diff):
            return []
        if placed is not None and not self._replied(
            prev.node.squares, prev.diff, frozenset((last.action.side,))
        ):
            return []
        game.undo()
        try:
            found = readings(
                game,
                prev.node.view,
                list(prev.diff),
                _handled(prev),
                promotion=self._promotion,
                told=self._promotion_before,
                slack=SCAN_SLACK,
                shortest=1 if placed is None else 2,
                placed=placed,
                budget=AHEAD_NODES if placed is None else PLACE_NODES,
                not_first=last.action,
                last=self._landed(len(self._played) - 2),
                gap=None if placed is not None else 0.0,
                plies=plies,
                promotions=promotions,
            )
        finally:
            game.apply(last.action.action)
        if (
            placed is not None
            and found
            and found[0].rank[0]
            and not self._set_back_only(prev, found[0], self._landed(len(self._played) - 2))
        ):
            return []
        return found

    def _follow_sure(
        self, time: float, out: list[RecognizerEvent], placed: int | None, promotions: bool
    ) -> bool:
        """:meth:`_follow` from the position the last reading ahead started from (its
        actions were a guess: the board may now show what else happened): a takeback to it
        and the actions read from there.  Once the board stands still, a square a piece
        came to and left again since may flip twice (:meth:`_passed_through`: a king
        stepping out of check and on)."""
        sure, game, board = self._sure, self._game, self._board
        assert game is not None
        if sure is None:
            return False
        index = sure.node.ply
        count = len(self._played)
        if count - index > AHEAD_PLIES + 2 or index >= count or self._nodes[index] is not sure.node:
            self._sure = None  # the game went on, or was taken back or read again before it
            return False
        if index >= count - 1:
            return False  # the current or the previous position: tried already
        if not sure.diff or any(board[sq] == UNREADABLE for sq in sure.diff):
            return False
        attempt = (index, tuple(sure.diff), placed)
        if attempt == self._sure_failed:
            return False  # the board shows what it showed when that search found nothing
        # standing still (or at a clock press), as many actions as the window lets lie
        # between the position and the board; after a place, as reading ahead from the top
        plies = AHEAD_PLIES if placed is not None else AHEAD_PLIES + 2
        if not self._within_reach(sure.node.squares, sure.diff, plies):
            return False
        landed = self._landed(index - 1)
        saved, nodes = self._take_back_from(index)
        try:
            found = readings(
                game,
                sure.node.view,
                list(sure.diff),
                _handled(sure),
                promotion=self._promotion,
                told=self._promotion_before,
                slack=SCAN_SLACK,
                placed=placed,
                budget=AHEAD_NODES if placed is None else PLACE_NODES,
                last=landed,
                plies=plies,
                promotions=promotions,
                twice=self._passed_through(sure) if placed is None else None,
            )
        finally:
            self._restore_from(index, saved, nodes)
        if not found or (placed is not None and found[0].rank[0]):
            self._sure_failed = attempt
            return False
        self._takeback_to(index, time, out)
        self._read_ahead(found, sure, time, out)
        return True

    def _landed(self, index: int) -> tuple[int, ...]:
        """The squares action ``index`` (from 0) set a piece down on (none before the
        first)."""
        if index < 0 or index >= len(self._played):
            return ()
        return tuple(sq for sq, symbol in self._played[index].action.changes if symbol)

    def _read_ahead(
        self,
        found: Sequence[Reading],
        ref: _Ref,
        time: float,
        out: list[RecognizerEvent],
        *,
        replace: bool = False,
    ) -> None:
        """Make the likeliest of ``found`` (readings from ``ref``; ``replace``: its first
        action replaces the last one)."""
        best = found[0]
        sure = self._sure
        if (
            sure is None
            or sure.node.ply > ref.node.ply
            # (a guess too far back to read ahead from once these are made: this one's start)
            or ref.node.ply + len(best.actions) - sure.node.ply > AHEAD_PLIES + 2
        ):
            self._sure = ref
        named = other_captures(best, found)
        touched = ref.first_lift.keys() | ref.last_place.keys()
        view = ref.node.view
        logger.debug("read ahead: %s", " ".join(la.uci for la in best.actions))
        for index, (la, others) in enumerate(zip(best.actions, named, strict=True)):
            swept = any(symbol and view[sq] and sq not in touched for sq, symbol in la.changes)
            if index == 0 and replace:
                self._replace(la, time, out, others)
            else:
                unseen = self._captures_instead(la)
                recaptures = self._recaptures(la, others) if swept else ()
                self._advance(la, time, out, others, recaptures=recaptures)
                self._played[-1].unseen = tuple(c for c in unseen if c not in others)
            self._played[-1].swept = swept

    def _captures_instead(
        self, la: LegalAction, ref: _Ref | None = None
    ) -> tuple[LegalAction, ...]:
        """Presence-only: if ``la`` (legal from the top position, or from ``ref``) is a
        capture, the other captures by its piece from there (the board reads them all the
        same)."""
        top = self._top if ref is None else ref
        action = la.action
        if top is None or not isinstance(action, Move) or not top.node.view[action.to_square]:
            return ()
        return tuple(
            c.action
            for candidates in self._candidates(top.node, action.from_square).values()
            for c in candidates
            if c.same and _other_capture(action, c.action)
        )

    def _amend_last(
        self, la: LegalAction, prev: _Ref, time: float, out: list[RecognizerEvent]
    ) -> None:
        """The last action becomes ``la`` (legal from ``prev``, the position before it),
        keeping for a re-reading, unnamed, the other captures by its piece if it is a
        capture, else the captures by its piece the last action was or was read among (a
        capture whose captured piece was swept off, then an opponent's piece set down next
        to it, reads as this move and a capture of it)."""
        last = self._played[-1]
        unseen = self._captures_instead(la, prev)
        if not unseen and isinstance(la.action, Move):
            view = prev.node.view
            unseen = tuple(
                other
                for other in dict.fromkeys(
                    (last.action, *(other for other, _ in last.alternatives), *last.unseen)
                )
                if _other_capture(la.action, other) and view[_target(other)]
            )
        self._replace(la, time, out)
        self._played[-1].unseen = unseen

    def _read_swept(
        self, time: float, out: list[RecognizerEvent], *, promotions: bool = True
    ) -> bool:
        """Presence-only, a move must be complete (its side pressed the clock, or the board
        stood still for the settle delay) but the board only lacks pieces: a capture
        whose captured piece was swept off as the capturing piece landed (the captured
        square never read empty).  Read if a legal capture reads so and its captured
        square was not handled; among several, the likeliest, the others kept for a
        re-reading.  Without ``promotions``, not a capture that promotes (a pawn is held
        a while as the new piece is fetched).  Returns whether it read one."""
        top = self._top
        found = self._swept_captures(promotions)
        if top is None or not found:
            return False
        preferences = self._sort_likeliest(top, found)  # (each worked out once)
        landed = self._landed(len(self._played) - 1)
        head = preferences[id(found[0])][:3]
        again = next(
            (c for c in found if preferences[id(c)][:3] == head and set(c.same) & set(landed)),
            None,
        )
        if again is not None and again is not found[0]:
            # among captures the handling cannot tell apart, the one taking the piece that
            # just moved (most captures in a game are)
            found.remove(again)
            found.insert(0, again)
        if self._sure is None or self._sure.node.ply > top.node.ply:
            self._sure = top  # a guess: reading ahead may start again from before it
        named = _alternatives(found)
        recaptures = self._recaptures(found[0].action, named)
        self._advance(found[0].action, time, out, named, recaptures=recaptures)
        played = self._played[-1]
        played.swept = True
        logger.debug("capture read with the captured piece swept off: %s", played.san)
        return True

    def _recaptures(self, la: LegalAction, named: Sequence[LegalAction]) -> tuple[_Recapture, ...]:
        """Presence-only, ``la`` (legal from the game's position) read as a swept capture,
        the last action read among several: the captures by the piece of ``la`` that the
        game with the last action read as one of its others allows, of a piece that differs
        between the two games (the recapture of the piece that reading takes: Qd5xe5 read
        as Qxf7+, then ...Qf6xe5 swept reads as ...Qxf7), but those ``named`` already; each
        with its SAN in that game and that reading of the last action (its premise: dropped
        with it).  Its captured square may have been handled (in that game the handling
        would read it: it was legal there, not here).  The board reads them the same as
        ``la`` with the last action read that other way, and later play may fit both games:
        a screen offers them (a correction to one is legal only once the last action is
        corrected to its reading).  The game is left as it was."""
        played_list = self._played
        if not played_list or not played_list[-1].alternatives:
            return ()
        action = la.action
        if not isinstance(action, Move):
            return ()
        game = self._game
        assert game is not None
        last = played_list[-1]
        # the readings to try, each with the squares whose piece differs then, other than
        # the target (a quick test first: whether the piece reaches one on an empty board;
        # its kind by its symbol, if python-chess knows it)
        symbol = game.squares[action.from_square]
        kind = _PIECE_KINDS.get(symbol.lower()) if symbol else None
        reach = ~(1 << action.to_square)
        if kind is not None:
            reach &= piece_attacks(kind, symbol.isupper(), action.from_square, 0)
        tries = [
            (other, differ)
            for other, _ in last.alternatives
            if (differ := _followed(0, last.action, other) & reach)
        ]
        if not tries:
            return ()
        found: list[_Recapture] = []
        game.undo()
        try:
            for other, differ in tries:
                try:
                    game.apply(other.action)
                except IllegalActionError:
                    continue
                try:
                    for capture in game.actions_changing(action.from_square):
                        target = _target(capture)
                        if (
                            _other_capture(action, capture)
                            and differ >> target & 1
                            and game.squares[target]
                            and all(capture.uci != known.uci for known in named)
                            and all(capture.uci != known.uci for known, _, _ in found)
                        ):
                            found.append((capture, game.san(capture.action), other))
                finally:
                    game.undo()
        finally:
            game.apply(last.action.action)
        return tuple(found)

    def _swept_captures(self, promotions: bool) -> list[_Candidate]:
        """The legal captures from the top position that read as the board does when the
        board only lacks pieces and whose captured square was not handled (see
        :meth:`_read_swept`), in no particular order."""
        top = self._top
        if top is None or self._game is None or not top.diff:
            return []
        board = self._board
        diff = top.diff
        if any(board[sq] for sq in diff):
            return []
        pool = self._candidates(top.node, next(iter(diff))).get(frozenset(diff), ())
        return [
            c
            for c in pool
            if c.same
            and (promotions or c.promotion is None)
            and all(board[sq] == reading for sq, reading in c.readings)
            and not any(sq in top.first_lift or sq in top.last_place for sq in c.same)
        ]

    def _take_back(self, ply: int, time: float, out: list[RecognizerEvent]) -> None:
        """The board shows the position after ``ply`` actions: a takeback to it, held for a
        scan on a presence-only board when a place showed it (the place may be the next
        action's piece, set down before its lift)."""
        if self._may_be_early_place():
            self._pending = _Pending(time, self._placing, ply=ply)
        else:
            self._takeback_to(ply, time, out)

    def _match(self, ref: _Ref) -> _Candidate | None:
        """The legal action from ``ref`` that explains the board, if there is one."""
        found = self._matches(ref)
        return found[0] if found else None

    def _matches(self, ref: _Ref, unordered: list[_Candidate] | None = None) -> list[_Candidate]:
        """The legal actions from ``ref`` that explain the board, the likeliest first;
        ``unordered`` gets those that read the same but whose handling was not in order
        (see :meth:`_order_fits`)."""
        diff = ref.diff
        board = self._board
        if not any(map(board.__getitem__, diff)) and not (self.presence_only and ref.last_place):
            # only lifts: every action sets a piece down somewhere (a presence-only capture
            # sets it down on an occupied square, which needs a place since ``ref``).  Ask
            # for the candidates now all the same, so that the place completing the action
            # finds them ready (spreads the work over two events).
            if diff and ref is self._top:
                index = self._candidates(ref.node, next(iter(diff)))
                # an action that only takes pieces off (20-chess rule 19: a gift)
                return [
                    c
                    for c in index.get(frozenset(diff), ())
                    if not c.same and not any(reading for _, reading in c.readings)
                ]
            return []
        pool: Sequence[_Candidate]
        if diff:
            pool = self._candidates(ref.node, next(iter(diff))).get(frozenset(diff), ())
        else:  # only actions that change no reading (a presence-only swap)
            swaps: list[_Candidate] = []
            for square in ref.first_lift:
                if square in ref.last_place:
                    swaps += self._candidates(ref.node, square).get(_NO_SQUARES, ())
            pool = swaps
        found: list[_Candidate] = []
        for candidate in pool:
            fits = True
            for sq, reading in candidate.readings:
                if board[sq] != reading:
                    fits = False
                    break
            if not fits:
                continue
            if candidate.same and not self._order_fits(ref, candidate):
                if unordered is not None:
                    unordered.append(candidate)
                continue
            if candidate in found:
                continue
            found.append(candidate)
        if len(found) > 1:
            self._sort_likeliest(ref, found)
        return found

    def _amend_order_fits(self, new: _Candidate, old: LegalAction, top: _Ref) -> bool:
        """Presence-only: ``new`` replaces the provisional ``old`` only if the piece ``old``
        set down on a square that ``new`` leaves empty was lifted from there before ``new``'s
        occupied-but-changed squares were set down (a slid piece moves on, then captures);
        a square handled before it is the opponent touching a piece, not the capture.  Nor
        a move to an empty square whose piece was lifted (since the previous position) more
        than a scan after that square was set down: the piece set down was another's."""
        if not self.presence_only:
            return True
        action, prev = new.action.action, self._prev
        if (
            prev is not None
            and isinstance(action, Move)
            and len(new.action.changes) == 2
            and not prev.node.view[action.to_square]
        ):
            left = prev.last_lift.get(action.from_square)
            landed = prev.last_place.get(action.to_square, float("-inf"))
            if left is not None and landed + SCAN_SLACK < left:
                return False
        if not new.same:
            return True
        prev_view = self._nodes[-2].view
        changes = dict(new.action.changes)
        for square, symbol in old.changes:
            if not symbol or square in changes or prev_view[square]:
                continue
            lifted = top.first_lift.get(square)
            if lifted is None:
                return False
            for same in new.same:
                placed = top.last_place.get(same)
                if placed is None or placed + SCAN_SLACK < lifted:
                    return False
        return True

    def _amend_by_handling(self, top: _Ref, time: float, out: list[RecognizerEvent]) -> bool:
        """Presence-only, the board reads exactly like ``top``: another action from the
        previous position that reads the same may explain the handling better (king f1 to
        g1 and then the rook on h1 lifted and set on f1 while the king's square is handled
        too: castling; a pawn capture read on a knocked-over neighbour, then the real
        captured piece lifted and set down as the pawn is lifted again).  Rule: the last
        action is replaced by one whose occupied-but-changed squares were all lifted and
        set down since the last action was read, and which either explains more such
        squares or whose emptied squares were lifted again since, or which is a capture by
        the same piece as the last action, whose captured square was lifted within a scan
        of the mover's lift (:meth:`_knocked`: knocked over, not taken)."""
        prev = self._prev
        if prev is None or not self._played:
            return False
        last = self._played[-1]
        if last.final:
            return False
        prev_view = prev.node.view
        last_same = sum(1 for sq, symbol in last.action.changes if symbol and prev_view[sq])
        rejected: list[LegalAction] = []
        for candidate in self._matches(prev):
            if candidate.action.action == last.action.action or not candidate.same:
                continue
            if candidate.promotion not in (None, self._promotion):
                continue  # the player told the kind
            if (
                any(sq not in top.first_lift or sq not in top.last_place for sq in candidate.same)
                or (
                    len(candidate.same) <= last_same
                    and not last.swept
                    and any(sq not in top.first_lift for sq in candidate.emptied)
                    and not (
                        _same_origin(candidate.action, last.action)
                        and self._knocked(prev, last.action)
                    )
                )
                or not self._amend_order_fits(candidate, last.action, top)
            ):
                rejected.append(candidate.action)
                continue
            # the board reads both the same: a capture amended to another by the same piece
            # keeps the replaced one (and its others) for a re-reading
            kept = tuple(
                la
                for la in (last.action, *(other for other, _ in last.alternatives))
                if la != candidate.action and _other_capture(candidate.action.action, la)
            )
            self._replace(candidate.action, time, out, kept)
            return True
        self._keep_alternatives(last, rejected)
        return False

    def _keep_alternatives(self, played: _Played, rejected: Sequence[LegalAction]) -> None:
        """Captures by the piece of ``played``'s capture (the last action) of pieces on
        other squares, which the board read the same but the handling did not favour, kept
        for a re-reading (the capture may have been read at the mover's lift, before the
        captured square was handled)."""
        action = played.action.action
        known = [la for la, _ in played.alternatives]
        added = [
            la for la in dict.fromkeys(rejected) if _other_capture(action, la) and la not in known
        ]
        if not added:
            return
        game = self._game
        assert game is not None
        game.undo()  # their SAN is written from the position before
        sans = tuple(game.san(la.action) for la in added)
        game.apply(action)
        played.alternatives += tuple(zip(added, sans, strict=True))

    def _order_fits(self, ref: _Ref, candidate: _Candidate) -> bool:
        """Presence-only: each square that stays occupied but changes content was set down
        after every emptied or swapped square of the action was last lifted (the piece
        lands after it left its square for the last time; a piece knocked over and set back
        before the mover's last lift was not captured)."""
        for square in candidate.same:
            placed = ref.last_place.get(square)
            if placed is None or ref.first_lift.get(square) is None:
                return False
            for other in (*candidate.emptied, *candidate.same):
                if other == square:
                    continue
                lifted = ref.last_lift.get(other)
                if lifted is None or lifted > placed + SCAN_SLACK:
                    return False
        return True

    def _sort_likeliest(
        self, ref: _Ref, found: list[_Candidate]
    ) -> dict[int, tuple[int, int, int, float]]:
        """Sort actions that read the same, the likeliest first (see :meth:`_preference`);
        among captures tied on all but the time their squares were set down, the one whose
        square was lifted first comes first if every other was lifted more than a scan
        later (the captured piece comes off as the move starts, a neighbour is knocked over
        as the hand moves on); within a scan of each other the lifts tell nothing.  Returns
        the preference of each action, by ``id``."""
        preferences = {id(c): self._preference(ref, c) for c in found}
        found.sort(key=lambda c: preferences[id(c)])
        head = preferences[id(found[0])][:3]
        tied = [c for c in found if preferences[id(c)][:3] == head]
        if len(tied) < 2:
            return preferences
        taken = [c for c in tied if not (self.presence_only and self._knocked(ref, c.action))]
        if taken and len(taken) < len(tied):
            # the tied are the head of ``found``: the knocked-over readings go after the rest
            found[: len(tied)] = taken + [c for c in tied if c not in taken]
            tied = taken
            if len(tied) < 2:
                return preferences

        def lifted(candidate: _Candidate) -> float:
            return max((ref.first_lift.get(sq, 0.0) for sq in candidate.same), default=0.0)

        earliest = min(tied, key=lifted)
        if earliest is not found[0] and all(
            lifted(c) > lifted(earliest) + SCAN_SLACK for c in tied if c is not earliest
        ):
            found.remove(earliest)
            found.insert(0, earliest)
        return preferences

    @staticmethod
    def _knocked(ref: _Ref, la: LegalAction) -> bool:
        """Presence-only: whether ``la`` is a capture (a piece leaves its square and takes
        the piece on another) whose captured square was first lifted, since ``ref``, within
        a scan (:data:`SCAN_SLACK`) of a lift of the mover's square.  A move is made with
        one hand, which cannot take two pieces off two squares at once: the mover is the
        piece taken, so the other square was knocked over, not its piece captured."""
        action = la.action
        if not isinstance(action, Move) or len(la.changes) != 2:
            return False
        changes = dict(la.changes)
        if changes.get(action.from_square, "x") != EMPTY or not changes.get(action.to_square):
            return False
        if not ref.node.view[action.to_square]:
            return False  # not a capture
        taken = ref.first_lift.get(action.to_square)
        if taken is None:
            return False
        lifts = (ref.first_lift.get(action.from_square), ref.last_lift.get(action.from_square))
        return any(lift is not None and abs(taken - lift) <= SCAN_SLACK for lift in lifts)

    def _preference(self, ref: _Ref, candidate: _Candidate) -> tuple[int, int, int, float]:
        """Sort key among actions a presence-only board cannot tell apart: the chosen
        promotion kind first, then the action that explains more of the handling (a
        Chess960 castling whose king lands where its rook stood, rather than a king step),
        then the one that leaves fewer handled squares unexplained (the squares a dragged
        piece passed over belong to its move; a capture elsewhere leaves them and the
        captured square unexplained), then the capture whose square was set down first (a
        piece knocked over near the move is mostly set back after the move is made) --
        overruled by the lifts when they are far enough apart (:meth:`_sort_likeliest`)."""
        promotion = 0 if candidate.promotion in (None, self._promotion) else 1
        placed = max((ref.last_place.get(sq, 0.0) for sq in candidate.same), default=0.0)
        return promotion, -len(candidate.same), self._unexplained(ref, candidate), placed

    @staticmethod
    def _unexplained(ref: _Ref, candidate: _Candidate) -> int:
        """How many squares handled since ``ref`` the action neither changes nor passes
        over."""
        handled = ref.first_lift.keys() | ref.last_place.keys()
        explained = {sq for sq, _ in candidate.action.changes}
        action = candidate.action.action
        if isinstance(action, Move):
            explained.update(between(action.from_square, action.to_square))
        return len(handled - explained)

    def _resolve_pending(self, event: BoardEvent, out: list[RecognizerEvent]) -> None:
        """A reading held back for a scan (see :class:`_Pending`), before ``event``.  The
        analysis of a change within the scan decides instead if the change is a lift that,
        with the held place, starts a legal action from the current position (the place
        was that action's piece, set down before its lift), or a lift of the placed square
        itself (a bounce: setting it down again decides); any other change, a lever press
        or the scan passing let the held reading stand first."""
        pending = self._pending
        assert pending is not None
        if event.time - pending.time > SCAN_SLACK or isinstance(event, LeverMoved):
            self._decide_pending(out)
        elif isinstance(event, BoardSnapshot):
            self._pending = None  # the analysis of the snapshot decides
        elif isinstance(event, SquareChanged):
            lifted = None
            if event.piece is Piece.EMPTY:
                lifted = 63 - event.square if self.rotated else event.square
            if (
                pending.placed is None
                or lifted == pending.placed  # a bounce: setting it down again decides
                or (lifted is not None and self._starts_action(pending.placed, lifted))
            ):
                self._pending = None  # the analysis of the change decides
            else:
                self._decide_pending(out)

    def _may_be_early_place(self) -> bool:
        """Presence-only: whether the square just set down may be a legal action's piece
        from the current position, set down before its lift was reported (every square
        where the board differs from the position is one that action changes)."""
        placed = self._placing
        top = self._top
        if not self.presence_only or placed is None or top is None or self._game is None:
            return False
        differ = set(top.diff)
        for candidates in self._candidates(top.node, placed).values():
            for candidate in candidates:
                changes = candidate.action.changes
                if (
                    candidate.emptied
                    and (placed, EMPTY) not in changes
                    and differ.issubset(sq for sq, _ in changes)
                ):
                    return True
        return False

    def _starts_action(self, placed: int, lifted: int) -> bool:
        """Whether the board, once ``lifted`` is lifted, can be part-way through a legal
        action from the current position that empties ``lifted`` and sets a piece down on
        ``placed``: every square where it then differs from that position is one the
        action changes."""
        top = self._top
        if top is None or self._game is None:
            return False
        differ = set(top.diff)
        if top.node.view[lifted]:
            differ.add(lifted)
        else:
            differ.discard(lifted)
        for candidates in self._candidates(top.node, lifted).values():
            for candidate in candidates:
                if (
                    lifted in candidate.emptied
                    and any(sq == placed and reading for sq, reading in candidate.readings)
                    and differ.issubset(sq for sq, _ in candidate.action.changes)
                ):
                    return True
        return False

    def _decide_pending(self, out: list[RecognizerEvent]) -> None:
        """The held reading stands if the board still shows it."""
        pending = self._pending
        assert pending is not None
        self._pending = None
        if pending.action is None:
            if pending.ply < len(self._played) and tuple(self._board) == (
                self._nodes[pending.ply].view
            ):
                self._takeback_to(pending.ply, pending.time, out)
            return
        prev = self._prev
        if prev is None or not self._played:
            return
        last = self._played[-1]
        if last.final and not last.by_settle:
            return
        candidate = self._match(prev)
        if candidate is not None and candidate.action == pending.action:
            self._amend_last(pending.action, prev, pending.time, out)

    @staticmethod
    def _amends(new: LegalAction, old: LegalAction, top: _Ref, *, part_only: bool = False) -> bool:
        """Whether ``new`` can be a correction of the provisional ``old``: the hand went back
        to a square of ``old`` (a slid piece moved on, a king put on after its rook), or
        ``old`` was the first part of ``new`` (rook first, then king: castling).  With
        ``part_only``, only an action that changes every square ``old`` changed and more (a
        slow castling) may replace it.  Otherwise the board is mid-way through the
        opponent's reply, even if it happens to read like another action from the
        previous position."""
        changes = dict(new.changes)
        if part_only:
            return len(changes) > len(old.changes) and all(sq in changes for sq, _ in old.changes)
        for square, _ in old.changes:
            if square in top.first_lift or square in top.last_place:
                return True
        return all(changes.get(square) == symbol for square, symbol in old.changes)

    def _takeback_fits(self, top: _Ref) -> bool:
        """Presence-only: the board reads like the position before the last action; it is a
        takeback only if the squares that action changed without changing their occupancy
        (a captured piece put back) were handled since, or it was read as a swept capture
        (then it was a piece held in the hand, put back)."""
        if not self.presence_only or self._played[-1].swept:
            return True
        prev_view = self._nodes[-2].view
        for square, symbol in self._played[-1].action.changes:
            if symbol and prev_view[square] and square not in top.first_lift:
                return False
        return True

    def _candidates(self, node: _Node, square: int) -> _Index:
        """The legal actions from ``node`` that change ``square``, seen through the board's
        eyes and indexed by the squares whose reading they change (computed once per
        position and square)."""
        known = node.candidates
        if known is None:
            known = node.candidates = {}
        cached = known.get(square)
        if cached is not None:
            return cached
        game = self._game
        assert game is not None
        if node is self._nodes[-1]:
            actions = game.actions_changing(square)
        else:  # the previous position: step the game back for a moment
            last = self._played[-1].action.action
            game.undo()
            try:
                actions = game.actions_changing(square)
            finally:
                game.apply(last)
        presence = bool(self.presence_only)
        view = node.view
        reads: Callable[[str], str] = str  # the board reads the model's symbols as they are
        if type(game).board_symbol is not VariantGame.board_symbol:
            reads = game.board_symbol  # stand-in pieces for a variant's new kinds
        result: _Index = {}
        seen = _SEEN[presence]
        for la in actions:
            if not la.changes:  # a decision (a Choice): the table enters it, never the board
                continue
            if reads is str:
                known_la = seen.get(id(la))  # _seen, its common case inline
                if known_la is not None and known_la[0] is la and known_la[1](view) == known_la[2]:
                    candidate = known_la[3]
                else:
                    candidate = _seen(la, view, presence)
            else:
                candidate = _candidate(la, view, presence, reads)
            same_key = result.get(candidate.key)
            if same_key is None:
                result[candidate.key] = [candidate]
            else:
                same_key.append(candidate)
        known[square] = result
        return result

    def _find_start(self) -> tuple[StartPosition, bool] | None:
        if self._occupied != 32:
            return None
        board = tuple(self._board)
        for turned in (False, True):
            squares = rotated(board) if turned else board
            start = self._start_for(squares)
            if start is not None:
                if self.presence_only and start.classical:
                    turned = False  # classical occupancy looks the same both ways round
                return start, self.rotated != turned
        return None

    def _start_for(self, squares: SquareMap) -> StartPosition | None:
        if self.presence_only:
            return self._presence_starts().get(squares)
        starts = _start_index().get(squares)
        if not starts:
            return None
        for start in starts:
            if start.variant == self.variant.id:
                return start
        for start in starts:
            if start.classical and start.variant == Standard.id:
                return start
        return starts[0]

    def _presence_starts(self) -> dict[SquareMap, StartPosition]:
        classical = self._presence_start or self.variant.default_start()
        if self._presence_start is None and not classical.classical:
            # a variant with a start of its own (T20): the classical occupancy is standard
            classical = Standard().default_start()
        t20 = t20_start()
        return {occupancy(classical.squares): classical, occupancy(t20.squares): t20}

    def _history_match(self) -> int | None:
        """The latest ply, two or more actions back, whose position the board shows."""
        occupied = self._occupied
        if not self._counts.get(occupied):
            return None  # no position of the game has as many pieces as the board
        board = tuple(self._board)
        nodes = self._nodes
        for index in range(len(self._played) - 2, -1, -1):
            node = nodes[index]
            if node.count == occupied and node.view == board:
                return node.ply
        return None

    # -- changes to the game -------------------------------------------------------------

    def _view(self, squares: SquareMap) -> SquareMap:
        if self.presence_only:
            return tuple([OCCUPIED if symbol else EMPTY for symbol in squares])
        game = self._game
        if game is not None and type(game).board_symbol is not VariantGame.board_symbol:
            reads = game.board_symbol  # stand-in pieces for a variant's new kinds
            return tuple([reads(symbol) if symbol else symbol for symbol in squares])
        return squares

    def _push_node(self, node: _Node) -> None:
        if len(self._nodes) > 1:
            # only the last two positions are compared with the board: the candidates of
            # older ones are made again should a takeback return there
            self._nodes[-2].candidates = None
        self._nodes.append(node)
        counts = self._counts
        counts[node.count] = counts.get(node.count, 0) + 1

    def _pop_node(self) -> None:
        node = self._nodes.pop()
        self._counts[node.count] -= 1  # (pushed before: its count is there)

    def _new_ref(self, node: _Node) -> _Ref:
        board = self._board
        view = node.view
        if tuple(board) == view:  # the usual case, just after an action: nothing differs
            return _Ref(node, {})
        # the squares that differ, in order (compared in C: a Python loop over 64 squares
        # costs several times more)
        return _Ref(node, dict.fromkeys(itertools.compress(_SQUARES, map(ne, board, view))))

    def _apply(
        self, la: LegalAction, alternatives: tuple[LegalAction, ...] = (), count: int = -1
    ) -> _Played:
        """Make ``la`` (``alternatives``: other actions the board read the same; ``count``:
        the occupied squares after it, when known)."""
        game = self._game
        assert game is not None
        number = game.move_number()
        action = la.action
        san = game.san(action)
        named: tuple[tuple[LegalAction, str], ...] = ()
        if alternatives:
            named = tuple([(other, game.san(other.action)) for other in alternatives])
        parent = self._nodes[-1] if self.presence_only else None
        before = None if parent is None else game.squares
        scores = tuple(game.apply(action))
        played = _Played(la, san, number, scores, False, False, named)
        played_list = self._played
        played_list.append(played)
        squares = game.squares
        if parent is not None and parent.squares is before:
            view = presence_after(parent.view, la.changes)  # (what _view reads, cheaper)
        elif self.presence_only or type(game).board_symbol is not VariantGame.board_symbol:
            view = self._view(squares)
        else:
            view = squares  # (_view: the board reads the model's symbols as they are)
        self._push_node(_Node(len(played_list), squares, view, count))
        return played

    def _move_event(
        self, time: float, played: _Played, final: bool, ply: int | None = None
    ) -> MoveEvent:
        """The event for ``played``, the action at ``ply`` (default: the last one)."""
        la = played.action
        return MoveEvent(
            time,
            len(self._played) if ply is None else ply,
            played.number,
            la.side,
            la.uci,
            played.san,
            final,
            played.scores,
            _named(played),
        )

    def _advance(
        self,
        la: LegalAction,
        time: float,
        out: list[RecognizerEvent],
        alternatives: tuple[LegalAction, ...] = (),
        *,
        settled: bool = False,
        recaptures: tuple[_Recapture, ...] = (),
    ) -> None:
        """A new action from the top position (``alternatives``: see :meth:`_apply`;
        ``settled``: the board reads exactly as the action leaves it, as it does when
        :meth:`_matches` found the action from the top position; ``recaptures``: see
        :meth:`_recaptures`)."""
        played_list = self._played
        if played_list and not played_list[-1].final:
            self._finalise(time, out)
        # settled: the board reads as the new position, whose occupied squares it counts
        played = self._apply(la, alternatives, self._occupied if settled else -1)
        if recaptures:
            played.recaptures = recaptures
        if self._keep_current is not None:
            self._keep_current()
        self._prev = self._top
        node = self._nodes[-1]
        self._top = _Ref(node, {}) if settled else self._new_ref(node)
        logger.debug("action %s (%s), provisional", played.san, la.uci)
        out.append(
            MoveEvent(
                time,
                len(played_list),
                played.number,
                la.side,
                la.uci,
                played.san,
                False,
                played.scores,
                _named(played) if alternatives or recaptures else (),
            )
        )
        if self._reported:
            self._explained(time, out)

    def _replace(
        self,
        la: LegalAction,
        time: float,
        out: list[RecognizerEvent],
        alternatives: tuple[LegalAction, ...] = (),
        *,
        amend_final: bool = False,
    ) -> None:
        """The last action becomes ``la`` (made from the previous position; ``alternatives``:
        see :meth:`_apply`)."""
        game = self._game
        assert game is not None
        old = self._played.pop()
        game.undo()
        self._pop_node()
        ply = len(self._played) + 1
        if old.final and not amend_final:
            out.append(Takeback(time, ply - 1, (old.action.uci,), (True,)))
        played = self._apply(la, alternatives)
        if self._keep_current is not None:
            self._keep_current()
        self._top = self._new_ref(self._nodes[-1])
        if old.final and not amend_final:
            out.append(self._move_event(time, played, False))
        else:
            played.final = old.final
            out.append(
                Amend(
                    time,
                    ply,
                    played.number,
                    la.side,
                    old.action.uci,
                    old.san,
                    la.uci,
                    played.san,
                    played.scores,
                    _named(played),
                )
            )
        logger.debug("action %s amended to %s", old.san, played.san)
        self._explained(time, out)

    def _reread(
        self,
        time: float,
        out: list[RecognizerEvent],
        *,
        complete: bool = False,
        promotions: bool = True,
        placed: int | None = None,
    ) -> bool:
        """Presence-only, the board stands on something no action explains: an action of the
        last :data:`REREAD_PLIES` read among several readings (the board cannot tell which
        piece was captured) is read another way if then the actions since are still legal
        -- or become legal when captures read among several after it are read another way
        too (a capture read wrong makes its recapture read wrong: see :meth:`_explore`) --
        and the board shows the position after them, or after them and one or two more
        legal actions (``complete``: a move must be complete, so a capture whose captured
        piece was swept off will do, if the game as read has none; ``promotions``: see
        :meth:`_read_swept`; ``placed``: the square set down, which the last action read
        ahead must set down).  A reading is tried only if it may change the piece on a
        square handled since the last action (or, for a swept capture, on any square) or
        gives check.  Emits a takeback of the actions since the first one read again and
        the actions again, each with the readings not taken that later play allows as its
        alternatives.  Returns whether it did."""
        top = self._top
        if self._game is None or top is None or not top.diff:
            return False
        board = self._board
        swept = not any(board[sq] for sq in top.diff)
        if swept and (not complete or self._swept_captures(promotions)):
            return False  # only lifts: nothing to read yet, or the game as read explains it
        if placed is not None and self._set_back_last(placed, time, out):
            return True
        played_list = self._played
        count = len(played_list)
        low = max(count - REREAD_PLIES, 0)
        recent = played_list[low:]
        # the last REREAD_PLIES actions read among several, the last first (picked in C:
        # most actions have no other reading)
        indices = range(low, count)
        roots = [
            (index, other)
            for index in reversed(list(itertools.compress(indices, map(_ALTERNATIVES, recent))))
            for other, _ in played_list[index].alternatives
        ]
        if complete:  # the handling favoured the capture read: only once a move is made
            roots += [
                (index, other)
                for index in reversed(list(itertools.compress(indices, map(_UNSEEN, recent))))
                for other in played_list[index].unseen
            ]
        if not roots:
            return False
        seen = 0
        for square in (*top.diff, *top.first_lift, *top.last_place):
            seen |= 1 << square
        if swept:  # or a capture of a piece that differs: one the lifted pieces attack
            seen |= self._attacked(top.diff)
        tried = 0
        touches: list[tuple[int, int]] = []  # of the last actions, the last one first
        game_key: tuple[str, ...] | None = None  # the actions made, once asked for
        before: list[tuple[bool, bool]] = []  # see _try_reading
        # the move complete, a square set back may be flipped twice (see _follow)
        twice = self._set_back(top) if complete and placed is None else None
        for index, other in roots:
            if len(touches) < count - 1 - index:  # those of the actions after it, the last first
                touches += [
                    self._touches(later)
                    for later in reversed(played_list[index + 1 : count - len(touches)])
                ]
            differ = self._may_differ(index, other, touches)
            if not (
                differ & seen
                or (index == count - 1 and self._gives_check(self._played[index], other))
                or self._attacks(differ, seen)
            ):
                continue  # (a check read another way: the board shows the reply to it; a
                # piece read there attacks a handled square: a king's move to it)
            if tried == REREAD_TRIALS:
                return False
            tried += 1
            if game_key is None:
                game_key = tuple(map(_ACTION_UCI, played_list))
            combination = (
                self._explore(index, other, twice)
                if self._may_explore(index, other, game_key)
                else None
            )
            if combination is not None and self._try_reading(
                combination,
                time,
                out,
                swept=swept,
                promotions=promotions,
                placed=placed,
                before=before,
                twice=twice,
            ):
                return True
        return False

    def _set_back_last(self, placed: int, time: float, out: list[RecognizerEvent]) -> bool:
        """Presence-only, at a place no action explains: the last action, provisional, a
        capture, may be no move at all -- its piece read as lifted was the piece the action
        before it (read among several) really captured, taken off, and the piece on the
        square it was read to capture was knocked over and set back.  The action before it
        is read as its other reading that captures on the last action's square of origin
        and sets down ``placed``, the last action is dropped, if the board then shows the
        game's position.  Returns whether it did."""
        played = self._played
        count = len(played)
        if count < 2 or played[-1].final:
            return False
        move = played[-1].action.action
        if not (
            isinstance(move, Move)
            and move.from_square == placed
            and self._nodes[count - 1].squares[move.to_square]
        ):
            return False
        earlier = played[-2]
        for other in (*(la for la, _ in earlier.alternatives), *earlier.unseen):
            action = other.action
            if (
                isinstance(action, Move)
                and action.to_square == placed
                and self._try_reading(
                    {count - 2: other},
                    time,
                    out,
                    swept=False,
                    promotions=True,
                    placed=None,
                    drop_last=True,
                )
            ):
                # the board showed the game's position read so: no other reading left
                now = self._played[-1]
                now.alternatives = ()
                now.unseen = tuple(la for la in now.unseen if la != other)
                return True
        return False

    def _attacked(self, squares: Iterable[int]) -> int:
        """The squares (a bit mask) the pieces on ``squares`` attack in the game's position
        (every square for a variant python-chess does not play)."""
        game = self._game
        assert game is not None
        board = game.chess_board()
        if board is None:
            return (1 << 64) - 1
        mask = 0
        for square in squares:
            mask |= board.attacks_mask(square)
        return mask

    def _attacks(self, squares: int, targets: int) -> bool:
        """Whether a piece on one of ``squares`` attacks one of ``targets`` (bit masks) in
        the game's position (for a variant python-chess does not play: whether ``squares``
        holds any)."""
        game = self._game
        assert game is not None
        board = game.chess_board()
        if board is None:
            return bool(squares)
        for square in chess.scan_forward(squares & board.occupied):
            if board.attacks_mask(square) & targets:
                return True
        return False

    @staticmethod
    def _touches(later: _Played) -> tuple[int, int]:
        """The squares (bit masks) action ``later`` and its other readings change and set
        a piece down on (see :meth:`_may_differ`)."""
        known = later.touches
        if (
            known is not None
            and known[0] is later.alternatives
            and known[1] is later.unseen
            and known[2] is later.recaptures
        ):
            return known[3]
        # (from each reading's kept bit masks: no loop over its changes, no generators)
        _, set_down, touched, _, _ = action_bits(later.action)
        touched |= set_down
        for la in itertools.chain(
            later.unseen, map(_FIRST, later.alternatives), map(_FIRST, later.recaptures)
        ):
            _, filled, emptied, _, _ = action_bits(la)
            touched |= filled | emptied
            set_down |= filled
        later.touches = (later.alternatives, later.unseen, later.recaptures, (touched, set_down))
        return touched, set_down

    def _may_differ(
        self, start: int, other: LegalAction, touches: Sequence[tuple[int, int]]
    ) -> int:
        """The squares (a bit mask) whose piece may differ now between the game as read
        and the game with action ``start`` read as ``other`` (a later action touching such
        a square may differ too, or be read another way: the squares it and its other
        readings set a piece down on are added).  ``touches``: :meth:`_touches` of the
        actions after ``start`` at least, the last one first.  No game is made: occupancy
        is the same either way."""
        _, filled, emptied, _, _ = action_bits(self._played[start].action)
        _, other_filled, other_emptied, _, _ = action_bits(other)
        differ = (filled | other_filled) & ~(emptied | other_emptied)
        for touched, set_down in reversed(touches[: len(self._played) - 1 - start]):
            if touched & differ:
                differ |= set_down
        return differ

    @staticmethod
    def _gives_check(played: _Played, other: LegalAction) -> bool:
        """Whether ``played`` or its reading as ``other`` (one of its alternatives) gives
        check."""
        if "+" in played.san or "#" in played.san:
            return True
        uci = other.uci  # (an action equals another only with the same UCI: a cheap test first)
        return any(
            "+" in san or "#" in san
            for la, san in played.alternatives
            if la.uci == uci and la == other
        )

    def _may_explore(self, start: int, first: LegalAction, game_key: tuple[str, ...]) -> bool:
        """A quick test before :meth:`_explore`, on a python-chess board alone (a move
        pushed and popped costs little; no position of the game is made): whether some
        reading :meth:`_explore` tries keeps the actions from ``start`` on legal (the board
        is not looked at; ``game_key``: the actions made, as read).  True for a variant
        python-chess does not play.  A test that failed is not made again while the game
        still made the actions its tries went through, read among the same readings: the
        same tries fail at the same place however many actions followed (see
        :class:`_Dead`).  An answer is kept with the readings of the actions after
        ``start`` it was worked out from, and asked again once one of them was read anew
        (another reading of the last action found since)."""
        game = self._game
        assert game is not None
        board = game.chess_board()
        later = self._played[start:]
        if board is None or len(board.move_stack) < len(later):
            return True
        # whether the board reads empty the square ``first`` takes its piece to (a later
        # move of it, read from where the game as read has it, may leave from there: the
        # answer depends on it, kept apart)
        moved = first.action
        left = isinstance(moved, Move) and self._board[moved.to_square] in (EMPTY, UNREADABLE)
        uci = first.uci + "." if left else first.uci
        key = (str(start), uci, *game_key)
        readings = _readings_of(later[1:])
        known = self._explorable.get(key)
        if known is not None and _same_readings(known[1], readings):
            return known[0]
        if len(self._explorable) > 256:
            self._explorable.clear()
            self._dead.clear()
        dead = self._dead.get((start, uci))
        if dead is not None and dead.holds(game, game_key, later):
            self._explorable[key] = (False, readings)
            return False
        result, reached = self._legal_somehow(board, later, first, left)
        self._explorable[key] = (result, readings)
        if not result:
            self._dead[start, uci] = _Dead(
                game,
                game_key[: start + reached + 1],
                _readings_of(later[1 : reached + 1]),
            )
        return result

    def _legal_somehow(
        self, board: chess.Board, later: Sequence[_Played], first: LegalAction, left: bool
    ) -> tuple[bool, int]:
        """:meth:`_may_explore` on ``board`` (the game's), ``later`` the actions from the
        one read as ``first`` on (the answer depends on the game and ``left`` alone: it is
        kept), and the
        index in ``later`` of the furthest action whose readings were tried (``len(later)``
        when the answer is True; ``left``: a later move of ``first``'s piece may leave from
        where ``first`` takes it, see :func:`_from_elsewhere`)."""
        try:
            root = to_chess_move(first.action)
        except IllegalActionError:
            return True, len(later)
        # the moves of ``later`` as made on the board (the last ones of its move stack: the
        # game's, as read)
        moves = board.move_stack[-len(later) :]
        # a board set to the state before the first of them (no moves to undo one by one:
        # legality needs no move stack)
        scratch = _scratch_board(board)
        board._stack[-len(later)].restore(scratch)
        position = chess_position(scratch)
        if position is not None:
            return self._legal_stepped(position, scratch.turn, later, moves, root, left)
        nodes = changes = reached = 0

        def options(index: int, differ: int) -> list[chess.Move]:
            read = moves[index]
            found, more = _reread_moves(later[index], read, changes)
            theirs = scratch.occupied_co[not scratch.turn] & differ if more else 0
            if theirs:
                found += [
                    move
                    for move in scratch.generate_legal_moves(
                        chess.BB_SQUARES[read.from_square], theirs
                    )
                    if move.promotion == read.promotion and move not in found
                ]
            if read.from_square == moved_from and changes + 1 < REREAD_CHANGES:
                _add_from_elsewhere(found, read, root.to_square)
            if index == going_on and changes + 1 < REREAD_CHANGES:
                found += [
                    move
                    for move in scratch.generate_legal_moves(
                        chess.BB_SQUARES[read.from_square], chess.BB_ALL
                    )
                    if _goes_on(read, move) and move not in found
                ]
            return found

        def down(index: int, differ: int) -> bool:
            nonlocal nodes, changes, reached
            reached = max(reached, index)
            if index == len(later):
                return True
            read = moves[index]
            for move in [root] if index == 0 else options(index, differ):
                nodes += 1
                if nodes > REREAD_NODES:
                    return False
                if not scratch.is_legal(move):
                    continue
                changed = index > 0 and move != read
                scratch.push(move)
                changes += changed
                try:
                    if down(index + 1, _moved(differ, read, move)):
                        return True
                finally:
                    scratch.pop()
                    changes -= changed
            return False

        going_on, moved_from = _reread_extras(later, moves, root, left)
        return down(0, 0), reached

    @staticmethod
    def _legal_stepped(
        position: Position,
        turn: bool,
        later: Sequence[_Played],
        moves: Sequence[chess.Move],
        root: chess.Move,
        left: bool,
    ) -> tuple[bool, int]:
        """:meth:`_legal_somehow` stepped on bit masks (:mod:`.ahead`) from ``position``, the
        one before ``later`` (``moves``: theirs as made; ``root``: the first one read another
        way): the same tries in the same order, no python-chess ``push``."""
        nodes = changes = reached = 0

        def options(index: int, differ: int, here: Position, side: bool) -> list[chess.Move]:
            read = moves[index]
            found, more = _reread_moves(later[index], read, changes)
            theirs = here[7 if side else 6] & differ if more else 0
            if theirs:
                found += [
                    move
                    for move in legal_from(here, side, read.from_square)
                    if theirs >> move.to_square & 1
                    and move.promotion == read.promotion
                    and move not in found
                ]
            if read.from_square == moved_from and changes + 1 < REREAD_CHANGES:
                _add_from_elsewhere(found, read, root.to_square)
            if index == going_on and changes + 1 < REREAD_CHANGES:
                found += [
                    move
                    for move in legal_from(here, side, read.from_square)
                    if _goes_on(read, move) and move not in found
                ]
            return found

        def down(index: int, differ: int, here: Position, side: bool) -> bool:
            nonlocal nodes, changes, reached
            reached = max(reached, index)
            if index == len(later):
                return True
            read = moves[index]
            for move in [root] if index == 0 else options(index, differ, here, side):
                nodes += 1
                if nodes > REREAD_NODES:
                    return False
                if not is_legal(here, side, move):
                    continue
                changed = index > 0 and move != read
                changes += changed
                try:
                    if down(
                        index + 1, _moved(differ, read, move), after_move(here, move), not side
                    ):
                        return True
                finally:
                    changes -= changed
            return False

        going_on, moved_from = _reread_extras(later, moves, root, left)
        return down(0, 0, position, turn), reached

    def _explore(
        self, start: int, first: LegalAction, twice: int | None = None
    ) -> dict[int, LegalAction] | None:
        """The game stepped alone (no events or positions made): with action ``start``
        read as ``first``, the actions after it made as read, or -- each a capture read
        among several or read swept (its captured square never handled) -- read as another
        capture by the same piece (one of its other readings, or a capture of a piece that
        differs now between the two games: a recapture of the piece really taken), at most
        :data:`REREAD_CHANGES` actions read another way in all and :data:`REREAD_NODES`
        actions made, until they are all legal and the board's occupancy is the last
        position's or one or two more legal actions' from it.  A later move of the piece
        ``first`` takes elsewhere may leave from there, if the board reads it empty (see
        :func:`_from_elsewhere`); the last action, provisional, may be a slide that went on
        past where it rested (:func:`_goes_on`).  Returns the actions read another way
        (index -> reading), or None (``twice``: see :meth:`_fits`).  The game is left as it
        was."""
        game = self._game
        assert game is not None
        later = [played.action for played in self._played[start:]]
        count = len(self._played)
        for _ in later:
            game.undo()
        chosen: dict[int, LegalAction] = {start: first}
        nodes = 0
        # the squares the board reads a piece on (an unreadable one is none), once: each
        # way down that keeps the actions legal asks (bits summed in C)
        board = self._board
        seen = occupied_mask([EMPTY if reading == UNREADABLE else reading for reading in board])

        def options(index: int, differ: int) -> list[LegalAction]:
            played = self._played[index]
            found = [played.action]
            action = played.action.action
            if len(chosen) >= REREAD_CHANGES:
                return found
            if played.alternatives or played.swept or played.unseen:
                found += [la for la, _ in played.alternatives]
                found += played.unseen
                if isinstance(action, Move) and differ:
                    found += [
                        la
                        for la in game.actions_changing(action.from_square)
                        if _other_capture(action, la)
                        and differ >> _target(la) & 1
                        and la not in found
                    ]
            # (else a capture whose captured square was handled was read so)
            if isinstance(action, Move) and action.from_square == moved_from and elsewhere:
                # the first action's piece stands elsewhere in the game read again: on a
                # square the board reads empty now (it left it)
                found += [
                    la
                    for la in game.actions_changing(action.to_square)
                    if _from_elsewhere(action, la, elsewhere) and la not in found
                ]
            if index == going_on and isinstance(action, Move):
                found += [
                    la
                    for la in game.actions_changing(action.from_square)
                    if isinstance(la.action, Move)
                    and _goes_on(action, la.action)
                    and la not in found
                ]
            return found

        def down(index: int, differ: int, made: LegalAction) -> bool:
            nonlocal nodes
            if index == count:
                return self._fits(None if self._played[-1].final else made, seen, twice)
            read = self._played[index].action
            for option in [first] if index == start else options(index, differ):
                if nodes >= REREAD_NODES:
                    return False
                nodes += 1
                try:
                    game.apply(option.action)
                except IllegalActionError:
                    continue
                if option != read:
                    chosen[index] = option
                try:
                    if down(index + 1, _followed(differ, read, option), option):
                        return True
                finally:
                    game.undo()
                if index != start:
                    chosen.pop(index, None)
            return False

        # the last action, provisional, may be a slide resting on its path that went on
        going_on = count - 1 if count - 1 > start and not self._played[-1].final else -1
        # where the game as read has the first action's piece, if ``first`` puts it
        # elsewhere (on a square the board reads empty now: a later move left it)
        moved_from = elsewhere = -1
        read_first, other_first = self._played[start].action.action, first.action
        if (
            isinstance(read_first, Move)
            and isinstance(other_first, Move)
            and read_first.to_square != other_first.to_square
        ):
            moved_from = read_first.to_square
            elsewhere = 1 << other_first.to_square & ~seen
        try:
            found = down(start, 0, first)
        finally:
            for la in later:
                game.apply(la.action)
        return chosen if found else None

    def _fits(self, last: LegalAction | None, seen: int, twice: int | None = None) -> bool:
        """Whether the board's occupancy (``seen``: the squares it reads a piece on) is the
        game's position's, or one or two legal actions' from it (if none, with one emptying
        the square ``twice`` and a later one filling it again: a piece left it, another was
        set down on it), or from the position before ``last`` (the last action made, if
        still provisional) with one or two legal actions instead of it."""
        game = self._game
        assert game is not None
        now = occupied_mask(game.squares)
        differ = now ^ seen
        if not differ or search(game, now, differ, plies=REREAD_AHEAD):
            return True
        if (
            twice is not None
            and not differ >> twice & 1
            and search(game, now, differ, plies=REREAD_AHEAD, twice=1 << twice)
        ):
            return True
        if last is None:
            return False
        game.undo()
        try:
            now = occupied_mask(game.squares)
            differ = now ^ seen
            return bool(differ) and bool(
                search(game, now, differ, plies=REREAD_AHEAD, not_first=last)
            )
        finally:
            game.apply(last.action)

    def _try_reading(
        self,
        combination: Mapping[int, LegalAction],
        time: float,
        out: list[RecognizerEvent],
        *,
        swept: bool,
        promotions: bool,
        placed: int | None,
        before: list[tuple[bool, bool]] | None = None,
        twice: int | None = None,
        drop_last: bool = False,
    ) -> bool:
        """Read the actions of ``combination`` another way if that explains the board
        (see :meth:`_reread`; ``swept``: a swept capture will do; ``twice``: see
        :meth:`_ahead_of`); else leave everything as it was.  ``before``: what the game as
        read allows (kept there by the first try of a re-reading: every try starts from the
        same game and board)."""
        game = self._game
        assert game is not None
        start = min(combination)
        old_top, old_prev = self._top, self._prev
        assert old_top is not None
        # the last action, provisional, may have gone on (a slide resting on its path) in
        # the game read again, if not in the game as read
        if before:
            replaceable, aheadable = before[0]
        elif drop_last:  # the board must show the game's position read again
            replaceable = aheadable = False
        else:
            replaceable = (
                placed is None
                and old_prev is not None
                and not self._played[-1].final
                and not self._replacing_last(old_prev, None)
            )
            # nor may reading ahead explain the board in the game read again if it does in
            # the game as read (which a reading ahead then makes)
            aheadable = not self._ahead_of(old_top, placed, twice)
            if before is not None:
                before.append((replaceable, aheadable))
        saved, saved_nodes = self._take_back_from(start)
        applied = 0
        for index, played in enumerate(saved[: len(saved) - drop_last], start):
            chosen = combination.get(index)
            if chosen is None:
                others = tuple(la for la, _ in played.alternatives)
                reading = game.legal_action(played.action.action)
                move = None if reading is None else reading.action
                if played.swept and isinstance(move, Move):
                    # the other captures by its piece the board reads the same, now legal
                    others += tuple(
                        la
                        for la in game.actions_changing(move.from_square)
                        if _other_capture(move, la)
                        and game.squares[_target(la)]
                        and la not in others
                    )
            else:
                others = tuple(
                    la
                    for la in (played.action, *(la for la, _ in played.alternatives))
                    if la != chosen
                )
                reading = chosen if index == start else game.legal_action(chosen.action)
            if reading is None:
                break
            kept = tuple(
                la for la in (game.legal_action(other.action) for other in others) if la is not None
            )
            # a swept capture after an action read among several: its recaptures again
            recaptures = self._recaptures(reading, kept) if played.swept else ()
            self._apply(reading, kept).recaptures = recaptures
            applied += 1
        if applied == len(saved) - drop_last:
            top = self._new_ref(self._nodes[-1])
            _copy_handling(old_top, top)
            self._top = top
            if drop_last and top.diff:
                self._restore_from(start, saved, saved_nodes)
                self._top, self._prev = old_top, old_prev
                return False
            unordered: list[_Candidate] = []
            matches = self._matches(top, unordered) if top.diff else []
            found: list[Reading] = []
            replace = False
            if top.diff and not matches and not (swept and self._swept_captures(promotions)):
                found = self._ahead_of(top, placed, twice) if aheadable else []
                if not found and replaceable and len(self._nodes) > 1:
                    prev = self._new_ref(self._nodes[-2])
                    if old_prev is not None:
                        _copy_handling(old_prev, prev)
                    found = self._replacing_last(prev, placed, REREAD_AHEAD)
                    replace = bool(found)
                if not found:
                    self._restore_from(start, saved, saved_nodes)
                    self._top, self._prev = old_top, old_prev
                    return False
            then = [c.action.action for c in matches[:1]]
            then += [la.action for la in found[0].actions] if found and not replace else []
            # the last of them, made at a place, is provisional: a slide resting on its path
            # may go on, so it disproves only what no move of its piece on along the same
            # line allows until it is final (_finalise)
            loose = placed is not None and bool(then)
            for index in combination:
                self._drop_disproved(index, then, loose=loose)
            self._recheck = tuple(combination) if loose else ()
            for earlier, played in itertools.pairwise(self._played[start:]):
                if played.recaptures:  # (named while the reading before them is)
                    allowed = {la for la, _ in earlier.alternatives}
                    played.recaptures = tuple(r for r in played.recaptures if r[2] in allowed)
            self._commit_reading(start, saved, old_prev, time, out)
            sure = self._sure
            if (
                old_prev is not None
                and old_prev.node is self._nodes[start]
                and (
                    sure is None
                    or sure.node.ply > start
                    or len(self._played) - sure.node.ply > AHEAD_PLIES + 2
                )
            ):
                # the actions read again are a guess too: reading ahead may start again
                # from before them (the position before the last action as read, with the
                # handling seen since)
                self._sure = old_prev
            if matches:
                self._advance(matches[0].action, time, out, _alternatives(matches))
                self._played[-1].unseen = _unseen(matches, unordered)
            elif found and replace:
                assert self._prev is not None
                self._read_ahead(found, self._prev, time, out, replace=True)
            elif found:
                self._read_ahead(found, self._top, time, out)
            return True
        self._restore_from(start, saved, saved_nodes)
        self._top, self._prev = old_top, old_prev
        return False

    def _drop_disproved(self, index: int, then: Sequence[Action], *, loose: bool = False) -> None:
        """Drop the other readings of action ``index`` that the actions after it and
        ``then`` (about to be made) disprove (one of them is not legal read so, nor read as
        another capture by the same piece of a piece that differs: its recapture, see
        :meth:`_legal_after`; ``loose``: the last of ``then`` is provisional, a slide that
        may go on): a screen offers only what may have been, and a later
        re-reading tries only what is kept."""
        game = self._game
        assert game is not None
        played = self._played[index]
        if not played.alternatives:
            return
        later = [p.action.action for p in self._played[index:]]
        for _ in later:
            game.undo()
        kept = []
        try:
            for other, san in played.alternatives:
                try:
                    game.apply(other.action)
                except IllegalActionError:
                    continue
                try:
                    differ = _followed(0, played.action, other)
                    if self._legal_after(
                        (*later[1:], *then), differ, REREAD_CHANGES - 1, loose=loose
                    ):
                        kept.append((other, san))
                finally:
                    game.undo()
        finally:
            for action in later:
                game.apply(action)
        played.alternatives = tuple(kept)

    def _legal_after(
        self, actions: Sequence[Action], differ: int, changes: int, *, loose: bool = False
    ) -> bool:
        """Whether ``actions`` can be made one after the other from the game's position,
        each as read or -- a capture made illegal by an action read another way before it
        -- as a capture by the same piece of a piece that differs (``differ``, a bit mask: the
        recapture of the piece really taken), at most ``changes`` of them so (``loose``: the
        last one, provisional, may be a move of its piece on along the same line, one it
        rested on the way of).  The game is left as it was."""
        if not actions:
            return True
        game = self._game
        assert game is not None
        action, rest = actions[0], actions[1:]
        if loose and not rest and isinstance(action, Move):
            # its piece may rest there on its way on along the same line
            origin, rested = action.from_square, action.to_square
            return any(
                isinstance(la.action, Move)
                and la.action.from_square == origin
                and (
                    la.action.to_square == rested
                    or rested in between(origin, la.action.to_square)
                )
                for la in game.actions_changing(origin)
            )
        try:
            game.apply(action)
        except IllegalActionError:
            pass
        else:
            try:
                if not isinstance(action, Move):
                    return self._legal_after(rest, differ, changes, loose=loose)
                emptied, filled = 1 << action.from_square, 1 << action.to_square
                carried = differ & emptied
                differ &= ~(emptied | filled)
                return self._legal_after(
                    rest, differ | filled if carried else differ, changes, loose=loose
                )
            finally:
                game.undo()
        if not changes or not isinstance(action, Move) or not game.squares[action.to_square]:
            return False  # (only a capture reads as another capture)
        for la in game.actions_changing(action.from_square):
            if not (_other_capture(action, la) and differ >> _target(la) & 1):
                continue
            game.apply(la.action)
            try:
                moved = differ | 1 << action.to_square | 1 << _target(la)
                if self._legal_after(
                    rest, moved & ~(1 << action.from_square), changes - 1, loose=loose
                ):
                    return True
            finally:
                game.undo()
        return False

    def _ahead_of(self, top: _Ref, placed: int | None, twice: int | None = None) -> list[Reading]:
        """Readings ahead (:mod:`.ahead`) of two actions at most from ``top``, the current
        position, to the board (see :meth:`_follow`; ``twice``: see
        :func:`.ahead.readings`), for a game read again."""
        if any(self._board[sq] == UNREADABLE for sq in top.diff):
            return []
        found = self._readings_here(top, placed, ending=placed, twice=twice, plies=REREAD_AHEAD)
        if found and placed is not None and found[0].rank[0]:
            return []
        return found

    def _take_back_from(self, index: int) -> tuple[list[_Played], list[_Node]]:
        """Take the actions from ``index`` on back (to try another reading of them); returns
        them and their nodes for :meth:`_restore_from`."""
        game = self._game
        assert game is not None
        saved, saved_nodes = self._played[index:], self._nodes[index + 1 :]
        for _ in saved:
            self._played.pop()
            game.undo()
            self._pop_node()
        return saved, saved_nodes

    def _restore_from(self, index: int, saved: list[_Played], nodes: list[_Node]) -> None:
        """Undo whatever was tried from ``index`` on and make the saved actions again."""
        game = self._game
        assert game is not None
        for _ in range(len(self._played) - index):
            self._played.pop()
            game.undo()
            self._pop_node()
        for played, node in zip(saved, nodes, strict=True):
            game.apply(played.action.action)
            self._played.append(played)
            self._push_node(node)

    def _commit_reading(
        self,
        index: int,
        saved: Sequence[_Played],
        old_prev: _Ref | None,
        time: float,
        out: list[RecognizerEvent],
    ) -> None:
        """Events for the actions from ``index`` read again (their completion kept)."""
        if self._keep_current is not None:
            self._keep_current()
        out.append(
            Takeback(
                time,
                index,
                tuple(p.action.uci for p in reversed(saved)),
                tuple(p.final for p in reversed(saved)),
            )
        )
        # (a last action dropped in the reading: see _set_back_last)
        kept = saved[: len(self._played) - index]
        for ply, (played, old) in enumerate(
            zip(self._played[index:], kept, strict=True), start=index + 1
        ):
            played.final = old.final
            played.by_settle = old.by_settle
            played.swept = old.swept
            played.unseen = old.unseen
            out.append(self._move_event(time, played, played.final, ply))
        if len(self._nodes) > 1:
            self._prev = self._new_ref(self._nodes[-2])
            if old_prev is not None:
                _copy_handling(old_prev, self._prev)
        self._result = None
        logger.debug("read again from ply %d: %s", index + 1, " ".join(p.action.uci for p in saved))
        self._explained(time, out)

    def _takeback_to(self, ply: int, time: float, out: list[RecognizerEvent]) -> None:
        game = self._game
        assert game is not None
        undone = []
        old_top, old_prev = self._top, self._prev
        while len(self._played) > ply:
            played = self._played.pop()
            game.undo()
            self._pop_node()
            undone.append(played)
        self._top = self._new_ref(self._nodes[-1])
        if (
            self.presence_only
            and old_prev is not None
            and old_top is not None
            and old_prev.node is self._nodes[-1]
        ):
            # one action taken back: the handling seen since the position is the board's
            # still (a piece left a square and another was set down on it may be what the
            # action read was: see _set_back)
            _copy_handling(old_prev, self._top)
            _copy_handling(old_top, self._top)
            self._top.first_lift.update(old_prev.first_lift)  # (the earlier lift first)
        self._prev = self._new_ref(self._nodes[-2]) if len(self._nodes) > 1 else None
        self._result = None
        out.append(
            Takeback(time, ply, tuple(p.action.uci for p in undone), tuple(p.final for p in undone))
        )
        logger.debug("took back %d action(s) to ply %d", len(undone), ply)
        self._explained(time, out)

    def _finalise(
        self, time: float, out: list[RecognizerEvent], *, by_settle: bool = False
    ) -> None:
        played = self._played[-1]
        played.final = True
        played.by_settle = by_settle
        if self._recheck:
            for index in self._recheck:
                if index < len(self._played) - 1:
                    self._drop_disproved(index, ())
            self._recheck = ()
        out.append(self._move_event(time, played, True))
        game = self._game
        assert game is not None
        end = game.outcome()
        if end is not None and self._result is None:
            self._declare(end.result, end.reason, time, out)

    def _begin(
        self, start: StartPosition, turned: bool, time: float, out: list[RecognizerEvent]
    ) -> None:
        if self._played and not self._played[-1].final:
            self._finalise(time, out)
        current = self.record()
        if current is not None and (current.moves or current.result != "*"):
            self._records.append(current)
        if turned != self.rotated:
            self.rotated = turned
            self._board.reverse()
        variant = variant_for_start(self.variant, start)
        game = self._game = variant.new_game(start)
        self._keep_current = game.keep_current if isinstance(game, ChessGame) else None
        if self._keep_current is not None:
            self._keep_current()
        self._played = []
        self._nodes = []
        self._counts = {}
        squares = self._game.squares
        self._push_node(_Node(0, squares, self._view(squares)))
        self._top = self._new_ref(self._nodes[0])
        self._prev = None
        self._sure = None
        self._result = None
        self._reported = ()
        out.append(NewGame(time, variant.id, start.fen, start.number, self.rotated))
        logger.debug("new game: %s, rotated=%s", start.name, self.rotated)

    def _declare(self, result: str, reason: str, time: float, out: list[RecognizerEvent]) -> None:
        if self._game is None or (self._result == result and self._result_reason == reason):
            return
        self._result = result
        self._result_reason = reason
        out.append(Result(time, result, reason))

    def _kings_gesture(self, time: float, out: list[RecognizerEvent]) -> bool:
        board = self._board
        if self._game is None or board.count("K") != 1 or board.count("k") != 1:
            return False
        white = next((sq for sq in CENTRE if board[sq] == "K"), None)
        black = next((sq for sq in CENTRE if board[sq] == "k"), None)
        if white is None or black is None:
            return False
        if self._played and not self._played[-1].final:
            last = self._played[-1].action
            moved_king = any(symbol in ("K", "k") for _, symbol in last.changes)
            if moved_king:
                self._takeback_to(len(self._played) - 1, time, out)
        light = (white in LIGHT_CENTRE) + (black in LIGHT_CENTRE)
        result = "1-0" if light == 2 else "0-1" if light == 0 else "1/2-1/2"
        self._declare(result, "kings", time, out)
        return True

    # -- mismatches ----------------------------------------------------------------------

    def _explained(self, time: float, out: list[RecognizerEvent]) -> None:
        if self._reported:
            self._reported = ()
            out.append(Mismatch(time, (), ()))

    def _report_mismatch(self, time: float, out: list[RecognizerEvent]) -> None:
        # the same board against the same positions: the same answer (a board left in a
        # mismatch, e.g. pieces moved about after a game, is asked at every tick)
        key = (tuple(self._board), self._top, self._nodes[-1], self.presence_only)
        kept = self._nearest
        if kept is not None and kept[0] == key:
            squares = kept[1]
        else:
            squares = self._nearest_difference()
            self._nearest = (key, squares)
        if squares and squares != self._reported:
            self._reported = squares
            board_squares = tuple(sorted(63 - sq for sq in squares)) if self.rotated else squares
            out.append(Mismatch(time, squares, board_squares))

    def _nearest_difference(self) -> tuple[int, ...]:
        """The squares where the board differs from the nearest explainable position: the
        current one, or the current one plus one legal action.  Only an action changing a
        differing square can leave fewer squares wrong (any other one adds its own), so for
        a small difference only those are asked for."""
        top = self._top
        game = self._game
        assert top is not None
        assert game is not None
        best = set(top.diff)
        board = self._board
        presence = bool(self.presence_only)
        actions: Iterable[LegalAction]
        if len(top.diff) > _FEW_SQUARES:
            actions = game.legal_actions()
        else:
            actions = dict.fromkeys(la for sq in top.diff for la in game.actions_changing(sq))
        for la in actions:
            wrong = set(top.diff)
            for sq, symbol in la.changes:
                wrong.discard(sq)
                after = (OCCUPIED if symbol else EMPTY) if presence else game.board_symbol(symbol)
                if board[sq] != after:
                    wrong.add(sq)
            if len(wrong) < len(best):
                best = wrong
        return tuple(sorted(best))

    @staticmethod
    def _check_kind(kind: str) -> str:
        kind = kind.lower()
        if kind not in PROMOTION_KINDS:
            raise InvalidPromotionError(kind)
        return kind


def recognize(
    events: Iterable[BoardEvent],
    *,
    variant: str | Variant = STANDARD_ID,
    presence_only: bool | None = None,
    clock: bool | None = None,
    settle: float = DEFAULT_SETTLE,
    promotion: str = "q",
    start: StartPosition | None = None,
) -> tuple[list[RecognizerEvent], list[GameRecord]]:
    """Run a whole stream of board events through a new :class:`Recognizer` (the keyword
    arguments are its own), ticking at every event's time and completing the last move at
    the end.  Returns every emitted event and every recognised game, for
    ``dgt-service recognize`` and for tests."""
    recognizer = Recognizer(
        variant=variant,
        presence_only=presence_only,
        clock=clock,
        settle=settle,
        promotion=promotion,
        start=start,
    )
    out: list[RecognizerEvent] = []
    last = 0.0
    for event in events:
        out += recognizer.tick(event.time)
        out += recognizer.feed(event)
        last = event.time
    out += recognizer.tick(last + recognizer.settle)
    out += recognizer.finish(last + recognizer.settle)
    return out, recognizer.records()
