"""The clocks of one table: :class:`ClockKeeper`.

It keeps the players' times where no clock does (running side, increments, the next
period's time, flag fall), learns which side of a DGT 3000 is White from the lever, reads
the times a clock reports, and issues :class:`ClockOrder` s for the board's clock: the times
(set-and-run), short texts (``TOUCH``, ``1-0``, ``RULE 12``) and back to the times when a
text is due to go.  Pure: every method takes the time it happens at; no I/O, no clock of
its own, so it is tested alone with explicit times.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from dgt.events import ClockUpdate, Side
from service.time_control import GameClocks, TimeControl, round_ms
from service.variants.base import BLACK, WHITE, Color

__all__ = [
    "SHORT_TEXTS",
    "TEXT_SECONDS",
    "TEXT_WIDTH",
    "ClockKeeper",
    "ClockOrder",
    "OrderKind",
    "other_side",
    "result_text",
    "round_ms",
]

TEXT_WIDTH = 8
"""Characters on the DGT 3000 display."""
TEXT_SECONDS = 2.0
"""Seconds a message stays on the clock display before the times come back."""

SHORT_TEXTS = {
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
"""What the clock shows for an irregularity of each kind (``ARBITER`` for the others)."""


class OrderKind(StrEnum):
    """What a :class:`ClockOrder` tells the clock."""

    SET_AND_RUN = "set_and_run"
    TEXT = "text"
    END_TEXT = "end_text"
    BEEP = "beep"


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
        data: dict[str, Any] = {"kind": str(self.kind)}
        if self.kind == OrderKind.SET_AND_RUN:
            data.update(left=self.left, right=self.right, run=self.run.value if self.run else None)
        if self.text:
            data["text"] = self.text
        if self.beep:
            data["beep"] = self.beep
        return data


_LEFT = Side.LEFT  # read on every press and clock report (an enum member off its class is
_RIGHT = Side.RIGHT  # read through the enum's metaclass: about 0.1 us in Python 3.11)


def other_side(side: Side) -> Side:
    return _RIGHT if side is _LEFT else _LEFT


def result_text(result: str) -> str:
    """A result as the clock shows it: ``1-0``, ``0-1``, ``DRAW``."""
    return result if result != "1/2-1/2" else "DRAW"


_Shown = tuple[
    float | int, float | int, Color | None, float, float, dict[str, object], float | int,
    float | int,
]  # fmt: skip
"""A clock snapshot with the clock state (white, black, running, as of) and time it was
taken at, and each side's time left it rounded (float | int: the times kept as they were
given, an int an int, also compiled, where a float in a tuple is a C double)."""


class ClockKeeper:
    """The times of one game and the orders for the board's clock (see the module docs).

    ``present``: whether the board has a clock (then the clock keeps the time and the
    keeper follows its reports); ``white_side``: the side of the clock that is White's,
    once known; ``lever_high``: the side whose lever is up, as last reported."""

    __slots__ = ("_control", "_flat", "_shown", "clocks", "counts_moves", "lever_high", "orders",
                 "present", "text_until", "timed", "white_side")  # fmt: skip

    def __init__(self, control: TimeControl) -> None:
        self.timed = False
        """Whether :attr:`control` is timed (read on every clock report)."""
        self.counts_moves = False
        """Whether a period of :attr:`control` counts moves (else the moves made change no
        increment or bonus)."""
        self._flat: float | None = None
        """The increment of a control of one period for the whole game (most of them: no
        bonus, the same increment after every move), else None."""
        self.control = control
        self.clocks = GameClocks()
        self.present = False
        self.white_side: Side | None = None
        self.lever_high: Side | None = None
        self.orders: list[ClockOrder] = []
        """Orders issued and not taken yet (:meth:`take_orders`), oldest first."""
        self._shown: _Shown | None = None
        """The last :meth:`shown` snapshot, with the clock state and time it was taken at."""
        self.text_until: float | None = None
        """When a text shown on the clock is due to go (None: none is): :meth:`tick`."""

    def __getnewargs__(self) -> tuple[TimeControl]:
        """What unpickling passes to ``__new__`` (a read replica pickles the tables and their
        clock keepers): the compiled build's ``__new__`` runs ``__init__``, which takes
        these; the state pickled then sets every attribute.  Plain Python's ``__new__``
        ignores them."""
        return (self._control,)

    @property
    def control(self) -> TimeControl:
        """The time control of the game."""
        return self._control

    @control.setter
    def control(self, control: TimeControl) -> None:
        self._control = control
        self.timed = control.timed
        self.counts_moves = control.counts_moves if control.timed else False
        periods = control.periods
        flat = len(periods) == 1 and periods[0].moves is None
        self._flat = periods[0].increment if flat else None

    def _increment_after(self, moves: int) -> float:
        flat = self._flat
        return flat if flat is not None else self._control.increment_after(moves)

    def _bonus_after(self, moves: int) -> float:
        return 0.0 if self._flat is not None else self._control.bonus_after(moves)

    # -- the game ------------------------------------------------------------------------------

    @property
    def keeps_time(self) -> bool:
        """Whether the keeper counts the time itself (a timed game and no clock)."""
        return not self.present and self.timed

    def begin(self, t: float) -> None:
        """A game begins at ``t``: both sides get the base time, White's runs; a clock is
        set to it (White's side is the one whose lever is up, if not known yet)."""
        base = self.control.base
        self.clocks = GameClocks(base, base, WHITE if self.timed else None, t)
        if self.present and self.timed:
            if self.white_side is None and self.lever_high is not None:
                self.white_side = self.lever_high  # White's clock runs first: its lever is up
            self.order_times(t)

    def ready(self, t: float) -> None:
        """A game waits to begin (its board is being set up): both sides show the base
        time and neither runs; a clock is set to it, stopped."""
        base = self.control.base
        self.clocks = GameClocks(base, base, None, t)
        if self.present and self.timed:
            self.order_times(t, paused=True)

    def remaining(self, color: Color, t: float) -> float:
        return self.clocks.remaining(color, t)

    def snapshot(self, t: float) -> dict[str, object]:
        return self.clocks.snapshot(t)

    def shown(self, t: float) -> dict[str, object]:
        """:meth:`snapshot` as the table's summary shows it: taken once per clock state and
        time, and shared (treat it as read-only); a side whose time left is the one of the
        snapshot before keeps its rounded time from it."""
        # Any: the times read as they are, an int as an int (plain Python shows it so; read
        # as the floats GameClocks declares, the compiled build would make floats of them)
        clocks: Any = self.clocks
        white, black, running, as_of = clocks.white, clocks.black, clocks.running, clocks.as_of
        kept = self._shown
        if (  # by identity: the same objects are the same values of the same types
            kept is not None and kept[4] is t and kept[3] is as_of and kept[2] is running
            and kept[0] is white and kept[1] is black
        ):  # fmt: skip
            return kept[5]
        # clocks.snapshot(t), each side's time left rounded once per value (a side's time
        # that stands, or a running one read again at its time of report, is not rounded again)
        left_white, left_black = white, black
        if running is not None:
            spent = t - as_of
            if not spent > 0.0:
                spent = 0.0
            if running == WHITE:
                left_white = white - spent
            else:
                left_black = black - spent
        # a side's time left stands when it is the same object, or a float of the same value
        # (a clock's report gives both times anew, the standing one unchanged; round_ms of
        # the same float is the same): the test written out for each side (a call each
        # would cost a tenth of this method)
        was = None if kept is None else kept[6]
        if was is left_white or (
            type(left_white) is float and type(was) is float and was == left_white
        ):
            shown_white = kept[5]["white"]  # type: ignore[index]
        else:
            shown_white = round_ms(left_white if left_white > 0.0 else 0.0)
        was = None if kept is None else kept[7]
        if was is left_black or (
            type(left_black) is float and type(was) is float and was == left_black
        ):
            shown_black = kept[5]["black"]  # type: ignore[index]
        else:
            shown_black = round_ms(left_black if left_black > 0.0 else 0.0)
        shown: dict[str, object] = {
            "white": shown_white,
            "black": shown_black,
            "running": None if running is None else ("white" if running else "black"),
            "as_of": t,
        }
        self._shown = (white, black, running, as_of, t, shown, left_white, left_black)
        return shown

    def moved(self, side: Color, next_sides: Collection[Color], t: float) -> float | None:
        """``side`` made an action at ``t`` (the game's sides to act are ``next_sides``
        now): without a clock, the time it shows (the running side changes after a
        side's whole part), else None."""
        if not self.keeps_time:
            return None
        shown = self.clocks.remaining(side, t)
        self.clocks.run(next(iter(next_sides)) if len(next_sides) == 1 else not side, t)
        return shown

    def completed(self, side: Color, moves: int, t: float) -> None:
        """Without a clock: ``side`` completed its ``moves``-th move at ``t``; its
        increment (and the next period's time) is added."""
        if not self.keeps_time:
            return
        bonus = self._increment_after(moves) + self._bonus_after(moves)
        if bonus:
            self.clocks.add(side, bonus, t)

    def pressed(
        self, presser: Color, completed: bool, part_done: bool, moves: int, t: float
    ) -> float:
        """``presser`` pressed the clock at ``t`` (``completed``: a move of its was completed
        by the press; ``part_done``: its part of the turn is done; ``moves``: its completed
        moves).  The other side runs; the increment is added for a completed move.  Returns
        the time to record for the move (before its increment)."""
        clocks = self.clocks
        clocks.run(not presser, t)
        if not self.timed:
            return clocks.remaining(presser, t)
        flat = self._flat
        increment = flat if flat is not None else self._control.increment_after(moves)
        if completed and part_done:
            bonus = increment + (0.0 if flat is not None else self._control.bonus_after(moves))
            if bonus:
                clocks.add(presser, bonus, t)
                self.order_times(t)
        if not part_done:
            increment = 0.0
        return clocks.remaining(presser, t) - increment

    def run(self, color: Color | None, t: float) -> None:
        """``color``'s time runs from ``t`` (None: both stop)."""
        self.clocks.run(color, t)

    def set_running(self, color: Color, t: float) -> None:
        """An arbiter's ruling: ``color``'s time runs; a clock is set accordingly."""
        self.clocks.run(color, t)
        if self.present:
            self.order_times(t)

    def add_time(self, add: Mapping[Color, float], t: float) -> None:
        """An arbiter's penalty: seconds added per colour, shown on the clock."""
        for color, seconds in add.items():
            self.clocks.add(color, seconds, t)
        if self.present:
            self.order_times(t)
        minutes = int(sum(add.values()) // 60)
        self.text(f"+{minutes} MIN", 1.0, t)

    def stopped(self, result: str, t: float) -> None:
        """The game ended at ``t`` with ``result``: the times stop; a clock shows the
        result until the next order."""
        self.clocks.run(None, t)
        if self.present and self.timed:
            self.order_times(t, paused=True)
        self.text(result_text(result), 1.0, t, hold=True)

    def flag_fallen(self, t: float) -> Color | None:
        """Without a clock: the colour whose time ran out by ``t`` (its time is brought up
        to ``t``), else None."""
        if not self.keeps_time:
            return None
        running = self.clocks.running
        if running is not None and self.clocks.remaining(running, t) <= 0:
            self.clocks.settle(t)
            return running
        return None

    # -- the board's clock ---------------------------------------------------------------------

    def seen(self, event: ClockUpdate) -> None:
        """A clock reported its times (and where its lever stands)."""
        self.lever_high = event.lever_high

    def lever(
        self,
        high: Side,
        final_sides: Sequence[Color],
        record_empty: bool,
        first_mover: Color | None = None,
    ) -> Color | None:
        """The lever moved (``high``: the side now up; ``final_sides``: the sides of the
        moves the press completed): which colour pressed, learned from the first press
        that completes a move (the presser's lever goes down, the opponent's comes up), or
        from a first press after a move no rule allows (``first_mover``: the side that made
        it, as the board no longer shows the game's start); None while it cannot be told."""
        self.present = True
        self.lever_high = high
        if self.white_side is None:
            if final_sides:
                side = final_sides[-1]
                self.white_side = other_side(high) if side == WHITE else high
            elif record_empty and first_mover is not None:
                self.white_side = other_side(high) if first_mover == WHITE else high
            elif record_empty:
                self.white_side = high  # Black starts White's clock
                return None
            else:
                return None
        return WHITE if other_side(high) is self.white_side else BLACK

    def read(self, event: ClockUpdate, check_flags: bool) -> list[Color]:
        """The clock's report: the game's times follow it (once White's side is known);
        with ``check_flags``, the colours whose flag is down."""
        side = self.white_side
        if side is None:
            return []
        clocks = self.clocks
        left, right = event.left, event.right
        if side is _LEFT:
            clocks.white, clocks.black = left, right
        else:
            clocks.white, clocks.black = right, left
        clocks.as_of = event.time
        if event.running:
            clocks.running = WHITE if event.lever_high is side else BLACK
        else:
            clocks.running = None
        if not check_flags or not (event.left_flag or event.right_flag or left <= 0 or right <= 0):
            return []
        flags = ((Side.LEFT, event.left_flag or left <= 0),
                 (Side.RIGHT, event.right_flag or right <= 0))  # fmt: skip
        return [WHITE if clock_side is side else BLACK for clock_side, down in flags if down]

    def first_report(self, t: float, had_clock: bool) -> bool:
        """Before the first move, a clock reported its times for the first time, or for the
        first time since the game began without the lever known (a driver knows a DGT 3000
        is there from its version before it reports any times): set it to the time control
        and run White's side, whose lever is up (at the start of a game the service sets
        the DGT 3000 to the time control and learns which side is White from the first
        press; see ``docs/rules.md``).  True if it did: the report predates the order, so
        the keeper keeps its own times.  The caller asks only before the first move of a
        timed game in progress."""
        if had_clock and self.white_side is not None:
            return False
        if self.white_side is None and self.lever_high is not None:
            self.white_side = self.lever_high  # White's clock runs first: its lever is up
        base = self.control.base
        self.clocks = GameClocks(base, base, WHITE, t)  # White's time starts now
        self.order_times(t)
        return True

    # -- orders --------------------------------------------------------------------------------

    def order_times(self, t: float, *, paused: bool = False) -> None:
        """Set the clock to the game's times (set-and-run), the side to move running."""
        white = max(0.0, self.clocks.remaining(WHITE, t))
        black = max(0.0, self.clocks.remaining(BLACK, t))
        side = self.white_side or Side.LEFT
        left, right = (white, black) if side is Side.LEFT else (black, white)
        run = None
        if not paused and self.clocks.running is not None and self.white_side is not None:
            run = side if self.clocks.running == WHITE else other_side(side)
        self.orders.append(ClockOrder(OrderKind.SET_AND_RUN, round_ms(left), round_ms(right), run))

    def text(self, text: str, beep: float, t: float, *, hold: bool = False) -> None:
        """Show ``text`` on the clock for :data:`TEXT_SECONDS` (``hold``: until the next
        order, e.g. the result): :meth:`tick` sends ``end_text`` when it is due, so the
        players see their times again."""
        if self.present:
            self.orders.append(ClockOrder(OrderKind.TEXT, text=text[:TEXT_WIDTH], beep=beep))
            self.text_until = None if hold else t + TEXT_SECONDS

    def tick(self, t: float) -> None:
        """Time passes: a text that is due to go gives way to the times."""
        if self.text_until is not None and t >= self.text_until:
            self.text_until = None
            self.orders.append(ClockOrder(OrderKind.END_TEXT))

    def take_orders(self) -> list[ClockOrder]:
        """The orders issued since the last call: the settings (set-and-run, the last one
        wins) first, then texts and the rest, each oldest first -- so that a text is not
        wiped at once by a setting issued with it (a set-and-run ends a text)."""
        if not self.orders:
            return []  # the hall asks after every input; most issue none
        orders, self.orders = self.orders, []
        settings = [o for o in orders if o.kind == OrderKind.SET_AND_RUN]
        return settings + [o for o in orders if o.kind != OrderKind.SET_AND_RUN]
