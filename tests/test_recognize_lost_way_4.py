"""Presence-only boards: bench streams whose reading lost its way (ended on another board than
the game played) for the timing of fast hands, each cut down to the moves that did it
(``bench/recognition.py --sweep 0.6``; the game, seed and ply in each test):

* a move's piece set down in the same scan that saw its square empty (the place reported
  first) was made by then: the reply may be lifted within a scan of it;
* a swept capture's landing is never seen (its lift may be reported as it lands): once the
  move is complete (the board still, a clock press) the reply need only be lifted after it,
  also when read from before a provisional last action, and the captured piece taken off
  within a scan of the capture's lift may be the reply's;
* a promotion kind told after a promotion was answered is for a later promotion.

And one the rules must keep: a swept capture read at a place is not answered within a scan
by the piece that just landed moving on (a slide resting on its path, a neighbour knocked
over)."""

from __future__ import annotations

from test_recognize_helpers import Desk, of_type

from dgt.events import Side

SWEPT_PAWN = "rq3b1r/5kp1/3ppn1B/1pnQPbPp/P1B4P/5N2/5P2/RN3RK1 w - - 1 22"
"""special#5 before its ply 43 (gxf6)."""

KNIGHTS_ON_D4 = "5r2/p1k3p1/2p1n1p1/3pP3/3N2rP/P3P2R/2P5/KR6 b - - 1 37"
"""kasparov-deep-blue-1997#4 before its ply 74 (...Nxd4)."""

PAWNS_ON_THE_KING = "1N3nk1/p4p2/1n3PP1/4p2P/2rpq3/3N1Bb1/3P1B2/1rQ2K1R w - - 1 28"
"""960#141qk before its ply 55 (gxf7+), its castling rights left out."""

TWO_PROMOTIONS = "1n3Bkr/3P2P1/2B5/p1B2q2/P6p/7B/3K4/6R1 w - - 3 50"
"""special#19 before its ply 99 (gxh8=R+)."""

BISHOP_SLIDE = "5R2/3k2B1/q3n2Q/5B1P/3r1PR1/4K2R/4N3/2r5 w - - 9 58"
"""special#12 before its ply 115 (Bh7)."""


def test_a_reply_lifted_within_a_scan_of_a_swept_capture_once_the_board_is_still() -> None:
    """special#5, seed 1, ply 43: gxf6 (f6 swept; g5 reads empty only as the pawn lands),
    ...g6 set down 45 ms later, the rook on h8 touched, Kh2; read g5-g6+ at the place.  Once
    the board stands still the last move is read again from before it (gxf6 g6 Kh2), as
    reading ahead from the top allows a reply lifted within a scan then; then ...dxe5 swept
    after a hesitation, Rd1 resting on e1, ...Ra7: the game played, no mismatch."""
    desk = Desk(presence_only=True, fen=SWEPT_PAWN)
    desk.wait(3)
    desk.lift("g5", 0.888)  # gxf6, f6 swept
    desk.put("g6", "*", 0.045)  # ...g6, in the scan that saw g7 empty
    desk.lift("g7", 0.012)
    desk.lift("h8", 0.129)  # the rook touched and set back
    desk.put("h8", "*", 0.47)
    desk.lift("g1", 0.017)  # Kh2
    desk.put("h2", "*", 0.61)
    desk.lift("d6", 2.492)  # ...dxe5, e5 swept, after a hesitation
    desk.put("d6", "*", 1.417)
    desk.lift("d6", 1.338)
    desk.lift("f1", 2.47)  # Rd1, resting on e1
    desk.put("e1", "*", 0.531)
    desk.lift("e1", 0.216)
    desk.put("d1", "*", 0.378)
    desk.lift("a8", 3.161)  # ...Ra7
    desk.put("a7", "*", 0.915)
    desk.wait(3)
    assert desk.all_ucis() == ["g5f6", "g7g6", "g1h2", "d6e5", "f1d1", "a8a7"]
    assert of_type(desk.out, "mismatch") == []


def test_the_captured_piece_of_a_swept_capture_taken_off_by_the_reply_within_a_scan() -> None:
    """kasparov-deep-blue-1997#4, seed 1, ply 74: ...Nxd4 swept, exd4 swept (e3 reads empty
    as the pawn lands), and 35 ms later Black takes the pawn off d4 for ...Rxd4, the rook
    lifted and set down on d4.  The d4 lift is the reply's (one hand cannot take the pawn
    off as it lands it), not exd4's own capture: then Rg1 and ...Rc4, no mismatch."""
    desk = Desk(presence_only=True, fen=KNIGHTS_ON_D4)
    desk.wait(3)
    desk.lift("e6", 0.911)  # ...Nxd4, d4 swept
    desk.lift("e3", 8.336)  # exd4, d4 swept
    desk.lift("d4", 0.035)  # ...Rxd4: the pawn taken off first
    desk.lift("g4", 0.27)
    desk.put("d4", "*", 0.741)
    desk.lift("b1", 2.392)  # Rg1
    desk.put("g1", "*", 0.375)
    desk.lift("d4", 4.058)  # ...Rc4
    desk.put("c4", "*", 0.499)
    desk.wait(3)
    assert desk.all_ucis() == ["e6d4", "e3d4", "g4d4", "b1g1", "d4c4"]
    assert of_type(desk.out, "mismatch") == []


