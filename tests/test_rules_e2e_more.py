"""More rules at a table: the articles :mod:`test_rules_e2e` does not play yet, each as what
players physically do on an emulated board (and its DGT 3000) -- lift, place, press the
lever -- read as the driver reads it into a :class:`service.table.Table`, down to the
ruling, on the table's own time line (explicit times, no sleeping).

One test per article (FIDE Laws of Chess 2023 with the Chess960 guidelines and Appendices A
and B; the US Chess speed chess rules), named after it; both board families where they differ.
Long games (fifty and seventy-five moves) start from a set-up position near the limit: the
emulator's squares and the table's start FEN.  The harness is :mod:`test_rules_e2e`'s.
"""

from __future__ import annotations

import io
from pathlib import Path

import chess
import chess.pgn
import pytest
from test_rules_e2e import Players, table_at_board

from dgt.events import Side
from service.table import TableSettings

CASTLE_FEN = "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1"
PROMOTION_FEN = "8/4P1k1/8/8/8/8/8/4K3 w - - 0 1"
MATE_IN_ONE = "rnbqkbnr/ppppp2p/5p2/6p1/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 3"
STALEMATE_IN_ONE = "7k/8/6K1/8/8/8/5Q2/8 w - - 0 1"
QUICK = 0.05
"""Seconds between a quick hand's steps (:func:`quick_play`)."""


def blitz(seconds: int = 180, rules: str = "fide-blitz") -> TableSettings:
    return TableSettings(rules=rules, time_control=f"{seconds}+0")


async def quick_play(p: Players, uci: str, symbol: str) -> None:
    """A quick hand for long shuffles: lift, place and press QUICK seconds apart (the
    squares differ, so no flicker filter is in the way), then wait until the table has
    seen the press."""
    await p.lift(uci[:2], QUICK)
    await p.put(uci[2:4], symbol, QUICK)
    await p.wait(QUICK)
    seen = len(p.of_type("board"))
    p.act(p.vb.press_lever)
    await p.until(lambda: any(e["event"] == "lever" for e in p.of_type("board")[seen:]), 3)


# -- FIDE Laws of Chess 2023 -----------------------------------------------------------------


@pytest.mark.parametrize("pegasus", [False, True], ids=["piece-identity", "presence-only"])
async def test_fide_4_4_2_rook_touched_first_then_king_no_castling(
    tmp_path: Path, pegasus: bool
) -> None:
    """4.4.2: White takes the rook h1 to f1 first, then the king e1 to g1: the position of a
    castling, but castling is not allowed on that side that move (the rook was touched
    first): Black is offered the claim -- on both families.  Upheld, 4.3.1 governs: the
    move goes back and the rook must move."""
    async with table_at_board(tmp_path, blitz(), fen=CASTLE_FEN, pegasus=pegasus) as p:
        await p.move("h1f1", "R")
        await p.move("e1g1", "K")
        if pegasus:
            await p.until(lambda: bool(p.table.moves()) and p.table.moves()[-1]["final"])
        else:
            await p.press()
        assert [m["uci"] for m in p.table.moves()] == ["e1g1"]
        offered = [c for c in p.of_type("claim") if c["kind"] == "castling-after-rook"]
        assert [(c["claimant"], c["article"], c["square"]) for c in offered] == [
            ("black", "FIDE 4.4.2", "h1")
        ]
        if not pegasus:  # upheld: the move goes back; 4.3.1 governs, the rook must move
            assert p.clock is not None
            assert "NO O-O" in p.clock.texts
            p.admin("rule", claim=offered[0]["id"], decision="accept")
            await p.flush()
            assert p.rulings("restore")[0]["restore_ply"] == 0
            assert p.table.state()["obligations"] == {"white": "h1"}
            assert p.clock.running is Side.LEFT


