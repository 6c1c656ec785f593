"""One game at one board: :class:`Table`, the phase machine and its glue to the recogniser
(:mod:`service.recognize`) and the arbiter (:mod:`service.arbiter`).

A table plays one game at a time at one board: players, event, round, time control, rule
set and variant (:class:`~service.table.settings.TableSettings`); the phases set-up,
playing, finished; the record (:mod:`service.table.record`, written as PGN by
:mod:`service.pgn`) and the event log (:class:`~service.table.events.TableEvent`).  Its
clocks are kept by a :class:`~service.table.clock_keeper.ClockKeeper`, what it shows by
:mod:`service.table.views`, and its admin commands' arguments are checked by
:mod:`service.table.admin`.

It is pure and deterministic: no I/O, no clock of its own, no randomness.  Its inputs are
board events (:meth:`Table.feed`), the passing of time (:meth:`Table.tick`) and admin commands
(:meth:`Table.admin`); the same inputs always give the same events and state, so a table is
rebuilt after a crash by replaying its logged inputs.  Commands for the board's clock wait in
:meth:`Table.take_clock_orders` for the runner to send.
"""

from __future__ import annotations

import enum
import logging
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import chess

from dgt.events import BoardEvent, BoardSnapshot, ClockUpdate, LeverMoved, SquareChanged
from dgt.protocol.constants import Piece
from dgt.recording import event_to_json
from service.arbiter import Arbiter, ArbiterEvent, Claim, Irregularity, Ruling
from service.arbiter.arbiter import ArbiterError
from service.arbiter.base import FlagPolicy
from service.pgn import TableGame, pgn_date, table_pgn
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
from service.table.admin import (
    AdminCommand,
    admin_command,
    choose_arguments,
    claim_arguments,
    correct_arguments,
    drop_kind_arguments,
    end_arguments,
    next_players_event,
    player_changes,
    players_now,
    players_wait,
    rule_arguments,
    start_changes,
)
from service.table.change_log import ChangeLog
from service.table.clock_keeper import SHORT_TEXTS, ClockKeeper, ClockOrder
from service.table.corrections import (
    corrected_game,
    correction_refusal,
    drop_to_correct,
    dropped_moves,
    redo_drop,
)
from service.table.events import (
    Link,
    Phase,
    TableEvent,
    clock_present_after,
    event_data,
    lever_json,
    link_after,
    move_data,
    players_event,
    square_data,
    square_json,
)
from service.table.quick_clock import Arming, QuickClock
from service.table.record import (
    MoveEntry,
    legal_action,
    long_algebraic,
    move_squares,
    scores_json,
    side_name,
)
from service.table.settings import (
    TableError,
    TableSettings,
    check_settings,
    check_table_id,
    clear_replaced_details,
    details_json,
    details_summary,
    next_players_shown,
)
from service.table.views import (
    BoardView,
    FenMemo,
    PgnMemo,
    SetRightMemo,
    SettingsMemo,
    set_right,
)
from service.time_control import TimeControl
from service.variants.base import (
    BLACK,
    EMPTY,
    WHITE,
    Choice,
    Color,
    Drop,
    SquareMap,
    StartPosition,
    Variant,
    VariantError,
    VariantGame,
)
from service.variants.registry import variant_for_start
from service.variants.standard import squares_of

__all__ = ["ENDED_KEPT", "Table"]

logger = logging.getLogger(__name__)

_INF = float("inf")

_SQUARE_NAMES = chess.SQUARE_NAMES

_DUE_MARGIN = 0.001
"""Seconds a tick is due early: more than the rounding of a time of day."""

ENDED_KEPT = 16
"""PGNs of replaced games a table keeps for :meth:`Table.take_ended_games`."""


class _SummaryKept(enum.Enum):
    """What of the summary written before an input still reads right after it."""

    NOTHING = enum.auto()
    ALL_BUT_BOARD = enum.auto()
    """A lift or a place the arbiter has nothing to say of: the board and the squares to
    set right change."""
    ALL_BUT_PLAY = enum.auto()
    """Lifts, places and moves in a game that the arbiter has nothing to say of: the board,
    the position, the record and what follows them change (see :meth:`Table._replayed`)."""
    ALL = enum.auto()
    """A lever press that completed what was played (final moves, the clock): only time."""


# Enum members read on every input, as module names: a member read off its class goes
# through the enum's metaclass (about 0.1 us each in Python 3.11).
_KEPT_NOTHING = _SummaryKept.NOTHING
_KEPT_ALL_BUT_BOARD = _SummaryKept.ALL_BUT_BOARD
_KEPT_ALL_BUT_PLAY = _SummaryKept.ALL_BUT_PLAY
_KEPT_ALL = _SummaryKept.ALL
_PLAYING = Phase.PLAYING
_SETUP = Phase.SETUP
_FINISHED = Phase.FINISHED
_LINK_UNKNOWN = Link.UNKNOWN
_LINK_UP = Link.UP
_LINK_DOWN = Link.DOWN
_FLAG_BY_CLOCK = FlagPolicy.CLOCK

_PRESS_SHOWS = frozenset(("board", "move", "clock"))
"""What a lever press that changes nothing of the summary but time answers."""

_MOVE_SHOWS = frozenset(("board", "lift", "place", "move"))
"""What a square change that changes the summary's play only (:attr:`_SummaryKept.ALL_BUT_PLAY`)
answers."""

TABLE_COMMANDS = tuple(AdminCommand)
"""The admin commands a turn-based table takes: all of them."""


@dataclass(frozen=True, slots=True)
class _Hooks:
    """Which of the variant hooks a move asks for a game's class has (the others answer
    None: a chess move needs no call to learn it)."""

    record_note: bool
    clock_text: bool


_HOOKS: dict[type[VariantGame], _Hooks] = {}

_NO_SCORES = VariantGame.scores
"""The scores of a game whose class keeps none (always empty)."""


def _ticked_and_fed(
    recognizer: Recognizer, t: float, event: SquareChanged | LeverMoved
) -> list[RecognizerEvent]:
    """``recognizer.tick(t) + recognizer.feed(event)`` with no third list when the tick
    gave nothing (the common case: one per square change and lever press)."""
    got = recognizer.tick(t)
    fed = recognizer.feed(event)
    if got:
        got += fed
        return got
    return fed


def _variant_hooks(game: VariantGame) -> _Hooks:
    kind = type(game)
    hooks = _HOOKS.get(kind)
    if hooks is None:
        hooks = _HOOKS[kind] = _Hooks(
            kind.record_note is not VariantGame.record_note,
            kind.clock_text is not VariantGame.clock_text,
        )
    return hooks


