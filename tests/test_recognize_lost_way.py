"""Presence-only boards: streams on which the game read used to lose its way (end on
another board than the game played) in ``bench/recognition.py --sweep 0.6``, each cut down
to the few moves that did it."""

from __future__ import annotations

from test_recognize_helpers import Desk, of_type

KING_WALK = "3rk3/8/3Q4/4p3/8/8/8/5RK1 w - - 0 1"
"""Qxe5+ (or Qxd8+), the king steps out by d7 and on to c8 past the rook on d8."""


def test_a_guess_read_again_from_its_start_after_a_knocked_piece_is_set_back() -> None:
    """Qxe5+ swept, ...Kd7, Rf7+, then ...Kc8 with the rook on d8 knocked over as the king
    passes and set back at once.  While d8 reads empty the board reads Qxd8+ Kxd8 Rf7 Kc8
    from the last reading ahead's start; the rook set back disproves it, and reading again
    from that start must end neither with the square set back nor flip d7 only once (the
    king came to it and left it): the game played, no mismatch."""
    desk = Desk(presence_only=True, fen=KING_WALK)
    desk.lift("d6", 1.0)  # Qxe5+, the pawn swept off: only d6 reads empty
    desk.lift("e8", 1.6)  # ...Kd7
    desk.put("d7", "*", 0.9)
    desk.lift("f1", 2.5)  # Rf7+
    desk.put("f7", "*", 0.5)
    desk.lift("d7", 1.6)  # ...Kc8, knocking the rook on d8 over
    desk.lift("d8", 0.2)
    desk.put("c8", "*", 0.3)
    desk.put("d8", "*", 0.08)  # the rook set back
    desk.wait(3)
    assert desk.all_ucis() == ["d6e5", "e8d7", "f1f7", "d7c8"]
    assert of_type(desk.out, "mismatch") == []