async def test_fide_4_4_2_king_first_castling_is_fine(tmp_path: Path) -> None:
    """4.4.2 (the other order): the king first, then the rook: castling, no claim."""
    async with table_at_board(tmp_path, blitz(), fen=CASTLE_FEN) as p:
        await p.move("e1g1", "K")
        await p.move("h1f1", "R")
        await p.press()
        assert [m["san"] for m in p.table.moves()] == ["O-O"]
        assert p.of_type("claim") == []


async def test_fide_4_7_released_piece_stays_on_its_square(tmp_path: Path) -> None:
    """4.7: White sets the knight down on c3, lets go of it (a second), then moves it on to
    a3 and presses: the piece released on c3 had to stay there: Black is offered the claim,
    upheld: a3 goes back, the knight must move (to c3), White's time runs."""
    async with table_at_board(tmp_path, blitz()) as p:
        assert p.clock is not None
        await p.move("b1c3", "N")
        await p.wait(1.0)
        await p.move("c3a3", "N")
        await p.press()
        assert [m["uci"] for m in p.table.moves()] == ["b1a3"]
        offered = p.claims("released-piece")
        assert [(c["claimant"], c["article"], c["square"]) for c in offered] == [
            ("black", "FIDE 4.7", "c3")
        ]
        assert "RELEASED" in p.clock.texts
        p.admin("rule", claim=offered[0]["id"], decision="accept")
        await p.flush()
        assert p.rulings("restore")[0]["restore_ply"] == 0
        assert p.table.state()["obligations"] == {"white": "c3"}


async def test_fide_5_1_1_and_6_9_checkmate_made_before_the_flag_fell_stands(
    tmp_path: Path,
) -> None:
    """5.1.1 with 6.9: Qd1-h5 mates, and before White presses the clock White's two seconds
    run out on the DGT 3000.  The mate was made first (5.1.1: it "immediately ends the
    game"): White wins by checkmate, not Black on time, and the mating move is in the record
    as a completed move."""
    async with table_at_board(tmp_path, blitz(2), fen=MATE_IN_ONE) as p:
        assert p.clock is not None
        await p.move("d1h5", "Q")  # and no press
        await p.until(lambda: p.table.phase == "finished", 5)
        assert any(u["left_flag"] for u in p.updates_after(0))  # White's flag did fall
        assert (p.table.result, p.table.state()["reason"]) == ("1-0", "checkmate")
        assert [(r["article"], r["result"]) for r in p.rulings("result")] == [("FIDE 5.1.1", "1-0")]
        assert [i for i in p.of_type("irregularity") if i["kind"] == "flag"] == []
        assert [(m["san"], m["final"]) for m in p.table.moves()] == [("Qh5#", True)]
        assert "Qh5#" in p.table.pgn()


async def test_fide_5_1_1_checkmate_ends_the_game_on_a_presence_only_board(
    tmp_path: Path,
) -> None:
    """5.1.1 on a Pegasus (no clock, the table keeps the time): Qd1-h5 mates and the game
    ends at once; the two seconds White had left run out afterwards and change nothing."""
    async with table_at_board(tmp_path, blitz(2), fen=MATE_IN_ONE, pegasus=True) as p:
        await p.move("d1h5", "Q")
        await p.until(lambda: p.table.phase == "finished")
        assert (p.table.result, p.table.state()["reason"]) == ("1-0", "checkmate")
        await p.wait(2.2)  # White's two seconds are over by now
        await p.flush()
        assert (p.table.result, p.table.state()["reason"]) == ("1-0", "checkmate")
        assert [i for i in p.of_type("irregularity") if i["kind"] == "flag"] == []
        assert [(m["san"], m["final"]) for m in p.table.moves()] == [("Qh5#", True)]


async def test_fide_5_2_1_stalemate_ends_the_game(tmp_path: Path) -> None:
    """5.2.1: Qf2-f7 leaves the black king on h8 no legal move and not in check: the game is
    drawn at once (stalemate), shown on the clock."""
    async with table_at_board(tmp_path, blitz(), fen=STALEMATE_IN_ONE) as p:
        await p.play("f2f7", "Q")
        await p.until(lambda: p.table.phase == "finished")
        assert (p.table.result, p.table.state()["reason"]) == ("1/2-1/2", "stalemate")
        await p.until(lambda: p.clock is not None and "DRAW" in p.clock.texts)
        assert p.clock is not None
        assert not p.clock.ticking


