"""A presence-only board under fast hands: a swept capture read ahead together with the
reply.  Among the captures by the same piece, the one taking the piece that just moved is
read (likelier), but the board cannot tell the others from it: they are named as the move
event's alternatives (960#573qk and 960#753qk of ``bench/recognition.py``: ...dxc3 swept
after e3, read ...dxe3, now offers ...dxc3)."""

from __future__ import annotations

import pytest
from test_recognize_helpers import Desk, moves_in, of_type
from test_recognize_reread import play

from service.recognize.events import MoveEvent

PAWNS = "4k3/8/8/8/3p4/2P5/4P3/6K1 w - - 0 1"
"""After e2-e3 the pawn on d4 can take on c3 or on e3; the king on g1 moves either way."""


def finals(desk: Desk) -> dict[int, MoveEvent]:
    """The last completed move event of each ply."""
    return {e.ply: e for e in desk.out if isinstance(e, MoveEvent) and e.final}


@pytest.mark.parametrize(
    ("fen", "named"),
    [
        (PAWNS, (("d4c3", "dxc3"),)),
        (PAWNS.replace("2P5", "8"), ()),  # no piece on c3: ...dxe3 is the pawn's only capture
    ],
)
def test_the_capture_of_a_piece_that_did_not_just_move_is_named(
    fen: str, named: tuple[tuple[str, str], ...]
) -> None:
    """e3, then ...dxc3 swept and Kh1 before the capture was read: read ahead as ...dxe3
    (the pawn that just moved), naming ...dxc3 when there is a piece to take on c3."""
    desk = Desk(presence_only=True, fen=fen)
    play(desk, ["e2e3"])
    desk.lift("d4")
    desk.lift("g1", 1.0)
    assert moves_in(desk.put("h1", "*", 0.5), final=False) == ["d4e3", "g1h1"]
    desk.wait(3)
    assert desk.final_ucis() == ["e2e3", "d4e3", "g1h1"]
    read = finals(desk)
    assert read[2].alternatives == named
    assert read[1].alternatives == ()
    assert read[3].alternatives == ()
    assert of_type(desk.out, "mismatch") == []