class Table:
    """One game at one board (see the module docstring).

    ``epoch``: the UNIX time of table time 0, when the times fed are wall-clock (the hall's
    are UNIX seconds: 0.0); the PGN's ``Date`` is then the day the game began.  None (the
    default): the date is unknown (``????.??.??``)."""

    def __init__(
        self, table_id: str, settings: TableSettings, *, epoch: float | None = None
    ) -> None:
        table_id = check_table_id(table_id)
        rules, variant, control = check_settings(settings)
        # What every board event reads, set first: an instance's attributes lie in the
        # order they were first set, so these share a cache line or two (a hall's tables
        # lie far apart in memory, and each input finds its table's memory cold).
        self._awaiting: StartPosition | None = None
        """A game started (a ``start`` command, a start FEN in the settings) while the board
        did not show its start position: the position it waits for (set-up, the clock
        stopped); it begins when the board shows it."""
        self.quick = QuickClock()
        """What a time-only clock report and a tick need of the table (the runner's fast
        path; re-armed after every input the table takes)."""
        self._clock = ClockKeeper(control)
        self._link = _LINK_UNKNOWN
        self._phase = _SETUP
        self._record: list[MoveEntry] = []
        self._game: VariantGame | None = None
        self._offset = 0
        self._board = BoardView()
        self._position_version = 0
        """Bumped whenever the game's position may have changed (keys the FEN memo)."""
        self._complete_next: dict[Color, bool] = {}
        self._rules, self._variant = rules, variant
        self._family: bool | None = None
        self._recognizer = self._new_recognizer()
        self._arbiter = Arbiter(self._rules, self)
        self.id = table_id
        self.settings = settings
        self._epoch = epoch
        self._fen = FenMemo()
        self._settings_json = SettingsMemo()
        self._set_right = SetRightMemo()
        self._last_move_kept: tuple[MoveEntry, str, str, dict[str, Any]] | None = None
        self._summary_base: dict[str, Any] | None = None
        """The summary but its clocks, written at the first summary after an input the
        table took (dropped by :meth:`_rearm`): the updates between two such inputs (a
        clock report answered by :attr:`quick`, a second stream) copy it and add the
        clocks only."""
        self._summary_after = _KEPT_NOTHING
        """What of the summary the input the table takes now leaves right (read and reset
        by :meth:`_rearm`)."""
        self._summary_played = False
        """The kept summary's play is to be written again (:meth:`_replayed`)."""
        self._rearmed = False
        """The input the table takes now re-armed :attr:`quick` itself (:meth:`_rearm_quiet`)."""
        self._clock_due = _INF
        """The clock's part of :attr:`QuickClock.due` as the last :meth:`_rearm` found it."""
        self._arming: Arming | None = None
        """What the last :meth:`_rearm` armed :attr:`quick` with but the recogniser's part
        (None: it disarmed it whatever the recogniser says)."""
        self._summary_kept: tuple[TableSettings, dict[str, Any], dict[str, Any]] | None = None
        """The summary's last part (the details, the next players) and the settings and
        next players it was written from."""
        self._details_kept: tuple[TableSettings, dict[str, dict[str, str]]] | None = None
        self._starts_by_squares: tuple[Variant, dict[SquareMap, StartPosition]] | None = None
        self._pgn_memo = PgnMemo()
        self._ended: deque[str] | None = None  # made when a game is first replaced
        self._ended_changes: deque[list[dict[str, Any]]] | None = None
        """The change log of each game in ``_ended``, in the same order."""
        self._ending_tags: tuple[TableSettings, str] | None = None
        """The settings and time control the game being replaced was played under, when
        a start command changes them before the new game begins."""
        self._change_log = ChangeLog()
        """What admin commands changed in the game under way (cleared when it is replaced)."""
        self._reset_game()
        self._next_players: dict[str, Any] = {}
        """Players named while the game under way was the record (it had moves or was
        finished): they play the next game."""
        self._start_pending = settings.start is not None
        """A start FEN in the settings: the first game starts from it once the board is
        read (as a ``start`` command would), not from a start position seen on the board."""

    def __getnewargs_ex__(self) -> tuple[tuple[str, TableSettings], dict[str, Any]]:
        """What unpickling passes to ``__new__`` (a read replica pickles tables): the compiled
        build's ``__new__`` runs ``__init__``, which takes these; the state pickled then sets
        every attribute.  Plain Python's ``__new__`` ignores them."""
        return (self.id, self.settings), {"epoch": self._epoch}

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
        return self._board.physical(bool(self._recognizer.rotated))

    def history(self) -> chess.Board | None:
        return self._game.chess_board() if self._game is not None else None

    # -- inputs --------------------------------------------------------------------------------

    def feed(self, event: BoardEvent) -> list[TableEvent]:
        """Process one driver event; returns what it caused (the event itself first)."""
        if type(event) is SquareChanged and self._awaiting is None:
            try:
                return self._square_change(event)
            finally:
                if self._rearmed:  # the square change re-armed the quick clock itself
                    self._rearmed = False
                else:
                    self._rearm()
        try:
            if type(event) is LeverMoved and self._awaiting is None:
                return self._lever_moved(event)
            return self._feed(event)
        finally:
            self._rearm()

    def _feed(self, event: BoardEvent) -> list[TableEvent]:
        t = event.time
        if self._awaiting is None:
            if type(event) is ClockUpdate:
                return self._clock_report(event)
            if type(event) is SquareChanged:
                return self._square_change(event)
            if type(event) is LeverMoved:
                return self._lever_moved(event)
        out = [TableEvent(t, "board", event_to_json(event))]
        clock = self._clock
        had_clock = clock.present
        if isinstance(event, SquareChanged):
            self._board.set_square(event.square, event.piece)
        elif isinstance(event, BoardSnapshot):
            self._board.snapshot(event.squares)
            if self._start_pending:
                self._start_pending = False
                self._link = link_after(self._link, event)
                return out + self._admin_start({}, t)  # reads the board it was given
        elif isinstance(event, ClockUpdate):
            clock.seen(event)
        self._link = link_after(self._link, event)
        clock.present = clock_present_after(clock.present, event)
        if self._awaiting is not None:
            return out + self._while_awaiting(event)
        # a lever press never comes here: with no start awaited it takes _lever_moved
        got = self._recognizer.tick(t) + self._recognizer.feed(event)
        for item in got:
            out += self._recognized(item, None)
        if isinstance(event, ClockUpdate) and not self._clock_learned(t, had_clock):
            out += self._on_clock_update(event)
        return out

    def _clock_report(self, event: ClockUpdate) -> list[TableEvent]:
        """:meth:`feed` of a clock report while no start is awaited (most inputs: one a
        second from every running clock), the steps of the general path it takes only."""
        t = event.time
        out = [TableEvent(t, "board", event_to_json(event))]
        clock = self._clock
        had_clock = clock.present
        clock.lever_high = event.lever_high  # clock.seen(event)
        if self._link is _LINK_UNKNOWN:
            self._link = _LINK_UP
        else:  # the summary shows nothing of a report but time, but for what it causes
            self._summary_after = _KEPT_ALL
        clock.present = True
        got = self._recognizer.clock_report(event)
        if got:
            self._summary_after = _KEPT_NOTHING
            for item in got:
                out += self._recognized(item, None)
        # _clock_learned, then _on_clock_update, with the phase and the control read once
        playing = clock.timed and self._phase is _PLAYING
        if (
            playing
            and not self._record
            and not (had_clock and clock.white_side is not None)  # (first_report's own test)
            and clock.first_report(t, had_clock)
        ):
            return out
        if clock.white_side is not None:  # else the report tells nothing of the game's times
            for color in clock.read(event, playing):
                self._summary_after = _KEPT_NOTHING
                out += self._apply(self._arbiter.on_flag(t, color), t)
        return out

    def _square_change(self, event: SquareChanged) -> list[TableEvent]:
        """:meth:`feed` of a square change while no start is awaited, the steps of the
        general path it takes only (a square change says nothing of the clock).  Most of
        them are one lift or one place in a game that the arbiter has nothing to say of:
        their events are written straight, and only the recogniser's part of the quick
        clock is armed again (:meth:`_rearm_quiet`)."""
        t = event.time
        square = event.square
        out = [TableEvent(t, "board", square_json(event))]
        self._board.set_square(square, event.piece)
        recognizer = self._recognizer
        got = _ticked_and_fed(recognizer, t, event)
        if len(got) == 1 and self._game is not None and self._link is not _LINK_UNKNOWN:
            item: Any = got[0]
            kind = type(item)
            if kind is Lift or kind is Place:
                on, piece = item.square, item.piece
                data = {"square": _SQUARE_NAMES[on], "piece": piece}
                if kind is Lift:
                    out.append(TableEvent(t, "lift", data))
                    ruled = self._arbiter.on_lift(t, on, piece)
                else:
                    out.append(TableEvent(t, "place", data))
                    ruled = self._arbiter.on_place(t, on, piece)
                if ruled:
                    out += self._apply(ruled, t)
                else:
                    self._rearm_quiet()
                return out
        game, phase = self._game, self._phase
        if len(got) == 2 and game is not None and self._link is not _LINK_UNKNOWN:
            place: Any = got[0]
            move: Any = got[1]
            if type(place) is Place and type(move) is MoveEvent:  # a move's last place
                return self._placed_move(place, move, out)
        board_only = self._summary_base is not None and game is not None
        if self._link is _LINK_UNKNOWN:
            self._link = _LINK_UP
            board_only = False
        played = board_only
        for item in got:
            if played:
                kind = type(item)
                if kind is not Lift and kind is not Place:
                    board_only = False
                    played = kind is MoveEvent
            out += self._recognized(item, None)
        # a lift or a place in a game answers its event alone unless the arbiter ruled
        if board_only and len(out) == 1 + len(got):
            self._summary_after = _KEPT_ALL_BUT_BOARD
        elif played and self._game is game and self._phase is phase:
            for shown in out:
                if shown.type not in _MOVE_SHOWS:
                    return out
            self._summary_after = _KEPT_ALL_BUT_PLAY
        return out

    def _placed_move(
        self, place: Place, move: MoveEvent, out: list[TableEvent]
    ) -> list[TableEvent]:
        """:meth:`_square_change` of the place that made a move in a game (the recogniser
        said ``place`` then ``move``; the link is up): the general path's steps for these
        two (:meth:`_recognized` of each), the summary's play kept for a move the arbiter
        had nothing to say of."""
        game, phase = self._game, self._phase
        kept = self._summary_base is not None
        t, on, piece = place.time, place.square, place.piece
        out.append(TableEvent(t, "place", {"square": _SQUARE_NAMES[on], "piece": piece}))
        ruled = self._arbiter.on_place(t, on, piece)
        if ruled:
            out += self._apply(ruled, t)
        out += self._on_move(move, move_data(move), None)
        if kept and self._game is game and self._phase is phase:
            for shown in out:
                if shown.type not in _MOVE_SHOWS:
                    return out
            self._summary_after = _KEPT_ALL_BUT_PLAY
        return out

    def _lever_moved(self, event: LeverMoved) -> list[TableEvent]:
        """:meth:`feed` of a lever press while no start is awaited, the steps of the general
        path it takes only (a lever press keeps the link up and says the clock is there)."""
        t = event.time
        out = [TableEvent(t, "board", lever_json(event))]
        only_time = self._game is not None  # and only final moves, events that show them
        if self._link is _LINK_UNKNOWN:
            self._link = _LINK_UP
            only_time = False
        recognizer = self._recognizer
        got = _ticked_and_fed(recognizer, t, event)
        if len(got) == 1 and only_time:
            item: Any = got[0]
            if type(item) is MoveEvent and item.final:  # the press completed a move
                return self._press_completed(event, item, out)
        completed: list[MoveEvent] = []  # the moves the press completed
        for item in got:
            if isinstance(item, MoveEvent) and item.final:
                completed.append(item)
            else:
                only_time = False
        clock = self._clock
        finals = [item.side for item in completed] if completed else []
        first = None
        if clock.white_side is None and not finals and not self._record:
            first = self._first_mover_on_board()
        pressed = clock.lever(event.high, finals, not self._record, first)
        for item in got:
            if type(item) is MoveEvent and self._game is not None:  # (_recognized's own)
                out += self._on_move(item, move_data(item), pressed)
            else:
                out += self._recognized(item, pressed)
        if pressed is not None and self._phase is _PLAYING:
            out += self._pressed(t, completed, pressed)
        if only_time and self._summary_base is not None:
            for shown_event in out:
                if shown_event.type not in _PRESS_SHOWS:
                    return out
            self._summary_after = _KEPT_ALL
        return out

    def _press_completed(
        self, event: LeverMoved, item: MoveEvent, out: list[TableEvent]
    ) -> list[TableEvent]:
        """:meth:`_lever_moved` of a press in a game, the link up, that completed the move
        ``item`` (the recogniser said that alone): the general path's steps for it."""
        t = event.time
        record = self._record
        pressed = self._clock.lever(event.high, (item.side,), not record)
        # _on_move(item, move_data(item), pressed) of a final move
        ply = self._offset + item.ply
        if ply <= len(record):
            entry = record[ply - 1]
            if not entry.final:
                data = move_data(item)
                data["ply"] = ply
                if entry.uci == item.uci and entry.alternatives != item.alternatives:
                    entry.set_alternatives(item.alternatives)
                out += self._finalise(entry, item.time, data)
        if pressed is not None and self._phase is _PLAYING:
            out += self._pressed(t, [item], pressed)
        if self._summary_base is not None:
            for shown_event in out:
                if shown_event.type not in _PRESS_SHOWS:
                    return out
            self._summary_after = _KEPT_ALL
        return out

    def _first_mover_on_board(self) -> Color | None:
        """Before the first move of a game: the side to move, if the board no longer shows
        the game's position (a square emptied or filled: a move was made that the recogniser
        could not explain); None while it does, or when several sides may act."""
        game = self._game
        if self._phase is not _PLAYING or game is None:
            return None
        sides = game.sides_to_act()
        if len(sides) != 1:
            return None
        expected = game.squares
        if all(
            (cell == EMPTY) == (expected[square] == EMPTY)
            for square, cell in enumerate(self.physical())
        ):
            return None
        return next(iter(sides))

    def tick(self, now: float) -> list[TableEvent]:
        """Time passes: settle delays complete moves; without a clock, a flag may fall."""
        try:
            return self._tick(now)
        finally:
            self._rearm()

    def _tick(self, now: float) -> list[TableEvent]:
        out: list[TableEvent] = []
        got = self._recognizer.tick(now)
        if got:
            for item in got:
                out += self._recognized(item, None)
        else:  # nothing the summary shows changes, but for a flag (below)
            self._summary_after = _KEPT_ALL
        clock = self._clock
        if (
            not clock.present  # a clock keeps the time: its reports tell of a flag
            and self._phase is _PLAYING
            and (
                self._rules.flag is not _FLAG_BY_CLOCK or self._game_variant().time_out is not None
            )
        ):
            fallen = clock.flag_fallen(now)
            if fallen is not None:
                self._summary_after = _KEPT_NOTHING
                out += self._apply(self._arbiter.on_flag(now, fallen), now)
        if clock.text_until is not None:  # most ticks: no text on the clock to end
            clock.tick(now)
        return out

    def admin(self, command: str, args: Mapping[str, Any], now: float) -> list[TableEvent]:
        """An organiser's or arbiter's command (see the module docs of the contract):
        ``start``, ``end``, ``players``, ``rule``, ``claim``, ``correct``, ``choose`` (a
        decision the board cannot show: ``value``, optionally ``what``), ``drop_kind`` (the
        kind of a 20-chess drop a presence-only board guessed: ``ply``, ``kind``).  Bad
        commands or arguments raise :class:`TableError`."""
        handlers: dict[AdminCommand, Callable[[Mapping[str, Any], float], list[TableEvent]]]
        handlers = {
            AdminCommand.START: self._admin_start,
            AdminCommand.END: self._admin_end,
            AdminCommand.PLAYERS: self._admin_players,
            AdminCommand.RULE: self._admin_rule,
            AdminCommand.CLAIM: self._admin_claim,
            AdminCommand.CORRECT: self._admin_correct,
            AdminCommand.CHOOSE: self._admin_choose,
            AdminCommand.DROP_KIND: self._admin_drop_kind,
        }
        handler = handlers[admin_command(command, args, TABLE_COMMANDS)]
        try:
            return handler(args, now)
        finally:
            self._rearm()

    def _rearm(self) -> None:
        """After an input: what a time-only clock report and a tick need, into
        :attr:`quick` (see :mod:`service.table.quick_clock`); the summary is written anew
        (but its board's part only, after an input that changed the board only)."""
        after = self._summary_after
        if after is _KEPT_NOTHING:
            self._summary_base = None
        else:
            self._summary_after = _KEPT_NOTHING
            base = self._summary_base
            if base is not None and after is not _KEPT_ALL:
                base["board"] = None  # written again at the next summary
                if after is _KEPT_ALL_BUT_PLAY:
                    self._summary_played = True
        quick = self.quick
        clock = self._clock
        quick.orders = bool(clock.orders)
        due = _INF  # the clock's part of it (kept for _rearm_quiet)
        until = clock.text_until
        if until is not None:
            due = until
        if not clock.present and self._phase is _PLAYING:  # the keeper's flag (tick)
            clocks = clock.clocks
            running = clocks.running
            if (
                clock.timed
                and running is not None
                and (
                    self._rules.flag is not _FLAG_BY_CLOCK
                    or self._game_variant().time_out is not None
                )
            ):
                left = clocks.white if running == WHITE else clocks.black
                due = min(due, clocks.as_of + left - _DUE_MARGIN)
        self._clock_due = due
        lever = clock.lever_high
        playing = clock.timed and self._phase is _PLAYING
        if (
            lever is None
            or self._awaiting is not None
            or self._link is _LINK_UNKNOWN
            or not clock.present
            or (playing and not self._record and clock.white_side is None)  # first report
        ):
            self._arming = None
        else:
            self._arming = (lever, playing, clock.white_side, clock.clocks)
        self._arm_quick()

    def _rearm_quiet(self) -> None:
        """:meth:`_rearm` after a lift or a place that the arbiter had nothing to say of
        (the only input that calls it): the clock, the phase, the link and the record are
        as the last :meth:`_rearm` left them, so only the recogniser's part of the quick
        clock changes; the summary's board is written again at the next summary."""
        base = self._summary_base
        if base is not None:
            base["board"] = None
        self._arm_quick()
        self._rearmed = True

    def _arm_quick(self) -> None:
        """:attr:`quick` armed from the recogniser as it stands and the clock's part the
        last :meth:`_rearm` kept (:attr:`_clock_due`, :attr:`_arming`)."""
        quick = self.quick
        recognizer = self._recognizer
        recognized = recognizer.due()
        due = self._clock_due
        quick.due = recognized if recognized < due else due
        arming = self._arming
        quiet = None if arming is None else recognizer.quiet_reports()
        if arming is None or quiet is None:
            quick.disarm()
        else:
            quick.arm(arming, quiet)

    def take_clock_orders(self) -> list[ClockOrder]:
        """The clock commands issued since the last call: the settings (set-and-run, the
        last one wins) first, then texts and the rest, each oldest first -- so that a text
        is not wiped at once by a setting issued with it (a set-and-run ends a text)."""
        self.quick.orders = False
        clock = self._clock
        return clock.take_orders() if clock.orders else []  # asked after every input

    # -- outputs -------------------------------------------------------------------------------

    @property
    def phase(self) -> Phase:
        return self._phase

    @property
    def result(self) -> str:
        return self._result

    @property
    def control(self) -> TimeControl:
        """The time control the game is played under (from the settings)."""
        return self._clock.control

    def moves(self) -> list[dict[str, Any]]:
        """The record as JSON, one entry a move (each built once per change of the move and
        shared: treat them as read-only)."""
        return [entry.to_json() for entry in self._record]

    def fen(self) -> str | None:
        """The game's position as FEN (None before a game), computed once per position."""
        return self._fen.fen(self._position_version, self._game)

    def state(self, now: float | None = None) -> dict[str, Any]:
        """A JSON-able snapshot for the web."""
        as_of = self._clock.clocks.as_of if now is None else now
        return {
            "id": self.id,
            "settings": self._settings_json.json(self.settings),
            "phase": self._phase,
            "fen": self.fen(),
            "board": self._placement(),
            "orientation": "black" if self._recognizer.rotated else "white",
            "last_move": self._last_move(),
            "moves": self.moves(),
            "clocks": self._clock.snapshot(as_of),
            "clock_present": self._clock.present,
            "scores": self._scores(),
            "claims": [c.to_json() for c in self._arbiter.open_claims()],
            "irregularities": list(self._irregularities),
            "obligations": self._arbiter.obligations(),
            "result": self._result,
            "reason": self._reason,
            "link": self._link,
            "mismatch": list(self._mismatch),
            "variant_panel": self._variant_panel(),
            "set_right": self._squares_to_set_right(),
            "awaiting_start": self._awaiting.fen if self._awaiting is not None else None,
            **next_players_shown(self._next_players),
        }

    def _variant_panel(self) -> dict[str, Any] | None:
        """What the mirror shows of a variant's own state (20-chess: the rule, the step,
        the hands, a pending choice, the extra pieces); None for the others."""
        return self._game.panel() if self._game is not None else None

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
        record = tuple(self._record)
        return self._pgn_memo.pgn(self._pgn_source(record), self._game, record, table_pgn)

    def change_log(self) -> list[dict[str, Any]]:
        """What admin commands changed in the game at the table (a corrected move or drop,
        its players, its result by ``end``), oldest first, each with its time, the old
        and the new value."""
        return self._change_log.to_json()

    def take_ended_games(self) -> list[str]:
        """The PGN of each game with moves that a new game replaced since the last call,
        oldest first, as it read when it was replaced (under the settings it was played
        with).  Up to :data:`ENDED_KEPT` are kept for a caller that does not ask."""
        if not self._ended:
            return []
        ended = list(self._ended)
        self._ended.clear()
        return ended

    def take_ended_change_logs(self) -> list[list[dict[str, Any]]]:
        """The change log of each game :meth:`take_ended_games` returns (or returned last),
        in the same order: call it right after that."""
        if not self._ended_changes:
            return []
        changes = list(self._ended_changes)
        self._ended_changes.clear()
        return changes

    def summary(self, now: float | None = None) -> dict[str, Any]:
        """What the overview shows of the table: :meth:`state` without the move list, the
        claims, the obligations and the settings (the players, round, event and variant
        instead, and the number of moves, open claims and irregularities).  Asked at every
        update the table publishes, so each part is kept until what it is written from
        changes (the parts are shared between summaries: treat them as read-only)."""
        clock = self._clock
        base = self._summary_base
        if base is None or base["board"] is None:  # (else kept whole: no call to learn it)
            base = self._summary_base_now()
        out = base.copy()
        out["clocks"] = clock.shown(clock.clocks.as_of if now is None else now)
        return out

    def _summary_base_now(self) -> dict[str, Any]:
        """The summary but its clocks (kept; see :attr:`_summary_base`), what is missing
        of it written."""
        base = self._summary_base
        if base is None:
            self._summary_played = False
            base = self._summary_base = self._summary_written()
        elif base["board"] is None:  # the board changed (and the play: _replayed)
            recognizer = self._recognizer
            rotated, presence_only = bool(recognizer.rotated), bool(recognizer.presence_only)
            board = base["board"] = self._board.placement(
                rotated, self._game, self._position_version, presence_only
            )
            cells = self._board.physical(rotated)  # (kept: the one placement read)
            if self._summary_played:
                self._summary_played = False
                self._replayed(base, None if presence_only else (cells, board))
            base["set_right"] = self._squares_to_set_right(cells)
        return base

    def _replayed(self, base: dict[str, Any], shown: tuple[SquareMap, str] | None) -> None:
        """The parts of the summary ``base`` that lifts, places and moves nobody ruled on
        change (:attr:`_SummaryKept.ALL_BUT_PLAY`) written again but the board's (``shown``:
        the cells the board shows and their placement) and the squares to set right: the
        position, the record and its last move, the scores.  The rest stands: such an input
        keeps the game and the phase (so the result), finds the link up, and its arbiter
        said nothing (no claim, no irregularity; see :meth:`_square_change`)."""
        base["fen"] = self._fen.fen(self._position_version, self._game, shown)
        base["last_move"] = self._last_move()
        base["scores"] = self._scores()
        base["ply"] = len(self._record)

    def _summary_written(self) -> dict[str, Any]:
        """:meth:`summary` with its clocks left to fill in (None), as the table stands."""
        recognizer = self._recognizer
        rotated = bool(recognizer.rotated)
        settings = self.settings
        kept = self._summary_kept
        if kept is None or kept[0] is not settings or kept[1] is not self._next_players:
            kept = self._summary_kept = (
                settings, self._next_players,
                {**self._details(), **next_players_shown(self._next_players)},
            )  # fmt: skip
        presence_only = bool(recognizer.presence_only)
        board = self._board.placement(rotated, self._game, self._position_version, presence_only)
        cells = self._board.physical(rotated)  # (kept: the one placement read)
        shown = None if presence_only else (cells, board)
        out: dict[str, Any] = {
            "id": self.id,
            "phase": self._phase,
            "fen": None,  # the play's parts (None, 0) are written by _replayed, below
            "board": board,
            "orientation": "black" if rotated else "white",
            "last_move": None,
            "clocks": None,
            "scores": None,
            "result": self._result,
            "reason": self._reason,
            "link": self._link,
            "white": settings.white,
            "black": settings.black,
            "round": settings.round,
            "event": settings.event,
            "variant": settings.variant,
            "ply": 0,
            "claims": self._arbiter.open_count(),
            "irregularities": len(self._irregularities),
            "set_right": self._squares_to_set_right(cells),
        }
        self._replayed(out, shown)
        tail = kept[2]
        if tail:
            out.update(tail)
        return out

    def _last_move(self) -> dict[str, Any] | None:
        """The last move shown (``from``, ``to``, ``uci``, ``san``), written once per move
        and shared (treat it as read-only)."""
        record = self._record
        if not record:
            return None
        last = record[-1]
        kept = self._last_move_kept
        if kept is None or kept[0] is not last or kept[1] != last.uci or kept[2] != last.san:
            origin, target = move_squares(last.uci)
            shown = {"from": origin, "to": target, "uci": last.uci, "san": last.san}
            kept = self._last_move_kept = (last, last.uci, last.san, shown)
        return kept[3]

    def _details(self) -> dict[str, dict[str, str]]:
        """:func:`details_summary` of the settings, once per settings object (the summary's
        ``details`` is shared between summaries; nobody changes it)."""
        settings = self.settings
        kept = self._details_kept
        if kept is None or kept[0] is not settings:
            kept = self._details_kept = (settings, details_summary(settings))
        return kept[1]

    def _pgn_source(self, record: tuple[MoveEntry, ...]) -> TableGame:
        """What the PGN of the game at the table is written from, now."""
        settings, control = self._ending_tags or (self.settings, self._clock.control.text)
        game = self._game
        return TableGame(
            settings,
            control,
            self._result,
            self._reason,
            self._start,
            None if game is None else tuple(game.pgn_tags().items()),
            self._scores(),
            record,
            self._date,
            details_json(settings),
        )

    # -- internals: games ----------------------------------------------------------------------

    def _new_recognizer(self) -> Recognizer:
        return Recognizer(variant=self._variant, presence_only=self._family)

    def _reset_game(self) -> None:
        if self._record:  # a game with moves is replaced: keep its PGN and its change log
            if self._ended is None or self._ended_changes is None:
                self._ended = deque(maxlen=ENDED_KEPT)
                self._ended_changes = deque(maxlen=ENDED_KEPT)
            self._ended.append(self.pgn())
            self._ended_changes.append(self._change_log.to_json())
        self._ending_tags = None
        self._change_log.clear()  # the replaced game's changes go with its kept PGN
        self._pgn_memo.clear()  # its key holds the old game (its positions, its record)
        self._position_version += 1
        self._phase = _SETUP
        self._game = None
        self._start: StartPosition | None = None
        self._date: str | None = None
        """The PGN's ``Date``: the day the game began, if known."""
        self._record = []
        self._offset = 0
        self._result = "*"
        self._reason = ""
        self._irregularities: list[dict[str, Any]] = []
        self._mismatch: tuple[str, ...] = ()
        self._restarting = False
        self._complete_next = {}
        self._reason_source = ""
        self._announced: tuple[object, str] | None = None
        self._arbiter.reset()

    def _game_variant(self) -> Variant:
        return self._game.variant if self._game is not None else self._variant

    def _begin(self, start: StartPosition, t: float, event: NewGame | None) -> list[TableEvent]:
        """A new game from ``start``: the record, the arbiter and the clocks start afresh."""
        self._reset_game()
        self._admin_new_game()
        variant = variant_for_start(self._variant, start)
        self._game = variant.new_game(start)
        known = self._recognizer.game
        if known is not None:
            self._game.share_positions(known)  # the positions are worked out once
        self._position_version += 1
        self._start = start
        self._date = pgn_date(self._epoch, t)
        self._phase = _PLAYING
        data = event_data(event) if event is not None else {"variant": variant.id, "fen": start.fen}
        out = [TableEvent(t, "new_game", data)]
        self._clock.begin(t)
        out.append(self._clock_event(t))
        self._announce(t)
        return out

    def _announce(self, t: float) -> None:
        """A variant that names each turn's rule on the clock (20-chess: ``RULE 12``): show
        it when a turn begins or a decision is due."""
        game = self._game
        hint = game.clock_text() if game is not None else None
        if game is None or hint is None:
            return
        key = (game.turn, hint)
        if key != self._announced:
            self._announced = key
            self._clock.text(key[1], 0.0, t)

    def _recognized(self, item: RecognizerEvent, pressed: Color | None) -> list[TableEvent]:
        # the recogniser's most frequent events in a game first, their data built straight
        if self._game is not None:
            kind = type(item)
            if kind is Lift or kind is Place:
                on: Any = item  # a Lift or a Place
                t, square, piece = on.time, on.square, on.piece
                if kind is Lift:
                    event = TableEvent(t, "lift", square_data(square, piece))
                    ruled = self._arbiter.on_lift(t, square, piece)
                else:
                    event = TableEvent(t, "place", square_data(square, piece))
                    ruled = self._arbiter.on_place(t, square, piece)
                return [event, *self._apply(ruled, t)] if ruled else [event]
            if kind is MoveEvent:
                move: Any = item
                return self._on_move(move, move_data(move), pressed)
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
            if self._phase is not _PLAYING:
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
        ply = self._offset + item.ply  # self._ply(item.ply)
        data["ply"] = ply
        record = self._record
        if not item.final:
            if self._phase is not _PLAYING or len(record) >= ply:
                return []
            action = legal_action(game, item.uci)
            if action is None:
                return []
            arbiter = self._arbiter
            arbiter.before_action(t, ply, action, game.legal_actions, game.squares)
            hooks = _variant_hooks(game)
            note = game.record_note() if hooks.record_note else None
            scores = game.apply(action.action)
            self._position_version += 1
            # the entry's fields by position (no keywords to match: one made per action)
            entry = MoveEntry(ply, item.number, item.side, item.uci, item.san, False, None,
                              scores_json(scores), False, None, None, "",
                              item.alternatives)  # fmt: skip
            if note:
                entry.notes.append(note)
            record.append(entry)
            clock = self._clock
            if clock.timed and not clock.present:  # keeps time: a part of several actions
                entry.set_clock(clock.moved(item.side, game.sides_to_act(), t))  # keeps its clock
            out = [TableEvent(t, "move", data)]
            if hooks.clock_text:
                self._announce(t)
            if scores:
                out.append(TableEvent(t, "score", {"ply": ply, "scores": list(entry.scores),
                                                    "totals": self._scores()}))  # fmt: skip
                totals = self._scores()
                clock.text(f"{totals['white']}-{totals['black']}", 0.0, t)
            ruled = arbiter.on_action(t, ply, item.side, False)
            if ruled:
                out += self._apply(ruled, t)
            if self._complete_next and self._complete_next.pop(item.side, False):
                out += self._finalise(entry, t, data | {"final": True})
            return out
        if ply > len(record):
            return []
        entry = record[ply - 1]
        if entry.final:
            return []
        if entry.uci == item.uci and entry.alternatives != item.alternatives:
            entry.set_alternatives(item.alternatives)  # more were found as the move went on
        return self._finalise(entry, t, data)

    def _finalise(self, entry: MoveEntry, t: float, data: dict[str, Any]) -> list[TableEvent]:
        clock = self._clock
        side = entry.side
        if entry.clock is None and clock.timed:
            entry.finish(clock.clocks.remaining(side, t))
        else:
            entry.finish()
        if clock.timed and not clock.present:  # keeps time
            moves = sum(1 for e in self._record if e.side == side and e.final)
            clock.completed(side, moves, t)
        out = [TableEvent(t, "move", data)]
        ruled = self._arbiter.on_action(t, entry.ply, side, True)
        if ruled:
            out += self._apply(ruled, t)
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
        action = legal_action(game, item.uci)
        if action is None:
            return [TableEvent(t, "amend", data)]
        before = game.squares
        self._arbiter.before_action(t, ply, action, game.legal_actions, before)
        scores = game.apply(action.action)
        entry = self._record[-1]
        entry.amend(item.uci, item.san, item.alternatives, scores_json(scores))
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
        if self._phase is _FINISHED and self._rules.takebacks and self._reason_source == "board":
            self._phase = _PLAYING
            self._result, self._reason = "*", ""
            self._arbiter.resume()
            out.append(TableEvent(t, "result", {"result": "*", "reason": "taken back"}))
        if self._clock.keeps_time:
            sides = game.sides_to_act()
            if len(sides) == 1:
                self._clock.run(next(iter(sides)), t)
        out += self._apply(self._arbiter.on_takeback(t, ply, item.final), t)
        return out

    def _end(self, result: str, reason: str, t: float, source: str) -> list[TableEvent]:
        if self._phase is not _PLAYING:
            return []
        self._phase = _FINISHED
        self._result = result
        self._reason = reason
        self._reason_source = source
        self._clock.run(None, t)
        out = [TableEvent(t, "result", {"result": result, "reason": reason})]
        for claim in self._arbiter.finish():
            out.append(TableEvent(t, "claim", event_data(claim)))
        self._clock.stopped(result, t)
        return out

    # -- internals: rulings --------------------------------------------------------------------

    def _apply(self, items: list[ArbiterEvent], t: float) -> list[TableEvent]:
        out: list[TableEvent] = []
        for item in items:
            out.append(TableEvent(t, item.type, event_data(item)))
            if isinstance(item, Irregularity):
                self._irregularities.append(item.to_json())
                self._clock.text(SHORT_TEXTS.get(item.kind, "ARBITER"), 0.5, t)
            elif isinstance(item, Claim):
                if item.status in ("offered", "made"):
                    self._clock.text("CLAIM?", 0.3, t)
            elif isinstance(item, Ruling):
                out += self._rule(item, t)
        return out

    def _rule(self, ruling: Ruling, t: float) -> list[TableEvent]:
        kind = ruling.kind
        if kind == "result" and ruling.result is not None:
            last = self._record[-1] if self._record else None
            if last is not None and not last.final and ruling.reason in ("checkmate", "stalemate"):
                # FIDE 5.1.1 / 5.2.1: the move ended the game before the clock was pressed.
                clock = self._clock
                last.finish(max(0.0, clock.remaining(last.side, t)) if clock.timed else None)
            return self._end(ruling.result, ruling.reason or "", t, "arbiter")
        if kind == "penalty-time":
            self._clock.add_time(ruling.add_time, t)
            return [self._clock_event(t)]
        if kind == "clock" and ruling.run is not None:
            self._clock.set_running(ruling.run, t)
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
        clock = self._clock.remaining(side, t) if self._clock.timed else None
        entry = MoveEntry(len(self._record) + 1, game.move_number(), side, ruling.uci,
                          long_algebraic(game.squares, ruling.uci), final=True, clock=clock,
                          illegal=True, fen_after=ruling.fen, article=ruling.article)  # fmt: skip
        self._record.append(entry)
        board = chess.Board(ruling.fen, chess960=game.variant.chess960)
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
            pending = self._recognizer.feed(BoardSnapshot(t, tuple(self._board.raw), "resync"))
        finally:
            self._restarting = False
        out: list[TableEvent] = []
        for item in pending:
            if not isinstance(item, (Lift, Place)):
                out += self._recognized(item, None)
        return out

    # -- internals: the clock ------------------------------------------------------------------

    def _pressed(self, t: float, completed: list[MoveEvent], presser: Color) -> list[TableEvent]:
        """``presser`` pressed the clock at ``t`` in a game under way (``completed``: the
        moves the press completed): the clocks, the record's times, the arbiter."""
        if len(completed) == 1:  # most presses: one move completed (no comprehension's frame)
            pressed = completed if completed[0].side == presser else []
        else:
            pressed = [e for e in completed if e.side == presser] if completed else completed
        game = self._game
        sides = None if game is None else game.sides_to_act()
        part_done = sides is None or presser not in sides  # 20-chess: parts
        # the increment or bonus due depends on the moves made only under periods of moves
        clock = self._clock
        record = self._record
        counted = clock.counts_moves
        moves = sum(1 for e in record if e.side == presser and e.final) if counted else 0
        shown = clock.pressed(presser, bool(pressed), part_done, moves, t)
        offset = self._offset
        for item in pressed:
            ply = offset + item.ply
            if ply <= len(record):
                record[ply - 1].set_clock(shown)
        ruled = self._arbiter.on_press(t, presser, bool(pressed), sides)
        out = self._apply(ruled, t) if ruled else []
        out.append(TableEvent(t, "clock", clock.shown(t)))  # self._clock_event(t)
        return out

    def _on_clock_update(self, event: ClockUpdate) -> list[TableEvent]:
        t = event.time
        out: list[TableEvent] = []
        playing = self._phase is _PLAYING and self._clock.timed
        for color in self._clock.read(event, playing):
            out += self._apply(self._arbiter.on_flag(t, color), t)
        return out

    def _clock_learned(self, t: float, had_clock: bool) -> bool:
        """Before the first move of a timed game, a clock reported its times for the first
        time (see :meth:`ClockKeeper.first_report`).  True if the keeper set the clock:
        the report predates the order, so the table keeps its own times."""
        if self._phase is not _PLAYING or self._record or not self._clock.timed:
            return False
        return self._clock.first_report(t, had_clock)

    def _clock_event(self, t: float) -> TableEvent:
        """The clocks as of ``t`` (the keeper's :meth:`~ClockKeeper.shown`: a snapshot, kept
        and shared with the summary, which shows the clocks as of the same time after a
        press or a ruling: read-only, as every event's data)."""
        return TableEvent(t, "clock", self._clock.shown(t))

    def _scores(self) -> dict[str, int]:
        game = self._game
        if game is None or type(game).scores is _NO_SCORES:  # most games: no call to learn it
            return {}
        scores = game.scores()
        if not scores:
            return {}
        return {"white": scores.get(WHITE, 0), "black": scores.get(BLACK, 0)}

    def _placement(self) -> str:
        """The pieces on the board as the placement field of a FEN (see
        :meth:`BoardView.placement`)."""
        recognizer = self._recognizer
        return self._board.placement(
            bool(recognizer.rotated), self._game, self._position_version,
            bool(recognizer.presence_only),
        )  # fmt: skip

    # -- admin commands ------------------------------------------------------------------------

    def _admin_start(self, args: Mapping[str, Any], now: float) -> list[TableEvent]:
        try:
            return self._start_anew(args, now)
        finally:
            self._ending_tags = None  # also when the start failed half-way

    def _start_anew(self, args: Mapping[str, Any], now: float) -> list[TableEvent]:
        self._start_pending = False
        settings = replace(self.settings, **{**self._next_players, **start_changes(args)})
        rules, variant, control = check_settings(settings)
        self._next_players = {}
        self._ending_tags = (self.settings, self._clock.control.text)
        self._rules, self._variant, self._clock.control = rules, variant, control
        self.settings = settings
        self._arbiter = Arbiter(self._rules, self)
        rotated = self._recognizer.rotated
        self._family = self._recognizer.presence_only
        self._recognizer = self._new_recognizer()
        if settings.start is not None:
            board = chess.Board(settings.start, chess960=self._variant.chess960)
            start = StartPosition(settings.variant, board.fen(), squares_of(board))
        else:
            start = self._variant.default_start()
        self._clock.white_side = None
        self._awaiting = None
        shown = self._start_shown(start, settings.start is None, rotated)
        if shown is None:
            return self._await_setup(start, now)
        start, rotated = shown
        return self._play_from(start, rotated, now)

    def _play_from(self, start: StartPosition, rotated: bool, now: float) -> list[TableEvent]:
        """The game begins from ``start``, the board showing it (``rotated``: turned round);
        recognition reads the board as it is."""
        out: list[TableEvent] = []
        for item in self._recognizer.start_game(now, start, rotated=rotated):
            out += self._recognized(item, None)
        if self._phase is not _PLAYING:
            out += self._begin(start, now, None)
        self._restarting = True
        try:
            pending = self._recognizer.feed(BoardSnapshot(now, tuple(self._board.raw), "resync"))
        finally:
            self._restarting = False
        for item in pending:
            if not isinstance(item, NewGame):
                out += self._recognized(item, None)
        return out

    # -- set-up before play --------------------------------------------------------------------

    def _start_shown(
        self, start: StartPosition, any_start: bool, rotated: bool
    ) -> tuple[StartPosition, bool] | None:
        """The start position the board shows and whether it is turned round: ``start``
        (``any_start``: or any start position of the variant), read either way round; None
        while it shows none of them (a presence-only board: by occupancy)."""
        board = self._board
        for turned in (rotated, not rotated):
            cells = board.physical(turned)
            if cells == start.squares:
                return start, turned
            if "*" in cells or "?" in cells:  # read by occupancy (all starts of a variant alike)
                if not set_right(start.squares, cells):
                    return start, turned
            elif any_start:
                found = self._variant_starts().get(cells)
                if found is not None:
                    return found, turned
        return None

    def _variant_starts(self) -> dict[SquareMap, StartPosition]:
        """The variant's start positions by their squares (built once per variant)."""
        kept = self._starts_by_squares
        if kept is None or kept[0] is not self._variant:
            starts = {s.squares: s for s in reversed(self._variant.start_positions())}
            kept = self._starts_by_squares = (self._variant, starts)
        return kept[1]

    def _await_setup(self, start: StartPosition, now: float) -> list[TableEvent]:
        """The board does not show ``start``: the game waits in set-up, its clock stopped,
        until it does (:meth:`_while_awaiting`); the game it replaces is kept."""
        self._reset_game()
        self._awaiting = start
        self._position_version += 1
        self._clock.ready(now)
        squares = self._squares_to_set_right()
        return [
            TableEvent(now, "setup", {"fen": start.fen, "variant": start.variant,
                                      "set_right": squares}),
            self._clock_event(now),
        ]  # fmt: skip

    def _while_awaiting(self, event: BoardEvent) -> list[TableEvent]:
        """A board event while a game waits for its start position: a lever press is
        noted (the clock's sides), the board compared again; the game begins once it
        shows the start position."""
        start = self._awaiting
        assert start is not None
        if isinstance(event, LeverMoved):
            self._clock.lever_high = event.high
            self._clock.present = True
            return []
        if not isinstance(event, (SquareChanged, BoardSnapshot)):
            return []
        rotated = bool(self._recognizer.rotated)
        shown = self._start_shown(start, self.settings.start is None, rotated)
        if shown is None:
            return []
        self._awaiting = None
        return self._play_from(shown[0], shown[1], event.time)

    def _squares_to_set_right(self, cells: SquareMap | None = None) -> list[dict[str, str]]:
        """Where the board differs from what it should show: while a game waits for its
        start position, from that position; before a first game, from the variant's start
        (any of its starts will do); while playing, from the game's position.  Empty when a
        game is over (the board is cleared and set up for the next one).  ``cells``: the
        board's (:meth:`physical`) where the caller read them already."""
        if cells is None:
            cells = self._board.physical(bool(self._recognizer.rotated))
        step = self._board.last_step
        if self._awaiting is not None:
            return self._set_right.squares(self._awaiting.squares, cells, step=step)
        if self._phase is _PLAYING and self._game is not None:
            return self._set_right.squares(self._game.squares, cells, step=step)
        if self._phase is _SETUP and self._start is None:
            starts = self._variant.start_positions()
            want = starts[0].squares
            return self._set_right.squares(want, cells, loose=len(starts) > 1, step=step)
        return []

    def _admin_end(self, args: Mapping[str, Any], now: float) -> list[TableEvent]:
        result, reason = end_arguments(args)
        if self._phase is not _PLAYING:
            raise TableError("no game in progress")
        old = (self._result, self._reason)
        out = self._end(result, reason, now, "admin")
        self._change_log.result(now, old, (result, reason))
        return out

    def _admin_players(self, args: Mapping[str, Any], now: float) -> list[TableEvent]:
        """The players of the game under way if it has no move yet, else of the next game
        (the event says so): a game with moves or finished is the record."""
        changes = player_changes(args)
        wait = None if players_now(args) else players_wait(self._phase, len(self._record))
        if wait is None:
            changes = clear_replaced_details(changes, self.settings)
            settings = replace(self.settings, **changes)
            check_settings(settings)
            old = (self.settings.white, self.settings.black)
            self.settings = settings
            if self._game is not None:
                self._change_log.players(now, old, (settings.white, settings.black))
            return [players_event(now, settings.white, settings.black)]
        changes = clear_replaced_details(changes, replace(self.settings, **self._next_players))
        waiting = {**self._next_players, **changes}
        settings = replace(self.settings, **waiting)
        check_settings(settings)
        self._next_players = {**waiting, "white": settings.white, "black": settings.black}
        return [next_players_event(now, settings.white, settings.black, wait)]

    def _admin_new_game(self) -> None:
        """A new game begins: the players named for it (if any) take their seats (its
        change log was emptied when the game before was replaced)."""
        if self._next_players:
            self.settings = replace(self.settings, **self._next_players)
            self._next_players = {}

    def _admin_rule(self, args: Mapping[str, Any], now: float) -> list[TableEvent]:
        rule = rule_arguments(args)
        try:
            items = self._arbiter.decide(now, rule.claim, rule.decision)
        except ArbiterError as exc:
            raise TableError(str(exc)) from None
        return self._apply(items, now)

    def _admin_claim(self, args: Mapping[str, Any], now: float) -> list[TableEvent]:
        claim = claim_arguments(args)
        if self._phase is not _PLAYING:
            raise TableError("no game in progress")
        try:
            items = self._arbiter.claim(now, claim.white, claim.kind, claim.uci)
        except ArbiterError as exc:
            raise TableError(str(exc)) from None
        return self._apply(items, now)

    def _admin_choose(self, args: Mapping[str, Any], now: float) -> list[TableEvent]:
        """A decision the board cannot show (20-chess: the rule cast for a turn, the piece
        the opponent picks under rule 5): ``value``, optionally ``what`` (``rule`` or
        ``piece``).  Both the table's game and the recogniser's take it; the board is then
        read again (an action already made on it is recognised)."""
        game = self._game
        if self._phase is not _PLAYING or game is None:
            raise TableError("no game in progress")
        pending = game.pending_choice()
        if pending is None:
            raise TableError("no decision is due in this game now")
        chosen = choose_arguments(args, pending[0], pending[2])
        choice = Choice(chosen.what, chosen.value)
        try:
            game.decide(choice)
        except VariantError as exc:
            raise TableError(str(exc)) from None
        self._position_version += 1
        seen = self._recognizer.game
        if seen is not None and seen is not game:
            try:
                seen.decide(choice)
            except VariantError as exc:  # the recogniser is mid-way: it reads the board anew
                logger.warning("table %s: the recogniser could not take %s: %s", self.id,
                               choice, exc)  # fmt: skip
        out = [TableEvent(now, "choice", {"what": choice.what, "value": choice.value,
                                          "by": side_name(pending[1])})]  # fmt: skip
        self._announce(now)
        for item in self._recognizer.reconsider(now):
            out += self._recognized(item, None)
        return out

    def _admin_correct(self, args: Mapping[str, Any], now: float) -> list[TableEvent]:
        """An arbiter's correction of move ``ply`` to ``uci``: the game is rewritten (later
        moves kept while they stay legal), never a variation."""
        correction = correct_arguments(args)
        ply, uci = correction.ply, correction.uci
        if self._start is None or not 1 <= ply <= len(self._record):
            raise TableError(f"no move at ply {ply}")
        if any(e.illegal for e in self._record):
            raise TableError("a game with a standing illegal move cannot be corrected")
        if not self._variant.moves_correctable:
            raise TableError(
                "20-chess moves cannot be corrected by command: take them back on the board"
            )
        game, record = corrected_game(self._start, self._record, ply, uci)
        dropped = self._record[len(record) :]
        if dropped and correction.confirm is False:
            raise TableError(correction_refusal(ply, uci, dropped))
        self._change_log.correction(now, self._record[ply - 1], record[ply - 1], dropped)
        self._game = game
        self._position_version += 1
        self._record = record
        board = game.chess_board()
        current = squares_of(board) if board is not None else game.squares
        start = StartPosition(game.variant.id, game.fen(), current)
        restarted = self._restart_recognition(start, now)
        ruling = {
            "kind": "correction", "article": "arbiter", "ply": ply, "uci": uci,
            "message": f"move {ply} corrected to {uci}; the game is rewritten",
            "moves": [e.to_json() for e in record],
        }  # fmt: skip
        if dropped and correction.confirm:
            ruling = dropped_moves(ruling, dropped)
        return [*restarted, TableEvent(now, "ruling", ruling)]

    def _admin_drop_kind(self, args: Mapping[str, Any], now: float) -> list[TableEvent]:
        """20-chess on a presence-only board: the captured piece dropped at ``ply`` (an
        integer, or ``"last"``: the latest drop of the record) was of kind ``kind`` (``p``,
        ``n``, ``b``, ``r``, ``q``), not the kind the board's occupancy was read as.  The
        game is taken back to before the drop, the drop made with the new kind and the later
        actions made again (in the table's game and in the recogniser's); the record is
        rewritten.  Refused when the action is no captured-piece drop, the kind is not in the
        hand then, or an action after it would no longer be legal."""
        game = self._game
        if self._phase is not _PLAYING or game is None:
            raise TableError("no game in progress")
        if not game.variant.drops_from_hand:
            raise TableError("drop_kind corrects 20-chess drops; this table plays another variant")
        if not self.presence_only:
            raise TableError(
                "this board reads each piece: set the right piece on the square instead"
            )
        request = drop_kind_arguments(args)
        ply, symbol = drop_to_correct(self._record, request)
        entry = self._record[ply - 1]
        if game.ply != len(self._record):
            raise TableError("the record and the game disagree: take the actions back instead")
        seen = self._recognizer.game
        if seen is not None and seen is not game and seen.ply != game.ply - self._offset:
            raise TableError("the board is being read: wait until it stands still, then retry")
        square = chess.parse_square(entry.uci.split("@", 1)[1][:2])
        wanted = request.kind.upper() if symbol.isupper() else request.kind
        rewritten = redo_drop(game, len(self._record) - ply + 1, square, wanted)
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
            later.rewrite(uci, san)
        entry.notes.append(f"(drop corrected by the arbiter: was {old_san})")
        self._change_log.drop_kind(now, ply, old_san, entry.san)
        self._position_version += 1
        side = "White" if entry.side == WHITE else "Black"
        return [TableEvent(now, "ruling", {
            "kind": "drop-kind", "article": "arbiter", "ply": ply, "uci": entry.uci,
            "side": side_name(entry.side),
            "message": f"{side}'s drop at ply {ply} corrected: {old_san} is {entry.san}",
            "moves": self.moves(),
        })]  # fmt: skip
