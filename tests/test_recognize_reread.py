"""Reading a game again on a presence-only board: a capture whose captured piece the board
could not tell (swept off, or a neighbour knocked over as it was taken) is read another way
when later play disproves it -- many plies later, together with the recapture it made read
wrong, with the readings not taken still named, and after a capture the handling seemed to
settle.  One short timed sequence per kind of game that used to lose its way in the replays
(``bench/recognition.py``)."""

from __future__ import annotations

import games
import pytest
from test_recognize_helpers import Desk, of_type

from service.recognize.events import MoveEvent

SHUFFLE = ["g1h1", "e8d8", "h1g1", "d8e8", "g1h1", "e8d8", "h1g1", "d8e8", "g1h1", "e8d8"]
"""Ten plies of king moves: more than the eight plies a re-reading used to look back."""


def play(desk: Desk, steps: list[str]) -> None:
    """Each step a move (``e1e2``: lifted, set down a second later), or a square alone: a
    capture whose captured piece was swept off (only the mover's square reads empty); the
    board then stands still long enough for each to be complete."""
    for step in steps:
        if len(step) == 2:
            desk.lift(step, 1.0)
            desk.wait(3)
            desk.wait(3)  # a swept capture is complete a further settle delay later
        else:
            desk.move(step, "*", 1.0)
            desk.wait(3)


def test_a_swept_capture_disproved_eleven_plies_later_by_another_swept_capture() -> None:
    """...Nxc3 swept (the board reads ...Nxe3 the same, and that is read), ten plies of king
    moves, then Rxc3 swept: the rook can take only if the knight went to c3.  The capture
    eleven plies back is read again and the rook's capture follows."""
    desk = Desk(presence_only=True, fen="4k3/8/8/8/8/2P1P3/8/2Rn2K1 b - - 0 1")
    play(desk, ["d1"])
    assert desk.all_ucis() == ["d1e3"]
    play(desk, [*SHUFFLE, "c1"])
    desk.wait(3)
    assert desk.final_ucis() == ["d1c3", *SHUFFLE, "c1c3"]
    assert of_type(desk.out, "mismatch") == []


def test_a_capture_and_its_recapture_are_read_again_together() -> None:
    """...Bxa3 swept (read ...Bxc3+, the likelier), bxa3 swept (read bxc3: with the bishop on
    c3 it is the only capture), king moves, then the knight leaves c3: only ...Bxa3 bxa3
    leaves a knight there, and bxa3 is legal only after ...Bxa3.  Both are read again."""
    desk = Desk(presence_only=True, fen="4k3/8/8/8/1b6/P1N5/1P6/4K3 b - - 0 1")
    kings = ["e8e7", "e1d1", "e7e8", "d1e1", "e8e7", "e1d1", "e7e8", "d1e1", "e8e7"]
    play(desk, ["b4", "b2"])
    assert desk.all_ucis() == ["b4c3", "b2c3"]
    play(desk, [*kings, "c3e4"])
    assert desk.final_ucis() == ["b4a3", "b2a3", *kings, "c3e4"]
    assert of_type(desk.out, "mismatch") == []


def test_a_capture_read_again_keeps_naming_the_readings_later_play_allows() -> None:
    """...Qxh1+ swept among four captures (read ...Qxe4+).  Ke2 rules out ...Qxe4+ and
    ...Qxf2+: the capture is read again as ...Qxh2, naming ...Qxh1+, which later play may
    still tell (and not the two Ke2 ruled out).  ...Qh1-g2 does: read again once more."""
    desk = Desk(presence_only=True, fen="4k3/8/8/8/4P3/8/5PqP/4K2R b K - 0 1")
    play(desk, ["g2"])
    assert desk.all_ucis() == ["g2e4"]
    play(desk, ["e1e2"])
    assert desk.all_ucis() == ["g2h2", "e1e2"]
    read = [e for e in desk.out if isinstance(e, MoveEvent) and e.ply == 1][-1]
    assert read.uci == "g2h2"
    assert read.alternatives == (("g2h1", "Qxh1+"),)
    play(desk, ["h1g2"])
    assert desk.final_ucis() == ["g2h1", "e1e2", "h1g2"]
    assert of_type(desk.out, "mismatch") == []


