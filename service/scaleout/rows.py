"""The rows a read replica is fed: an edge's ``log`` rows as its store keeps them.

A :class:`LogRow` is one row of an edge's store (:mod:`service.store`): its sequence number
there, the table, the role (``in``, ``echo``: an input; ``out``: an output of the input
before it), the kind, the time and the JSON text.  Besides the inputs and outputs of
:mod:`service.store`, a *registration* row (kind :data:`REGISTER_KIND`) brings a table and
the settings its log replays against, before any row of that table::

    {"settings": {"white": "Ann", ...}, "board": 12}

``board`` (optional, null when the table has none) is the board number the feeds give the
table's games.  Rows arrive in the order of their edge's log; an input's outputs follow it
in the same batch (the edge commits them together).
"""

from __future__ import annotations

from typing import NamedTuple

REGISTER_KIND = "table"
"""The kind of a row that registers a table and its settings (any role but ``out``)."""

INPUT_ROLES = frozenset({"in", "echo"})
"""Roles of an input row (``echo``: a board input that is also its own first output)."""


class LogRow(NamedTuple):
    """One row of an edge's log (the columns of the store's ``log`` table, in order)."""

    seq: int
    table_id: str
    role: str
    kind: str
    t: float
    data: str
    """The row's JSON text, as stored."""