async def test_fide_7_4_1_displaced_pieces_restored_before_the_press(tmp_path: Path) -> None:
    """7.4.1: White plays e2-e4 and knocks the d-pawn off d2, then presses: the pieces must
    be restored on White's own time -- the clock runs White's side again.  White sets the
    pawn back; Black puts the lever back (it stayed down on White's side: no press of
    Black's, README "Rules and the arbiter"); White presses: Black's time runs."""
    async with table_at_board(tmp_path, blitz()) as p:
        assert p.clock is not None
        await p.move("e2e4", "P")
        await p.lift("d2")  # knocked over
        await p.press()
        irregular = p.of_type("irregularity")
        assert [(i["kind"], i["article"], i["squares"]) for i in irregular] == [
            ("displaced-pieces", "FIDE 7.4.1", ["d2"])
        ]
        assert p.rulings("clock")[-1]["run"] == "white"
        assert "RESTORE" in p.clock.texts
        await p.until(lambda: p.clock is not None and p.clock.running is Side.LEFT)
        await p.put("d2", "P")
        await p.press()  # Black puts the lever back (it stayed down on White's side) ...
        assert p.of_type("irregularity")[1:] == []  # ... which is no press of Black's
        await p.press()  # and White presses again
        assert [(m["uci"], m["final"]) for m in p.table.moves()] == [("e2e4", True)]
        assert p.clock.running is Side.RIGHT  # Black's time runs
        assert p.of_type("irregularity")[1:] == []
        await p.play("e7e5", "p")
        assert [m["san"] for m in p.table.moves()] == ["e4", "e5"]


@pytest.mark.parametrize("pegasus", [False, True], ids=["piece-identity", "presence-only"])
async def test_fide_7_5_2_pawn_on_the_last_rank_without_a_new_piece(
    tmp_path: Path, pegasus: bool
) -> None:
    """7.5.2: the pawn goes e7-e8 and stays a pawn at the press: a piece-identity board sees
    it -- an illegal move (one minute to Black in blitz, on the clock), the pawn becomes a
    queen (set on e8).  A presence-only board (no clock) reads the occupied e8 as the
    promotion itself, a queen: nothing to rule."""
    async with table_at_board(tmp_path, blitz(), fen=PROMOTION_FEN, pegasus=pegasus) as p:
        await p.move("e7e8", "P")
        if pegasus:
            await p.until(lambda: bool(p.table.moves()) and p.table.moves()[-1]["final"])
            assert p.of_type("irregularity") == []
            assert [m["uci"] for m in p.table.moves()] == ["e7e8q"]
            return
        assert p.clock is not None
        await p.press()
        irregular = p.of_type("irregularity")
        assert [(i["kind"], i["article"]) for i in irregular] == [
            ("pawn-not-promoted", "FIDE 7.5.2")
        ]
        assert p.rulings("penalty-time")[0]["add_time"] == {"black": 60.0}
        assert p.rulings("promote")[0]["uci"] == "e7e8q"
        assert "PROMOTE" in p.clock.texts
        assert "+1 MIN" in p.clock.texts
        assert 238 <= p.clock_times()[1] <= 240  # Black (right): 3 + 1 minutes
        await p.lift("e8")
        await p.put("e8", "Q")
        await p.until(lambda: bool(p.table.moves()) and p.table.moves()[-1]["final"])
        assert [(m["uci"], m["san"]) for m in p.table.moves()] == [("e7e8q", "e8=Q")]


