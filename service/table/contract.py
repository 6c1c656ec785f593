"""The contract every kind of table implements: :class:`TableLike`.

The hall (:mod:`service.hall`), the LEDs (:mod:`service.led_driver`), the web
(:mod:`service.web`) and a replay of a log use a table only through it, so a turn-based
:class:`~service.table.Table` and a :class:`~service.table.RealtimeTable` run alike.  All of
it is pure: inputs carry their time; outputs are :class:`TableEvent` s, JSON-able states and
PGN text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

import chess

from dgt.events import BoardEvent
from service.pgn import Players
from service.table.clock_keeper import ClockOrder
from service.table.events import Phase, TableEvent
from service.table.quick_clock import QuickClock
from service.variants.base import SquareMap, VariantGame

__all__ = ["QuickTable", "SettingsLike", "TableLike"]


class SettingsLike(Players, Protocol):
    """What others read of a table's settings (both kinds of settings have these): the
    players and event the PGN roster reads, and the game's terms."""

    @property
    def time_control(self) -> str: ...
    @property
    def rules(self) -> str: ...
    @property
    def variant(self) -> str: ...
    @property
    def start(self) -> str | None: ...


class TableLike(Protocol):
    """One game at one board, as the hall, the LEDs and the web use it."""

    @property
    def id(self) -> str: ...

    @property
    def settings(self) -> SettingsLike: ...

    # -- inputs --------------------------------------------------------------------------------

    def feed(self, event: BoardEvent) -> list[TableEvent]:
        """One driver event; what it caused (the event itself first)."""
        ...

    def tick(self, now: float) -> list[TableEvent]:
        """Time passes (settle delays, flag fall, pieces travelling, texts due to go)."""
        ...

    def admin(self, command: str, args: Mapping[str, Any], now: float) -> list[TableEvent]:
        """An admin command (:class:`~service.table.admin.AdminCommand`); a bad one raises
        :class:`~service.table.settings.TableError`."""
        ...

    # -- what waits to be taken ----------------------------------------------------------------

    def take_clock_orders(self) -> list[ClockOrder]:
        """The orders for the board's clock issued since the last call, in sending order."""
        ...

    def take_ended_games(self) -> list[str]:
        """The PGN of each game with moves that a new game replaced since the last call."""
        ...

    def take_ended_change_logs(self) -> list[list[dict[str, Any]]]:
        """The change log of each game :meth:`take_ended_games` returned last, in the same
        order (what :meth:`change_log` read while it was the game at the table)."""
        ...

    # -- outputs -------------------------------------------------------------------------------

    @property
    def phase(self) -> Phase: ...

    @property
    def result(self) -> str: ...

    def moves(self) -> list[dict[str, Any]]:
        """The record as JSON, one entry a move."""
        ...

    def fen(self) -> str | None:
        """The game's position (None before a game)."""
        ...

    def state(self, now: float | None = None) -> dict[str, Any]:
        """A JSON-able snapshot for the web's table page."""
        ...

    def summary(self, now: float | None = None) -> dict[str, Any]:
        """What the web's overview shows of the table (no move list, claims or settings)."""
        ...

    def pgn(self) -> str:
        """The game at the table as PGN."""
        ...

    def change_log(self) -> list[dict[str, Any]]:
        """What admin commands changed in the game at the table, oldest first
        (:mod:`service.table.change_log`)."""
        ...

    # -- the board, for the LEDs ---------------------------------------------------------------

    @property
    def game(self) -> VariantGame | None: ...

    @property
    def presence_only(self) -> bool: ...

    def physical(self) -> SquareMap:
        """What stands on each square, in the game's frame."""
        ...

    def history(self) -> chess.Board | None:
        """The game with its history on a python-chess board (None if it is not chess)."""
        ...


@runtime_checkable
class QuickTable(Protocol):
    """A :class:`TableLike` that keeps a :class:`~service.table.quick_clock.QuickClock`
    (both kinds of the service do): its runner answers there the clock reports that
    change nothing but time, and skips the ticks before :attr:`QuickClock.due`."""

    @property
    def quick(self) -> QuickClock: ...
