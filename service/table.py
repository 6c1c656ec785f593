"""One game at one board: ``service.table.Table``.

A table joins the move recogniser (:mod:`service.recognize`), the arbiter
(:mod:`service.arbiter`) and the clocks (:mod:`service.time_control`) for one board: players,
event, round, time control, rule set and variant; the phases set-up, playing, finished; the
record (PGN with ``[%clk]`` on every move, the result and its reason, T20 scores) and the
event log (:class:`TableEvent`).

It is pure and deterministic: no I/O, no clock of its own, no randomness.  Its inputs are
board events (:meth:`Table.feed`), the passing of time (:meth:`Table.tick`) and admin commands
(:meth:`Table.admin`); the same inputs always give the same events and state, so a table is
rebuilt after a crash by replaying its logged inputs.  Commands for the board's clock wait in
:meth:`Table.take_clock_orders` for the runner to send.
"""

from __future__ import annotations

import functools
import logging
from collections import deque
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Protocol

import chess

from dgt.events import (
    BoardEvent,
    BoardSnapshot,
    ClockConnection,
    ClockUpdate,
    LeverMoved,
    LinkLost,
    LinkRestored,
    Side,
    SquareChanged,
)
from dgt.protocol.constants import Piece
from dgt.recording import event_to_json
from service.arbiter import Arbiter, ArbiterEvent, Claim, Irregularity, Ruling, get_rules
from service.arbiter.arbiter import ArbiterError
from service.arbiter.base import RuleSet, UnknownRuleSetError
from service.pgn_text import game_text, seven_tag_roster
from service.recognize import (
    Amend,
    Lift,
    Mismatch,
    MoveEvent,
    NewGame,
    Place,
    Recognizer,
    RecognizerError,
    RecognizerEvent,
    Result,
    Takeback,
)
from service.recognize.events import alternatives_json
from service.recognize.pgn import ambiguity_note
from service.time_control import GameClocks, TimeControl, TimeControlError, clk
from service.variants import get_variant
from service.variants.base import (
    BLACK,
    EMPTY,
    WHITE,
    Choice,
    Color,
    LegalAction,
    SquareMap,
    StartPosition,
    Variant,
    VariantError,
    VariantGame,
)
from service.variants.standard import ChessGame, squares_of
from service.variants.twenty_chess import TwentyChess

logger = logging.getLogger(__name__)

RULES = ("casual", "fide-standard", "fide-rapid", "fide-blitz", "uscf-speed")
VARIANTS = ("standard", "chess960", "t20", "twenty-chess")
RESULTS = ("1-0", "0-1", "1/2-1/2")
TEXT_WIDTH = 8
"""Characters on the DGT 3000 display."""
TEXT_SECONDS = 2.0
"""Seconds a message stays on the clock display before the times come back."""
ENDED_KEPT = 16
"""PGNs of replaced games a table keeps for :meth:`Table.take_ended_games`."""


class TableError(ValueError):
    """A bad admin command or setting (one-line message)."""


@dataclass(frozen=True, slots=True)
class TableSettings:
    """What a table plays: players, event, time control (PGN ``TimeControl`` form), rule set,
    variant, optionally a start FEN (e.g. a Chess960 position) and the variant's options
    (20-chess: ``schedule=12,13 cast stand-ins=special``, see
    :meth:`service.variants.twenty_chess.TwentyChess.from_options`)."""

    white: str = "?"
    black: str = "?"
    event: str = "?"
    site: str = "?"
    round: str = "?"
    time_control: str = "300+0"
    rules: str = "casual"
    variant: str = "standard"
    start: str | None = None
    options: str | None = None


@dataclass(frozen=True, slots=True)
class TableEvent:
    """One entry of a table's event log."""

    time: float
    type: str
    data: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"time": self.time, "type": self.type, **self.data}


@dataclass(frozen=True, slots=True)
class ClockOrder:
    """A command for the board's clock: ``set_and_run`` (``left``/``right`` seconds, ``run``
    the side that counts down, None = paused), ``text`` (at most 8 characters, ``beep``
    seconds), ``end_text`` (back to the times) or ``beep``."""

    kind: str
    left: float = 0.0
    right: float = 0.0
    run: Side | None = None
    text: str = ""
    beep: float = 0.0

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind}
        if self.kind == "set_and_run":
            data.update(left=self.left, right=self.right, run=self.run.value if self.run else None)
        if self.text:
            data["text"] = self.text
        if self.beep:
            data["beep"] = self.beep
        return data


@dataclass(slots=True)
class _Entry:
    """One move of the record."""

    ply: int
    number: int
    side: Color
    uci: str
    san: str
    final: bool = False
    clock: float | None = None
    scores: tuple[dict[str, Any], ...] = ()
    illegal: bool = False
    notes: list[str] = field(default_factory=list)
    fen_after: str | None = None
    """For an illegal move that stood: the position after it."""
    article: str = ""
    alternatives: tuple[tuple[str, str], ...] = ()
    """``(uci, san)`` of the other moves the board read the same (see
    :class:`~service.recognize.events.MoveEvent`): an arbiter may correct the move to one."""
    _json: dict[str, Any] | None = field(default=None, init=False, repr=False, compare=False)
    """:meth:`to_json` as last built; any assignment to a field drops it."""

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        if name != "_json":
            object.__setattr__(self, "_json", None)

    def to_json(self) -> dict[str, Any]:
        """The move as the web and the log show it.  Built once per change of the entry and
        shared afterwards: treat it as read-only."""
        cached = self._json
        if cached is None:
            cached = self._build_json()
            object.__setattr__(self, "_json", cached)
        return cached

    def _build_json(self) -> dict[str, Any]:
        return {
            "ply": self.ply,
            "number": self.number,
            "side": "white" if self.side else "black",
            "san": self.san,
            "uci": self.uci,
            "final": self.final,
            "clock_seconds": self.clock,
            **({"scores": list(self.scores)} if self.scores else {}),
            **({"illegal": True} if self.illegal else {}),
            **alternatives_json(self.alternatives),
        }


_FEN_PIECES = frozenset("PNBRQKpnbrqk")


_RANKS = range(56, -8, -8)
"""The first square of each rank, the eighth first (as a FEN lists them)."""

_CELL_OF = {piece: EMPTY if piece is Piece.EMPTY else piece.symbol for piece in Piece}
"""What :meth:`Table.physical` shows for each piece code."""


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
    return _write_rank_fen(tuple(cells))


_MEMO_LIMIT = 8192
"""Entries a memo of this module holds before it starts again (a bound on its memory)."""


@functools.lru_cache(maxsize=_MEMO_LIMIT)
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
    board = getattr(game, "board", None)
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
        if len(_CASTLING_FENS) >= _MEMO_LIMIT:
            _CASTLING_FENS.clear()
        text = _CASTLING_FENS[key] = board.castling_xfen()
    return text


def _legal_action(game: VariantGame, uci: str) -> LegalAction | None:
    """The legal action written ``uci`` now, or None.  Looked for first among the actions
    that change a square the text names (a move changes its from-square or, a castling
    whose king stays, its to-square), which the variant generates for one square far
    faster than all of them; then among all."""
    for i in range(len(uci) - 1):
        name = uci[i : i + 2]
        if name in _SQUARE_NAMES:
            for action in game.actions_changing(chess.parse_square(name)):
                if action.uci == uci:
                    return action
    return next((la for la in game.legal_actions() if la.uci == uci), None)


@functools.lru_cache(maxsize=_MEMO_LIMIT)  # every update of a table shows its last move
def _move_squares(uci: str) -> tuple[str | None, str | None]:
    """The from- and to-square names of an action's text: ``e2e4`` (the first move of a
    tandem ``e2e4&g1f3``), a drop ``N@e4`` (no from-square); None where there is none."""
    names = [uci[i : i + 2] for i in range(len(uci) - 1) if uci[i : i + 2] in _SQUARE_NAMES]
    if "@" in uci[:2]:
        return None, names[0] if names else None
    if len(names) >= 2 and uci[:4] == names[0] + names[1]:
        return names[0], names[1]
    return (names[0] if names else None), None


