"""Which table plays which pairing of a round: each pairing goes to the table whose board
number is its board (a table's ``board`` in the config, else its position in the hall),
so the same board keeps its table from round to round.  Pure."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from service.pairings.round import Bye, Pairing, Round

__all__ = ["Assignment", "TableOrder", "assign", "players_args"]


@dataclass(frozen=True, slots=True)
class TableOrder:
    """The ``players`` command that seats a pairing at a table."""

    table: str
    pairing: Pairing
    args: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Assignment:
    """A round on a hall's tables."""

    orders: tuple[TableOrder, ...]
    no_table: tuple[Pairing, ...]
    """Pairings on boards no table has (reported, not played here)."""
    unpaired: tuple[tuple[str, int], ...]
    """Tables (id, board) without a pairing in the round."""
    byes: tuple[Bye, ...]


def players_args(pairing: Pairing, round_name: str | None) -> dict[str, Any]:
    """The arguments of the ``players`` command for ``pairing``: both names with every
    detail (None for an unknown one, so a detail of the table's players before is not
    kept), the board number and the round (when named)."""
    args: dict[str, Any] = {
        **pairing.white.details("white"),
        **pairing.black.details("black"),
        "board": str(pairing.board),
    }
    if round_name is not None:
        args["round"] = round_name
    return args


def assign(round_: Round, boards: Mapping[str, int]) -> Assignment:
    """``round_`` on the tables whose board numbers ``boards`` gives (table id to board)."""
    tables = {board: table for table, board in boards.items()}
    name = None if round_.number is None else str(round_.number)
    orders: list[TableOrder] = []
    no_table: list[Pairing] = []
    for pairing in round_.pairings:
        table = tables.get(pairing.board)
        if table is None:
            no_table.append(pairing)
        else:
            orders.append(TableOrder(table, pairing, players_args(pairing, name)))
    paired = {order.table for order in orders}
    unpaired = tuple(
        (table, board)
        for table, board in sorted(boards.items(), key=lambda item: item[1])
        if table not in paired
    )
    return Assignment(tuple(orders), tuple(no_table), unpaired, round_.byes)