@pytest.mark.parametrize(
    ("rules", "minutes"), [("fide-standard", 2), ("fide-rapid", 1), ("fide-blitz", 1)]
)
async def test_fide_7_5_3_clock_pressed_without_a_move(
    tmp_path: Path, rules: str, minutes: int
) -> None:
    """7.5.3 with 7.5.5 (A.4.2, B.3 in rapid and blitz): White presses the clock without
    moving: an illegal move -- two minutes (one in rapid and blitz) more for Black, on the
    clock; White's time runs again.  Black puts the lever back; White then plays e4."""
    async with table_at_board(tmp_path, blitz(300, rules)) as p:
        assert p.clock is not None
        await p.press()
        irregular = p.of_type("irregularity")
        assert [(i["kind"], i["article"], i["side"]) for i in irregular] == [
            ("press-without-move", "FIDE 7.5.3", "white")
        ]
        assert p.rulings("penalty-time")[0]["add_time"] == {"black": 60.0 * minutes}
        assert p.clock.texts[-2:] == ["NO MOVE", f"+{minutes} MIN"]
        assert 300 + 60 * minutes - 2 <= p.clock_times()[1] <= 300 + 60 * minutes
        assert p.clock.running is Side.LEFT  # White's time runs again
        await p.press()  # Black puts the lever back
        await p.play("e2e4", "P")
        assert [m["san"] for m in p.table.moves()] == ["e4"]
        assert len(p.of_type("irregularity")) == 1


@pytest.mark.parametrize("rules", ["fide-rapid", "fide-blitz"])
async def test_fide_a_4_2_and_b_3_rapid_and_blitz_one_minute_instead_of_two(
    tmp_path: Path, rules: str
) -> None:
    """A.4.2 (rapid) and B.3 (blitz) as amended in 2023: a completed illegal move (Ke1-e3)
    gives the opponent one minute, not two -- on the clock itself."""
    async with table_at_board(tmp_path, blitz(300, rules)) as p:
        assert p.clock is not None
        await p.move("e1e3", "K")
        await p.press()
        assert p.rulings("penalty-time")[0]["add_time"] == {"black": 60.0}
        assert p.rulings("penalty-time")[0]["article"] == "FIDE 7.5.5"
        assert p.clock.texts[-2:] == ["ILLEGAL", "+1 MIN"]
        assert 358 <= p.clock_times()[1] <= 360


async def test_fide_9_3_fifty_move_claim(tmp_path: Path) -> None:
    """9.3: from a set-up position whose last 49 and a half moves had no pawn move and no
    capture, Black claims after White's a1-a2 -- fifty moves: a draw.  One move earlier the
    claim was wrong (9.5.3: one minute more for White in blitz, on the clock)."""
    fen = "4k3/8/8/8/8/8/8/R3K3 b - - 98 80"
    async with table_at_board(tmp_path, blitz(), fen=fen) as p:
        assert p.clock is not None
        await p.play("e8d8", "k")
        before = p.clock_times()[1]
        got = p.admin("claim", side="white", kind="fifty-moves")
        assert [r["kind"] for r in got if r["type"] == "ruling"] == ["reject", "penalty-time"]
        await p.flush()
        assert 58 <= p.clock_times()[1] - before <= 61  # Black (right) got one minute
        assert p.table.phase == "playing"
        await p.play("a1a2", "R")
        got = p.admin("claim", side="black", kind="fifty-moves")
        ruling = next(r for r in got if r["type"] == "ruling")
        assert (ruling["article"], ruling["result"]) == ("FIDE 9.3", "1/2-1/2")
        assert p.table.state()["reason"] == "fifty moves"
        await p.until(lambda: p.clock is not None and "DRAW" in p.clock.texts)


async def test_fide_9_3_1_fifty_move_claim_with_the_move_not_yet_made(tmp_path: Path) -> None:
    """9.3.1: White, on the move, declares a1-a2, the move that completes fifty moves without
    a pawn move or capture, and claims: a correct claim -- a draw, the move never made."""
    fen = "4k3/8/8/8/8/8/8/R3K3 w - - 99 80"
    async with table_at_board(tmp_path, blitz(), fen=fen) as p:
        got = p.admin("claim", side="white", kind="fifty-moves", uci="a1a2")
        ruling = next(r for r in got if r["type"] == "ruling")
        assert (ruling["article"], ruling["result"]) == ("FIDE 9.3", "1/2-1/2")
        assert p.table.moves() == []


