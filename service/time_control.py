"""Time controls and the table's own account of the two clocks.

:class:`TimeControl` parses the PGN ``TimeControl`` tag form: ``"300+0"`` (base seconds and
increment), ``"-"`` (no time control), or periods ``"40/5400+30:1800+30"`` (forty moves in
5400 seconds with 30 seconds a move, then the rest of the game in 1800 seconds with 30).

:class:`GameClocks` is the table's model of the two clocks (FIDE Article 6): remaining
seconds per colour, the colour whose time runs, and the time of the last update.  It has
no clock of its own: every method is given the time of the input that caused it.  With a
DGT clock it is corrected from each :class:`~dgt.events.ClockUpdate`; without one it is the
only clock (the table keeps time from event timestamps where a rule set needs it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from service.variants.base import WHITE, Color

_PERIOD = re.compile(r"^(?:(\d+)/)?(\d+(?:\.\d+)?)(?:\+(\d+(?:\.\d+)?))?$")


MAX_PERIOD_SECONDS = 24 * 3600
"""The most seconds a period of a playable time control may give (a day)."""
MAX_INCREMENT = 3600
"""The most seconds of increment a move may earn (an hour)."""
MAX_PERIOD_MOVES = 500
"""The most moves a period of a playable time control may count."""


def round_ms(seconds: float | int) -> float | int:  # an int stays one (compiled too)
    """``round(seconds, 3)``, the same value, without the decimal string ``round`` writes
    (a tenth of its time).  ``seconds * 1000`` is within 2**-14 of its exact value below a
    billion seconds, so where it is more than 0.0001 from a half it rounds to the same whole
    ``n`` as the exact value does, and ``n / 1000`` (``n`` exact, the division correctly
    rounded) is the float ``round`` reads back from its string.  Elsewhere (near a half,
    at zero for its sign, not a float, huge or not a number) ``round`` itself."""
    if type(seconds) is float and -1e9 < seconds < 1e9:
        scaled = seconds * 1000.0
        whole = round(scaled)
        if whole and -0.4999 < scaled - whole < 0.4999:
            return whole / 1000.0
    if isinstance(seconds, int):  # round gives the int back (mypy's type for it here: the
        return round(seconds, 3)  # compiled build would turn a float's into a float)
    return round(seconds, 3)


class TimeControlError(ValueError):
    """A time control string that cannot be read."""


class UnplayableTimeControlError(TimeControlError):
    """A time control that reads well but cannot be played (``0+0``: a loss on time before
    the first move); ``reason`` says why."""

    def __init__(self, text: str, reason: str) -> None:
        super().__init__(f"time control {text!r} cannot be played: {reason}")
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Period:
    """``moves`` moves (None: the rest of the game) in ``seconds``, plus ``increment`` a move."""

    moves: int | None
    seconds: float
    increment: float = 0.0


@dataclass(frozen=True, slots=True)
class TimeControl:
    """A parsed time control; ``periods`` empty means no time control."""

    text: str
    periods: tuple[Period, ...]

    @classmethod
    def parse(cls, text: str) -> TimeControl:
        text = text.strip()
        if text in ("-", "", "?"):
            return cls("-", ())
        periods = []
        parts = text.split(":")
        for index, part in enumerate(parts):
            match = _PERIOD.match(part)
            if match is None:
                raise TimeControlError(
                    f"bad time control {text!r}: write base+increment seconds, e.g. 300+0, "
                    "or periods like 40/5400+30:1800+30, or - for none"
                )
            moves = int(match.group(1)) if match.group(1) else None
            if moves is not None and moves <= 0:
                raise TimeControlError(f"bad time control {text!r}: a period needs moves > 0")
            if moves is None and index != len(parts) - 1:
                raise TimeControlError(
                    f"bad time control {text!r}: only the last period may be sudden death"
                )
            periods.append(Period(moves, float(match.group(2)), float(match.group(3) or 0)))
        return cls(text, tuple(periods))

    @classmethod
    def parse_playable(cls, text: str) -> TimeControl:
        """:meth:`parse` for a game about to be set up: also refuses a time control that
        cannot be played (:meth:`check_playable`).  Every new time control goes through this
        (the config, the command line, the admin ``start``); :meth:`parse` alone reads one
        already stored, so a stored game replays as it was played."""
        control = cls.parse(text)
        control.check_playable()
        return control

    def check_playable(self) -> None:
        """Raise :class:`UnplayableTimeControlError` (one line) unless a game can be played
        under this time control: the first period must give time (an increment comes after a
        move, so ``0+5`` flags before the first one), every period must give seconds or an
        increment, and no figure may be absurd (see ``MAX_*``)."""
        for number, period in enumerate(self.periods, 1):
            which = "" if len(self.periods) == 1 else f"period {number}: "
            if number == 1 and period.seconds <= 0:
                reason = (
                    "it gives no time for the first move (an increment is only added after a move)"
                )
            elif period.seconds <= 0 and period.increment <= 0:
                reason = f"{which}it gives neither seconds nor an increment"
            elif period.seconds > MAX_PERIOD_SECONDS:
                reason = f"{which}more than {MAX_PERIOD_SECONDS} seconds"
            elif period.increment > MAX_INCREMENT:
                reason = f"{which}an increment of more than {MAX_INCREMENT} seconds"
            elif period.moves is not None and period.moves > MAX_PERIOD_MOVES:
                reason = f"{which}more than {MAX_PERIOD_MOVES} moves"
            else:
                continue
            raise UnplayableTimeControlError(self.text, reason)

    @property
    def timed(self) -> bool:
        return bool(self.periods)

    @property
    def counts_moves(self) -> bool:
        """Whether a period counts moves (else the moves made change no increment or
        bonus: :meth:`increment_after` and :meth:`bonus_after` need no count)."""
        periods = self.periods
        if len(periods) == 1:  # most controls: one period (no generator for it)
            return periods[0].moves is not None
        return any(period.moves is not None for period in periods)

    @property
    def base(self) -> float:
        return self.periods[0].seconds if self.periods else 0.0

    def increment_after(self, moves_made: int) -> float:
        """Increment added after a player's ``moves_made``-th move (FIDE 6.? Fischer mode)."""
        return self._period_of(moves_made).increment if self.periods else 0.0

    def bonus_after(self, moves_made: int) -> float:
        """Time of the next period, added when a player completes the last move of one."""
        count = 0
        for index, period in enumerate(self.periods):
            if period.moves is None:
                return 0.0
            count += period.moves
            if moves_made == count and index + 1 < len(self.periods):
                return self.periods[index + 1].seconds
        return 0.0

    def _period_of(self, moves_made: int) -> Period:
        count = 0
        for period in self.periods:
            if period.moves is None:
                return period
            count += period.moves
            if moves_made <= count:
                return period
        return self.periods[-1]

    @property
    def is_speed(self) -> bool:
        """G/5 or faster (US speed rule 1): five minutes or less for the whole game."""
        return bool(self.periods) and len(self.periods) == 1 and self.base <= 300