def test_a_swept_capture_behind_a_knocked_neighbour_is_read_again() -> None:
    """Qxh6 swept while the hand knocks the knight on c3 over and sets it back after the
    queen's lift: the handling reads Qxc3 (the captured square lifted, then set down after
    the mover's lift), and no other capture is named.  Two plies later the queen leaves h6,
    which only Qxh6 allows: once the board stands still, the capture is read again."""
    desk = Desk(presence_only=True, fen="6k1/8/7p/8/8/2n5/3Q4/6K1 w - - 0 1")
    desk.lift("c3", 1.0)
    desk.lift("d2", 0.3)
    desk.put("c3", "*", 0.3)
    desk.wait(3)
    assert desk.all_ucis() == ["d2c3"]
    first = [e for e in desk.out if isinstance(e, MoveEvent)][-1]
    assert first.alternatives == ()
    play(desk, ["g8f7", "h6e3"])
    desk.wait(3)
    assert desk.final_ucis() == ["d2h6", "g8f7", "h6e3"]
    assert of_type(desk.out, "mismatch") == []


def test_a_capture_the_handling_settled_is_not_read_again_mid_move() -> None:
    """...Qxc3+ with the knight lifted first (the handling settles it; ...Qxa2 reads the
    same only had the pawn been swept off), then the rook slides g3-f3-e3-d3 and takes on
    c3: a rook set down on its path is no legal move (the king is in check), yet only the
    move complete may read the capture again -- here it never needs to."""
    desk = Desk(presence_only=True, fen="7k/8/8/8/8/2N3R1/Pq6/4K3 b - - 0 1")
    desk.lift("c3", 1.0)
    desk.lift("b2", 0.3)
    desk.put("c3", "*", 0.3)
    desk.wait(3)
    desk.lift("g3", 1.0)
    for square in ("f3", "e3", "d3"):
        desk.put(square, "*", 0.2)
        desk.lift(square, 0.5)
    desk.lift("c3", 0.1)
    desk.put("c3", "*", 0.3)
    desk.wait(3)
    assert desk.final_ucis() == ["b2c3", "g3c3"]
    assert of_type(desk.out, "takeback") == []
    assert of_type(desk.out, "mismatch") == []


def test_swept_captures_read_ahead_when_a_later_slide_passes_the_first_mover_square() -> None:
    """Qxd8+ swept after a slide resting on d5-d7, ...Rxd8 swept, a pawn knocked over and
    set back (so no place explains everything until the board stands still), then Rxd8+
    swept, the rook sliding over d4: d4 is lifted again by the rook, after the black rook
    left a8.  The queen started from d4 long before (its first lift there): the three
    captures are read in turn."""
    desk = Desk(presence_only=True, fen="r2qk3/p7/8/8/3Q4/8/8/2KR4 w - - 0 1")
    desk.lift("d4", 1.0)
    for square in ("d5", "d6", "d7"):
        desk.put(square, "*", 0.15)
        desk.lift(square, 0.2)
    desk.lift("a8", 1.5)
    desk.lift("a7", 0.5)
    desk.put("a7", "*", 0.5)
    desk.lift("d1", 1.0)
    for square in ("d2", "d3", "d4", "d5", "d6", "d7"):
        desk.put(square, "*", 0.15)
        desk.lift(square, 0.1)
    for _ in range(3):
        desk.wait(3)
    assert desk.final_ucis() == ["d4d8", "a8d8", "d1d8"]
    assert of_type(desk.out, "mismatch") == []


@pytest.mark.slow
@pytest.mark.parametrize("sweep", [None, 0.6], ids=["fast-hands", "sweep-0.6"])
def test_no_lichess_game_loses_its_way_under_fast_hands(sweep: float | None) -> None:
    """The replay harness's lichess games on a presence-only board, noisy hands, a clock in
    every other game, captures swept off (a third by default, or 0.6) and capturing slides
    resting on their path: every game read ends on the board the game played ends on (a
    capture may be read wrong where nothing later tells; the game never stops following
    the board)."""
    lost = []
    for index, game in enumerate(games.lichess_games()):
        try:
            if not _follows_the_board(game, index, sweep):
                lost.append(game.name)
        except ValueError:
            lost.append(game.name)
    assert lost == []


def _follows_the_board(game: games.Game, index: int, sweep: float | None) -> bool:
    """Whether the game read from the bench's stream of ``game`` (its seed from ``index``,
    a clock in every other game) ends on the board the game played ends on (occupancy).
    :class:`ValueError` when a move read is not legal in the game read."""
    item = games.bench_stream(game, index, 1, sweep)
    read, played = game.board(), game.board()
    for move in game.moves:
        played.push(move)
    for uci in games.recognise(item).ucis:
        read.push_uci(uci)
    return bool(read.occupied == played.occupied)