async def test_fide_9_6_1_fivefold_repetition_ends_the_game(tmp_path: Path) -> None:
    """9.6.1: the knights go out and back four times: the start position stands for the
    fifth time and the game is drawn without a claim."""
    fen = "1n2k3/8/8/8/8/8/8/1N2K3 w - - 0 1"
    cycle = [("b1c3", "N"), ("b8c6", "n"), ("c3b1", "N"), ("c6b8", "n")]
    async with table_at_board(tmp_path, blitz(), fen=fen) as p:
        for index, (uci, symbol) in enumerate(cycle * 4):
            assert p.table.phase == "playing", index
            await quick_play(p, uci, symbol)
        await p.until(lambda: p.table.phase == "finished")
        assert (p.table.result, p.table.state()["reason"]) == (
            "1/2-1/2", "fivefold repetition",
        )  # fmt: skip
        assert len(p.table.moves()) == 16


async def test_fide_9_6_2_seventy_five_moves_end_the_game(tmp_path: Path) -> None:
    """9.6.2: from a set-up position whose last 74 and a half moves had no pawn move and no
    capture, Black's quiet king move completes seventy-five: drawn without a claim."""
    fen = "4k3/8/8/8/8/8/8/R3K3 b - - 149 120"
    async with table_at_board(tmp_path, blitz(), fen=fen) as p:
        await p.play("e8d8", "k")
        await p.until(lambda: p.table.phase == "finished")
        assert (p.table.result, p.table.state()["reason"]) == ("1/2-1/2", "seventy-five moves")


async def test_fide_9_6_2_checkmate_on_the_seventy_fifth_move_stands(tmp_path: Path) -> None:
    """9.6.2: "... unless the last move resulted in checkmate": a mate that completes the
    seventy-five moves wins."""
    fen = "6k1/5ppp/8/8/8/8/8/R3K3 w - - 149 120"
    async with table_at_board(tmp_path, blitz(), fen=fen) as p:
        await p.play("a1a8", "R")
        await p.until(lambda: p.table.phase == "finished")
        assert (p.table.result, p.table.state()["reason"]) == ("1-0", "checkmate")


# -- the Chess960 guidelines ------------------------------------------------------------------


async def test_chess960_castling_is_read_from_the_king_and_rook_final_squares(
    tmp_path: Path,
) -> None:
    """Chess960 guidelines (FIDE Laws, Guidelines II, II.3.2): castling puts king and rook on
    the squares of classical castling (g1 and f1 on the h-side) whatever squares they came
    from.  From start position 192 (king f1, rook h1) after 1. Nf3 Nf6, White lifts the king
    first (the signal to castle), sets it on g1, then takes the rook onto the king's own
    square f1 and presses: recognised and recorded as O-O, the king "taking" its rook
    (f1h1); the PGN reads back as a Chess960 game."""
    start = chess.Board.from_chess960_pos(192)
    assert start.board_fen() == "bbqnrknr/pppppppp/8/8/8/8/PPPPPPPP/BBQNRKNR"
    settings = TableSettings(rules="fide-blitz", variant="chess960", time_control="180+0")
    async with table_at_board(tmp_path, settings, fen=start.fen()) as p:
        await p.play("g1f3", "N")
        await p.play("g8f6", "n")
        await p.lift("f1")
        await p.put("g1", "K")
        await p.lift("h1")
        await p.put("f1", "R")
        await p.press()
        await p.play("e7e6", "p")
        assert [(m["uci"], m["san"], m["final"]) for m in p.table.moves()] == [
            ("g1f3", "Nf3", True), ("g8f6", "Nf6", True), ("f1h1", "O-O", True),
            ("e7e6", "e6", True),
        ]  # fmt: skip
        assert p.of_type("irregularity") == []
        assert p.of_type("claim") == []
        game = chess.pgn.read_game(io.StringIO(p.table.pgn()))
        assert game is not None
        assert game.errors == []
        assert game.headers["Variant"] == "Chess960"
        assert game.board().board_fen() == start.board_fen()
        board = game.end().board()
        assert board.piece_at(chess.G1) == chess.Piece.from_symbol("K")
        assert board.piece_at(chess.F1) == chess.Piece.from_symbol("R")
        assert not board.has_castling_rights(chess.WHITE)


