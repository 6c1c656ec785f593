"""Presence-only boards: a bench game whose reading lost its way under fast hands, now
followed to the end.

lichess#94 (``--sweep 0.3 --seed 2``): ...Qxd3 with the queen on d3 lifted first and the
rook on d7 knocked over and set back before the capturing queen comes down on d3.  At the
rook set back the board reads two plies, ...Qxa3 swept off (the queen's lift) and Qxd7 (the
queen on d3 lifted, a piece set down on d7), the last still provisional.  The queen set down
on d3 then shows the position after ...Qxd3: the lift on d3 was the captured queen taken off
and the rook set back is no move, so ...Qxa3 is read again as ...Qxd3 and Qxd7 is dropped
(:meth:`service.recognize.recognizer.Recognizer._set_back_last`).  Read as before, the game
went on with the queen taken on d3 read as a pawn on a3 and lost its way ten plies later."""

from __future__ import annotations

import games


def test_a_knocked_piece_set_back_is_no_move() -> None:
    game, index = games.bench_game("lichess#94")
    read = games.recognise(games.bench_stream(game, index, 2, 0.3)).ucis
    assert read == game.ucis()
