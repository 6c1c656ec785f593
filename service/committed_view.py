"""``service.committed_view``: what the public is shown of a table that runs ahead of its log.

A table takes each input at once (the board, the LEDs and the next input need its answer),
and its rows reach the database with the next commit.  Normally a read commits first (the
hall's ``settle``), so the table shown is the table stored.  When the commit fails (a full
disk, a file gone read-only) the tables with rows kept in memory run ahead of what is
stored: until the store writes again, each of them is shown as a *shadow*, a table rebuilt
from its committed log exactly as a start rebuilds it (same table code, same replay), built
once when first read and kept while nothing commits.  A commit that succeeds stores every
kept row, and the live tables are shown again.

Nothing here costs anything while the store writes: which tables are ahead is read off the
store's queue when a read asks (:meth:`CommittedView.is_ahead`), not marked on each input; no
shadow is built unless a commit failed.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Generic, TypeVar

Shown = TypeVar("Shown")


class CommittedView(Generic[Shown]):
    """Which tables have rows not committed yet (``queued()``: asked only when a read
    needs it), and the shadow (``rebuild(table_id)``, a table as of its last commit) shown
    for each of them while the store cannot write."""

    def __init__(
        self, rebuild: Callable[[str], Shown], queued: Callable[[], Collection[str]]
    ) -> None:
        self._rebuild = rebuild
        self._queued = queued
        self._shadows: dict[str, Shown] = {}

    def is_ahead(self, table_id: str) -> bool:
        """Whether ``table_id`` has rows that are not committed yet."""
        return table_id in self._queued()

    @property
    def any_ahead(self) -> bool:
        """Whether any table has rows not committed yet."""
        return bool(self._queued())

    @property
    def tables_ahead(self) -> frozenset[str]:
        """Every table with rows not committed yet."""
        return frozenset(self._queued())

    def caught_up(self) -> None:
        """Everything is committed: the live tables are what is stored; shadows go."""
        self._shadows.clear()

    def shadow(self, table_id: str) -> Shown:
        """The table as of its last commit (rebuilt on first use, then kept until the
        next commit: while the store cannot write, nothing it holds changes)."""
        shown = self._shadows.get(table_id)
        if shown is None:
            shown = self._shadows[table_id] = self._rebuild(table_id)
        return shown
