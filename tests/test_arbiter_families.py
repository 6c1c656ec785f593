"""The two board families under the arbiter: piece-identity boards (each square reads the
piece on it) and presence-only boards (a Pegasus reads occupancy only, ``Piece.OCCUPIED``).

Where the rulings are the same, one test runs over both families (``family`` fixture);
where a presence-only board must read differently -- the promotion piece, a capture, an
illegal move read from occupancy and the order of lifts and places, a king taken, displaced
pieces it cannot see -- each family's behaviour is asserted.  Scripted physical events
(:class:`test_table_helpers.Hands`) fed to a :class:`service.table.Table`."""

from __future__ import annotations

import io

import chess
import chess.pgn
import pytest
from test_table_helpers import Hands, irregular, of_type, rulings

from service.table import TableSettings

FIDE = TableSettings(rules="fide-standard")
USCF = TableSettings(rules="uscf-speed")
PROMOTION_FEN = "8/4P1k1/8/8/8/8/8/4K3 w - - 0 1"
CASTLE_FEN = "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1"


@pytest.fixture(params=[False, True], ids=["piece-identity", "presence-only"])
def presence_only(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


def offered(hands: Hands, kind: str) -> list[dict[str, object]]:
    return [
        c for c in of_type(hands.out, "claim") if c["kind"] == kind and c["status"] == "offered"
    ]


# -- the same ruling on both families ---------------------------------------------------------


def test_fide_7_5_1_illegal_move_is_read_alike_on_both_families(presence_only: bool) -> None:
    """7.5.1: Ke1-e3 completed by the press: the same reading (from the game's position, as
    occupancy cannot name the piece), the same penalty."""
    hands = Hands(FIDE, presence_only=presence_only)
    hands.move("e1e3", "K")
    got = hands.press(True)
    illegal = of_type(got, "irregularity")
    assert [(i["kind"], i["squares"], i["move"]) for i in illegal] == [
        ("illegal-move", ["e1", "e3"], "Ke1-e3")
    ]
    assert rulings(got, "penalty-time")[0]["add_time"] == {"black": 120.0}


def test_fide_7_5_1_illegal_capture_is_read_from_the_order_of_lifts_and_places(
    presence_only: bool,
) -> None:
    """7.5.1: the queen jumps over her own pawn and takes on d7.  A presence-only board sees
    d7 occupied before and after: the order (d7 lifted, then set down) tells the target."""
    hands = Hands(FIDE, presence_only=presence_only)
    hands.play("e2e4", "P", True)
    hands.play("e7e5", "p", False)
    hands.move("d1d7", "Q")
    got = hands.press(True)
    illegal = of_type(got, "irregularity")
    assert [(i["kind"], i["squares"], i["move"]) for i in illegal] == [
        ("illegal-move", ["d1", "d7"], "Qd1-d7")
    ]
    assert rulings(got, "restore")[0]["restore_ply"] == 2


def test_legal_capture_is_recorded_on_both_families(presence_only: bool) -> None:
    """A capture (the captured pawn lifted first, the capturing pawn set down on its square):
    the same move on both families, no irregularity."""
    hands = Hands(FIDE, presence_only=presence_only)
    hands.play("e2e4", "P", True)
    hands.play("d7d5", "p", False)
    hands.play("e4d5", "P", True)
    assert [m["san"] for m in hands.table.moves()] == ["e4", "d5", "exd5"]
    assert irregular(hands.out) == []


def test_fide_4_3_2_touched_opponent_piece_on_both_families(presence_only: bool) -> None:
    """4.3.2: the touched black pawn on d5 could be captured; White moved the knight: Black
    is offered the claim, whatever the board reads."""
    hands = Hands(FIDE, fen="rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
                  presence_only=presence_only)  # fmt: skip
    hands.lift("d5")
    hands.put("d5", "p")
    hands.play("g1f3", "N", True)
    claim = offered(hands, "touch-move")
    assert [(c["claimant"], c["square"]) for c in claim] == [("black", "d5")]


def test_fide_4_4_2_rook_then_king_on_both_families(presence_only: bool) -> None:
    """4.4.2: the rook touched first, then the king: castling is not allowed that move."""
    hands = Hands(FIDE, fen=CASTLE_FEN, presence_only=presence_only)
    hands.move("h1f1", "R")
    hands.move("e1g1", "K")
    hands.press(True)
    assert [m["uci"] for m in hands.table.moves()] == ["e1g1"]
    assert [c["kind"] for c in offered(hands, "castling-after-rook")] == ["castling-after-rook"]


def test_fide_7_4_1_knocked_over_piece_on_both_families(presence_only: bool) -> None:
    """7.4.1: a piece knocked off its square (d2 left empty) at the press: restored on the
    player's own time, on both families (an empty square is seen by both)."""
    hands = Hands(FIDE, presence_only=presence_only)
    hands.move("e2e4", "P")
    hands.lift("d2")
    got = hands.press(True)
    assert irregular(got) == ["displaced-pieces"]
    assert of_type(got, "irregularity")[0]["squares"] == ["d2"]
    assert rulings(got, "clock")[0]["run"] == "white"


def test_uscf_11_standing_illegal_move_in_a_pgn_readers_read_back(presence_only: bool) -> None:
    """US speed 11: an unclaimed illegal move stands.  The PGN is split there into game
    segments (README, "Rules and the arbiter"): python-chess reads every segment without an
    error, the stood move is named in the comment ending the first segment, and the second
    segment starts from the position after it."""
    hands = Hands(USCF, presence_only=presence_only)
    hands.play("e2e4", "P", True)
    hands.play("e7e5", "p", False)
    hands.move("g1g3", "N")  # a knight moved like a rook
    hands.press(True)
    hands.play("d7d6", "p", False)  # Black replies without claiming
    hands.play("g3f5", "N", True)
    hands.admin("end", result="1-0", reason="resignation")
    stood = [m for m in hands.table.moves() if m.get("illegal")]
    assert [(m["uci"], m["san"]) for m in stood] == [("g1g3", "Ng1-g3")]
    stream = io.StringIO(hands.table.pgn())
    games = []
    while (game := chess.pgn.read_game(stream)) is not None:
        games.append(game)
    assert [g.errors for g in games] == [[], []]
    assert [g.headers["GameSegment"] for g in games] == ["1/2", "2/2"]
    assert [g.headers["Result"] for g in games] == ["*", "1-0"]
    assert [[m.uci() for m in g.mainline_moves()] for g in games] == [
        ["e2e4", "e7e5"], ["d7d6", "g3f5"],
    ]  # fmt: skip
    assert "illegal move Ng1-g3 (g1g3) stood" in games[0].end().comment
    assert "US speed 11" in games[0].end().comment
    after = chess.Board()
    for uci in ("e2e4", "e7e5"):
        after.push_uci(uci)
    after.set_piece_at(chess.G3, after.remove_piece_at(chess.G1))
    after.turn = chess.BLACK
    assert games[1].board().board_fen() == after.board_fen()
    assert games[1].board().turn == chess.BLACK
    assert "Ng1-g3" in games[1].comment
    assert games[1].headers["Termination"] == "resignation"
    assert all(node.clock() is not None for g in games for node in g.mainline())


def test_pgn_without_a_standing_illegal_move_is_one_game(presence_only: bool) -> None:
    hands = Hands(USCF, presence_only=presence_only)
    hands.play("e2e4", "P", True)
    pgn = hands.table.pgn()
    assert "GameSegment" not in pgn
    assert pgn.count("[Event ") == 1


# -- where the families differ ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("presence", "recorded"), [(False, "e7e8n"), (True, "e7e8q")],
    ids=["piece-identity", "presence-only"],
)  # fmt: skip
def test_promotion_piece_is_read_on_identity_boards_only(presence: bool, recorded: str) -> None:
    """An under-promotion to a knight: a piece-identity board reads the knight; a
    presence-only board cannot, records the queen it assumes (the recogniser's default), and
    the arbiter corrects the record."""
    hands = Hands(FIDE, fen=PROMOTION_FEN, presence_only=presence)
    hands.move("e7e8", "N")
    hands.press(True)
    assert [m["uci"] for m in hands.table.moves()] == [recorded]
    assert irregular(hands.out) == []
    if presence:
        hands.admin("correct", ply=1, uci="e7e8n")
        assert [m["san"] for m in hands.table.moves()] == ["e8=N+"]


