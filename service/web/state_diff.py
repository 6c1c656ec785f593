"""What changed between two states of one table, for the table page's stream (``diff=1``).

A table's state is a flat object whose biggest part is its move list, which only grows by
a move at its end while a game goes on (its last move may change too: a provisional move
becoming final, a correction).  :func:`state_diff` says what a client holding ``old`` needs
to hold ``new``:

* ``set``: every top-level key whose value changed or is new, with its new value;
* ``unset``: the keys ``new`` no longer has;
* ``moves_from`` and ``moves``: the move list from the first entry that differs (keep the
  first ``moves_from`` entries, then append ``moves``); absent while the list is the same.

:func:`apply_diff` is what a client does with it (the page does the same in JavaScript).
Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["apply_diff", "moves_from", "state_diff"]

MOVES = "moves"


def moves_from(old: Sequence[Any], new: Sequence[Any]) -> int | None:
    """The index of the first move of ``new`` that differs from ``old`` (``len(new)`` when
    ``new`` only drops moves at the end; None when the lists are the same).  The table
    shares each move's JSON object between states until the move changes, so the prefix is
    mostly compared by identity: first the whole common part at once (the usual case, moves
    only added at the end or the last one changed), move by move only when it differs."""
    common = min(len(old), len(new))
    if old[:common] == new[:common]:
        index = common
    else:
        index = 0
        while index < common:
            a, b = old[index], new[index]
            if a is not b and a != b:
                break
            index += 1
    if index == len(old) == len(new):
        return None
    return index


def state_diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """What turns ``old`` into ``new`` (an empty dict when they are the same)."""
    out: dict[str, Any] = {}
    changed = {
        key: value
        for key, value in new.items()
        if key != MOVES and (key not in old or old[key] != value)
    }
    if changed:
        out["set"] = changed
    if old.keys() != new.keys():  # (the usual state has the same keys as the one before)
        gone = [key for key in old if key not in new]
        if gone:
            out["unset"] = gone
    old_moves = old.get(MOVES)
    new_moves = new.get(MOVES)
    if isinstance(new_moves, list):
        base = old_moves if isinstance(old_moves, list) else []
        start = moves_from(base, new_moves)
        if start is not None or not isinstance(old_moves, list):
            start = start or 0
            out["moves_from"] = start
            out[MOVES] = new_moves[start:]
    elif MOVES in new and (MOVES not in old or old[MOVES] != new_moves):
        changed[MOVES] = new_moves
        out["set"] = changed
    return out


def apply_diff(state: Mapping[str, Any], diff: Mapping[str, Any]) -> dict[str, Any]:
    """``state`` with ``diff`` applied (a new dict; ``state`` is left as it was)."""
    out = dict(state)
    for key in diff.get("unset", ()):
        out.pop(key, None)
    out.update(diff.get("set", {}))
    if "moves_from" in diff:
        kept = out.get(MOVES)
        kept = kept if isinstance(kept, list) else []
        out[MOVES] = kept[: diff["moves_from"]] + list(diff[MOVES])
    return out
