"""``HeartbeatDirectory``: the edges' heartbeats as the replica shows them.

Each edge writes a heartbeat every few seconds (to the broker's key-value bucket)::

    {"edge": "hall-a", "time": 1732600000.25, "interval": 2.0,
     "store": {"state": "ok", ...}, "forwarded": 1234, "waiting": 0,
     "tables": {"1": {"state": "up", "port": "/dev/ttyACM0", "error": null}, ...}}

Whoever watches the bucket hands each one to :meth:`HeartbeatDirectory.note` with the
centre's time it arrived; the directory keeps the last of each edge (its age and the edge's
clock skew: its ``time`` minus the centre's) and each table's link, and tells
``on_link(table_id)`` (:meth:`service.scaleout.replica.ReplicaHall.link_changed`) when a
table's link changed.  No I/O here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, TypeGuard

from service.scaleout.replica import EdgeBeat

logger = logging.getLogger(__name__)


class HeartbeatDirectory:
    """The last heartbeat of every edge (an :class:`~service.scaleout.replica.EdgeDirectory`)."""

    def __init__(self, on_link: Callable[[str], None] | None = None) -> None:
        self.on_link = on_link
        self._beats: dict[str, EdgeBeat] = {}
        self._links: dict[tuple[str, str], dict[str, Any]] = {}

    def note(self, heartbeat: Mapping[str, Any], received: float) -> None:
        """An edge's heartbeat, arrived at the centre's UNIX time ``received``; one that is
        malformed is logged and dropped."""
        edge = heartbeat.get("edge")
        if not isinstance(edge, str) or not edge:
            logger.warning("a heartbeat without an edge id: dropped")
            return
        sent = heartbeat.get("time")
        skew = round(sent - received, 3) if _number(sent) else None
        store = heartbeat.get("store")
        state = store.get("state") if isinstance(store, Mapping) else None
        interval = heartbeat.get("interval")
        waiting = heartbeat.get("waiting")
        self._beats[edge] = EdgeBeat(
            received,
            skew,
            float(interval) if _number(interval) else None,
            str(state) if state is not None else None,
            int(waiting) if _number(waiting) else None,
        )
        tables = heartbeat.get("tables")
        if not isinstance(tables, Mapping):
            return
        for table_id, link in tables.items():
            if not isinstance(table_id, str) or not isinstance(link, Mapping):
                continue
            key = (edge, table_id)
            if self._links.get(key) == link:
                continue
            self._links[key] = dict(link)
            if self.on_link is not None:
                self.on_link(table_id)

    def beats(self) -> Mapping[str, EdgeBeat]:
        return self._beats

    def connection(self, edge_id: str, table_id: str) -> dict[str, Any] | None:
        link = self._links.get((edge_id, table_id))
        return dict(link) if link is not None else None


def _number(value: object) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool)
