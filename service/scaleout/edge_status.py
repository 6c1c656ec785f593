"""``service.scaleout.edge_status``: what an edge tells the centre of itself every few
seconds (pure: the heartbeat's content; :mod:`service.scaleout.edge` puts it in the
key-value bucket :data:`~service.scaleout.log_wire.STATUS_BUCKET` under the edge id).

::

    {"edge": "hall-a", "time": 1732600000.25, "interval": 2.0,
     "store": {"state": "ok", ...}, "forwarded": 1234, "waiting": 0,
     "tables": {"1": {"state": "up", "port": "/dev/ttyACM0", "error": null}, ...}}

``time`` is the edge's wall clock when it was written: the centre compares it with its own
(and the bucket's time stamp) to show the edge's clock skew and how old the heartbeat is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

HEARTBEAT_INTERVAL = 2.0
"""Seconds between two heartbeats of an edge."""


class StatusRunner(Protocol):
    def connection(self) -> dict[str, Any]: ...


def heartbeat(
    edge_id: str,
    now: float,
    runners: Mapping[str, StatusRunner],
    store: Mapping[str, Any],
    forwarded: int | None,
    waiting: int,
    interval: float = HEARTBEAT_INTERVAL,
) -> dict[str, Any]:
    """One heartbeat of edge ``edge_id`` at wall-clock ``now``."""
    return {
        "edge": edge_id,
        "time": now,
        "interval": interval,
        "store": dict(store),
        "forwarded": forwarded,
        "waiting": waiting,
        "tables": {table_id: runner.connection() for table_id, runner in runners.items()},
    }
