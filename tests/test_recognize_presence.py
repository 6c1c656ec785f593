"""The recogniser on presence-only boards (occupancy only), one test per kind of handling that
was once read wrong in the noisy replays: a reply set down before its lift on the square the
last move left, a knocked neighbour of a capture, a dragged capturing piece, a capture read on
the wrong piece and proved wrong by the next move (also when it was read before the captured
square was handled), a capture told by which square was lifted first or by a square lifted
within a scan of the mover's lift (knocked over, not taken), a slow castling, a hand
touching a piece after a move completed by the settle delay, en passant seen
place-before-lift, and a capture whose captured piece was swept off."""

from __future__ import annotations

import io

import chess.pgn
from test_recognize_helpers import Desk, moves_in, of_type

from dgt.events import BoardSnapshot, Side, SquareChanged
from dgt.protocol.constants import Piece
from service.recognize import Recognizer
from service.recognize.events import Amend, MoveEvent
from service.recognize.pgn import game_pgn
from service.variants.base import StartPosition
from service.variants.standard import squares_of as symbol_map

TWO_CAPTURES = "4k3/8/8/3p1n2/4P3/8/8/4K3 w - - 0 1"
"""White pawn e4 can take the pawn on d5 or the knight on f5."""


def test_reply_set_down_before_its_lift_on_the_square_just_left_is_no_takeback() -> None:
    """cxb8=R+ (the pawn set on b8 first, then exchanged for the rook), Kd8-c7: the king
    lands on c7, which the pawn left, one scan before d8 reads empty.  For that scan the
    board reads like the position before cxb8=R+, with b8 handled since: a takeback, but
    for the lift that follows."""
    desk = Desk(presence_only=True, fen="1r1k4/2P5/8/8/8/8/8/4K3 w - - 0 1", clock=True)
    desk.recognizer.set_promotion("r")
    desk.lift("b8")
    desk.lift("c7")
    desk.put("b8", "*")
    desk.lift("b8", 0.4)
    desk.put("b8", "*", 1.2)
    desk.press(Side.LEFT)
    got = desk.put("c7", "*", 1.0)
    got += desk.lift("d8", 0.01)
    got += desk.press(Side.RIGHT)
    assert of_type(got, "takeback") == []
    assert desk.final_ucis() == ["c7b8r", "d8c7"]


def test_takeback_shown_by_a_place_counts_once_no_lift_follows_within_a_scan() -> None:
    """1.e4 d5 2.Nc3 Nf6 3.exd5 taken back: e4 set down could be 3...Ne4 set down before its
    lift, so the takeback waits one scan (0.1 s) for a lift that does not come."""
    desk = Desk(presence_only=True, clock=True)
    for uci, side in (("e2e4", Side.LEFT), ("d7d5", Side.RIGHT), ("b1c3", Side.LEFT)):
        desk.move(uci, "*")
        desk.press(side)
    desk.move("g8f6", "*")
    desk.press(Side.RIGHT)
    desk.lift("d5")
    desk.lift("e4")
    desk.put("d5", "*")
    desk.press(Side.LEFT)
    desk.lift("d5", 1.0)  # the white pawn off, the black one back
    desk.put("d5", "*")
    got = desk.put("e4", "*")
    assert of_type(got, "takeback") == []  # not yet
    got = desk.wait(0.2)
    assert [t.moves for t in of_type(got, "takeback")] == [("e4d5",)]
    assert desk.final_ucis() == ["e2e4", "d7d5", "b1c3", "g8f6"]


def test_neighbour_knocked_and_set_back_before_the_last_lift_is_not_the_capture() -> None:
    """Queen c2 takes d2; the pawn on c3 is knocked over and set back while the queen is
    still touched (lifted and put back), the queen's last lift comes after it."""
    desk = Desk(presence_only=True, fen="4k3/8/8/8/8/2p5/2Qn4/4K3 w - - 0 1")
    desk.lift("c2")
    desk.put("c2", "*")
    desk.lift("c3", 0.2)
    desk.put("c3", "*", 0.4)
    desk.lift("d2", 0.8)
    desk.put("d2", "*", 1.0)
    desk.lift("c2", 0.01)  # the queen's lift, reported one scan after its landing
    desk.wait(3)
    assert desk.final_ucis() == ["c2d2"]