def test_a_reply_within_a_scan_of_a_move_set_down_before_its_lift_was_reported() -> None:
    """960#141qk, seed 2, ply 55 (castling rights left out: none is used): gxf7+ swept,
    ...Kh8 (h8 reported set down 14 ms before g8 empty), h6 46 ms after g8's lift, and the
    board never still for the settle delay: ...Rc2 sliding over c3, h7 after a hesitation,
    ...Qa8.  ...Kh8 was made when g8 was seen empty, so h6 may follow within a scan: read at
    h6's place, every move read as played before the board is still."""
    desk = Desk(presence_only=True, fen=PAWNS_ON_THE_KING)
    desk.wait(3)
    desk.lift("g6", 1.805)  # gxf7+, f7 swept
    desk.put("h8", "*", 1.128)  # ...Kh8, set down before g8's lift was reported
    desk.lift("g8", 0.014)
    desk.put("h6", "*", 0.046)  # h6, one scan
    desk.lift("h5", 0.0)
    desk.lift("c4", 1.083)  # ...Rc2 over c3
    desk.put("c3", "*", 0.467)
    desk.lift("c3", 0.237)
    desk.put("c2", "*", 0.264)
    desk.lift("h6", 1.52)  # h7 after a hesitation
    desk.put("h6", "*", 0.614)
    desk.lift("h6", 1.838)
    desk.put("h7", "*", 0.659)
    desk.lift("e4", 0.015)  # ...Qa8
    desk.put("a8", "*", 0.821)
    assert desk.all_ucis() == ["g6f7", "g8h8", "h5h6", "c4c2", "h6h7", "e4a8"]
    desk.wait(3)
    assert desk.all_ucis() == ["g6f7", "g8h8", "h5h6", "c4c2", "h6h7", "e4a8"]
    assert of_type(desk.out, "mismatch") == []


def test_a_promotion_answered_before_the_next_kind_is_told_keeps_its_own() -> None:
    """special#19, seed 2, ply 99: a rook told, gxh8=R+ swept (only g7 reads empty), ...Kf7
    (set down in the scan that saw g8 empty); the queen told for the next promotion before
    the board's stillness is read (the next board event's tick), then d8=Q, ...Na6, Bd7:
    gxh8=R+ stays a rook (read as a queen it gives the mate that ends the game later)."""
    desk = Desk(presence_only=True, fen=TWO_PROMOTIONS)
    desk.wait(3)
    desk.recognizer.set_promotion("r")
    desk.lift("g7", 1.089)  # gxh8=R+, h8 swept
    desk.put("f7", "*", 8.574)  # ...Kf7
    desk.lift("g8", 0.0)
    desk.recognizer.set_promotion("q")
    desk.lift("d7", 2.589)  # d8=Q
    desk.put("d8", "*", 1.59)
    desk.lift("b8", 3.698)  # ...Na6
    desk.put("a6", "*", 0.568)
    desk.lift("c6", 1.979)  # Bd7
    desk.put("d7", "*", 0.5)
    desk.wait(3)
    assert desk.all_ucis() == ["g7h8r", "g8f7", "d7d8q", "b8a6", "c6d7"]


def test_the_piece_that_just_landed_moving_on_is_no_reply_to_a_swept_capture() -> None:
    """special#12, seed 2, ply 115 (what the rules above must keep): Bh7 resting on g6, the
    knight on e6 knocked over 78 ms after the bishop landed there, and set back.  At h7's
    place ...Nxf8 swept answered by Bg6-h7 37 ms after the knight's lift would explain every
    square, but mid-move a swept capture, whose landing is not seen, is answered only more
    than a scan after its lift; by the time the board is complete the knight is back: Bh7,
    ...Qa2, Kf2 with the clock, no mismatch."""
    desk = Desk(presence_only=True, fen=BISHOP_SLIDE)
    desk.wait(3)
    desk.lift("f5", 0.498)  # Bh7, resting on g6
    desk.put("g6", "*", 0.174)
    desk.lift("e6", 0.078)  # the knight knocked over
    desk.lift("g6", 0.037)
    desk.put("h7", "*", 0.134)
    desk.put("e6", "*", 0.438)  # and set back
    desk.press(Side.LEFT, 0.558)
    desk.lift("a6", 2.359)  # ...Qa2
    desk.put("a2", "*", 0.521)
    desk.press(Side.RIGHT, 0.26)
    desk.lift("e3", 1.649)  # Kf2
    desk.put("f2", "*", 0.909)
    desk.press(Side.LEFT, 0.29)
    desk.wait(3)
    assert desk.all_ucis() == ["f5h7", "a6a2", "e3f2"]
    assert of_type(desk.out, "mismatch") == []
