"""A table: one game at one board.

* :mod:`service.table.game`: :class:`Table`, the turn-based game (phase machine, recogniser
  and arbiter glue);
* :mod:`service.table.realtime`: :class:`RealtimeTable`, realtime chess (no turns);
* :mod:`service.table.contract`: :class:`TableLike`, what the hall, the LEDs and the web
  use of either;
* :mod:`service.table.clock_keeper`: the clocks and the orders for the board's clock;
* :mod:`service.table.quick_clock`: what a time-only clock report and a tick need of a
  table, in one small object its runner holds;
* :mod:`service.table.admin`: the admin commands and the checks of their arguments;
* :mod:`service.table.settings`, :mod:`service.table.events`, :mod:`service.table.record`,
  :mod:`service.table.views`: settings, events and states, the record, what is shown.
"""

from __future__ import annotations

from service.table.admin import REALTIME_COMMANDS, AdminCommand
from service.table.clock_keeper import ClockKeeper, ClockOrder, OrderKind
from service.table.contract import QuickTable, SettingsLike, TableLike
from service.table.events import Link, Phase, TableEvent
from service.table.game import ENDED_KEPT, Table
from service.table.quick_clock import QuickClock
from service.table.realtime import RealtimeSettings, RealtimeTable, clock_text, realtime_settings
from service.table.settings import RESULTS, TableError, TableSettings
from service.table.views import chess_fen, placement_fen

__all__ = [
    "ENDED_KEPT",
    "REALTIME_COMMANDS",
    "RESULTS",
    "AdminCommand",
    "ClockKeeper",
    "ClockOrder",
    "Link",
    "OrderKind",
    "Phase",
    "QuickClock",
    "QuickTable",
    "RealtimeSettings",
    "RealtimeTable",
    "SettingsLike",
    "Table",
    "TableError",
    "TableEvent",
    "TableLike",
    "TableSettings",
    "chess_fen",
    "clock_text",
    "placement_fen",
    "realtime_settings",
]
