"""Promotions on a presence-only board: the board cannot tell the new piece, so the kind
told (:meth:`Recognizer.set_promotion`) stands: reading ahead does not replace a promotion
by the same move to another piece (which reads the same) as if it were an amendment, and
after a place it does not read a promotion to another piece (a piece resting on its path
may be what makes the told one illegal) but waits for the next change."""

from __future__ import annotations

from test_recognize_helpers import Desk, of_type

from service.recognize import MoveEvent
from service.recognize.recognizer import DEFAULT_SETTLE as SETTLE

QUEEN_TAKES_BACK = "2k5/8/8/8/6p1/Q6P/p4P2/2K5 b - - 0 1"
"""Black a2-a1 promotes with check (the king on c1); the white queen on a3 can take on a1;
then ...gxh3 and f2-f3."""


def play(desk: Desk) -> None:
    """a1=Q+, the new queen adjusted twice, then Qa3xa1 lifted after a1's last place (the
    capture's order does not fit from the position after a1=Q+), ...gxh3 with h3 swept (it
    never reads empty), f2-f3."""
    desk.lift("a2")
    desk.put("a1", "*", 0.5)
    desk.lift("a1", 0.76)
    desk.put("a1", "*", 1.33)
    desk.lift("a1", 0.08)
    desk.put("a1", "*", 0.04)
    desk.lift("a3", 0.73)
    desk.lift("g4", 6.25)
    desk.lift("f2", 2.54)
    desk.put("f3", "*", 0.52)
    desk.wait(5.0)


def test_told_promotion_is_not_amended_to_another_piece_by_reading_ahead() -> None:
    """Reading ahead from before a1=Q+ must not read a1=R+ Qxa1 (the board reads a rook on
    a1 like the queen; only the kind told says which): a1=Q+ Qxa1 gxh3 f3."""
    desk = Desk(presence_only=True, fen=QUEEN_TAKES_BACK, settle=SETTLE)
    desk.recognizer.set_promotion("q")
    play(desk)
    assert of_type(desk.out, "amend") == []
    assert desk.all_ucis() == ["a2a1q", "a3a1", "g4h3", "f2f3"]


def test_promotion_told_otherwise_is_read_so() -> None:
    """The same handling with a rook told reads a1=R+ throughout."""
    desk = Desk(presence_only=True, fen=QUEEN_TAKES_BACK, settle=SETTLE)
    desk.recognizer.set_promotion("r")
    play(desk)
    assert of_type(desk.out, "amend") == []
    assert desk.all_ucis() == ["a2a1r", "a3a1", "g4h3", "f2f3"]


CHECK_ON_THE_RANK = "4k3/8/8/8/8/5B2/1p6/2N1K3 b - - 0 1"
"""Black b2xc1 promotes; to a queen or a rook with check along the first rank, which the
bishop on f3 parries on d1 (not on e2, a square of its path)."""


def test_piece_resting_on_its_path_does_not_read_another_promotion_piece() -> None:
    """...bxc1=Q+ (told; c1 swept: it never reads empty), Bf3 rests on e2 on its way to
    d1: on e2 only ...bxc1=B or =N (no check) reads the board, but the reading waits for
    the next change, which reads ...bxc1=Q+ Bd1."""
    desk = Desk(presence_only=True, fen=CHECK_ON_THE_RANK, settle=SETTLE)
    desk.recognizer.set_promotion("q")
    desk.lift("b2")
    desk.lift("f3", 2.3)
    desk.put("e2", "*", 0.53)
    desk.lift("e2", 0.47)
    desk.put("d1", "*", 0.19)
    desk.wait(5.0)
    assert desk.all_ucis() == ["b2c1q", "f3d1"]
    assert [e.uci for e in desk.out if isinstance(e, MoveEvent)][:1] == ["b2c1q"]