@pytest.mark.parametrize(
    ("presence", "ruled"), [(False, ["pawn-not-promoted"]), (True, [])],
    ids=["piece-identity", "presence-only"],
)  # fmt: skip
def test_fide_7_5_2_pawn_left_on_the_last_rank_is_seen_on_identity_boards_only(
    presence: bool, ruled: list[str]
) -> None:
    """7.5.2: the pawn stays a pawn on e8 at the press.  A piece-identity board sees it (an
    illegal move: penalty, the pawn becomes a queen); on a presence-only board the occupied
    e8 is the promotion itself (a queen)."""
    hands = Hands(FIDE, fen=PROMOTION_FEN, presence_only=presence)
    hands.move("e7e8", "P")
    got = hands.press(True)
    assert irregular(got) == ruled
    assert bool(rulings(got, "penalty-time")) is (not presence)
    if not presence:
        hands.lift("e8")
        hands.put("e8", "Q")
    assert [(m["uci"], m["final"]) for m in hands.table.moves()] == [("e7e8q", True)]


@pytest.mark.parametrize(
    ("presence", "ruled"), [(False, ["displaced-pieces"]), (True, [])],
    ids=["piece-identity", "presence-only"],
)  # fmt: skip
def test_fide_7_4_1_swapped_pieces_are_seen_on_identity_boards_only(
    presence: bool, ruled: list[str]
) -> None:
    """7.4.1: knight and bishop knocked over and set back on each other's squares.  A
    piece-identity board sees it at the press; on a presence-only board both squares are
    occupied as before: nothing to see (a known limit, README)."""
    hands = Hands(FIDE, presence_only=presence)
    hands.move("e2e4", "P")
    hands.lift("b1")
    hands.lift("c1")
    hands.put("b1", "B")
    hands.put("c1", "N")
    got = hands.press(True)
    assert irregular(got) == ruled
    if not presence:
        assert sorted(of_type(got, "irregularity")[0]["squares"]) == ["b1", "c1"]