_SQUARE_NAMES = frozenset(chess.SQUARE_NAMES)


def _other(side: Side) -> Side:
    return Side.RIGHT if side is Side.LEFT else Side.LEFT


def _name(color: Color | None) -> str | None:
    return None if color is None else ("white" if color else "black")


class _ToJson(Protocol):
    def to_json(self) -> dict[str, Any]: ...


def event_data(item: _ToJson) -> dict[str, Any]:
    """An event's JSON without its ``type`` and ``time`` (a table event carries both)."""
    data = item.to_json()
    data.pop("type", None)
    data.pop("time", None)
    return data


def check_table_id(table_id: Any) -> str:
    """``table_id`` if it is a table id (a non-empty string of at most 100 characters)."""
    if not isinstance(table_id, str) or not table_id or len(table_id) > 100:
        raise TableError("a table id is a non-empty string of at most 100 characters")
    return table_id


def check_admin_args(args: Any) -> None:
    """An admin command's arguments must be a mapping."""
    if not isinstance(args, Mapping):
        raise TableError("admin arguments must be a mapping")


def check_setting_text(name: str, value: Any) -> None:
    """A setting's value: a string of at most 200 characters without control characters
    (None, an unset setting, passes)."""
    if value is not None and not isinstance(value, str):
        raise TableError(f"setting {name} must be a string")
    if isinstance(value, str) and (len(value) > 200 or any(ord(c) < 32 for c in value)):
        raise TableError(f"setting {name} is too long or has control characters")


def end_arguments(args: Mapping[str, Any]) -> tuple[str, str]:
    """The ``end`` command's ``result`` (one of :data:`RESULTS`) and ``reason`` (a string of
    at most 200 characters, ``arbiter`` when not given)."""
    result = args.get("result")
    if result not in RESULTS:
        raise TableError(f"result must be one of {', '.join(RESULTS)}")
    reason = args.get("reason", "arbiter")
    if not isinstance(reason, str) or len(reason) > 200:
        raise TableError("reason must be a string of at most 200 characters")
    return result, reason


def player_changes(args: Mapping[str, Any]) -> dict[str, Any]:
    """The ``players`` command's changes: ``white`` and/or ``black``, nothing else."""
    changes = {k: args[k] for k in ("white", "black") if k in args}
    if not changes or set(args) - {"white", "black"}:
        raise TableError("players takes white and/or black")
    return changes


def players_event(now: float, white: str, black: str) -> TableEvent:
    """The ``players`` event: the players are now ``white`` and ``black``."""
    return TableEvent(now, "players", {"white": white, "black": black})


def link_after(link: str, event: BoardEvent) -> str:
    """The board link (``unknown``, ``up``, ``down``) after ``event``: down after a
    :class:`LinkLost`, up after a :class:`LinkRestored` or any first event."""
    if isinstance(event, LinkLost):
        return "down"
    if isinstance(event, LinkRestored) or link == "unknown":
        return "up"
    return link


def clock_present_after(present: bool, event: BoardEvent) -> bool:
    """Whether the board has a clock after ``event``: as a :class:`ClockConnection` says,
    yes after a :class:`ClockUpdate`, else as before."""
    if isinstance(event, ClockConnection):
        return event.connected
    if isinstance(event, ClockUpdate):
        return True
    return present


def result_text(result: str) -> str:
    """A result as the clock shows it: ``1-0``, ``0-1``, ``DRAW``."""
    return result if result != "1/2-1/2" else "DRAW"


def _check_settings(settings: TableSettings) -> tuple[RuleSet, Variant, TimeControl]:
    for item in fields(settings):
        value = getattr(settings, item.name)
        if value is None and item.default is not None:  # only start and options may be unset
            raise TableError(f"setting {item.name} must be a string")
        check_setting_text(item.name, value)
    try:
        rules = get_rules(settings.rules)
    except UnknownRuleSetError as exc:
        raise TableError(str(exc)) from None
    try:
        variant = get_variant(settings.variant)
    except VariantError as exc:
        raise TableError(str(exc)) from None
    if variant.id == TwentyChess.id:
        if settings.start is not None:
            raise TableError("20-chess starts from the classical position: leave start unset")
        try:
            variant = TwentyChess.from_options(settings.options)
        except ValueError as exc:
            raise TableError(str(exc)) from None
    elif settings.options:
        raise TableError(f"variant {variant.id} takes no options")
    try:
        control = TimeControl.parse(settings.time_control)
    except TimeControlError as exc:
        raise TableError(str(exc)) from None
    if settings.start is not None:
        try:
            board = chess.Board(settings.start, chess960=settings.variant == "chess960")
        except ValueError as exc:
            raise TableError(f"bad start FEN: {exc}") from None
        if not board.is_valid():
            raise TableError("bad start FEN: not a legal position")
    return rules, variant, control


