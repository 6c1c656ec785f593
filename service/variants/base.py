"""The interface every variant implements, and the value types it speaks in.

A variant is two things: a :class:`Variant` (the rules: which start positions it knows and
how to start a game) and a :class:`VariantGame` (one game in progress: who may act now,
what they may do, what an action changes on the board, what it scores, and when the game
is over).  The move recogniser talks only to these two classes, so a new variant needs no
change there.

The interface deliberately assumes little:

- an *action* is a :data:`Action` -- a :class:`Move` (from, to, optional promotion), a
  :class:`Drop` (a piece from outside onto a square), a :class:`Swap` (two pieces
  exchange squares), a :class:`Tandem` (two pieces move as one action), a :class:`Remove`
  (a piece leaves the board without a capture) or a :class:`Choice` (a decision the board
  cannot show, supplied by the table or the admin API); a turn may consist of several
  actions;
- the sides allowed to act are a *set* (empty when the game is over, both sides in a game
  without turns);
- square contents are *piece symbols*, plain strings: the FEN letters for the twelve
  standard pieces (upper case White, lower case Black) and any other string for new kinds;
  :data:`EMPTY` is the empty square;
- each legal action carries the squares it changes and their new contents
  (:attr:`LegalAction.changes`), so a caller compares the physical board with the expected
  one without knowing the rules.

Squares are python-chess numbers, 0 = a1 ... 63 = h8, White at the bottom.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import chess

Color = bool
"""A side: :data:`chess.WHITE` (True) or :data:`chess.BLACK` (False)."""

WHITE: Color = chess.WHITE
BLACK: Color = chess.BLACK

EMPTY = ""
"""The symbol of an empty square."""

STANDARD_ID = "standard"
"""The id of standard chess: the variant a classical set-up means unless a table's variant
takes it (:attr:`Variant.plays_classical_start`)."""

SquareMap = tuple[str, ...]
"""Contents of the 64 squares, index = square number, :data:`EMPTY` for an empty square."""


class VariantError(Exception):
    """Base of the errors raised by variants."""


class VariantOptionsError(VariantError, ValueError):
    """Options a variant does not take (:meth:`Variant.from_options`)."""


class NoDecisionError(VariantError, ValueError):
    """:meth:`VariantGame.decide` when no decision the board cannot show is due."""


class UnknownVariantError(VariantError, ValueError):
    """No variant with that id is registered."""

    def __init__(self, variant_id: str, known: Sequence[str]) -> None:
        super().__init__(
            f"unknown variant {variant_id!r}: choose one of {', '.join(sorted(known))}"
        )
        self.variant_id = variant_id


class IllegalActionError(VariantError, ValueError):
    """An action that is not legal in the current position."""

    def __init__(self, action: Action, position: str | Callable[[], str]) -> None:
        """``position``: where, or how to tell where when the message is asked for (a
        recogniser tries many actions that turn out illegal and never reads why: a FEN
        written for each would cost more than the try)."""
        super().__init__()
        self.action = action
        self._position = position

    def __str__(self) -> str:
        position = self._position
        if not isinstance(position, str):
            position = self._position = position()
        return f"{self.action} is not legal in {position}: pick one of legal_actions()"


class UnknownStartError(VariantError, ValueError):
    """A start position the variant does not know."""


class NothingToUndoError(VariantError, IndexError):
    """``undo()`` at the start of a game."""

    def __init__(self) -> None:
        super().__init__("no action to undo: the game is at its start position")


# -- actions ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Move:
    """A piece goes from one square to another (capturing what stands there, if anything).

    ``promotion`` is the lower-case kind letter of the new piece (``"q"``, ``"n"``, or a new
    kind's letter).  Castling is a move too, encoded as the variant's notation encodes it
    (python-chess: king to its destination in standard chess, king takes own rook in
    Chess960)."""

    from_square: int
    to_square: int
    promotion: str | None = None

    def __str__(self) -> str:
        promo = self.promotion or ""
        return f"{chess.square_name(self.from_square)}{chess.square_name(self.to_square)}{promo}"


@dataclass(frozen=True, slots=True)
class Drop:
    """A piece from outside the board (a captured piece, a new kind) is set on ``square``;
    ``piece`` is its symbol, colour included."""

    piece: str
    square: int

    def __str__(self) -> str:
        return f"{self.piece}@{chess.square_name(self.square)}"


@dataclass(frozen=True, slots=True)
class Swap:
    """Two pieces exchange their squares."""

    first: int
    second: int

    def __str__(self) -> str:
        return f"{chess.square_name(self.first)}<>{chess.square_name(self.second)}"


@dataclass(frozen=True, slots=True)
class Tandem:
    """Two pieces of one side move as a single action (20-chess rules 17 and 20).

    The moves are made one after the other, ``moves[1]`` from the position after
    ``moves[0]``; the board only has to show the position after both."""

    moves: tuple[Move, Move]

    def __str__(self) -> str:
        return "&".join(str(move) for move in self.moves)


@dataclass(frozen=True, slots=True)
class Remove:
    """The piece on ``square`` leaves the board without being captured (20-chess rule 19:
    it is given to the opponent)."""

    square: int

    def __str__(self) -> str:
        return f"-{chess.square_name(self.square)}"


@dataclass(frozen=True, slots=True)
class Choice:
    """A decision the board cannot show: ``what`` is the question (e.g. ``"piece"``,
    ``"rule"``), ``value`` the answer (e.g. ``"n"``, ``"12"``).  Its
    :attr:`LegalAction.changes` are empty: a recogniser never sees it, the table or the
    admin API applies it."""

    what: str
    value: str

    def __str__(self) -> str:
        return f"{self.what}={self.value}"


Action = Move | Drop | Swap | Tandem | Remove | Choice


@dataclass(frozen=True, slots=True)
class LegalAction:
    """An action a side may take now, with what it does to the board.

    ``changes`` lists exactly the squares whose content differs after the action, each with
    its new content (:data:`EMPTY` when it is emptied), in no particular order.  A
    Chess960 castling where king and rook swap squares changes two squares; one where only
    the rook moves changes two; an en passant capture changes three."""

    action: Action
    side: Color
    changes: tuple[tuple[int, str], ...]
    uci: str

    @property
    def changed_squares(self) -> frozenset[int]:
        return frozenset(square for square, _ in self.changes)


# -- results ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ScoreEvent:
    """Points an action (or a time-out) earns or costs a side."""

    side: Color
    points: int
    reason: str  # "capture", "check", "checkmate", "promotion", "time-out"


@dataclass(frozen=True, slots=True)
class GameEnd:
    """How a game ended: ``result`` in PGN form (``"1-0"``, ``"0-1"``, ``"1/2-1/2"``)."""

    result: str
    reason: str  # "checkmate", "stalemate", "time-out", "twenty moves", ...
    winner: Color | None
    scores: Mapping[Color, int] = field(default_factory=dict)


def result_string(winner: Color | None) -> str:
    """The PGN result for a winner (None = draw)."""
    if winner is None:
        return "1/2-1/2"
    return "1-0" if winner == WHITE else "0-1"


# -- start positions ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StartPosition:
    """A start position a variant recognises on the board.

    ``number`` is the Chess960 (Scharnagl) number where there is one (518 is the classical
    start); ``classical`` says whether it is the classical set-up, for which a PGN needs no
    SetUp/FEN tags."""

    variant: str
    fen: str
    squares: SquareMap
    number: int | None = None
    classical: bool = False

    @property
    def name(self) -> str:
        if self.number is not None:
            return f"{self.variant} #{self.number}"
        return self.variant


def occupancy(squares: SquareMap) -> SquareMap:
    """The same map as a presence-only board sees it: ``"*"`` for any piece."""
    return tuple("*" if symbol else EMPTY for symbol in squares)


def rotated(squares: Sequence[str]) -> SquareMap:
    """The map seen from the other side of the board (square ``s`` becomes ``63 - s``)."""
    return tuple(reversed(squares))


@dataclass(frozen=True, slots=True)
class TimeOutRule:
    """A variant's own time-out rule (:meth:`VariantGame.flag` applies it): ``article`` is
    cited by the arbiter's ruling, ``message`` is its text."""

    article: str
    message: str


# -- the interface ------------------------------------------------------------------------


class Variant(ABC):
    """The rules of one variant: its start positions and a factory of games."""

    id: ClassVar[str]
    """Registry id, e.g. ``"standard"``."""
    name: ClassVar[str]
    """What the variant is called, e.g. ``"Standard chess"``."""
    pgn_name: ClassVar[str]
    """Value of the PGN ``Variant`` tag (``"Standard"`` for standard chess)."""

    # -- optional features: each has the neutral value of a variant without it --------------

    plays_classical_start: ClassVar[bool] = False
    """A classical set-up (the standard start position) starts a game of this variant at a
    table set to it, rather than a game of standard chess (Chess960 #518, 20-chess)."""
    chess960: ClassVar[bool] = False
    """Castling is written as Chess960 writes it (X-FEN castling letters, the king takes its
    own rook): a FEN of the variant is read with ``chess.Board(fen, chess960=True)``."""
    accepts_start_fen: ClassVar[bool] = True
    """A table may start the variant from a position given as FEN (20-chess always starts
    from the classical position)."""
    moves_correctable: ClassVar[bool] = True
    """A move of the record may be corrected by the arbiter's command (the game replayed
    with it); False where a part is several actions and decisions (20-chess: they are
    taken back on the board instead)."""
    drops_from_hand: ClassVar[bool] = False
    """Captured pieces are dropped back from a hand (20-chess rules 4-6): the kind of a
    drop a presence-only board read may be corrected (:meth:`VariantGame.hand`)."""
    time_out: ClassVar[TimeOutRule | None] = None
    """The variant's own time-out rule (Chess T20: 50 points to the opponent, the higher
    score wins), applied under every rule set: the flag fall is declared even where the
    rule set leaves it to a real clock or to the opponent's claim.  None: the rule set's
    flag rule applies."""
    stand_ins: Mapping[Color, str] = {}  # read only (a dict: a mappingproxy does not pickle)
    """For new piece kinds played with stand-in pieces: the symbol a piece-identity board
    reads for each side's stand-in (20-chess: a spare queen by default).  Empty for
    variants with the standard pieces only."""

    @classmethod
    def from_options(cls, text: str | None) -> Variant:
        """The variant built from a table's options text (20-chess: ``schedule=12,13 cast
        stand-ins=special``).  Raises :class:`VariantOptionsError` (a ``ValueError``) for
        options the variant does not take (here: any)."""
        if text:
            raise VariantOptionsError(f"variant {cls.id} takes no options")
        return cls()

    @abstractmethod
    def start_positions(self) -> Sequence[StartPosition]:
        """Every start position the variant recognises, the default one first."""

    def default_start(self) -> StartPosition:
        return self.start_positions()[0]

    @abstractmethod
    def new_game(self, start: StartPosition | None = None) -> VariantGame:
        """A game from ``start`` (the default start if None)."""

    def _check_start(self, start: StartPosition | None) -> StartPosition:
        if start is None:
            return self.default_start()
        if start.variant != self.id and start.squares not in {
            s.squares for s in self.start_positions()
        }:
            raise UnknownStartError(
                f"{start.name} is not a start position of {self.id}: "
                f"pass one of {self.id}'s start_positions()"
            )
        return start


class VariantGame(ABC):
    """One game in progress."""

    variant: Variant
    start: StartPosition

    def __reduce__(self) -> tuple[Callable[..., VariantGame], tuple[Variant, StartPosition], Any]:
        """A game pickles (a read replica pickles the tables) as its variant's new game from
        its start, with its state set over it: the compiled build's ``__new__`` runs
        ``__init__``, whose arguments only the variant knows (:meth:`Variant.new_game`)."""
        return _new_game, (self.variant, self.start), self.__getstate__()

    @property
    @abstractmethod
    def squares(self) -> SquareMap:
        """What stands on each square now."""

    @abstractmethod
    def sides_to_act(self) -> frozenset[Color]:
        """The sides allowed to act now: one side in turn-based chess, both in a game without
        turns, none when the game is over."""

    @abstractmethod
    def legal_actions(self) -> Sequence[LegalAction]:
        """Every action a side in :meth:`sides_to_act` may take now.  Physically possible
        actions only: rules that depend on elapsed time belong to the arbiter."""

    def actions_changing(self, square: int) -> Sequence[LegalAction]:
        """The legal actions whose :attr:`~LegalAction.changes` include ``square``.

        A caller that knows one square an action must change (the recogniser knows the
        squares that differ from the expected position) asks for those actions only; a
        variant that can generate them faster than all of :meth:`legal_actions` overrides
        this."""
        return [a for a in self.legal_actions() if any(sq == square for sq, _ in a.changes)]

    def legal_action(self, action: Action) -> LegalAction | None:
        """``action`` as a legal action now, if it is legal (else None): looked for among
        the actions changing the square a move leaves first (far fewer to work out than
        all of them; a Chess960 castling may leave the king where it stands).  A variant
        that can test one action for less overrides this."""
        if isinstance(action, Move):
            found = next(
                (la for la in self.actions_changing(action.from_square) if la.action == action),
                None,
            )
            if found is not None or self.squares[action.from_square] not in ("K", "k"):
                return found
        return next((la for la in self.legal_actions() if la.action == action), None)

    @abstractmethod
    def san(self, action: Action) -> str:
        """The action in the variant's short notation (SAN for chess), before applying it."""

    @abstractmethod
    def apply(self, action: Action) -> list[ScoreEvent]:
        """Make a legal action; returns the score events it causes (none in variants without
        scores).  Raises :class:`IllegalActionError` for an action not legal now."""

    @abstractmethod
    def undo(self) -> Action:
        """Take back the last action (and its score events); returns it."""

    @abstractmethod
    def outcome(self) -> GameEnd | None:
        """How the game ended, or None while it goes on."""

    @abstractmethod
    def flag(self, side: Color) -> GameEnd:
        """``side`` ran out of time: apply the variant's time-out rule and end the game."""

    @property
    @abstractmethod
    def ply(self) -> int:
        """Number of actions made since the start."""

    @abstractmethod
    def move_number(self) -> int:
        """The number the next action is written under in a game record."""

    @abstractmethod
    def fen(self) -> str:
        """The current position as FEN (or the variant's extension of it)."""

    def scores(self) -> Mapping[Color, int]:
        """Points so far, for variants that score (empty otherwise)."""
        return {}

    def board_symbol(self, symbol: str) -> str:
        """What a piece-identity board reads for a piece of ``symbol``: the symbol itself for
        the standard pieces; a variant whose new kinds are played with stand-in pieces (the
        20-chess extra piece is a spare queen by default) maps them to the stand-in."""
        return symbol

    def chess_board(self) -> chess.Board | None:
        """The game on a python-chess board with its whole move stack, for variants played
        by the chess rules python-chess knows (standard, Chess960, T20); None otherwise.
        Callers read it and must not change it."""
        return None

    @property
    def turn(self) -> int | None:
        """The number of the turn under way, for variants whose turns are numbered apart from
        the record's move numbers (20-chess); None otherwise."""
        return None

    def hand(self, side: Color) -> tuple[str, ...]:
        """The captured piece kinds ``side`` may drop (kind letters, lower case); empty in
        variants without drops."""
        return ()

    def pending_choice(self) -> tuple[str, Color, tuple[str, ...]] | None:
        """A decision the board cannot show that the game waits for, as ``(what, by,
        options)`` (20-chess: the rule cast for a turn, the piece the opponent picks); None
        when none is due (always, in variants without such decisions)."""
        return None

    def decide(self, choice: Choice) -> None:
        """Enter the decision :meth:`pending_choice` asks for.  Raises
        :class:`VariantError` when none is due or the value is not one of the options."""
        raise NoDecisionError(f"no decision is due in {self.variant.id}")

    def forbidden_drop(self, symbol: str, square: int) -> str | None:
        """Why a drop from the hand of ``symbol`` on ``square``, due now, is forbidden (20-chess:
        ``rule 4: no pawn on the last row``), for a ruling to name the action; None when it
        is legal, no drop is due or ``symbol`` is not in the hand (no drop at all: a move).
        Variants without drops: always None."""
        return None

    def rule_hint(self) -> str | None:
        """A few words on what the rules of the moment allow, for a ruling's message
        (20-chess: the turn's rule and the step); None where the rules never change."""
        return None

    def clock_text(self) -> str | None:
        """At most 8 characters the clock shows when a turn begins or a decision is due
        (20-chess: ``RULE 12``); None for variants that show nothing."""
        return None

    def record_note(self) -> str | None:
        """A comment the record gets before the next action (20-chess: the turn's rule before
        its first action); None for none."""
        return None

    def panel(self) -> dict[str, object] | None:
        """What the mirror shows of the game besides the board (JSON-able; 20-chess: the
        rule, the step, the hands, a pending choice, the extra pieces); None for none."""
        return None

    def apply_at(self, action: Action, time: float) -> list[ScoreEvent]:
        """Make ``action`` as started at ``time`` (seconds, the board event's time).  Only
        variants that play in virtual time (realtime chess) use the time; the others apply
        the action as :meth:`apply` does."""
        return self.apply(action)

    def advance(self, time: float) -> list[ScoreEvent]:
        """Let the game's virtual time run to ``time`` (seconds).  A no-op for turn-based
        variants; realtime chess resolves arrivals, collisions and delays up to then."""
        return []

    def share_positions(self, other: VariantGame) -> None:
        """A game just made (no action yet) that will follow ``other`` (of the same variant,
        from the same start: the table's game and its recogniser's) works out each position
        once for both: what one found about a position (its legal actions, their SAN, the
        end by the rules) the other finds ready when it gets there.  Games that keep no such
        knowledge, or ``other`` of another kind or start, share nothing."""
        return

    def pgn_tags(self) -> dict[str, str]:
        """Tags a PGN of this game needs besides the seven-tag roster: ``Variant`` for any
        variant but standard chess, ``SetUp`` and ``FEN`` for a non-classical start."""
        tags: dict[str, str] = {}
        if self.variant.id != STANDARD_ID:
            tags["Variant"] = self.variant.pgn_name
        if not self.start.classical:
            tags["SetUp"] = "1"
            tags["FEN"] = self.start.fen
        return tags


def _new_game(variant: Variant, start: StartPosition) -> VariantGame:
    """A game unpickled, before its state is set (:meth:`VariantGame.__reduce__`)."""
    return variant.new_game(start)
