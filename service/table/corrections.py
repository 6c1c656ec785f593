"""An arbiter's corrections of a table's record, worked out on the game alone (pure):

* :func:`corrected_game`: the move at a ply corrected to another; the game is played again
  from its start (later moves kept while they stay legal), never a variation;
* :func:`drop_to_correct` and :func:`redo_drop`: 20-chess on a presence-only board, the
  kind of a captured piece dropped (the board sees a piece set down, not which one): the
  game is taken back to before the drop, the drop made with the right kind and the later
  actions made again.

Each refusal is a :class:`~service.table.settings.TableError` with a one-line message.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import chess

from service.table.admin import DROP_KINDS, DropKindArgs
from service.table.record import MoveEntry, legal_action, scores_json
from service.table.settings import TableError
from service.variants import get_variant
from service.variants.base import Action, Drop, StartPosition, VariantGame

__all__ = [
    "corrected_game",
    "correction_refusal",
    "drop_to_correct",
    "dropped_moves",
    "movetext",
    "redo_drop",
]


def corrected_game(
    start: StartPosition, old: Sequence[MoveEntry], ply: int, uci: str
) -> tuple[VariantGame, list[MoveEntry]]:
    """The game from ``start`` with the move at ``ply`` of ``old`` made as ``uci`` and the
    later ones made again while they stay legal, and its record (the clock times and the
    other readings of the moves before it kept)."""
    ucis = [e.uci for e in old]
    ucis[ply - 1] = uci
    game = get_variant(start.variant).new_game(start)
    record: list[MoveEntry] = []
    for index, move_uci in enumerate(ucis):
        action = legal_action(game, move_uci)
        if action is None:
            if index == ply - 1:
                raise TableError(f"{uci} is not legal at ply {ply}")
            break
        number, san = game.move_number(), game.san(action.action)
        scores = scores_json(game.apply(action.action))
        previous = old[index]
        # the same position before the move: the same moves read the same
        alternatives = previous.alternatives if index < ply - 1 else ()
        entry = MoveEntry(index + 1, number, action.side, move_uci, san, previous.final,
                          previous.clock, scores, alternatives=alternatives)  # fmt: skip
        record.append(entry)
    return game, record


def movetext(entries: Sequence[MoveEntry]) -> str:
    """``entries`` as numbered moves: ``2... e5 3. Nf3 Nc6``."""
    words: list[str] = []
    for index, entry in enumerate(entries):
        if entry.side:
            words.append(f"{entry.number}.")
        elif index == 0:
            words.append(f"{entry.number}...")
        words.append(entry.san)
    return " ".join(words)


def correction_refusal(ply: int, uci: str, dropped: Sequence[MoveEntry]) -> str:
    """Why a correction that would drop later moves waits for a confirmation."""
    count = f"{len(dropped)} later move{'s' if len(dropped) != 1 else ''}"
    return (
        f"correcting move {ply} to {uci} drops the {count} it makes illegal: "
        f"{movetext(dropped)}; send confirm: true to correct anyway"
    )


def dropped_moves(ruling: dict[str, Any], dropped: Sequence[MoveEntry]) -> dict[str, Any]:
    """The ruling of a confirmed correction with the moves it dropped: listed, and named
    in its message."""
    count = f"{len(dropped)} later move{'s' if len(dropped) != 1 else ''}"
    message = f"{ruling['message']}; dropped the {count}: {movetext(dropped)}"
    return {**ruling, "message": message, "dropped": [entry.to_json() for entry in dropped]}


def drop_to_correct(record: Sequence[MoveEntry], request: DropKindArgs) -> tuple[int, str]:
    """The ply of the drop ``request`` names (``last``: the latest drop) and the symbol
    it was read as, once it is sure to be a captured piece's drop of another kind."""
    if request.ply == "last":
        drops = [e.ply for e in record if "@" in e.uci]
        if not drops:
            raise TableError("no drop in this game yet")
        ply = drops[-1]
    else:
        ply = request.ply
    if not 1 <= ply <= len(record):
        raise TableError(f"no action at ply {ply}")
    entry = record[ply - 1]
    if "@" not in entry.uci:
        raise TableError(f"the action at ply {ply} ({entry.san}) is not a drop")
    symbol = entry.uci.split("@", 1)[0]
    if symbol.lower() not in DROP_KINDS:
        raise TableError(
            f"the action at ply {ply} ({entry.san}) sets down the extra piece: its kind "
            "is the rule's"
        )
    if symbol.lower() == request.kind:
        raise TableError(f"the drop at ply {ply} ({entry.san}) is already of kind {request.kind}")
    return ply, symbol


def redo_drop(
    game: VariantGame, plies: int, square: chess.Square, symbol: str
) -> list[tuple[str, str]] | str:
    """Take the last ``plies`` actions of ``game`` back, make the first (a drop on
    ``square``) as a drop of ``symbol`` and the others again: each action's uci and
    notation as made now, or why it cannot be (the game is then left as it was)."""
    undone = [game.undo() for _ in range(plies)][::-1]
    first = undone[0]
    if not isinstance(first, Drop) or first.square != square:
        return _restore(game, undone, 0, "the action there is not that drop")
    held = game.hand(first.piece.isupper())
    if symbol.lower() not in held:
        kinds = ", ".join(held) or "nothing"
        return _restore(game, undone, 0, f"no {symbol.lower()} in the hand then (it held {kinds})")
    made_now: list[tuple[str, str]] = []
    for made, action in enumerate([Drop(symbol, square), *undone[1:]]):
        legal = next((la for la in game.legal_actions() if la.action == action), None)
        if legal is None:
            what = "the new drop" if made == 0 else f"the later action {action}"
            return _restore(game, undone, made, f"{what} would not be legal")
        made_now.append((legal.uci, game.san(action)))
        game.apply(action)
    return made_now


def _restore(game: VariantGame, undone: list[Action], made: int, reason: str) -> str:
    """Take back the ``made`` actions made anew and make the ``undone`` ones again."""
    for _ in range(made):
        game.undo()
    for action in undone:
        game.apply(action)
    return reason