def test_squares_a_dragged_piece_passed_tell_which_piece_it_took() -> None:
    """Queen g2 takes e4, dragged over f3; meanwhile the pawn on g4 is knocked over and set
    back before the queen lands.  Qxg4 would leave e4 and f3 unexplained."""
    desk = Desk(presence_only=True, fen="4k3/8/8/8/4p1p1/8/6Q1/4K3 w - - 0 1")
    desk.lift("e4")
    desk.lift("g2", 0.5)
    desk.lift("g4", 0.1)
    desk.put("f3", "*", 0.5)
    desk.put("g4", "*", 0.05)
    desk.lift("f3", 0.3)
    got = desk.put("e4", "*", 0.25)
    assert moves_in(got) == ["g2e4"]
    desk.wait(3)
    assert desk.final_ucis() == ["g2e4"]


def test_capture_read_on_a_knocked_neighbour_is_read_again_when_the_next_move_disproves_it() -> (
    None
):
    """exd5, the knight on f5 knocked over and set back before the pawn lands: the board
    cannot tell exd5 from exf5 (it reads exf5, the square set down first).  Then the knight
    leaves f5, which only exd5 explains: the capture is read again."""
    desk = Desk(presence_only=True, fen=TWO_CAPTURES)
    desk.lift("e4")
    desk.lift("f5", 0.2)
    desk.lift("d5", 0.3)
    desk.put("f5", "*", 0.3)
    got = desk.put("d5", "*", 0.3)
    assert moves_in(got) == ["e4f5"]  # the likelier reading, provisional
    desk.wait(3)
    desk.lift("f5", 2.0)
    got = desk.put("h4", "*", 0.5)
    assert [t.moves for t in of_type(got, "takeback")] == [("e4f5",)]
    assert moves_in(got) == ["e4d5", "f5h4"]
    desk.wait(3)
    assert desk.final_ucis() == ["e4d5", "f5h4"]


def test_capture_read_before_the_captured_square_was_handled_can_be_read_again() -> None:
    """exd5 with the knight on f5 knocked over and set back before d5 is handled: the board
    reads exf5 at once.  d5 lifted and set down after that reads the same, and the pawn was
    not lifted again, so the handling does not amend the capture -- but exd5 is kept for a
    re-reading, which the knight leaving f5 then calls for."""
    desk = Desk(presence_only=True, fen=TWO_CAPTURES, clock=True)
    desk.lift("e4")
    desk.lift("f5", 0.2)
    got = desk.put("f5", "*", 0.3)
    assert moves_in(got) == ["e4f5"]
    desk.lift("d5", 0.01)
    desk.put("d5", "*", 0.5)
    desk.press(Side.LEFT)
    desk.lift("f5", 2.0)
    got = desk.put("h4", "*", 0.5)
    assert [t.moves for t in of_type(got, "takeback")] == [("e4f5",)]
    assert moves_in(got) == ["e4d5", "f5h4"]
    desk.press(Side.RIGHT)
    assert desk.final_ucis() == ["e4d5", "f5h4"]


def test_capture_whose_square_was_lifted_well_before_the_knocked_one_is_read() -> None:
    """exd5: the pawn on d5 comes off first, the knight on f5 is knocked over half a second
    later and set back before the pawn lands on d5.  Both captures read the same; the
    square lifted first (more than a scan before the other) is the captured one."""
    desk = Desk(presence_only=True, fen=TWO_CAPTURES)
    desk.lift("d5")
    desk.lift("e4", 0.2)
    desk.lift("f5", 0.5)
    desk.put("f5", "*", 0.4)
    got = desk.put("d5", "*", 0.2)
    assert moves_in(got) == ["e4d5"]
    desk.wait(3)
    assert desk.final_ucis() == ["e4d5"]