class Table:
    """One game at one board (see the module docstring)."""

    def __init__(self, table_id: str, settings: TableSettings) -> None:
        self.id = check_table_id(table_id)
        self.settings = settings
        self._rules, self._variant, self._control = _check_settings(settings)
        self._raw: list[Piece] = [Piece.EMPTY] * 64
        self._raw_version = 0
        """Bumped on every change of :attr:`_raw` (keys the caches of :meth:`physical`)."""
        self._position_version = 0
        """Bumped whenever the game's position may have changed (keys the FEN cache)."""
        self._physical_cache: tuple[int, bool, SquareMap, str | None] | None = None
        self._fen_cache: tuple[int, str | None] | None = None
        self._rows_cache: tuple[SquareMap, list[str]] | None = None
        """The cells :meth:`_placement` last wrote, and each rank's text (eighth first)."""
        self._identified_cache: tuple[tuple[int, int, SquareMap], str] | None = None
        """A presence-only board's :meth:`_placement`, by the board and position it shows."""
        self._settings_cache: tuple[TableSettings, dict[str, Any]] | None = None
        self._pgn_cache: tuple[_PgnKey, str] | None = None
        self._ended: deque[str] = deque(maxlen=ENDED_KEPT)
        self._ending_tags: tuple[TableSettings, TimeControl] | None = None
        """The settings and time control the game being replaced was played under, when
        a start command changes them before the new game begins."""
        self._family: bool | None = None
        self._link = "unknown"
        self._orders: list[ClockOrder] = []
        self._text_until: float | None = None
        self._clocks = GameClocks()
        self._clock_present = False
        self._clock_times: tuple[float, float, float] | None = None  # left, right, as of
        self._white_side: Side | None = None
        self._lever_high: Side | None = None
        self._recognizer = self._new_recognizer()
        self._arbiter = Arbiter(self._rules, self)
        self._reset_game()
        self._start_pending = settings.start is not None
        """A start FEN in the settings: the first game starts from it once the board is
        read (as a ``start`` command would), not from a start position seen on the board."""

    # -- the view the arbiter reads (ArbiterView) ----------------------------------------------

    @property
    def game(self) -> VariantGame | None:
        return self._game

    @property
    def presence_only(self) -> bool:
        return bool(self._recognizer.presence_only)

    def physical(self) -> SquareMap:
        """What stands on each square of the board (in the game's frame: a board turned
        round is read turned back).  Kept until the board or its orientation changes."""
        rotated = bool(self._recognizer.rotated)
        cache = self._physical_cache
        if cache is not None and cache[0] == self._raw_version and cache[1] == rotated:
            return cache[2]
        raw = self._raw[::-1] if rotated else self._raw
        cells = tuple(map(_CELL_OF.__getitem__, raw))
        self._physical_cache = (self._raw_version, rotated, cells, None)
        return cells

    def _set_square(self, square: int, piece: Piece) -> None:
        """One square of the board changed.  When :meth:`physical` was written for the
        board just before, its cells and the ranks of :meth:`_placement` follow the one
        square (a cell and a rank rewritten) instead of being written anew."""
        self._raw[square] = piece
        self._raw_version += 1
        cache = self._physical_cache
        if cache is None or cache[0] != self._raw_version - 1 or square < 0:
            return
        rotated, before = cache[1], cache[2]
        index = 63 - square if rotated else square
        cells = (*before[:index], _CELL_OF[piece], *before[index + 1 :])
        self._physical_cache = (self._raw_version, rotated, cells, None)
        last = self._rows_cache
        if last is not None and last[0] is before:
            rank = index & ~7
            rows = list(last[1])
            rows[7 - (rank >> 3)] = _rank_fen(cells[rank : rank + 8])
            self._rows_cache = (cells, rows)

    def history(self) -> chess.Board | None:
        board = getattr(self._game, "board", None)
        return board if isinstance(board, chess.Board) else None

    # -- inputs --------------------------------------------------------------------------------

    def feed(self, event: BoardEvent) -> list[TableEvent]:
        """Process one driver event; returns what it caused (the event itself first)."""
        t = event.time
        out = [TableEvent(t, "board", event_to_json(event))]
        had_clock = self._clock_present
        if isinstance(event, SquareChanged):
            self._set_square(event.square, event.piece)
        elif isinstance(event, BoardSnapshot):
            self._raw = list(event.squares)
            self._raw_version += 1
            if self._start_pending:
                self._start_pending = False
                self._link = link_after(self._link, event)
                return out + self._admin_start({}, t)  # reads the board it was given
        elif isinstance(event, ClockUpdate):
            self._lever_high = event.lever_high
        self._link = link_after(self._link, event)
        self._clock_present = clock_present_after(self._clock_present, event)
        got = self._recognizer.tick(t) + self._recognizer.feed(event)
        pressed: Color | None = None
        if isinstance(event, LeverMoved):
            pressed = self._learn_lever(event, got)
        for item in got:
            out += self._recognized(item, pressed)
        if isinstance(event, LeverMoved):
            out += self._on_lever(event, got, pressed)
        elif isinstance(event, ClockUpdate) and not self._clock_learned(t, had_clock):
            out += self._on_clock_update(event)
        return out

    def tick(self, now: float) -> list[TableEvent]:
        """Time passes: settle delays complete moves; without a clock, a flag may fall."""
        out: list[TableEvent] = []
        for item in self._recognizer.tick(now):
            out += self._recognized(item, None)
        if (
            self._phase == "playing"
            and self._control.timed
            and not self._clock_present
            and (self._rules.flag != "clock" or self._game_variant_id() == "t20")
        ):
            running = self._clocks.running
            if running is not None and self._clocks.remaining(running, now) <= 0:
                self._clocks.settle(now)
                out += self._apply(self._arbiter.on_flag(now, running), now)
        if self._text_until is not None and now >= self._text_until:
            self._text_until = None
            self._orders.append(ClockOrder("end_text"))
        return out

    def admin(self, command: str, args: Mapping[str, Any], now: float) -> list[TableEvent]:
        """An organiser's or arbiter's command (see the module docs of the contract):
        ``start``, ``end``, ``players``, ``rule``, ``claim``, ``correct``, ``choose`` (a
        decision the board cannot show: ``value``, optionally ``what``), ``drop_kind`` (the
        kind of a 20-chess drop a presence-only board guessed: ``ply``, ``kind``).  Bad
        commands or arguments raise :class:`TableError`."""
        check_admin_args(args)
        handler = {
            "start": self._admin_start,
            "end": self._admin_end,
            "players": self._admin_players,
            "rule": self._admin_rule,
            "claim": self._admin_claim,
            "correct": self._admin_correct,
            "choose": self._admin_choose,
            "drop_kind": self._admin_drop_kind,
        }.get(command)
        if handler is None:
            raise TableError(
                f"unknown command {command!r}: use start, end, players, rule, claim, correct, "
                "choose or drop_kind"
            )
        return handler(args, now)

    def take_clock_orders(self) -> list[ClockOrder]:
        """The clock commands issued since the last call: the settings (set-and-run, the
        last one wins) first, then texts and the rest, each oldest first -- so that a text
        is not wiped at once by a setting issued with it (a set-and-run ends a text)."""
        if not self._orders:
            return []  # the hall asks after every input; most issue none
        orders, self._orders = self._orders, []
        settings = [o for o in orders if o.kind == "set_and_run"]
        return settings + [o for o in orders if o.kind != "set_and_run"]

    # -- outputs -------------------------------------------------------------------------------

    @property
    def phase(self) -> str:
        return self._phase

    @property
    def result(self) -> str:
        return self._result

    def moves(self) -> list[dict[str, Any]]:
        """The record as JSON, one entry a move (each built once per change of the move and
        shared: treat them as read-only)."""
        return [entry.to_json() for entry in self._record]

    def fen(self) -> str | None:
        """The game's position as FEN (None before a game), computed once per position."""
        cache = self._fen_cache
        if cache is not None and cache[0] == self._position_version:
            return cache[1]
        game = self._game
        fen = None if game is None else (chess_fen(game) or game.fen())
        self._fen_cache = (self._position_version, fen)
        return fen

    def state(self, now: float | None = None) -> dict[str, Any]:
        """A JSON-able snapshot for the web."""
        as_of = self._clocks.as_of if now is None else now
        return {
            "id": self.id,
            "settings": self._settings_json(),
            "phase": self._phase,
            "fen": self.fen(),
            "board": self._placement(),
            "orientation": "black" if self._recognizer.rotated else "white",
            "last_move": self._last_move(),
            "moves": self.moves(),
            "clocks": self._clocks.snapshot(as_of),
            "clock_present": self._clock_present,
            "scores": self._scores(),
            "claims": [c.to_json() for c in self._arbiter.open_claims()],
            "irregularities": list(self._irregularities),
            "obligations": self._arbiter.obligations(),
            "result": self._result,
            "reason": self._reason,
            "link": self._link,
            "mismatch": list(self._mismatch),
            "variant_panel": self._variant_panel(),
        }

    def _variant_panel(self) -> dict[str, Any] | None:
        """What the mirror shows of a variant's own state (20-chess: the rule, the step,
        the hands, a pending choice, the extra pieces); None for the others."""
        panel = getattr(self._game, "panel", None)
        return panel() if callable(panel) else None

    def pgn(self) -> str:
        """The record as PGN: the seven tag roster, TimeControl, Termination, the variant's
        tags, T20 scores, and ``{[%clk h:mm:ss]}`` after every completed move.

        An illegal move that stood (US speed 11: unclaimed before the reply, the position
        legal) is no move a PGN reader can play, so the record is split there into game
        segments: a segment ends with a comment naming the illegal move (``White's illegal
        move Ng1-g3 stood (US speed 11) ...``) and result ``*``; the next one starts from the
        position after it (``SetUp``/``FEN``) with a comment saying so.  Every segment has
        the game's tags and ``GameSegment "k/n"``; the last one has the result, its reason
        and the scores.  Without a standing illegal move the record is one game.

        Written once per change of what it shows (the record, the result, the settings,
        the scores) and kept until the next one."""
        source = self._pgn_source()
        key = _pgn_key(source, self._game)
        cache = self._pgn_cache
        if cache is not None and cache[0].same(key):
            return cache[1]
        text = _write_pgn(source)
        self._pgn_cache = (key, text)
        return text

    def take_ended_games(self) -> list[str]:
        """The PGN of each game with moves that a new game replaced since the last call,
        oldest first, as it read when it was replaced (under the settings it was played
        with).  Up to :data:`ENDED_KEPT` are kept for a caller that does not ask."""
        if not self._ended:
            return []
        ended = list(self._ended)
        self._ended.clear()
        return ended

    def summary(self, now: float | None = None) -> dict[str, Any]:
        """What the overview shows of the table: :meth:`state` without the move list, the
        claims, the obligations and the settings (the players, round, event and variant
        instead, and the number of moves, open claims and irregularities)."""
        as_of = self._clocks.as_of if now is None else now
        s = self.settings
        return {
            "id": self.id,
            "phase": self._phase,
            "fen": self.fen(),
            "board": self._placement(),
            "orientation": "black" if self._recognizer.rotated else "white",
            "last_move": self._last_move(),
            "clocks": self._clocks.snapshot(as_of),
            "scores": self._scores(),
            "result": self._result,
            "reason": self._reason,
            "link": self._link,
            "white": s.white,
            "black": s.black,
            "round": s.round,
            "event": s.event,
            "variant": s.variant,
            "ply": len(self._record),
            "claims": len(self._arbiter.open_claims()),
            "irregularities": len(self._irregularities),
        }

    def _last_move(self) -> dict[str, Any] | None:
        last = self._record[-1] if self._record else None
        if last is None:
            return None
        origin, target = _move_squares(last.uci)
        return {"from": origin, "to": target, "uci": last.uci, "san": last.san}

    def _pgn_source(self) -> _PgnSource:
        """What the PGN of the game at the table is written from, now."""
        settings, control = self._ending_tags or (self.settings, self._control)
        game = self._game
        return _PgnSource(
            settings,
            control,
            self._result,
            self._reason,
            self._start,
            None if game is None else tuple(game.pgn_tags().items()),
            self._scores(),
            tuple(self._record),
        )

    # -- internals: games ----------------------------------------------------------------------

    def _new_recognizer(self) -> Recognizer:
        variant: str | Variant = self._variant if self._variant.id != "t20" else "standard"
        return Recognizer(variant=variant, presence_only=self._family)

    def _reset_game(self) -> None:
        if getattr(self, "_record", None):  # a game with moves is replaced: keep its PGN
            self._ended.append(self.pgn())
        self._ending_tags = None
        self._pgn_cache = None  # its key holds the old game (its positions, its record)
        self._position_version += 1
        self._phase = "setup"
        self._game: VariantGame | None = None
        self._start: StartPosition | None = None
        self._record: list[_Entry] = []
        self._offset = 0
        self._result = "*"
        self._reason = ""
        self._irregularities: list[dict[str, Any]] = []
        self._mismatch: tuple[str, ...] = ()
        self._restarting = False
        self._complete_next: dict[Color, bool] = {}
        self._reason_source = ""
        self._announced: tuple[object, str] | None = None
        self._arbiter.reset()

    def _game_variant_id(self) -> str:
        return self._game.variant.id if self._game is not None else self.settings.variant

    def _begin(self, start: StartPosition, t: float, event: NewGame | None) -> list[TableEvent]:
        """A new game from ``start``: the record, the arbiter and the clocks start afresh."""
        self._reset_game()
        variant = self._variant if start.variant == self._variant.id else get_variant(start.variant)
        if self._variant.id in ("chess960", "twenty-chess") and start.variant == "standard":
            variant = self._variant  # the classical set-up starts the table's variant
        self._game = variant.new_game(start)
        self._position_version += 1
        self._start = start
        self._phase = "playing"
        data = event_data(event) if event is not None else {"variant": variant.id, "fen": start.fen}
        out = [TableEvent(t, "new_game", data)]
        base = self._control.base
        self._clocks = GameClocks(base, base, WHITE if self._control.timed else None, t)
        if self._clock_present and self._control.timed:
            if self._white_side is None and self._lever_high is not None:
                self._white_side = self._lever_high  # White's clock runs first: its lever is up
            self._order_times(t)
        out.append(self._clock_event(t))
        self._announce(t)
        return out

    def _announce(self, t: float) -> None:
        """A variant that names each turn's rule on the clock (20-chess: ``RULE 12``): show
        it when a turn begins or a decision is due."""
        hint = getattr(self._game, "clock_hint", None)
        if not callable(hint):
            return
        key = (getattr(self._game, "turn", None), hint())
        if key != self._announced:
            self._announced = key
            self._text(key[1], 0.0, t)

    def _recognized(self, item: RecognizerEvent, pressed: Color | None) -> list[TableEvent]:
        t = item.time
        data = event_data(item)
        if isinstance(item, NewGame):
            if self._restarting:
                return []
            game = self._recognizer.game
            assert game is not None
            return self._begin(game.start, t, item)
        if self._game is None:
            return [TableEvent(t, item.type, data)]
        if isinstance(item, Lift):
            return [TableEvent(t, "lift", data), *self._apply(
                self._arbiter.on_lift(t, item.square, item.piece), t)]  # fmt: skip
        if isinstance(item, Place):
            return [TableEvent(t, "place", data), *self._apply(
                self._arbiter.on_place(t, item.square, item.piece), t)]  # fmt: skip
        if isinstance(item, MoveEvent):
            return self._on_move(item, data, pressed)
        if isinstance(item, Amend):
            return self._on_amend(item, data)
        if isinstance(item, Takeback):
            return self._on_takeback(item, data)
        if isinstance(item, Mismatch):
            self._mismatch = tuple(chess.square_name(sq) for sq in item.squares)
            return [TableEvent(t, "mismatch", data)]
        if isinstance(item, Result):
            if self._phase != "playing":
                return []
            return self._end(item.result, item.reason, t, "board")
        return []

    def _ply(self, recognizer_ply: int) -> int:
        return self._offset + recognizer_ply

    def _on_move(
        self, item: MoveEvent, data: dict[str, Any], pressed: Color | None
    ) -> list[TableEvent]:
        t = item.time
        game = self._game
        assert game is not None
        ply = self._ply(item.ply)
        data["ply"] = ply
        out: list[TableEvent] = []
        if not item.final:
            if self._phase != "playing" or len(self._record) >= ply:
                return out
            action = _legal_action(game, item.uci)
            if action is None:
                return out
            before = game.squares
            self._arbiter.before_action(t, ply, action, game.legal_actions, before)
            note_of = getattr(game, "record_note", None)
            note = note_of() if callable(note_of) else None
            scores = game.apply(action.action)
            self._position_version += 1
            entry = _Entry(ply, item.number, item.side, item.uci, item.san,
                           alternatives=item.alternatives)  # fmt: skip
            if note:
                entry.notes.append(note)
            entry.scores = tuple(
                {"side": _name(s.side), "points": s.points, "reason": s.reason} for s in scores
            )
            self._record.append(entry)
            if not self._clock_present and self._control.timed:
                entry.clock = self._clocks.remaining(item.side, t)
                sides = game.sides_to_act()  # a part of several actions keeps its clock
                self._clocks.run(next(iter(sides)) if len(sides) == 1 else not item.side, t)
            out.append(TableEvent(t, "move", data))
            self._announce(t)
            if scores:
                out.append(TableEvent(t, "score", {"ply": ply, "scores": list(entry.scores),
                                                    "totals": self._scores()}))  # fmt: skip
                totals = self._scores()
                self._text(f"{totals['white']}-{totals['black']}", 0.0, t)
            out += self._apply(self._arbiter.on_action(t, ply, item.side, False), t)
            if self._complete_next.pop(item.side, False):
                out += self._finalise(entry, t, data | {"final": True})
            return out
        if ply > len(self._record):
            return out
        entry = self._record[ply - 1]
        if entry.final:
            return out
        if entry.uci == item.uci and entry.alternatives != item.alternatives:
            entry.alternatives = item.alternatives  # more were found as the move went on
        return self._finalise(entry, t, data)

    def _finalise(self, entry: _Entry, t: float, data: dict[str, Any]) -> list[TableEvent]:
        entry.final = True
        if entry.clock is None and self._control.timed:
            entry.clock = self._clocks.remaining(entry.side, t)
        if not self._clock_present and self._control.timed:
            moves = sum(1 for e in self._record if e.side == entry.side and e.final)
            bonus = self._control.increment_after(moves) + self._control.bonus_after(moves)
            if bonus:
                self._clocks.add(entry.side, bonus, t)
        out = [TableEvent(t, "move", data)]
        out += self._apply(self._arbiter.on_action(t, entry.ply, entry.side, True), t)
        return out

    def _on_amend(self, item: Amend, data: dict[str, Any]) -> list[TableEvent]:
        t = item.time
        game = self._game
        assert game is not None
        ply = self._ply(item.ply)
        data["ply"] = ply
        if ply != len(self._record):
            return [TableEvent(t, "amend", data)]
        game.undo()
        self._position_version += 1
        action = _legal_action(game, item.uci)
        if action is None:
            return [TableEvent(t, "amend", data)]
        before = game.squares
        self._arbiter.before_action(t, ply, action, game.legal_actions, before)
        scores = game.apply(action.action)
        entry = self._record[-1]
        entry.uci, entry.san = item.uci, item.san
        entry.alternatives = item.alternatives
        entry.scores = tuple(
            {"side": _name(s.side), "points": s.points, "reason": s.reason} for s in scores
        )
        out = [TableEvent(t, "amend", data)]
        out += self._apply(self._arbiter.on_amend(t, ply, item.side, item.old_uci, item.uci), t)
        return out

    def _on_takeback(self, item: Takeback, data: dict[str, Any]) -> list[TableEvent]:
        t = item.time
        game = self._game
        assert game is not None
        ply = self._ply(item.ply)
        data["ply"] = ply
        while len(self._record) > ply and game.ply > 0:
            game.undo()
            self._position_version += 1
            self._record.pop()
        out = [TableEvent(t, "takeback", data)]
        self._announce(t)
        if self._phase == "finished" and self._rules.takebacks and self._reason_source == "board":
            self._phase = "playing"
            self._result, self._reason = "*", ""
            self._arbiter._finished = False
            out.append(TableEvent(t, "result", {"result": "*", "reason": "taken back"}))
        if not self._clock_present and self._control.timed:
            sides = game.sides_to_act()
            if len(sides) == 1:
                self._clocks.run(next(iter(sides)), t)
        out += self._apply(self._arbiter.on_takeback(t, ply, item.final), t)
        return out

    def _end(self, result: str, reason: str, t: float, source: str) -> list[TableEvent]:
        if self._phase != "playing":
            return []
        self._phase = "finished"
        self._result = result
        self._reason = reason
        self._reason_source = source
        self._clocks.run(None, t)
        out = [TableEvent(t, "result", {"result": result, "reason": reason})]
        for claim in self._arbiter.finish():
            out.append(TableEvent(t, "claim", event_data(claim)))
        if self._clock_present and self._control.timed:
            self._order_times(t, paused=True)
        self._text(result_text(result), 1.0, t, hold=True)
        return out

    # -- internals: rulings --------------------------------------------------------------------

    def _apply(self, items: list[ArbiterEvent], t: float) -> list[TableEvent]:
        out: list[TableEvent] = []
        for item in items:
            out.append(TableEvent(t, item.type, event_data(item)))
            if isinstance(item, Irregularity):
                self._irregularities.append(item.to_json())
                self._text(_SHORT.get(item.kind, "ARBITER"), 0.5, t)
            elif isinstance(item, Claim):
                if item.status in ("offered", "made"):
                    self._text("CLAIM?", 0.3, t)
            elif isinstance(item, Ruling):
                out += self._rule(item, t)
        return out

    def _rule(self, ruling: Ruling, t: float) -> list[TableEvent]:
        kind = ruling.kind
        if kind == "result" and ruling.result is not None:
            last = self._record[-1] if self._record else None
            if last is not None and not last.final and ruling.reason in ("checkmate", "stalemate"):
                # FIDE 5.1.1 / 5.2.1: the move ended the game before the clock was pressed.
                last.final = True
                if self._control.timed:
                    last.clock = max(0.0, self._clocks.remaining(last.side, t))
            return self._end(ruling.result, ruling.reason or "", t, "arbiter")
        if kind == "penalty-time":
            for color, seconds in ruling.add_time.items():
                self._clocks.add(color, seconds, t)
            if self._clock_present:
                self._order_times(t)
            minutes = int(sum(ruling.add_time.values()) // 60)
            self._text(f"+{minutes} MIN", 1.0, t)
            return [self._clock_event(t)]
        if kind == "clock" and ruling.run is not None:
            self._clocks.run(ruling.run, t)
            if self._clock_present:
                self._order_times(t)
            return [self._clock_event(t)]
        if kind == "promote" and ruling.side is not None:
            self._complete_next = {**self._complete_next, ruling.side: True}
            return []
        if kind == "stand" and ruling.uci is not None and ruling.fen is not None:
            return self._illegal_stands(ruling, t)
        return []

    def _illegal_stands(self, ruling: Ruling, t: float) -> list[TableEvent]:
        """US speed 11: an unclaimed illegal move stands; the game goes on from the position
        after it (recognition restarts there; the record keeps the move, marked)."""
        game = self._game
        assert game is not None
        assert ruling.fen is not None
        assert ruling.uci is not None
        side = bool(ruling.side)
        entry = _Entry(len(self._record) + 1, game.move_number(), side, ruling.uci,
                       _long_algebraic(game.squares, ruling.uci), final=True, illegal=True,
                       fen_after=ruling.fen, article=ruling.article)  # fmt: skip
        if self._control.timed:
            entry.clock = self._clocks.remaining(side, t)
        self._record.append(entry)
        board = chess.Board(ruling.fen, chess960=game.variant.id == "chess960")
        start = StartPosition(game.variant.id, ruling.fen, squares_of(board))
        self._game = game.variant.new_game(start)
        self._position_version += 1
        return self._restart_recognition(start, t)

    def _restart_recognition(self, start: StartPosition, t: float) -> list[TableEvent]:
        """Recognition starts again from ``start`` (the record keeps the moves before it) and
        reads the board as it stands: a move already made on it is recognised."""
        rotated = self._recognizer.rotated
        self._restarting = True
        try:
            self._recognizer.start_game(t, start, rotated=rotated)
            self._offset = len(self._record)
            # the recogniser analyses a snapshot only if it changes its board: show it an
            # empty board first, then the board as it is
            self._recognizer.feed(BoardSnapshot(t, (Piece.EMPTY,) * 64, "resync"))
            pending = self._recognizer.feed(BoardSnapshot(t, tuple(self._raw), "resync"))
        finally:
            self._restarting = False
        out: list[TableEvent] = []
        for item in pending:
            if not isinstance(item, (Lift, Place)):
                out += self._recognized(item, None)
        return out

    # -- internals: the clock ------------------------------------------------------------------

    def _learn_lever(self, event: LeverMoved, got: list[RecognizerEvent]) -> Color | None:
        """Which colour pressed: learned from the first press that completes a move (the
        presser's lever goes down, the opponent's comes up)."""
        self._clock_present = True
        self._lever_high = event.high
        finals = [e for e in got if isinstance(e, MoveEvent) and e.final]
        if self._white_side is None:
            if finals:
                side = finals[-1].side
                self._white_side = _other(event.high) if side == WHITE else event.high
            elif not self._record:
                self._white_side = event.high  # Black starts White's clock
                return None
            else:
                return None
        return WHITE if _other(event.high) is self._white_side else BLACK

    def _on_lever(
        self, event: LeverMoved, got: list[RecognizerEvent], presser: Color | None
    ) -> list[TableEvent]:
        t = event.time
        out: list[TableEvent] = []
        if presser is None or self._phase != "playing":
            return out
        completed = any(isinstance(e, MoveEvent) and e.final and e.side == presser for e in got)
        self._clocks.run(not presser, t)
        game = self._game
        part_done = game is None or presser not in game.sides_to_act()  # 20-chess: parts
        moves = sum(1 for e in self._record if e.side == presser and e.final)
        if completed and part_done and self._control.timed:
            bonus = self._control.increment_after(moves) + self._control.bonus_after(moves)
            if bonus:
                self._clocks.add(presser, bonus, t)
                self._order_times(t)
        for item in got:
            if isinstance(item, MoveEvent) and item.final and item.side == presser:
                ply = self._ply(item.ply)
                if ply <= len(self._record):
                    self._record[ply - 1].clock = self._clocks.remaining(presser, t) - (
                        self._control.increment_after(moves)
                        if self._control.timed and part_done
                        else 0
                    )
        out += self._apply(self._arbiter.on_press(t, presser, completed), t)
        out.append(self._clock_event(t))
        return out

    def _on_clock_update(self, event: ClockUpdate) -> list[TableEvent]:
        t = event.time
        out: list[TableEvent] = []
        side = self._white_side
        if side is not None:
            white = event.left if side is Side.LEFT else event.right
            black = event.right if side is Side.LEFT else event.left
            self._clocks.white, self._clocks.black, self._clocks.as_of = white, black, t
            if event.running:
                self._clocks.running = WHITE if event.lever_high is side else BLACK
            else:
                self._clocks.running = None
            if self._phase == "playing" and self._control.timed:
                flags = ((Side.LEFT, event.left_flag or event.left <= 0),
                         (Side.RIGHT, event.right_flag or event.right <= 0))  # fmt: skip
                for clock_side, down in flags:
                    if down:
                        color = WHITE if clock_side is side else BLACK
                        out += self._apply(self._arbiter.on_flag(t, color), t)
        return out

    def _clock_learned(self, t: float, had_clock: bool) -> bool:
        """Before the first move, a clock reported its times for the first time, or for the
        first time since the game began without the lever known (a driver knows a DGT 3000 is
        there from its version before it reports any times): set it to the time control and
        run White's side, whose lever is up (issue 4: "at the start of a game the service
        sets the DGT 3000 to the time control (set-and-run), learns which side of the clock
        is White from the first press").  True if it did: the report predates the order, so
        the table keeps its own times."""
        if self._phase != "playing" or self._record or not self._control.timed:
            return False
        if had_clock and self._white_side is not None:
            return False
        if self._white_side is None and self._lever_high is not None:
            self._white_side = self._lever_high  # White's clock runs first: its lever is up
        base = self._control.base
        self._clocks = GameClocks(base, base, WHITE, t)  # White's time starts now
        self._order_times(t)
        return True

    def _order_times(self, t: float, *, paused: bool = False) -> None:
        """Set the clock to the table's times (set-and-run), the side to move running."""
        white = max(0.0, self._clocks.remaining(WHITE, t))
        black = max(0.0, self._clocks.remaining(BLACK, t))
        side = self._white_side or Side.LEFT
        left, right = (white, black) if side is Side.LEFT else (black, white)
        run = None
        if not paused and self._clocks.running is not None and self._white_side is not None:
            run = side if self._clocks.running == WHITE else _other(side)
        self._orders.append(ClockOrder("set_and_run", round(left, 3), round(right, 3), run))

    def _text(self, text: str, beep: float, t: float, *, hold: bool = False) -> None:
        """Show ``text`` on the clock for :data:`TEXT_SECONDS` (``hold``: until the next
        order, e.g. the result): :meth:`tick` sends ``end_text`` when it is due, so the
        players see their times again."""
        if self._clock_present:
            self._orders.append(ClockOrder("text", text=text[:TEXT_WIDTH], beep=beep))
            self._text_until = None if hold else t + TEXT_SECONDS

    def _clock_event(self, t: float) -> TableEvent:
        return TableEvent(t, "clock", self._clocks.snapshot(t))

    def _scores(self) -> dict[str, int]:
        if self._game is None:
            return {}
        scores = self._game.scores()
        if not scores:
            return {}
        return {"white": scores.get(WHITE, 0), "black": scores.get(BLACK, 0)}

    def _placement(self) -> str:
        """The pieces on the board as the placement field of a FEN (other symbols read as
        empty), kept with :meth:`physical`.  A presence-only board tells only that a square
        is occupied (``*``): such a square shows the game's piece there, if it has one."""
        cells = self.physical()
        game = self._game
        if self._recognizer.presence_only and game is not None:
            key = (self._raw_version, self._position_version, cells)
            kept = self._identified_cache
            if kept is None or kept[0] != key:
                placement = placement_fen(_identified(cells, game.squares))
                kept = self._identified_cache = (key, placement)
            return kept[1]
        cache = self._physical_cache
        assert cache is not None
        placement = cache[3]
        if placement is None:
            placement = self._placement_rows(cells)
            self._physical_cache = (cache[0], cache[1], cells, placement)
        return placement

    def _placement_rows(self, cells: SquareMap) -> str:
        """:func:`placement_fen` of ``cells``, writing again only the ranks that changed
        since the last one written (a move changes one or two)."""
        last = self._rows_cache
        if last is not None and last[0] is cells:
            return "/".join(last[1])  # written by _set_square
        if last is None:
            rows = [_rank_fen(cells[rank : rank + 8]) for rank in _RANKS]
        else:
            before, written = last
            rows = [
                row if before[rank : rank + 8] == cells[rank : rank + 8]
                else _rank_fen(cells[rank : rank + 8])
                for rank, row in zip(_RANKS, written, strict=True)
            ]  # fmt: skip
        self._rows_cache = (cells, rows)
        return "/".join(rows)

    def _settings_json(self) -> dict[str, Any]:
        """The settings as JSON (a fresh copy; built once per change of the settings)."""
        cache = self._settings_cache
        if cache is None or cache[0] is not self.settings:
            cache = self._settings_cache = (self.settings, asdict(self.settings))
        return dict(cache[1])

    # -- admin commands ------------------------------------------------------------------------

    def _admin_start(self, args: Mapping[str, Any], now: float) -> list[TableEvent]:
        try:
            return self._start_anew(args, now)
        finally:
            self._ending_tags = None  # also when the start failed half-way

    def _start_anew(self, args: Mapping[str, Any], now: float) -> list[TableEvent]:
        self._start_pending = False
        known = {f.name for f in fields(TableSettings)}
        unknown = set(args) - known
        if unknown:
            raise TableError(f"unknown setting(s): {', '.join(sorted(unknown))}")
        settings = replace(self.settings, **dict(args))
        rules, variant, control = _check_settings(settings)
        self._ending_tags = (self.settings, self._control)
        self._rules, self._variant, self._control = rules, variant, control
        self.settings = settings
        self._arbiter = Arbiter(self._rules, self)
        rotated = self._recognizer.rotated
        self._family = self._recognizer.presence_only
        self._recognizer = self._new_recognizer()
        if settings.start is not None:
            board = chess.Board(settings.start, chess960=settings.variant == "chess960")
            start = StartPosition(settings.variant, board.fen(), squares_of(board))
        else:
            start = self._variant.default_start()
        out: list[TableEvent] = []
        self._white_side = None
        for item in self._recognizer.start_game(now, start, rotated=rotated):
            out += self._recognized(item, None)
        if self._phase != "playing":
            out += self._begin(start, now, None)
        self._restarting = True
        try:
            pending = self._recognizer.feed(BoardSnapshot(now, tuple(self._raw), "resync"))
        finally:
            self._restarting = False
        for item in pending:
            if not isinstance(item, NewGame):
                out += self._recognized(item, None)
        return out

    def _admin_end(self, args: Mapping[str, Any], now: float) -> list[TableEvent]:
        result, reason = end_arguments(args)
        if self._phase != "playing":
            raise TableError("no game in progress")
        return self._end(result, reason, now, "admin")

    def _admin_players(self, args: Mapping[str, Any], now: float) -> list[TableEvent]:
        settings = replace(self.settings, **player_changes(args))
        _check_settings(settings)
        self.settings = settings
        return [players_event(now, settings.white, settings.black)]

    def _admin_rule(self, args: Mapping[str, Any], now: float) -> list[TableEvent]:
        claim = args.get("claim")
        decision = args.get("decision")
        if not isinstance(claim, str) or not isinstance(decision, str):
            raise TableError("rule takes claim (an id) and decision (accept or reject)")
        try:
            items = self._arbiter.decide(now, claim, decision)
        except ArbiterError as exc:
            raise TableError(str(exc)) from None
        return self._apply(items, now)

    def _admin_claim(self, args: Mapping[str, Any], now: float) -> list[TableEvent]:
        side = args.get("side")
        kind = args.get("kind")
        uci = args.get("uci")
        if side not in ("white", "black") or not isinstance(kind, str):
            raise TableError("claim takes side (white or black), kind and optionally uci")
        if uci is not None and not isinstance(uci, str):
            raise TableError("uci must be a string")
        if self._phase != "playing":
            raise TableError("no game in progress")
        try:
            items = self._arbiter.claim(now, side == "white", kind, uci)
        except ArbiterError as exc:
            raise TableError(str(exc)) from None
        return self._apply(items, now)

    def _admin_choose(self, args: Mapping[str, Any], now: float) -> list[TableEvent]:
        """A decision the board cannot show (20-chess: the rule cast for a turn, the piece
        the opponent picks under rule 5): ``value``, optionally ``what`` (``rule`` or
        ``piece``).  Both the table's game and the recogniser's take it; the board is then
        read again (an action already made on it is recognised)."""
        game = self._game
        if self._phase != "playing" or game is None:
            raise TableError("no game in progress")
        pending_of = getattr(game, "pending_choice", None)
        pending = pending_of() if callable(pending_of) else None
        if pending is None:
            raise TableError("no decision is due in this game now")
        what = args.get("what", pending[0])
        value = args.get("value")
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(what, str) or not isinstance(value, str):
            raise TableError(
                f"choose takes value (one of {', '.join(pending[2])}) and optionally what"
            )
        choice = Choice(what, value.strip().lower())
        try:
            game.decide(choice)  # type: ignore[attr-defined]
        except VariantError as exc:
            raise TableError(str(exc)) from None
        self._position_version += 1
        seen = self._recognizer.game
        if seen is not None and seen is not game:
            try:
                seen.decide(choice)  # type: ignore[attr-defined]
            except VariantError as exc:  # the recogniser is mid-way: it reads the board anew
                logger.warning("table %s: the recogniser could not take %s: %s", self.id,
                               choice, exc)  # fmt: skip
        out = [TableEvent(now, "choice", {"what": choice.what, "value": choice.value,
                                          "by": _name(pending[1])})]  # fmt: skip
        self._announce(now)
        for item in self._recognizer.reconsider(now):
            out += self._recognized(item, None)
        return out

    def _admin_correct(self, args: Mapping[str, Any], now: float) -> list[TableEvent]:
        """An arbiter's correction of move ``ply`` to ``uci``: the game is rewritten (later
        moves kept while they stay legal), never a variation."""
        ply = args.get("ply")
        uci = args.get("uci")
        if not isinstance(ply, int) or isinstance(ply, bool) or not isinstance(uci, str):
            raise TableError("correct takes ply (an integer) and uci (a move)")
        if self._start is None or not 1 <= ply <= len(self._record):
            raise TableError(f"no move at ply {ply}")
        if any(e.illegal for e in self._record):
            raise TableError("a game with a standing illegal move cannot be corrected")
        if self._variant.id == TwentyChess.id:
            raise TableError(
                "20-chess moves cannot be corrected by command: take them back on the board"
            )
        old = list(self._record)
        ucis = [e.uci for e in old]
        ucis[ply - 1] = uci
        game = get_variant(self._start.variant).new_game(self._start)
        record: list[_Entry] = []
        for index, move_uci in enumerate(ucis):
            action = _legal_action(game, move_uci)
            if action is None:
                if index == ply - 1:
                    raise TableError(f"{uci} is not legal at ply {ply}")
                break
            entry = _Entry(index + 1, game.move_number(), action.side, move_uci,
                           game.san(action.action), final=True)  # fmt: skip
            scores = game.apply(action.action)
            entry.scores = tuple(
                {"side": _name(s.side), "points": s.points, "reason": s.reason} for s in scores
            )
            previous = old[index]
            entry.clock = previous.clock
            entry.final = previous.final
            if index < ply - 1:  # the same position: the same moves read the same
                entry.alternatives = previous.alternatives
            record.append(entry)
        self._game = game
        self._position_version += 1
        self._record = record
        current = squares_of(game.board) if hasattr(game, "board") else game.squares
        start = StartPosition(game.variant.id, game.fen(), current)
        restarted = self._restart_recognition(start, now)
        return [*restarted,
            TableEvent(now, "ruling", {
                "kind": "correction", "article": "arbiter", "ply": ply, "uci": uci,
                "message": f"move {ply} corrected to {uci}; the game is rewritten",
                "moves": [e.to_json() for e in record],
            })
        ]  # fmt: skip

    def _admin_drop_kind(self, args: Mapping[str, Any], now: float) -> list[TableEvent]:
        """20-chess on a presence-only board: the captured piece dropped at ``ply`` (an
        integer, or ``"last"``: the latest drop of the record) was of kind ``kind`` (``p``,
        ``n``, ``b``, ``r``, ``q``), not the kind the board's occupancy was read as.  The
        game is taken back to before the drop, the drop made with the new kind and the later
        actions made again (in the table's game and in the recogniser's); the record is
        rewritten.  Refused when the action is no captured-piece drop, the kind is not in the
        hand then, or an action after it would no longer be legal."""
        game = self._game
        if self._phase != "playing" or game is None:
            raise TableError("no game in progress")
        if game.variant.id != TwentyChess.id:
            raise TableError("drop_kind corrects 20-chess drops; this table plays another variant")
        if not self.presence_only:
            raise TableError(
                "this board reads each piece: set the right piece on the square instead"
            )
        ply = args.get("ply", "last")
        kind = args.get("kind")
        if not isinstance(kind, str) or kind.strip().lower() not in ("p", "n", "b", "r", "q"):
            raise TableError('drop_kind takes ply (a number or "last") and kind (p, n, b, r or q)')
        kind = kind.strip().lower()
        drops = [e.ply for e in self._record if "@" in e.uci]
        if ply == "last":
            if not drops:
                raise TableError("no drop in this game yet")
            ply = drops[-1]
        if isinstance(ply, str) and ply.strip().isdigit():
            ply = int(ply.strip())
        if not isinstance(ply, int) or isinstance(ply, bool):
            raise TableError('ply must be a number or "last"')
        if not 1 <= ply <= len(self._record):
            raise TableError(f"no action at ply {ply}")
        entry = self._record[ply - 1]
        if "@" not in entry.uci:
            raise TableError(f"the action at ply {ply} ({entry.san}) is not a drop")
        symbol = entry.uci.split("@", 1)[0]
        if symbol.lower() not in ("p", "n", "b", "r", "q"):
            raise TableError(
                f"the action at ply {ply} ({entry.san}) sets down the extra piece: its kind "
                "is the rule's"
            )
        if symbol.lower() == kind:
            raise TableError(f"the drop at ply {ply} ({entry.san}) is already of kind {kind}")
        if game.ply != len(self._record):
            raise TableError("the record and the game disagree: take the actions back instead")
        from service.variants.base import Drop

        def redo(each: VariantGame, plies: int, symbol: str) -> list[tuple[str, str]] | str:
            """Take the last ``plies`` actions of ``each`` back, make the first (the drop)
            as a drop of ``symbol`` and the others again: each action's uci and notation as
            made now, or why it cannot be (the game is then left as it was)."""
            undone = [each.undo() for _ in range(plies)][::-1]

            def restore(made: int, reason: str) -> str:
                for _ in range(made):
                    each.undo()
                for action in undone:
                    each.apply(action)
                return reason

            first = undone[0]
            if not isinstance(first, Drop) or first.square != square:
                return restore(0, "the action there is not that drop")
            hand = getattr(each, "hand", None)
            held = hand(first.piece.isupper()) if callable(hand) else ()
            if symbol.lower() not in held:
                kinds = ", ".join(held) or "nothing"
                return restore(0, f"no {symbol.lower()} in the hand then (it held {kinds})")
            made_now: list[tuple[str, str]] = []
            for made, action in enumerate([Drop(symbol, square), *undone[1:]]):
                legal = next((la for la in each.legal_actions() if la.action == action), None)
                if legal is None:
                    what = "the new drop" if made == 0 else f"the later action {action}"
                    return restore(made, f"{what} would not be legal")
                made_now.append((legal.uci, each.san(action)))
                each.apply(action)
            return made_now

        seen = self._recognizer.game
        if seen is not None and seen is not game and seen.ply != game.ply - self._offset:
            raise TableError("the board is being read: wait until it stands still, then retry")
        square = chess.parse_square(entry.uci.split("@", 1)[1][:2])
        wanted = kind.upper() if symbol.isupper() else kind
        plies = len(self._record) - ply + 1
        rewritten = redo(game, plies, wanted)
        if isinstance(rewritten, str):
            raise TableError(f"ply {ply}: {rewritten}")
        if seen is not None and seen is not game and ply - self._offset >= 1:
            try:  # the recogniser's record too (the events it returns: the table's are above)
                self._recognizer.replace_action(ply - self._offset, Drop(wanted, square), now)
            except RecognizerError as error:
                logger.warning("table %s: the recogniser kept the old drop: %s", self.id, error)
        old_san = entry.san
        for offset, (uci, san) in enumerate(rewritten):
            later = self._record[ply - 1 + offset]
            later.uci, later.san = uci, san
        entry.notes.append(f"(drop corrected by the arbiter: was {old_san})")
        self._position_version += 1
        side = "White" if entry.side == WHITE else "Black"
        return [TableEvent(now, "ruling", {
            "kind": "drop-kind", "article": "arbiter", "ply": ply, "uci": entry.uci,
            "side": _name(entry.side),
            "message": f"{side}'s drop at ply {ply} corrected: {old_san} is {entry.san}",
            "moves": self.moves(),
        })]  # fmt: skip


_SHORT = {
    "touch-move": "TOUCH",
    "castling-after-rook": "NO O-O",
    "released-piece": "RELEASED",
    "illegal-move": "ILLEGAL",
    "pawn-not-promoted": "PROMOTE",
    "press-without-move": "NO MOVE",
    "displaced-pieces": "RESTORE",
    "takeback": "RESTORE",
    "flag": "FLAG",
    "part-incomplete": "NOT DONE",
}


@dataclass(slots=True)
class _PgnSource:
    """What a game's PGN is written from."""

    settings: TableSettings
    control: TimeControl
    result: str
    reason: str
    start: StartPosition | None
    game_tags: tuple[tuple[str, str], ...] | None
    """The variant's own tags (None before a game)."""
    scores: dict[str, int]
    record: tuple[_Entry, ...]


@dataclass(slots=True)
class _PgnKey:
    """Tells whether a PGN written earlier still reads right: the same objects (settings,
    time control, start, game, each move entry with its JSON, which a change of the entry
    drops) and the same values (result, reason, variant tags, scores, notes per move)."""

    objects: tuple[object, ...]
    values: tuple[object, ...]

    def same(self, other: _PgnKey) -> bool:
        return (
            len(self.objects) == len(other.objects)
            and all(a is b for a, b in zip(self.objects, other.objects, strict=True))
            and self.values == other.values
        )


def _pgn_key(source: _PgnSource, game: object) -> _PgnKey:
    objects: list[object] = [source.settings, source.control, source.start, game]
    notes: list[int] = []
    for entry in source.record:
        objects += (entry, entry.to_json())
        notes.append(len(entry.notes))
    values = (
        source.result, source.reason, source.game_tags, tuple(source.scores.items()),
        tuple(notes),
    )  # fmt: skip
    return _PgnKey(tuple(objects), values)


def _write_pgn(source: _PgnSource) -> str:
    """The PGN of ``source`` (see :meth:`Table.pgn`)."""
    segments = _segments(source.record)
    return "\n".join(
        _pgn_segment(source, index, len(segments), fen, entries, previous, stood)
        for index, (fen, entries, previous, stood) in enumerate(segments, 1)
    )


def _segments(
    record: tuple[_Entry, ...],
) -> list[tuple[str | None, list[_Entry], _Entry | None, _Entry | None]]:
    """The record cut at each standing illegal move: (start FEN, None for the game's own
    start; the completed moves; the illegal move it starts after; the one it ends with)."""
    out: list[tuple[str | None, list[_Entry], _Entry | None, _Entry | None]] = []
    fen: str | None = None
    previous: _Entry | None = None
    moves: list[_Entry] = []
    for entry in record:
        if entry.illegal:
            out.append((fen, moves, previous, entry))
            fen, previous, moves = entry.fen_after, entry, []
        elif entry.final:
            moves.append(entry)
    out.append((fen, moves, previous, None))
    return out


def _pgn_segment(
    src: _PgnSource, index: int, count: int, fen: str | None, entries: list[_Entry],
    previous_illegal: _Entry | None, stood: _Entry | None,
) -> str:  # fmt: skip
    s = src.settings
    last = index == count
    result = src.result if last else "*"
    tags = seven_tag_roster(s, result)
    tags["TimeControl"] = src.control.text
    if count > 1:
        tags["GameSegment"] = f"{index}/{count}"
    if src.reason and last:
        tags["Termination"] = src.reason
    if src.start is not None:
        if src.game_tags is not None:  # the variant's own tags (Variant, and any it adds)
            tags.update({k: v for k, v in src.game_tags if k not in ("SetUp", "FEN")})
        elif src.start.variant != "standard":
            tags["Variant"] = get_variant(src.start.variant).pgn_name
        if fen is not None or not src.start.classical:
            tags["SetUp"] = "1"
            tags["FEN"] = fen if fen is not None else src.start.fen
    scores = src.scores
    if scores and last:
        tags["WhiteScore"] = str(scores["white"])
        tags["BlackScore"] = str(scores["black"])
    tokens: list[str] = []
    if previous_illegal is not None:
        tokens.append(_comment([f"after {_stood(previous_illegal)}"]))
    previous: _Entry | None = None
    part = 0  # actions in the side's part so far
    for number, entry in enumerate(entries, 1):
        # a side's part of several actions (20-chess) is written under one number
        new_part = (
            previous is None or previous.side != entry.side or previous.number != entry.number
        )
        if new_part and entry.side == WHITE:
            tokens.append(f"{entry.number}.")
        elif new_part and (
            previous is None
            or previous.side == BLACK
            or previous.number != entry.number
            or part > 1
        ):
            tokens.append(f"{entry.number}...")
        part = 1 if new_part else part + 1
        tokens.append(entry.san)
        comment = []
        if entry.clock is not None:
            comment.append(f"[%clk {clk(entry.clock)}]")
        for score in entry.scores:
            comment.append(f"{score['side']} +{score['points']} {score['reason']}")
        comment += entry.notes
        if entry.alternatives:
            comment.append(ambiguity_note([san for _, san in entry.alternatives]))
        if stood is not None and number == len(entries):
            comment.append(_stood_note(stood))
        if comment:
            tokens.append(_comment(comment))
        previous = entry
    if stood is not None and not entries:
        tokens.append(_comment([_stood_note(stood)]))
    tokens.append(result)
    return game_text(tags, tokens)


def _long_algebraic(squares: SquareMap, uci: str) -> str:
    """A move no rule allows, as people write it: ``Ng1-g3``, ``e7xd6``, ``e7-e8=Q``."""
    origin, target = chess.parse_square(uci[:2]), chess.parse_square(uci[2:4])
    symbol = squares[origin] or ""
    letter = "" if symbol.lower() in ("p", "", "*", "?") else symbol.upper()
    sign = "x" if squares[target] else "-"
    promotion = f"={uci[4].upper()}" if len(uci) > 4 else ""
    return f"{letter}{uci[:2]}{sign}{uci[2:4]}{promotion}"


def _comment(parts: list[str]) -> str:
    return "{" + " ".join(parts).replace("}", ")") + "}"


def _stood(entry: _Entry) -> str:
    """``White's illegal move Ng1-g3 (g1g3), which stood (US speed 11)``."""
    side = "White" if entry.side == WHITE else "Black"
    return f"{side}'s illegal move {entry.san} ({entry.uci}), which stood ({entry.article})"


def _stood_note(entry: _Entry) -> str:
    side = "White" if entry.side == WHITE else "Black"
    clock = f" at {clk(entry.clock)} on the clock" if entry.clock is not None else ""
    return (
        f"{side}'s illegal move {entry.san} ({entry.uci}) stood{clock} ({entry.article}): "
        "the game goes on from the position after it in the next game segment"
    )
