"""What a time-only clock report and a tick need of one table: :class:`QuickClock`.

Most of a hall's inputs are clock reports that only move the time (one a second from every
running clock), and most of its ticks find nothing due.  Each table would answer them
walking its keeper, its recogniser and their parts, each in memory of its own that the
previous input (another table's) left cold.  The table keeps instead, after every input, in
one small object the runner holds, what deciding those takes:

* the clock report the table expects (its lever where the last one had it, a running clock
  seen already, a board the recogniser has nothing to do with, no flag the arbiter must
  see): such a report is answered here (:meth:`QuickClock.report`) exactly as the table
  would (its echo, the game's times following the clock), and any other one goes to the
  table (None);
* the earliest time a tick may do anything (:attr:`QuickClock.due`): the runner skips the
  ticks before it;
* whether the table may have clock orders waiting (:attr:`QuickClock.orders`): the runner
  asks it for them only then.

The table re-arms it at the end of every input it takes itself (:meth:`QuickClock.arm`,
:meth:`QuickClock.disarm`): a report answered here changes nothing that arming reads.  Pure,
like the table.
"""

from __future__ import annotations

from dgt.events import ClockUpdate, Side
from dgt.recording import event_to_json
from service.table.events import TableEvent
from service.time_control import GameClocks
from service.variants.base import BLACK, WHITE

__all__ = ["Arming", "QuickClock"]

Arming = tuple[Side, bool, Side | None, GameClocks]
"""What a table arms its quick clock with, but the recogniser's part (see
:meth:`QuickClock.arm`): the lever of the reports answered, whether a timed game is under
way, the clock's side that is White's, the game's times."""

_NO_TIME = float("-inf")
_LEFT = Side.LEFT


class QuickClock:
    """One table's answer to the inputs that change nothing but time (see the module
    docstring).  Disarmed (every report goes to the table, every tick is due) until the
    table arms it."""

    __slots__ = (
        "clocks", "due", "lever_high", "orders", "playing", "seen", "settle", "since",
        "white_side",
    )  # fmt: skip

    def __init__(self) -> None:
        self.lever_high: Side | None = None
        """The lever of the report answered here (None: disarmed, none is)."""
        self.since = 0.0
        """With :attr:`settle`: a report at ``t`` is answered here while
        ``t - since < settle`` (the recogniser's settle delay since the board last changed;
        ``since`` infinite: at any time)."""
        self.settle = 0.0
        self.seen = False
        """A running clock was seen (else only a stopped clock's report is answered here)."""
        self.playing = False
        """A timed game is under way: a flag or a time at zero goes to the arbiter."""
        self.white_side: Side | None = None
        """The clock's side that is White's (None: the report tells nothing of the game's
        times)."""
        self.clocks = GameClocks()
        """The game's times (the table's keeper's), following the clock."""
        self.due = _NO_TIME
        """The earliest time a tick of the table may do anything."""
        self.orders = True
        """The table may have clock orders waiting (False: it has none, no need to ask)."""

    def arm(self, arming: Arming, quiet: tuple[float, float, bool]) -> None:
        """Answer the reports with the lever where ``arming`` has it while the recogniser
        is ``quiet`` (its :meth:`~service.recognize.Recognizer.quiet_reports`)."""
        self.lever_high, self.playing, self.white_side, self.clocks = arming
        self.since, self.settle, self.seen = quiet

    def disarm(self) -> None:
        """Every report goes to the table."""
        self.lever_high = None

    def report(self, event: ClockUpdate) -> list[TableEvent] | None:
        """The table's answer to the clock report ``event`` (as logged), when it changes
        nothing but time; else None (the table takes it)."""
        if not self.takes(event, event.time):
            return None
        return [TableEvent(event.time, "board", event_to_json(event))]

    def takes(self, event: ClockUpdate, t: float) -> bool:
        """Whether the clock report ``event`` at ``t`` on the table's time line changes
        nothing but time (the game's times then follow it, and the table's answer is its
        echo alone); else False and nothing changed (the table takes it).  ``event``'s times
        are floats (as logged); its other fields are read for their truth only."""
        if event.lever_high is not self.lever_high:  # disarmed, or a lever press
            return False
        if event.running and not self.seen:
            return False
        if not t - self.since < self.settle:  # the recogniser may have something to do
            return False
        side = self.white_side
        if side is not None:  # the keeper's read, the flags checked first
            left = event.left
            right = event.right
            if self.playing and (event.left_flag or event.right_flag or left <= 0 or right <= 0):
                return False
            clocks = self.clocks
            if side is _LEFT:
                clocks.white, clocks.black = left, right
            else:
                clocks.white, clocks.black = right, left
            clocks.as_of = t
            if event.running:
                clocks.running = WHITE if event.lever_high is side else BLACK
            else:
                clocks.running = None
        return True