def test_lifts_within_a_scan_leave_the_capture_to_the_square_set_down_first() -> None:
    """The same handling but d5 and f5 read empty within one scan: the lifts tell nothing,
    the square set down first (f5) is read as the capture."""
    desk = Desk(presence_only=True, fen=TWO_CAPTURES)
    desk.lift("e4")
    desk.lift("d5", 0.2)
    desk.lift("f5", 0.05)
    desk.put("f5", "*", 0.4)
    got = desk.put("d5", "*", 0.2)
    assert moves_in(got) == ["e4f5"]


def _knocked_neighbour_capture(desk: Desk, on_f5: str = "*", on_d5: str = "*") -> None:
    """e4 takes on d5 or f5: both squares are lifted and set down while the pawn is in the
    hand, f5 first -- one was the captured piece, the other knocked over and set back."""
    desk.lift("e4")
    desk.lift("f5", 0.2)
    desk.lift("d5", 0.3)
    desk.put("f5", on_f5, 0.3)
    desk.put("d5", on_d5, 0.3)


def test_ambiguous_capture_is_kept_when_the_next_move_fits_it() -> None:
    desk = Desk(presence_only=True, fen=TWO_CAPTURES)
    _knocked_neighbour_capture(desk)
    desk.wait(3)
    desk.move("e8e7", "*", 2.0)
    desk.wait(3)
    assert of_type(desk.out, "takeback") == []
    assert desk.final_ucis() == ["e4f5", "e8e7"]


def test_a_capture_the_board_cannot_tell_names_the_other_reading() -> None:
    """The move events of a capture read among two (exf5, the likelier, and exd5) name exd5,
    provisional and completed, in JSON too; the record's move carries its SAN for the PGN
    comment.  Later moves, which the board read plainly, name nothing."""
    desk = Desk(presence_only=True, fen=TWO_CAPTURES)
    _knocked_neighbour_capture(desk)
    desk.wait(3)
    desk.move("e8e7", "*", 2.0)
    desk.wait(3)
    moves = [e for e in of_type(desk.out, "move") if isinstance(e, MoveEvent)]
    assert [(e.uci, e.final, e.alternatives) for e in moves] == [
        ("e4f5", False, (("e4d5", "exd5"),)),
        ("e4f5", True, (("e4d5", "exd5"),)),
        ("e8e7", False, ()),
        ("e8e7", True, ()),
    ]
    assert moves[1].to_json()["alternatives"] == [{"uci": "e4d5", "san": "exd5"}]
    assert "alternatives" not in moves[3].to_json()
    record = desk.recognizer.record()
    assert record is not None
    assert [m.alternatives for m in record.moves] == [("exd5",), ()]
    text = game_pgn(record)
    assert "exf5 {(the board could not tell this from exd5)} 1... Ke7" in text
    read = chess.pgn.read_game(io.StringIO(text))
    assert read is not None
    assert not read.errors
    assert [m.uci() for m in read.mainline_moves()] == ["e4f5", "e8e7"]
    first = read.next()
    assert first is not None
    assert first.comment == "(the board could not tell this from exd5)"


def test_a_piece_identity_board_names_no_other_reading() -> None:
    """The same handling on a board that tells pieces apart: the knight was set back on f5,
    so the pawn took on d5, and nothing else reads the same."""
    desk = Desk(presence_only=False, fen=TWO_CAPTURES)
    _knocked_neighbour_capture(desk, "n", "P")
    desk.wait(3)
    moves = [e for e in of_type(desk.out, "move") if isinstance(e, MoveEvent)]
    assert [(e.uci, e.alternatives) for e in moves] == [("e4d5", ()), ("e4d5", ())]