def test_uscf_11_taking_the_king_is_a_claim_on_both_families(presence_only: bool) -> None:
    """US speed 11: the king stepped into the rook's line; Black's rook takes it.  A
    presence-only board cannot name the piece on f2: the king's square comes from the
    illegal move itself."""
    hands = Hands(USCF, fen="4k3/8/8/8/8/8/7r/4K3 w - - 0 1", presence_only=presence_only)
    hands.move("e1f2", "K")
    hands.press(True)
    claim = offered(hands, "illegal-move")
    assert [(c["claimant"], c["king"]) for c in claim] == [("black", "f2")]
    hands.lift("f2")
    hands.move("h2f2", "r")
    assert hands.table.result == "0-1"
    assert "king taken" in rulings(hands.out, "result")[0]["message"]


def test_uscf_11_king_lifted_and_set_back_is_no_claim(presence_only: bool) -> None:
    """US speed 11: the offender lifts his king off f2 and sets it back there: no capture,
    so no claim -- also on a presence-only board, which cannot tell whose hand it was."""
    hands = Hands(USCF, fen="4k3/8/8/8/8/8/7r/4K3 w - - 0 1", presence_only=presence_only)
    hands.move("e1f2", "K")
    hands.press(True)
    hands.lift("f2")
    hands.put("f2", "K")
    assert hands.table.phase == "playing"
    assert offered(hands, "illegal-move")