# -- US Chess speed chess rules --------------------------------------------------------------


async def test_uscf_12_both_flags_down_is_a_draw(tmp_path: Path) -> None:
    """12 (with 2d): Black's flag falls and White does not claim; Black moves and presses,
    and White's flag falls too: both flags are down before a claim -- a draw."""
    async with table_at_board(tmp_path, blitz(2, "uscf-speed")) as p:
        await p.play("e2e4", "P")
        await p.until(lambda: bool(p.claims("flag")), 5)
        assert [(c["claimant"], c["article"]) for c in p.claims("flag")] == [
            ("white", "US speed 2d")
        ]
        await p.play("e7e5", "p")
        await p.until(lambda: p.table.phase == "finished", 5)
        assert (p.table.result, p.table.state()["reason"]) == ("1/2-1/2", "both flags fell")
        assert p.rulings("result")[0]["article"] == "US speed 12"


async def test_uscf_13_michigan_count_draws_after_twenty_quiet_pairs(tmp_path: Path) -> None:
    """13a, 13b: Black starts the Michigan count in K+2R v K (not one of the forty-move
    endings); after nineteen move pairs without a capture or pawn move the game goes on, the
    twentieth draws.  (A quick hand: the rook and the king shuffle.)"""
    fen = "4k3/8/8/8/8/8/8/R3K2R w - - 0 1"
    rook = ["a1a2", "a2a3", "a3a4", "a4a5", "a5a6", "a6a1"]
    king = ["e8d8", "d8e8"]
    async with table_at_board(tmp_path, blitz(300, "uscf-speed"), fen=fen) as p:
        got = p.admin("claim", side="black", kind="michigan")
        assert [(c["kind"], c["status"]) for c in got if c["type"] == "claim"] == [
            ("michigan", "offered")
        ]
        for pair in range(20):
            assert p.table.phase == "playing", pair
            await quick_play(p, rook[pair % 6], "R")
            await quick_play(p, king[pair % 2], "k")
        await p.until(lambda: p.table.phase == "finished")
        assert len(p.table.moves()) == 40
        assert (p.table.result, p.table.state()["reason"]) == (
            "1/2-1/2", "Michigan twenty-move rule",
        )  # fmt: skip
        assert p.rulings("result")[0]["article"] == "US speed 13b"


async def test_uscf_13c_michigan_count_is_a_draw_offer_accepted_during_the_count(
    tmp_path: Path,
) -> None:
    """13c: the player who starts counting offers a draw, which the opponent may accept any
    time during the count."""
    fen = "4k3/8/8/8/8/8/8/R3K2R w - - 0 1"
    async with table_at_board(tmp_path, blitz(300, "uscf-speed"), fen=fen) as p:
        got = p.admin("claim", side="black", kind="michigan")
        claim = next(c for c in got if c["type"] == "claim")
        assert (claim["claimant"], claim["article"], claim["status"]) == (
            "black", "US speed 13", "offered",
        )  # fmt: skip
        await p.play("a1a2", "R")
        await p.play("e8d8", "k")
        assert p.table.phase == "playing"
        got = p.admin("rule", claim=claim["id"], decision="accept")
        ruling = next(r for r in got if r["type"] == "ruling")
        assert (ruling["article"], ruling["result"]) == ("US speed 13c", "1/2-1/2")
        assert p.table.state()["reason"] == "Michigan twenty-move rule: draw offer accepted"
        assert p.table.state()["claims"] == []