def test_a_capture_read_again_names_no_other_reading() -> None:
    """Once later play told the capture (the knight leaves f5: the pawn took on d5), the
    move events of the reading that replaces it name nothing."""
    desk = Desk(presence_only=True, fen=TWO_CAPTURES)
    _knocked_neighbour_capture(desk)
    desk.wait(3)
    desk.lift("f5", 2.0)
    got = desk.put("h4", "*", 0.5)
    assert [t.moves for t in of_type(got, "takeback")] == [("e4f5",)]
    moves = [e for e in of_type(got, "move") if isinstance(e, MoveEvent)]
    assert [(e.uci, e.alternatives) for e in moves] == [("e4d5", ()), ("f5h4", ())]


def test_slow_castling_replaces_the_rook_move_completed_by_the_settle_delay() -> None:
    desk = Desk(presence_only=True, fen="r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1")
    desk.move("h1f1", "*")
    assert moves_in(desk.wait(2.5), final=True) == ["h1f1"]
    desk.put("g1", "*", 0.3)  # the king set down before its lift is seen
    got = desk.lift("e1", 0.01)
    got += desk.wait(0.3)
    assert [t.moves for t in of_type(got, "takeback")] == [("h1f1",)]
    assert moves_in(got) == ["e1g1"]
    desk.wait(3)
    assert desk.final_ucis() == ["e1g1"]


def test_touching_pieces_after_a_move_completed_by_the_settle_delay_replaces_nothing() -> None:
    """Qb4-c3 completed by the settle delay; White's hand knocks the queen on c3 over and
    touches the pawn on c4 (the board then reads like Qxc4 instead of Qc3), sets the queen
    back and plays c4-c5."""
    desk = Desk(presence_only=True, fen="4k3/8/8/8/1qP5/8/7K/8 b - - 0 1")
    desk.move("b4c3", "*")
    desk.wait(3)
    desk.lift("c4")
    desk.lift("c3", 0.4)
    desk.put("c4", "*", 0.03)
    desk.lift("c4", 0.5)
    desk.put("c3", "*", 0.3)
    desk.put("c5", "*", 0.5)
    desk.wait(3)
    assert of_type(desk.out, "takeback") == []
    assert desk.final_ucis() == ["b4c3", "c4c5"]


def test_en_passant_set_down_before_its_lift_after_a_move_completed_by_settle() -> None:
    """...d7-d5 completed by the settle delay; exd6 e.p.: the captured pawn taken off first,
    the capturing pawn set down on d6 a scan before e5 reads empty.  For that scan the board
    reads like ...d7-d6."""
    desk = Desk(presence_only=True, fen="4k3/3p4/8/4P3/8/8/8/4K3 b - - 0 1")
    desk.move("d7d5", "*")
    desk.wait(3)
    desk.lift("d5")
    desk.put("d6", "*", 0.6)
    desk.lift("e5", 0.01)
    desk.wait(3)
    assert of_type(desk.out, "takeback") == []
    assert desk.final_ucis() == ["d7d5", "e5d6"]


def test_swept_capture_is_read_when_the_clock_is_pressed() -> None:
    """exd5 with the captured pawn swept off as the capturing pawn lands: d5 never reads
    empty, so the board only shows e4 emptied; the clock press says the move is made."""
    desk = Desk(presence_only=True, fen="4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1", clock=True)
    desk.lift("e4")
    assert moves_in(desk.out) == []
    got = desk.press(Side.LEFT, 0.8)
    assert moves_in(got, final=True) == ["e4d5"]


def test_swept_capture_is_read_once_the_board_stands_still() -> None:
    desk = Desk(presence_only=True, fen="4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1")
    desk.lift("e4")
    assert moves_in(desk.wait(1.0)) == []  # a piece in the hand, for all we know
    assert moves_in(desk.wait(1.5), final=False) == ["e4d5"]
    assert moves_in(desk.wait(2.5), final=True) == ["e4d5"]


def test_piece_held_long_then_set_down_replaces_the_swept_capture_reading() -> None:
    desk = Desk(presence_only=True, fen="4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1")
    desk.lift("e4")
    assert moves_in(desk.wait(2.5)) == ["e4d5"]
    got = desk.put("e5", "*", 0.5)
    assert [(a.old_uci, a.uci) for a in of_type(got, "amend")] == [("e4d5", "e4e5")]
    desk.wait(3)
    assert desk.final_ucis() == ["e4e5"]


