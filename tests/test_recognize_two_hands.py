"""The recogniser against captures made with two hands, on piece-identity and presence-only
boards.  The presence-only "one-hand rule" (a capture whose captured square was first lifted
within a scan of the mover's lift is taken, among captures reading the same, for a
knocked-over neighbour: one hand cannot take two pieces at once) must not misread a capture
where one hand lifts the mover and the other takes the captured piece off.

What a presence-only board can and cannot tell here:

* with no other capture reading the same, a two-handed capture is read right (whichever
  piece comes off first, completed by the clock, the settle delay or a quick reply);
* a two-handed capture with another capture by the same piece handled too (a neighbour
  knocked over and set back, or straightened after the move) is a known limit: the sensor
  history is also that of the other capture with the really captured square knocked over
  as the mover was lifted, and the one-hand rule reads that one.  (The rule holds for
  squares out of reach of the hand at the mover too, such as a knight's target: an arm
  reaching across the board knocks pieces far from where the hand lands, and in the noisy
  replays reading such a square as taken by a second hand read a game wrong.)  The board
  guarantees a capture by the right piece with the other capture named in the move event's
  ``alternatives`` (a screen offers it to the arbiter), and the re-reading when later play
  proves it wrong."""

from __future__ import annotations

import pytest
from test_recognize_helpers import Desk, moves_in, of_type

from dgt.events import Side
from service.recognize import Amend, MoveEvent, RecognizerEvent

FAMILIES = [False, True]
FAMILY_IDS = ["identity", "presence"]
family = pytest.mark.parametrize("presence_only", FAMILIES, ids=FAMILY_IDS)
ORDERS = ["captured-first", "mover-first"]
set_back = pytest.mark.parametrize(
    "knocked_back_after", [True, False], ids=["set-back-last", "set-back-first"]
)

PAWN_CAPTURE = ("rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2", "e4d5", "P")
"""1.e4 d5: exd5, the only capture the pawn has."""
KNIGHT_FEN = "4k3/8/3p4/2b5/4N3/8/8/4K3 w - - 0 1"
"""The knight on e4 can take the bishop on c5 or the pawn on d6 (diagonal neighbours)."""
KNIGHT_CAPTURE = (KNIGHT_FEN, "e4c5", "N")

TWO_HAND_GAP = 0.04
"""Seconds between the two lifts of a two-handed capture: well within a scan."""


def move_events(events: list[RecognizerEvent], *, final: bool | None = None) -> list[MoveEvent]:
    return [e for e in events if isinstance(e, MoveEvent) and (final is None or e.final == final)]


def lift_with_two_hands(desk: Desk, mover: str, captured: str, order: str) -> None:
    """One hand lifts the piece on ``mover``, the other takes the piece on ``captured`` off
    :data:`TWO_HAND_GAP` seconds apart, in ``order``."""
    first, second = (captured, mover) if order == "captured-first" else (mover, captured)
    desk.lift(first, 0.5)
    desk.lift(second, TWO_HAND_GAP)


# -- 1. a plain two-handed capture ----------------------------------------------------------


@family
@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("capture", [PAWN_CAPTURE, KNIGHT_CAPTURE], ids=["exd5", "Nxc5"])
def test_two_handed_capture_completed_by_the_clock(
    presence_only: bool, order: str, capture: tuple[str, str, str]
) -> None:
    """The player takes the captured piece off with one hand while the other lifts the
    capturing piece (0.04 s apart), sets the capturing piece on the captured square 0.45 s
    later and presses the clock.  With the knight, the other capture it has (d6) is not
    touched: nothing else reads the same."""
    fen, uci, symbol = capture
    desk = Desk(presence_only=presence_only, fen=fen, clock=True)
    lift_with_two_hands(desk, uci[:2], uci[2:], order)
    assert moves_in(desk.out) == []
    got = desk.put(uci[2:], symbol, 0.45)
    assert [(e.uci, e.final, e.alternatives) for e in move_events(got)] == [(uci, False, ())]
    got = desk.press(Side.LEFT, 0.3)
    assert moves_in(got, final=True) == [uci]
    desk.wait(3)
    assert desk.final_ucis() == [uci]
    assert of_type(desk.out, "mismatch") == []


@family
@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("capture", [PAWN_CAPTURE, KNIGHT_CAPTURE], ids=["exd5", "Nxc5"])
def test_two_handed_capture_completed_by_the_settle_delay(
    presence_only: bool, order: str, capture: tuple[str, str, str]
) -> None:
    """The same handling without a clock: the board standing still completes it."""
    fen, uci, symbol = capture
    desk = Desk(presence_only=presence_only, fen=fen)
    lift_with_two_hands(desk, uci[:2], uci[2:], order)
    got = desk.put(uci[2:], symbol, 0.45)
    assert moves_in(got, final=False) == [uci]
    assert moves_in(desk.wait(1.0)) == []
    assert moves_in(desk.wait(1.5), final=True) == [uci]
    assert desk.final_ucis() == [uci]
    assert of_type(desk.out, "mismatch") == []