@pytest.mark.parametrize(
    ("fen", "ending", "decision", "result"),
    [
        ("3qk3/8/8/8/8/8/8/3QK3 w - - 0 1", "queen v queen", "accept", "1/2-1/2"),
        ("3rk3/8/8/8/8/8/8/3RK3 w - - 0 1", "rook v rook", "reject", "*"),
    ],
    ids=["queen-v-queen-upheld", "rook-v-rook-forced-win-shown"],
)
async def test_uscf_10_queen_v_queen_or_rook_v_rook_claim_goes_to_the_arbiter(
    tmp_path: Path, fen: str, ending: str, decision: str, result: str
) -> None:
    """10: White claims a draw in a queen v queen (rook v rook) ending after a move each: the
    claim is made and the game goes on until the arbiter rules.  Upheld: a draw; not upheld
    (the opponent demonstrated a forced win): the game goes on."""
    async with table_at_board(tmp_path, blitz(300, "uscf-speed"), fen=fen) as p:
        await p.play("e1e2", "K")
        await p.play("e8e7", "k")
        got = p.admin("claim", side="white", kind="insufficient-losing-chances")
        claim = next(c for c in got if c["type"] == "claim")
        assert (claim["status"], claim["article"]) == ("made", "US speed 10")
        assert ending in claim["message"]
        assert p.table.phase == "playing"
        p.admin("rule", claim=claim["id"], decision=decision)
        assert p.table.result == result
        if decision == "accept":
            assert p.table.state()["reason"] == "insufficient losing chances"
            assert p.rulings("result")[0]["article"] == "US speed 10"
        else:
            assert [c["status"] for c in p.of_type("claim")] == ["made", "rejected"]
            await p.play("e2e3", "K")
            assert p.table.phase == "playing"


async def test_uscf_10_claim_outside_the_two_endings_is_rejected(tmp_path: Path) -> None:
    """10: only queen v queen and rook v rook may be claimed: Q v R is refused."""
    fen = "3rk3/8/8/8/8/8/8/3QK3 w - - 0 1"
    async with table_at_board(tmp_path, blitz(300, "uscf-speed"), fen=fen) as p:
        got = p.admin("claim", side="white", kind="insufficient-losing-chances")
        assert [r["kind"] for r in got if r["type"] == "ruling"] == ["reject"]
        assert p.table.phase == "playing"


async def test_uscf_8_knocked_over_piece_replaced_before_the_press(tmp_path: Path) -> None:
    """8: White plays e2-e4, knocks the d-pawn over and presses: the piece must be replaced
    before pressing; Black presses the clock back to enforce it (no fault of Black's); White
    sets the pawn back up and presses; Black then replies."""
    async with table_at_board(tmp_path, blitz(300, "uscf-speed")) as p:
        assert p.clock is not None
        await p.move("e2e4", "P")
        await p.lift("d2")
        await p.press()
        irregular = p.of_type("irregularity")
        assert [(i["kind"], i["article"], i["side"]) for i in irregular] == [
            ("displaced-pieces", "US speed 8", "white")
        ]
        assert p.rulings("clock") == []  # no clock ruling: Black's time runs
        assert p.clock.running is Side.RIGHT
        await p.press()  # Black presses back to enforce it ...
        assert p.of_type("irregularity")[1:] == []  # ... which is no fault of Black's
        assert p.clock.running is Side.LEFT
        await p.press()  # White presses without replacing the pawn: still displaced
        assert [i["kind"] for i in p.of_type("irregularity")] == ["displaced-pieces"] * 2
        await p.press()  # Black presses back again
        await p.put("d2", "P")
        await p.press()  # now the pawn stands: White's press is good
        assert len(p.of_type("irregularity")) == 2
        await p.play("e7e5", "p")
        assert [m["san"] for m in p.table.moves()] == ["e4", "e5"]
        assert len(p.of_type("irregularity")) == 2
