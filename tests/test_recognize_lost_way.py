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


SWEPT_CHECK = "4b2k/3Q4/8/1p4r1/8/8/8/K7 w - - 0 1"
"""Qxe8+ or Qxb5 (the board reads them the same swept); ...Rg8 answers only the first of them
by blocking, ...Rg6 only the second."""


def test_a_slide_resting_on_its_path_does_not_disprove_the_reading_it_goes_on_to_allow() -> None:
    """Qxe8+ swept, then ...Rg8 resting on g6 on its way: at the rest the board reads Rg6,
    which only Qxb5 allows, so Qxe8+ is read again as Qxb5 -- but Rg6 is not made yet (the
    rook goes on to g8, which both allow), so Qxe8+ stays its other reading.  Six plies of
    king moves later Kg5 (which the queen on b5 would attack) and Qf7 (the queen on e8) read
    it back: the game played, no mismatch."""
    desk = Desk(presence_only=True, fen=SWEPT_CHECK)
    desk.lift("d7", 1.0)  # Qxe8+, the bishop swept off
    desk.wait(3)
    desk.wait(3)
    desk.lift("g5", 2.0)  # ...Rg8, resting on g6
    desk.put("g6", "*", 0.3)
    desk.lift("g6", 0.2)
    desk.put("g8", "*", 0.4)
    desk.wait(3)
    for uci in ["a1a2", "h8h7", "a2b2", "h7h6", "b2c2", "h6g5", "e8f7"]:
        desk.lift(uci[:2], 2.0)
        desk.put(uci[2:], "*", 0.5)
        desk.wait(3)
    assert desk.all_ucis() == [
        "d7e8", "g5g8", "a1a2", "h8h7", "a2b2", "h7h6", "b2c2", "h6g5", "e8f7"
    ]  # fmt: skip
    assert of_type(desk.out, "mismatch") == []


def test_a_slide_that_stays_where_it_rested_disproves_the_reading_once_final() -> None:
    """Qxe8+ swept, then ...Rg6 (the rook stays): read again as Qxb5 at the place, Qxe8+
    named as its other reading while Rg6 may still go on; once Rg6 is final (the settle
    delay), Qxe8+ is no reading of ply 1 any more."""
    desk = Desk(presence_only=True, fen=SWEPT_CHECK)
    desk.lift("d7", 1.0)
    desk.wait(3)
    desk.wait(3)
    desk.lift("g5", 2.0)
    desk.put("g6", "*", 0.3)
    desk.wait(3)
    record = desk.recognizer.record()
    assert record is not None
    assert [(m.uci, m.final) for m in record.moves] == [("d7b5", True), ("g5g6", True)]
    assert record.moves[0].alternatives == ()