# -- 2. a two-handed capture next to another capture of the same piece ----------------------


def knight_takes_c5_with_d6_knocked(desk: Desk, order: str, knocked_back_after: bool) -> None:
    """Nxc5 with two hands (e4 and c5 lifted 0.04 s apart); as the knight travels, the hand
    knocks the pawn on d6 over (0.35 s later) and sets it back -- after the knight lands on
    c5, or before."""
    lift_with_two_hands(desk, "e4", "c5", order)
    desk.lift("d6", 0.35)
    if knocked_back_after:
        desk.put("c5", "N", 0.35)
        desk.put("d6", "p", 0.5)
    else:
        desk.put("d6", "p", 0.4)
        desk.put("c5", "N", 0.3)


@set_back
@pytest.mark.parametrize("order", ORDERS)
def test_two_handed_capture_beside_a_knocked_neighbour_on_an_identity_board(
    order: str, knocked_back_after: bool
) -> None:
    """The pieces tell it: the white knight stands on c5, the black pawn on d6 again."""
    desk = Desk(fen=KNIGHT_FEN)
    knight_takes_c5_with_d6_knocked(desk, order, knocked_back_after)
    assert [(e.uci, e.alternatives) for e in move_events(desk.out)] == [("e4c5", ())]
    desk.wait(3)
    assert desk.final_ucis() == ["e4c5"]


@set_back
@pytest.mark.parametrize("order", ORDERS)
def test_two_handed_capture_beside_a_knocked_neighbour_on_a_presence_only_board(
    order: str, knocked_back_after: bool
) -> None:
    """A known limit.  The sensors show e4 and c5 empty together, d6 empty 0.35 s later,
    then c5 and d6 occupied again: that is also Nxd6 with the bishop on c5 knocked over as
    the knight was lifted and set back, and the one-hand rule reads that: Nxd6+, naming
    Nxc5 as the other reading, also on completion."""
    desk = Desk(presence_only=True, fen=KNIGHT_FEN)
    knight_takes_c5_with_d6_knocked(desk, order, knocked_back_after)
    desk.wait(3)
    assert [(e.uci, e.final, e.alternatives) for e in move_events(desk.out)] == [
        ("e4d6", False, (("e4c5", "Nxc5"),)),
        ("e4d6", True, (("e4c5", "Nxc5"),)),
    ]


@pytest.mark.parametrize("presence_only", FAMILIES, ids=FAMILY_IDS)
def test_reply_only_the_two_handed_capture_allows_makes_it_read_right(
    presence_only: bool,
) -> None:
    """Nxc5 with two hands and d6 knocked over and set back; Black answers ...dxc5, which
    only Nxc5 leaves legal (after Nxd6+ there is no pawn on d6).  However the capture was
    read, the game ends up Nxc5 dxc5 (a presence-only board reads it again)."""
    desk = Desk(presence_only=presence_only, fen=KNIGHT_FEN, clock=True)
    knight_takes_c5_with_d6_knocked(desk, "captured-first", knocked_back_after=True)
    desk.press(Side.LEFT, 0.3)
    desk.lift("d6", 1.5)
    desk.lift("c5", 0.3)
    desk.put("c5", "p", 0.4)
    desk.press(Side.RIGHT, 0.3)
    desk.wait(3)
    assert desk.final_ucis() == ["e4c5", "d6c5"]
    assert of_type(desk.out, "mismatch") == []


PAWN_FEN = "4k3/8/8/3p1n2/4P3/8/8/4K3 w - - 0 1"
"""The pawn on e4 can take the pawn on d5 or the knight on f5."""
TOUCHED = {
    "exd5": (PAWN_FEN, "e4d5", "P", "f5", "n", ("f5", "h4", "n")),
    "Nxc5": (KNIGHT_FEN, "e4c5", "N", "d6", "p", ("d6", "c5", "p")),
}
"""Per two-handed capture: fen, uci, mover, the neighbour touched after it, what stands
there, and a reply (from, to, piece) only the two-handed capture leaves legal (...Nh4:
the knight was not taken; ...dxc5: the pawn was not taken)."""


def capture_then_touch_the_neighbour(desk: Desk, case: str) -> None:
    """The capture made with two hands (captured piece off 0.04 s before the mover), the
    mover set down 0.4 s later; 0.6 s after that the neighbour that the same piece could
    also take is straightened (lifted, set back 0.4 s later), then the clock is pressed."""
    _, uci, mover, neighbour, piece, _ = TOUCHED[case]
    lift_with_two_hands(desk, uci[:2], uci[2:], "captured-first")
    desk.put(uci[2:], mover, 0.4)
    desk.lift(neighbour, 0.6)
    desk.put(neighbour, piece, 0.4)
    desk.press(Side.LEFT, 0.3)


def play_reply(desk: Desk, case: str) -> None:
    """Black's reply of ``case``, 1.5 s after the clock press, and Black's press."""
    origin, target, piece = TOUCHED[case][5]
    desk.lift(origin, 1.5)
    if target == TOUCHED[case][1][2:]:
        desk.lift(target, 0.3)  # a capture: the piece taken off first
    desk.put(target, piece, 0.4)
    desk.press(Side.RIGHT, 0.3)


