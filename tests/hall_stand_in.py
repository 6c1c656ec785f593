"""A stand-in table for the hall and web tests: the contract :class:`service.table.TableLike`
in full, with outputs simple enough to count (every placed piece is a "move" numbered in
order, the ``players`` command is echoed, ticks report every 10 s).  (No tests here.)"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

import chess

from dgt.events import BoardEvent, BoardSnapshot, SquareChanged
from dgt.protocol import Piece
from service.table import ClockOrder, Phase, TableEvent
from service.variants.base import SquareMap, VariantGame
from service.web.stream import summary as overview


@dataclass(frozen=True, slots=True)
class EchoSettings:
    white: str = "?"
    black: str = "?"
    event: str = "?"
    site: str = "?"
    round: str = "?"
    time_control: str = "-"
    rules: str = "casual"
    variant: str = "standard"
    start: str | None = None


_NAMES = frozenset(f.name for f in fields(EchoSettings))


class EchoTable:
    """A deterministic stand-in for a table (see the module docstring).  Its outputs are
    ``{"time", "type", "data": {...}}`` rows."""

    def __init__(self, table_id: str, settings: Mapping[str, Any] | None = None) -> None:
        self.id = table_id
        self.given = dict(settings or {})
        self.settings = EchoSettings(**{k: str(v) for k, v in self.given.items() if k in _NAMES})
        self._moves: list[dict[str, Any]] = []
        self.last_tick = 0.0
        self.placement = ""

    def feed(self, event: BoardEvent) -> list[TableEvent]:
        if isinstance(event, BoardSnapshot):
            self.placement = "x" * len(event.squares)
            return [TableEvent(event.time, "board", {"data": {"reason": event.reason}})]
        if isinstance(event, SquareChanged) and event.piece is not Piece.EMPTY:
            move = {
                "ply": len(self._moves) + 1,
                "uci": f"{event.square}",
                "san": event.piece.symbol,
            }
            self._moves.append(move)
            return [TableEvent(event.time, "move", {"data": dict(move)})]
        return []

    def tick(self, now: float) -> list[TableEvent]:
        if now - self.last_tick >= 10:
            self.last_tick = now
            return [TableEvent(now, "clock", {"data": {"now": now}})]
        return []

    def admin(self, command: str, args: Mapping[str, Any], now: float) -> list[TableEvent]:
        if command == "players":
            self.given.update(args)
            self.settings = replace(self.settings, **{k: str(v) for k, v in args.items()})
            return [TableEvent(now, "players", {"data": dict(args)})]
        raise ValueError(f"unknown command {command}")

    def take_clock_orders(self) -> list[ClockOrder]:
        return []

    def take_ended_games(self) -> list[str]:
        return []

    def take_ended_change_logs(self) -> list[list[dict[str, Any]]]:
        return []

    def change_log(self) -> list[dict[str, Any]]:
        return []

    @property
    def phase(self) -> Phase:
        return Phase.PLAYING

    @property
    def result(self) -> str:
        return "*"

    def moves(self) -> list[dict[str, Any]]:
        return list(self._moves)

    def fen(self) -> str | None:
        return None

    def state(self, now: float | None = None) -> dict[str, Any]:
        return {"id": self.id, "settings": dict(self.given), "moves": list(self._moves)}

    def summary(self, now: float | None = None) -> dict[str, Any]:
        shown = overview(self.state(now))
        del shown["connection"]  # the hall adds it
        return shown

    def pgn(self) -> str:
        return f'[Event "{self.settings.event}"]\n\n' + " ".join(m["san"] for m in self._moves)

    @property
    def game(self) -> VariantGame | None:
        return None

    @property
    def presence_only(self) -> bool:
        return False

    def physical(self) -> SquareMap:
        return ("",) * 64

    def history(self) -> chess.Board | None:
        return None
