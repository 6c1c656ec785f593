"""Chess T20 at a table: scores on the clock display and in the record, the time-out rule."""

from __future__ import annotations

import io

import chess.pgn
from test_table_helpers import Hands, of_type

from service.table import TableSettings

T20 = "rbnqbrk1/pppppppp/6n1/8/8/6N1/PPPPPPPP/RBNQBRK1 w - - 0 1"


def test_t20_capture_scores_show_on_the_clock_and_in_the_pgn() -> None:
    hands = Hands(TableSettings(variant="t20"), fen=T20)
    hands.play("e2e4", "P", True)
    hands.play("d7d5", "p", False)
    hands.table.take_clock_orders()
    hands.play("e4d5", "P", True)
    assert of_type(hands.out, "score")[-1]["totals"] == {"white": 1, "black": 0}
    assert any(o.text == "1-0" for o in hands.table.take_clock_orders())
    pgn = hands.table.pgn()
    assert '[WhiteScore "1"]' in pgn
    assert '[VariantName "Chess T20"]' in pgn
    game = chess.pgn.read_game(io.StringIO(pgn))
    assert game is not None
    assert not game.errors
    assert game.board().fen() == T20


def test_t20_time_out_moves_fifty_points_and_ends_the_game() -> None:
    hands = Hands(TableSettings(variant="t20", time_control="60+0"), fen=T20, clock=False)
    hands.wait(61)
    assert hands.table.phase == "finished"
    assert hands.table.state()["scores"] == {"white": 0, "black": 50}
    assert hands.table.result == "0-1"