def test_swept_capture_on_an_identity_board_is_not_guessed() -> None:
    desk = Desk(fen="4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1", clock=True)
    desk.lift("e4")
    desk.press(Side.LEFT, 0.8)
    desk.wait(3)
    assert desk.all_ucis() == []


def test_capture_read_on_a_square_lifted_within_a_scan_of_the_mover_is_amended() -> None:
    """exd5: as the pawn on e4 is lifted, the knight on f5 reads empty within the same scan
    (knocked over: one hand cannot take two pieces at once) and is set back; the board reads
    exf5 at once.  Then d5 is lifted and the pawn set down there: exd5, although the pawn
    was not lifted again."""
    desk = Desk(presence_only=True, fen=TWO_CAPTURES)
    desk.lift("e4")
    desk.lift("f5", 0.06)
    got = desk.put("f5", "*", 0.65)
    assert moves_in(got) == ["e4f5"]  # provisional
    desk.lift("d5", 0.2)
    got = desk.put("d5", "*", 0.25)
    amends = [(e.old_uci, e.uci) for e in got if isinstance(e, Amend)]
    assert amends == [("e4f5", "e4d5")]
    desk.wait(3)
    assert desk.final_ucis() == ["e4d5"]


def test_capture_read_on_a_square_lifted_a_scan_after_the_mover_is_not_amended() -> None:
    """The same handling, but f5 reads empty 0.2 s after e4 (more than a scan): the hand
    may have taken the knight off, the later handling of d5 a knocked pawn set back."""
    desk = Desk(presence_only=True, fen=TWO_CAPTURES)
    desk.lift("e4")
    desk.lift("f5", 0.2)
    desk.put("f5", "*", 0.5)
    desk.lift("d5", 0.2)
    got = desk.put("d5", "*", 0.25)
    assert of_type(got, "amend") == []
    desk.wait(3)
    assert desk.final_ucis() == ["e4f5"]


def test_square_lifted_within_a_scan_of_the_mover_is_no_capture_though_lifted_first() -> None:
    """Both candidate squares handled before the pawn lands: f5 lifted within a scan of the
    pawn's lift (and well before d5) and set down first would read exf5; lifted together
    with the mover, the knight was knocked over: exd5."""
    desk = Desk(presence_only=True, fen=TWO_CAPTURES)
    desk.lift("e4")
    desk.lift("f5", 0.05)
    desk.lift("d5", 0.5)
    desk.put("f5", "*", 0.3)
    got = desk.put("d5", "*", 0.2)
    assert moves_in(got) == ["e4d5"]
    desk.wait(3)
    assert desk.final_ucis() == ["e4d5"]


def test_a_game_started_before_the_board_was_read_is_read_on_a_presence_only_board() -> None:
    """The start is told before any board event (the service joins a game from a position
    it was given); the first snapshot shows a presence-only board standing on it: no
    mismatch, and the next move is read."""
    recognizer = Recognizer()
    board = chess.Board(TWO_CAPTURES)
    start = StartPosition("standard", board.fen(), symbol_map(board))
    recognizer.start_game(0.0, start)
    occupied = tuple(
        Piece.OCCUPIED if board.piece_at(square) else Piece.EMPTY for square in chess.SQUARES
    )
    assert of_type(recognizer.feed(BoardSnapshot(1.0, occupied, "connect")), "mismatch") == []
    events = [
        SquareChanged(2.0, chess.E4, Piece.EMPTY, Piece.OCCUPIED),
        SquareChanged(2.3, chess.D5, Piece.EMPTY, Piece.OCCUPIED),
        SquareChanged(2.6, chess.D5, Piece.OCCUPIED, Piece.EMPTY),
    ]
    got = []
    for event in events:
        got += recognizer.tick(event.time) + recognizer.feed(event)
    assert moves_in(got) == ["e4d5"]