def test_a_swept_capture_is_read_again_when_a_king_steps_where_it_would_be_attacked() -> None:
    """dxc5 swept (the board reads dxe5, taking the knight, the same, and that is read), four
    quiet moves (more than reading ahead from the swept capture makes), then ...Kg6-f6:
    legal only if the pawn took on c5 (a pawn on e5 attacks f6).  No square handled since
    holds a piece that differs between the two readings, but the piece read on e5 attacks
    the square the king was set on: the capture is read again."""
    desk = Desk(
        presence_only=True, fen="rnb2r2/3p4/pp2p1k1/2b1n2p/P2PP2P/5BP1/1Bq1N3/r2N1R1K w - - 0 1"
    )
    play(desk, ["d4"])
    assert desk.all_ucis() == ["d4e5"]
    play(desk, ["a6a5", "f1f2", "b6b5", "e2f4", "g6f6"])
    assert desk.final_ucis() == ["d4c5", "a6a5", "f1f2", "b6b5", "e2f4", "g6f6"]
    assert of_type(desk.out, "mismatch") == []


def test_a_swept_capture_that_promotes_is_read_at_the_end_of_input() -> None:
    """...cxb1=B with the rook swept off, no clock, the last move of the game: standing
    still is no proof (the pawn may be held while the new piece is fetched), but the end of
    input is -- the board is read as at a clock press."""
    desk = Desk(presence_only=True, fen="4k3/8/8/8/8/8/2p5/KR6 b - - 0 1")
    desk.recognizer.set_promotion("b")
    desk.lift("c2", 1.0)
    desk.wait(3)
    assert desk.all_ucis() == []
    desk.out += desk.recognizer.finish(desk.time)
    assert desk.final_ucis() == ["c2b1b"]


def test_a_king_takes_swept_and_the_pawn_promotes_on_the_square_it_left() -> None:
    """Kxb2 swept (only a1 reads empty), then ...a1=R set down on a1 a second later, before
    the pawn's lift is reported: the square the king left is filled again by the reply.
    Once the board stands still, a1 set down last may be flipped twice: both are read."""
    desk = Desk(presence_only=True, fen="4k3/8/8/8/8/8/pp6/K7 w - - 0 1")
    desk.lift("a1", 1.0)
    desk.recognizer.set_promotion("r")
    desk.put("a1", "*", 1.0)
    desk.lift("a2", 0.02)
    desk.wait(3)
    assert desk.all_ucis() == ["a1b2", "a2a1r"]
    assert of_type(desk.out, "mismatch") == []


def test_a_pawn_held_while_the_new_piece_is_fetched_is_not_read_ahead() -> None:
    """...exf3 swept (a guess: reading ahead may start again from before it), Bc2, ...b2,
    a5, then the pawn on b2 lifted and held three seconds while the knight is fetched.
    Standing still, the board reads as ...exf3 Bc2 ...bxc2 (swept) a5 from before the guess;
    but a pawn in the hand on its way to promote is no move yet: the knight set down on b1
    reads the promotion."""
    desk = Desk(presence_only=True, fen="7k/8/8/8/P3p3/1p3P2/8/3B3K b - - 0 1")
    play(desk, ["e4", "d1c2", "b3b2", "a4a5"])
    assert desk.all_ucis() == ["e4f3", "d1c2", "b3b2", "a4a5"]
    desk.recognizer.set_promotion("n")
    desk.lift("b2", 1.0)
    desk.wait(3)
    assert desk.all_ucis() == ["e4f3", "d1c2", "b3b2", "a4a5"]
    desk.put("b1", "*", 0.5)
    desk.wait(3)
    assert desk.final_ucis() == ["e4f3", "d1c2", "b3b2", "a4a5", "b2b1n"]
    assert of_type(desk.out, "takeback") == []


def test_a_capture_amended_in_by_a_knocked_neighbour_keeps_the_others_for_a_rereading() -> None:
    """...Qxa4 swept, the queen sliding a2-a3 first, and the knight on b1 knocked over and
    set back after the queen's lift: read ...Qa2+, amended to ...Qa3, then to ...Qxb1 (its
    captured square handled in order).  Kh2, then the queen leaves a4, which only ...Qxa4
    allows: the capture amended in is read again as the other capture by its piece."""
    desk = Desk(presence_only=True, fen="4k3/8/8/8/P7/8/8/qN4K1 b - - 0 1")
    desk.lift("a1", 1.0)
    desk.put("a2", "*", 0.3)
    desk.lift("a2", 0.2)
    desk.put("a3", "*", 0.1)
    desk.lift("a3", 0.5)
    desk.lift("b1", 1.1)
    desk.put("b1", "*", 1.0)
    desk.wait(3)
    assert desk.all_ucis() == ["a1b1"]
    play(desk, ["g1h2", "a4d7"])
    desk.wait(3)
    assert desk.final_ucis() == ["a1a4", "g1h2", "a4d7"]
    assert of_type(desk.out, "mismatch") == []