@pytest.mark.parametrize("case", list(TOUCHED))
def test_neighbour_touched_after_a_two_handed_capture_on_an_identity_board(case: str) -> None:
    """The pieces tell it: the touched neighbour is set back as it was."""
    fen, uci, _, _, _, (origin, target, _) = TOUCHED[case]
    desk = Desk(fen=fen, clock=True)
    capture_then_touch_the_neighbour(desk, case)
    assert of_type(desk.out, "amend") == []
    play_reply(desk, case)
    desk.wait(3)
    assert desk.final_ucis() == [uci, origin + target]


@pytest.mark.parametrize("case", list(TOUCHED))
def test_neighbour_touched_after_a_two_handed_capture_on_a_presence_only_board(
    case: str,
) -> None:
    """A known limit.  The capture is read right as the mover lands; the neighbour lifted
    and set back afterwards gives the sensor history of the other capture with the really
    captured square knocked over as the mover was lifted and set back, the other piece
    taken after (the one-hand rule: the two-handed lift reads as a knock).  The capture is
    amended to the other one, which names the capture made as the other reading (for a
    screen to offer, and for a re-reading when later play disproves it)."""
    fen, uci, _, neighbour, _, _ = TOUCHED[case]
    other = uci[:2] + neighbour
    desk = Desk(presence_only=True, fen=fen, clock=True)
    capture_then_touch_the_neighbour(desk, case)
    assert [(e.uci, e.final) for e in move_events(desk.out)] == [(uci, False), (other, True)]
    amends = [e for e in desk.out if isinstance(e, Amend)]
    assert [(e.old_uci, e.uci) for e in amends] == [(uci, other)]
    assert [[u for u, _ in e.alternatives] for e in amends] == [[uci]]  # named at once
    assert amends[0].to_json()["alternatives"][0]["uci"] == uci
    assert [u for u, _ in move_events(desk.out, final=True)[0].alternatives] == [uci]


@pytest.mark.parametrize("case", list(TOUCHED))
def test_reply_reads_again_a_two_handed_capture_amended_by_a_touched_neighbour(
    case: str,
) -> None:
    """The same handling, then Black plays a reply only the two-handed capture leaves
    legal: the capture is read again (as a knocked neighbour proved wrong by the next move
    is) and both moves read right."""
    fen, uci, _, neighbour, _, (origin, target, _) = TOUCHED[case]
    desk = Desk(presence_only=True, fen=fen, clock=True)
    capture_then_touch_the_neighbour(desk, case)
    completed = move_events(desk.out, final=True)
    assert {completed[0].uci, *(u for u, _ in completed[0].alternatives)} == {
        uci,
        uci[:2] + neighbour,
    }
    play_reply(desk, case)
    desk.wait(3)
    assert desk.final_ucis() == [uci, origin + target]
    assert of_type(desk.out, "mismatch") == []


# -- 3. a two-handed capture and a quick reply ----------------------------------------------


def quick_reply(desk: Desk, answer: str) -> None:
    """Black's hand is at the board 0.15 s after White's piece lands (or the clock press):
    ...Nf6, or ...Qxd5 taken with two hands as well (queen and pawn off 0.04 s apart)."""
    if answer == "Qxd5":
        desk.lift("d5", 0.15)
        desk.lift("d8", TWO_HAND_GAP)
        desk.put("d5", "q", 0.35)
    else:
        desk.lift("g8", 0.15)
        desk.put("f6", "n", 0.3)


REPLIES = {"Nf6": "g8f6", "Qxd5": "d8d5"}


@family
@pytest.mark.parametrize("clock", [False, True], ids=["no-clock", "clock"])
@pytest.mark.parametrize("reply", list(REPLIES))
@pytest.mark.parametrize("order", ORDERS)
def test_two_handed_capture_then_a_quick_reply(
    presence_only: bool, clock: bool, reply: str, order: str
) -> None:
    """exd5: one hand lifts the pawn on e4, the other takes the pawn on d5 off within a
    scan; the pawn lands on d5 0.4 s later (with the clock: pressed 0.15 s after that) and
    Black replies at once.  Both moves are read, each once, and completed."""
    fen, uci, symbol = PAWN_CAPTURE
    desk = Desk(presence_only=presence_only, fen=fen, clock=clock)
    lift_with_two_hands(desk, "e4", "d5", order)
    desk.put("d5", symbol, 0.4)
    if clock:
        assert moves_in(desk.press(Side.LEFT, 0.15), final=True) == [uci]
    quick_reply(desk, reply)
    if clock:
        desk.press(Side.RIGHT, 0.2)
    desk.wait(3)
    assert desk.final_ucis() == [uci, REPLIES[reply]]
    assert moves_in(desk.out, final=False) == [uci, REPLIES[reply]]
    assert of_type(desk.out, "takeback") == []
    assert of_type(desk.out, "amend") == []
    assert of_type(desk.out, "mismatch") == []