@dataclass(slots=True)
class GameClocks:
    """Remaining seconds per colour, as of ``as_of``; ``running`` counts down."""

    # (float | int: an int stays an int, as plain Python keeps it; the compiled build
    # would store a float field as a C double)
    white: float | int = 0.0
    black: float | int = 0.0
    running: Color | None = None
    as_of: float = 0.0

    def remaining(self, color: Color, now: float) -> float:
        value = self.white if color == WHITE else self.black
        if self.running == color:
            spent = now - self.as_of  # max(0.0, spent) without the call (the same value)
            value -= spent if spent > 0.0 else 0.0
        return value

    def settle(self, now: float) -> None:
        """Bring the stored times up to ``now``."""
        if now < self.as_of:
            return
        running = self.running
        if running is not None:  # self.set(running, self.remaining(running, now))
            spent = now - self.as_of
            if not spent > 0.0:  # max(0.0, spent) without the call (the same value)
                spent = 0.0
            if running == WHITE:
                self.white -= spent
            else:
                self.black -= spent
        self.as_of = now

    def set(self, color: Color, seconds: float) -> None:
        if color == WHITE:
            self.white = seconds
        else:
            self.black = seconds

    def run(self, color: Color | None, now: float) -> None:
        self.settle(now)
        self.running = color

    def add(self, color: Color, seconds: float, now: float) -> None:
        self.settle(now)
        self.set(color, self.remaining(color, now) + seconds)

    def snapshot(self, now: float) -> dict[str, object]:
        # Any: an int time stays an int, as plain Python keeps it (typed, the compiled build
        # would make a float of it in ``white if white > 0.0 else 0.0``)
        clocks: Any = self
        running = self.running
        white, black = clocks.white, clocks.black
        if running is not None:  # self.remaining(color, now) of each colour
            spent = now - self.as_of
            if not spent > 0.0:  # max(0.0, spent) without the call (the same value)
                spent = 0.0
            if running == WHITE:
                white -= spent
            else:
                black -= spent
        return {  # round_ms: round(max(0.0, x), 3), the same value in a third of the time
            "white": round_ms(white if white > 0.0 else 0.0),
            "black": round_ms(black if black > 0.0 else 0.0),
            "running": None if running is None else ("white" if running else "black"),
            "as_of": now,
        }


def clk(seconds: float) -> str:
    """Seconds as PGN ``[%clk]`` time, ``h:mm:ss`` (whole seconds, rounded down)."""
    total = max(0, int(seconds))
    return f"{total // 3600}:{total // 60 % 60:02d}:{total % 60:02d}"
