"""A presence-only board under fast hands: a swept capture read among several, then a swept
recapture that only another reading of the capture allows (the piece really taken was on
another square: its recapture lands there).  Later play may fit both games to the end (the
same occupancy all along): the recapture read is then the wrong one, and its move event
names the recapture of the other reading (lichess#20 of ``bench/recognition.py``: Qxe5
Qxe5 Nxe5 read as Qxf7+ Qxf7 Nxe5)."""

from __future__ import annotations

from test_recognize_helpers import Desk, moves_in, of_type
from test_recognize_reread import play

from service.recognize.events import MoveEvent

QUEENS = "6k1/5p2/5q2/3Qp3/8/5N2/8/6K1 w - - 0 1"
"""Qd5 can take the pawn on e5 or, with check, the one on f7; the queen on f6 recaptures on
either square, the knight on f3 takes on e5 after both."""


def finals(desk: Desk) -> dict[int, MoveEvent]:
    """The last completed move event of each ply."""
    return {e.ply: e for e in desk.out if isinstance(e, MoveEvent) and e.final}


def test_the_recapture_of_the_other_reading_is_named() -> None:
    """Qxe5 swept (read Qxf7+, naming Qxe5), ...Qxe5 swept: with Qxf7+ read, the queen's
    only capture is ...Qxf7, read; ...Qxe5 is legal only had White taken on e5, and is
    named.  Nxe5 swept fits both games (it takes the queen or the pawn)."""
    desk = Desk(presence_only=True, fen=QUEENS)
    play(desk, ["d5", "f6", "f3"])
    desk.wait(3)
    assert desk.final_ucis() == ["d5f7", "f6f7", "f3e5"]
    read = finals(desk)
    assert read[1].alternatives == (("d5e5", "Qxe5"),)
    assert read[2].alternatives == (("f6e5", "Qxe5"),)  # (its SAN in the other game)
    assert read[3].alternatives == ()
    provisional = next(e for e in desk.out if isinstance(e, MoveEvent) and e.ply == 2)
    assert not provisional.final
    assert provisional.alternatives == (("f6e5", "Qxe5"),)
    assert of_type(desk.out, "mismatch") == []


def test_the_recapture_read_ahead_with_the_reply_is_named() -> None:
    """Qxe5 swept (read Qxf7+), then ...Qxe5 swept and White's knight f3-d4 before the
    capture was read: the two are read ahead together, the capture naming ...Qxe5 as
    above."""
    desk = Desk(presence_only=True, fen=QUEENS)
    play(desk, ["d5"])
    desk.lift("f6")
    desk.lift("f3", 1.0)
    assert moves_in(desk.put("d4", "*", 0.5), final=False) == ["f6f7", "f3d4"]
    desk.wait(3)
    assert desk.final_ucis() == ["d5f7", "f6f7", "f3d4"]
    read = finals(desk)
    assert read[2].alternatives == (("f6e5", "Qxe5"),)
    assert read[3].alternatives == ()


def test_a_capture_no_other_reading_changes_names_nothing_more() -> None:
    """Qxe5 swept (read Qxf7+), then ...Kxf7 swept: the king's capture of the queen; had
    White taken on e5 the king could not take on f7 (its own pawn) nor anywhere else on a
    square the two games differ on: nothing is named."""
    desk = Desk(presence_only=True, fen=QUEENS)
    play(desk, ["d5", "g8"])
    desk.wait(3)
    assert desk.final_ucis() == ["d5f7", "g8f7"]
    read = finals(desk)
    assert read[1].alternatives == (("d5e5", "Qxe5"),)
    assert read[2].alternatives == ()


KNIGHTS = "1k6/4N3/2bp1qn1/8/8/8/P4P1P/3K4 b - - 0 1"
"""After ...d5, Ne7 can take the pawn on d5, the knight on g6 or, with check, the bishop on
c6; the queen on f6 then takes the knight on g6 or c6, or the pawn on f2 (with the knight on
d5)."""


KNIGHTS_AFTER_D5 = "1k6/4N3/2b2qn1/3p4/8/8/P4P1P/3K4 w - - 0 1"
"""The same after ...d5 (no move before the knight's: none it just made to take)."""


def test_a_recapture_named_makes_the_capture_read_again_and_stays_named() -> None:
    """...d5, then Nxg6 swept (read Nxd5: it takes the piece that just moved), ...Qxg6
    swept: read ...Qxf2, the queen's only capture with the knight on d5, naming ...Qxg6 and
    ...Qxc6, each legal had the knight taken there.  f3: no pawn on f2 as read; the
    re-reading tries the knight's other captures since ...Qxf2 could be a recapture (it used
    to stand on a mismatch).  The board reads Nxg6 Qxg6 and Nxc6+ Qxc6 the same: the first is
    read, the other named on both moves."""
    desk = Desk(presence_only=True, fen=KNIGHTS)
    play(desk, ["d6d5", "e7", "f6"])
    assert desk.all_ucis() == ["d6d5", "e7d5", "f6f2"]
    assert finals(desk)[3].alternatives == (("f6g6", "Qxg6"), ("f6c6", "Qxc6"))
    play(desk, ["a2a3", "b8a8", "f2f3"])
    assert desk.final_ucis() == ["d6d5", "e7g6", "f6g6", "a2a3", "b8a8", "f2f3"]
    read = finals(desk)
    assert read[2].alternatives == (("e7c6", "Nxc6+"),)
    assert read[3].alternatives == (("f6c6", "Qxc6"),)
    assert of_type(desk.out, "mismatch") == []


def test_a_recapture_is_no_longer_named_once_its_capture_is_not() -> None:
    """Without ...d5: Nxc6+ swept is read Nxg6, ...Qxc6 swept ...Qxg6 (naming ...Qxc6 and,
    had the knight taken on d5, ...Qxf2).  a3, then ...Ne5 rules out Nxg6: the game is read
    again, Nxc6+ Qxc6 (Nxd5 is ruled out too: the queen could not take on c6 then).  The
    recapture ...Qxg6, which Nxg6 alone allowed, is not named with it."""
    desk = Desk(presence_only=True, fen=KNIGHTS_AFTER_D5)
    play(desk, ["e7", "f6", "a2a3", "g6e5"])
    assert desk.final_ucis() == ["e7c6", "f6c6", "a2a3", "g6e5"]
    read = finals(desk)
    assert read[1].alternatives == ()
    assert read[2].alternatives == ()
    assert of_type(desk.out, "mismatch") == []
