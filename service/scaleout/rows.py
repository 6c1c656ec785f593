"""The rows a read replica is fed: an edge's ``log`` rows as its store keeps them.

A row (:class:`RowLike`; :class:`LogRow` here) is one row of an edge's store
(:mod:`service.store`): its sequence number there, the table, the role (``in``, ``echo``:
an input; ``out``: an output of the input before it; :data:`REGISTRATION`: the table's
registration), the kind, the time and the JSON text.  A registration comes before any
other row of its table (its sequence number may be 0 or below: an edge numbers the
registrations of the tables it had before it first forwarded before its first row) and
carries the settings the table's log replays against::

    {"board": 12, "settings": {"white": "Ann", ...}}

``board`` (null when the table has none) is the board number the feeds give its games.
Rows arrive in the order of their edge's log; an input's outputs follow it, possibly in
the next batch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from service.store import REGISTRATION, LogRow

__all__ = ["INPUT_ROLES", "REGISTRATION", "LogRow", "RowLike", "RowSink"]

INPUT_ROLES = frozenset({"in", "echo"})
"""Roles of an input row (``echo``: a board input that is also its own first output)."""


class RowLike(Protocol):
    """What the replica reads of a row (the edge store's ``LogRow`` fits)."""

    @property
    def seq(self) -> int: ...

    @property
    def table_id(self) -> str: ...

    @property
    def role(self) -> str: ...

    @property
    def kind(self) -> str: ...

    @property
    def t(self) -> float: ...

    @property
    def data(self) -> str: ...


RowSink = Callable[[str, Sequence[RowLike]], None]
"""Takes an edge's rows in its log's order, right after they are stored
(:meth:`service.scaleout.replica.ReplicaHall.on_rows`): the aggregator's ``on_rows`` and a
web process's :class:`~service.scaleout.central_db.CentralTail` feed one."""
