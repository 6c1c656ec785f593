""":class:`LocalHall`: the hall of this process as a :class:`~service.web.source.HallSource`
(a thin adapter: every call is the hall's own, or its store's)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from service.broadcast.hall_feeds import FeedTable, HallFeeds, hall_feeds
from service.broadcast.push import pusher_of
from service.hall import GameBook, GameEntry, Hall
from service.web.source import StatusCallback, UpdateCallback

NO_PUSHER: dict[str, Any] = {"rounds": [], "configured": False}
"""``GET /api/broadcast`` without a lichess pusher."""


class LocalHall:
    """The hall of this process, for the web."""

    summary: Callable[[str], dict[str, Any]]
    """The hall's own :meth:`~service.hall.Hall.summary` (asked at every update the stream
    publishes: no call of this adapter's in between)."""

    def __init__(self, hall: Hall) -> None:
        self.hall = hall
        self.summary = hall.summary

    def table_ids(self) -> Sequence[str]:
        return list(self.hall.runners)

    def has_table(self, table_id: str) -> bool:
        return table_id in self.hall.runners

    def settle(self) -> None:
        self.hall.settle()

    def state(self, table_id: str) -> dict[str, Any]:
        return self.hall.state(table_id)

    def outputs(self, table_id: str, *, after: int, limit: int) -> list[tuple[int, dict[str, Any]]]:
        return self.hall.store.outputs(table_id, after=after, limit=limit)

    def corrections(self, table_id: str) -> list[dict[str, Any]]:
        return self.hall.shown(table_id).table.change_log()

    def shown(self, table_id: str) -> GameBook:
        return self.hall.shown(table_id)

    def game(self, table_id: str, number: int) -> tuple[GameBook, GameEntry] | None:
        return self.hall.game(table_id, number)

    def games(self) -> Sequence[tuple[FeedTable, GameEntry]]:
        return self.hall.games()

    def feeds(self) -> HallFeeds:
        return hall_feeds(self.hall)

    def broadcast_status(self) -> dict[str, Any]:
        pusher = pusher_of(self.hall)
        return pusher.status() if pusher is not None else dict(NO_PUSHER)

    async def admin(
        self, table_id: str, command: str, args: Mapping[str, Any]
    ) -> list[dict[str, Any]]:
        return await self.hall.admin(table_id, command, args)

    def subscribe(self, callback: UpdateCallback) -> None:
        self.hall.subscribe(callback)

    def unsubscribe(self, callback: UpdateCallback) -> None:
        self.hall.unsubscribe(callback)

    def subscribe_status(self, callback: StatusCallback) -> None:
        self.hall.subscribe_status(callback)

    def unsubscribe_status(self, callback: StatusCallback) -> None:
        self.hall.unsubscribe_status(callback)

    def store_status(self) -> dict[str, Any]:
        return self.hall.store_status()

    def store_healthy(self) -> bool:
        return self.hall.store.healthy

    def edges(self) -> list[dict[str, Any]] | None:
        return None