def test_a_piece_adjusted_before_a_swept_capture_does_not_hold_up_the_reply() -> None:
    """The king on c1 lifted and put back (adjusted), then Nxe5 swept, then ...h6 set down
    at once: the place reads the capture and the reply (the king's square, set back where
    it stood, is no part of a move under way), before any settle delay."""
    desk = Desk(presence_only=True, fen="4k3/7p/8/4p3/8/3N4/8/2K5 w - - 0 1")
    desk.lift("c1", 1.0)
    desk.put("c1", "*", 0.5)
    desk.lift("d3", 1.0)
    desk.lift("h7", 0.8)
    desk.put("h6", "*", 0.5)
    assert desk.all_ucis() == ["d3e5", "h7h6"]


def test_a_swept_capture_amended_to_a_move_next_to_the_opponent_is_read_again() -> None:
    """...Bxd4 swept after a slide resting on e5 (read at the settle delay), then White lifts
    the bishop on d8 and sets it back (read ...Bxd8: its square handled after the mover's
    lift), then sets it down on e7 before its lift is reported: read ...Be7 Bxe7, the
    capture swept off.  ...h6, Bc5, then the black bishop leaves d4, which only ...Bxd4
    allows: the move the captures were amended to is read again as the capture it was."""
    desk = Desk(presence_only=True, fen="k2B4/7p/5b2/8/3P4/8/P7/7K b - - 0 1")
    desk.lift("f6", 1.0)
    desk.put("e5", "*", 0.4)
    desk.lift("e5", 0.4)
    desk.lift("d8", 3.2)
    assert desk.all_ucis() == ["f6d4"]
    desk.put("d8", "*", 1.2)
    assert desk.all_ucis() == ["f6d8"]
    desk.put("e7", "*", 1.2)
    desk.lift("d8", 0.0)
    desk.wait(3)
    assert desk.all_ucis() == ["f6e7", "d8e7"]
    play(desk, ["h7h6", "e7c5", "d4e3"])
    desk.wait(3)
    assert desk.final_ucis() == ["f6d4", "d8e7", "h7h6", "e7c5", "d4e3"]
    assert of_type(desk.out, "mismatch") == []


OTHER_GAMES_LOST_BEFORE = [
    # (game, index among bench/recognition.py's sdist,960,special games: seed and clock,
    # chance of a swept capture)
    ("960#74kq", 90, 0.3),
    ("960#537qk", 553, 0.3),
    ("960#745qk", 761, 0.3),
    ("960#839qk", 855, 0.3),
    ("960#891qk", 907, 0.3),
    ("960#922kq", 938, 0.3),
    ("960#941qk", 957, 0.3),
    ("special#13", 989, 0.3),
    ("960#745qk", 761, 0.6),
    ("960#765qk", 781, 0.6),
    ("960#941qk", 957, 0.6),
    ("960#283qk", 299, 0.6),
]
"""The Chess960 and generated games that lost their way at ``--sweep 0.3`` (and 0.6)."""


def _other_game(name: str) -> games.Game:
    if name.startswith("special#"):
        return games.special_games(20)[int(name.removeprefix("special#"))]
    number, wings = int(name[4:-2]), name[-2:]
    return games.castling_game(number, (wings[0], wings[1]), seed=3 * number)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "index", "sweep"),
    OTHER_GAMES_LOST_BEFORE,
    ids=[f"{name}-sweep-{sweep}" for name, _, sweep in OTHER_GAMES_LOST_BEFORE],
)
def test_chess960_and_generated_games_that_lost_their_way_follow_the_board(
    name: str, index: int, sweep: float
) -> None:
    """The streams of ``bench/recognition.py --sources sdist,960,special --sweep S`` in
    which the game read used to end on another board than the game played (under-promotions
    with the captured piece swept off, a capture read again that dropped the reading its
    recapture allows, a knocked neighbour amended in as the capture, a guess too far back, a
    piece adjusted before a swept capture):
    each is now read to the end on the board played."""
    game = _other_game(name)
    assert game.name == name
    assert _follows_the_board(game, index, sweep)
