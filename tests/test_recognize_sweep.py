"""The recogniser on presence-only boards under fast hands: a capture whose captured piece is
swept off (its square never reads empty) followed by the reply before the capture was read,
the reading ahead that follows the game through it, the other captures named, and a stretch
no legal play explains."""

from __future__ import annotations

from test_recognize_helpers import Desk, moves_in, of_type

from dgt.events import Side
from service.recognize.events import MoveEvent

ROOK_SWEEP = "4k2r/8/8/8/8/8/7P/4K3 b k - 0 1"
"""Black's rook h8 can take the pawn on h2 (the only capture it has)."""
RECAPTURE = "r3k3/8/8/3p4/4P3/2N5/8/4K3 b - - 0 1"
"""...dxe4 answered by Nxe4."""
KNIGHT_FORK = "4k3/8/8/8/8/2P1P3/8/3n2K1 b - - 0 1"
"""The knight on d1 can take the pawn on c3 or the one on e3; fxe3 is no reply here, but
Kf2 attacks e3 after ...Nxe3 (and not c3)."""


def test_swept_capture_then_the_reply_before_it_was_read() -> None:
    """...Rxh2 swept (only h8 reads empty), then White's king e1-d1 within a second: no
    single action explains the board, the two together do."""
    desk = Desk(presence_only=True, fen=ROOK_SWEEP)
    desk.lift("h8")
    desk.lift("e1", 1.0)
    got = desk.put("d1", "*", 0.5)
    assert moves_in(got, final=False) == ["h8h2", "e1d1"]
    assert of_type(desk.out, "mismatch") == []
    desk.wait(3)
    assert desk.final_ucis() == ["h8h2", "e1d1"]


def test_swept_capture_then_a_recapture_is_followed() -> None:
    """...dxe4 swept, Nxe4 (the knight set down where the pawn landed, the pawn taken off
    first): the game goes on, no mismatch."""
    desk = Desk(presence_only=True, fen=RECAPTURE, clock=True)
    desk.lift("d5")
    desk.lift("c3", 1.5)
    desk.lift("e4", 0.3)
    got = desk.put("e4", "*", 0.3)
    assert moves_in(got, final=False) == ["d5e4", "c3e4"]
    desk.press(Side.LEFT)
    desk.lift("e8", 2.0)
    desk.put("d7", "*")
    desk.press(Side.RIGHT)
    assert desk.final_ucis() == ["d5e4", "c3e4", "e8d7"]
    assert of_type(desk.out, "mismatch") == []


def test_swept_capture_names_the_other_captures_of_the_piece() -> None:
    """...Nxe3 or ...Nxc3, swept, then White's king moves: the board reads both the same; the
    move event names the other one."""
    desk = Desk(presence_only=True, fen=KNIGHT_FORK)
    desk.lift("d1")
    desk.lift("g1", 1.0)
    got = desk.put("h1", "*", 0.5)
    moves = [e for e in got if isinstance(e, MoveEvent) and not e.final]
    assert [e.uci[:2] for e in moves] == ["d1", "g1"]
    read, other = moves[0].uci, {"d1c3", "d1e3"} - {moves[0].uci}
    assert [uci for uci, _ in moves[0].alternatives] == list(other)
    assert read in ("d1c3", "d1e3")


def test_reply_only_one_reading_allows_settles_the_swept_capture() -> None:
    """...Nxe3 swept, then Kf2 and Kxe3 (the king lifts e3 and lands there): the king takes
    on e3 only if the knight went there; both readings of the capture lead here only that
    way."""
    desk = Desk(presence_only=True, fen=KNIGHT_FORK)
    desk.lift("d1")
    desk.lift("g1", 1.0)
    desk.put("f2", "*", 0.5)
    desk.lift("e8", 2.0)
    desk.put("e7", "*", 0.5)
    desk.lift("e3", 2.0)
    desk.lift("f2", 0.3)
    desk.put("e3", "*", 0.4)
    desk.wait(3)
    assert desk.final_ucis() == ["d1e3", "g1f2", "e8e7", "f2e3"]


def test_neighbour_lifted_with_the_mover_is_no_swept_reply() -> None:
    """Two pieces lifted within a scan of each other are one hand's move and a knocked or
    taken piece, never a move and its reply: a reply starts after the move it answers."""
    desk = Desk(presence_only=True, fen=RECAPTURE)
    desk.lift("d5")
    desk.lift("c3", 0.04)
    got = desk.put("e4", "*", 0.4)
    assert moves_in(got) == []


def test_a_stretch_no_legal_play_explains_is_a_mismatch_then_the_game_goes_on() -> None:
    """The pawn on e4 lifted and the king e1 set on e3 (two squares: no king move): a
    mismatch once the board stands still.  Then the king goes back and the pawn with it:
    the game goes on from there."""
    desk = Desk(presence_only=True, fen="4k3/8/8/8/4P3/8/8/4K3 w - - 0 1")
    desk.lift("e4")
    desk.lift("e1", 0.5)
    desk.put("e3", "*", 0.5)
    got = desk.wait(2.5)
    assert [m.squares for m in of_type(got, "mismatch")] != []
    desk.lift("e3", 1.0)
    desk.put("e1", "*", 0.3)
    desk.put("e4", "*", 0.3)
    desk.move("e4e5", "*", 1.0)
    desk.wait(3)
    assert desk.final_ucis() == ["e4e5"]
