"""What the web app reads and asks of the tables it shows: :class:`HallSource`.

The pages, the JSON, the stream and the PGN feeds are one code whoever holds the tables:
the hall of ``dgt-service run`` (through :class:`service.web.local.LocalHall`, a thin
adapter) or a read replica of several edges' halls
(:class:`service.scaleout.replica.ReplicaHall`).  The web never reaches past this
protocol.

Every read is as of the source's last commit (:meth:`HallSource.settle` first commits
what is queued, where the source has a queue); updates come after each commit to the
callbacks given to :meth:`HallSource.subscribe`.  An unknown table is :class:`KeyError`
on the reads that take a table id (the web checks :meth:`HallSource.has_table` first); a
command the source cannot carry out is :class:`service.hall.HallError` with its HTTP
status and a one-line message (503 when the table's owner is not reachable).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from service.broadcast.hall_feeds import FeedTable, HallFeeds
from service.hall import GameBook, GameEntry, Update

StatusCallback = Callable[[dict[str, Any]], None]
"""Told the store's status (as :meth:`HallSource.store_status` gives it) when it changes."""
UpdateCallback = Callable[[Update], None]
"""Told each table's new outputs after each commit."""


class HallSource(Protocol):
    """The tables as the web sees them (see the module docstring)."""

    # --- the tables -----------------------------------------------------------------

    def table_ids(self) -> Sequence[str]:
        """Every table, in the order the overview lists them."""
        ...

    def has_table(self, table_id: str) -> bool: ...

    def settle(self) -> None:
        """Commit (and publish) whatever is queued, so reads show the last commit."""
        ...

    def state(self, table_id: str) -> dict[str, Any]:
        """A table's whole state (the table page, ``/api/tables/ID``), with its link."""
        ...

    def summary(self, table_id: str) -> dict[str, Any]:
        """What the overview shows of a table (see :func:`service.web.stream.summary`)."""
        ...

    def outputs(self, table_id: str, *, after: int, limit: int) -> list[tuple[int, dict[str, Any]]]:
        """A table's logged outputs after sequence number ``after``, oldest first."""
        ...

    def corrections(self, table_id: str) -> list[dict[str, Any]]:
        """The change log of the game at a table."""
        ...

    def shown(self, table_id: str) -> GameBook:
        """A table as of the last commit: its table and its games."""
        ...

    def game(self, table_id: str, number: int) -> tuple[GameBook, GameEntry] | None:
        """Game ``number`` (from 1) of a table as of the last commit (None: no such game)."""
        ...

    # --- games and feeds ------------------------------------------------------------

    def games(self) -> Sequence[tuple[FeedTable, GameEntry]]:
        """Every game, table by table (the table of each is the one to ask for its PGN)."""
        ...

    def feeds(self) -> HallFeeds:
        """The games in feed order (:mod:`service.broadcast.hall_feeds`)."""
        ...

    def broadcast_status(self) -> dict[str, Any]:
        """What the lichess pushes report (``GET /api/broadcast``)."""
        ...

    # --- commands -------------------------------------------------------------------

    async def admin(
        self, table_id: str, command: str, args: Mapping[str, Any]
    ) -> list[dict[str, Any]]:
        """Carry out an admin command on a table; its outputs once they are committed.
        Raises :class:`service.hall.HallError` (404, 400 refused, 503 not stored or not
        reachable)."""
        ...

    # --- updates and status ---------------------------------------------------------

    def subscribe(self, callback: UpdateCallback) -> None: ...

    def unsubscribe(self, callback: UpdateCallback) -> None: ...

    def subscribe_status(self, callback: StatusCallback) -> None: ...

    def unsubscribe_status(self, callback: StatusCallback) -> None: ...

    def store_status(self) -> dict[str, Any]:
        """``GET /api/status``'s ``store``: whether what the tables show is being stored."""
        ...

    def store_healthy(self) -> bool:
        """Whether the store writes (a stream then carries nothing of its status)."""
        ...

    def edges(self) -> list[dict[str, Any]] | None:
        """The edges whose tables are shown, each with its last heartbeat (a read replica);
        None for a hall of its own (the overview then shows no edges panel)."""
        ...
