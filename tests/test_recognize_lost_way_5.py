"""Presence-only boards: a bench game whose reading lost its way (ended on another board than
the game played) under fast hands and that it now follows to the end.

960#757qk (``--sweep 0.6 --seed 1``) ends ...Nxg4, Qxh6, ...Nh2, both captures swept.
...Nxg4 is read as ...Nxd5 (its other reading, kept); h2 lifted (Qxh6, swept) and then the
knight set down on h2 before its lift from g4 is reported: read as the queen set back,
Qxh6 taken back.  The handling seen since the position taken back to is kept (h2 left and
set down on again, see ``Recognizer._takeback_to``), so reading ...Nxg4 again may read
ahead through h2 emptied by one action and filled by a later one (``Recognizer._fits``),
and the game is followed to its end.

The stream is the bench's (``bench/recognition.py --seeds 2 --sweep 0.6``): the game's index
among the bench's games (every source) gives its seed and its clock."""

from __future__ import annotations

import games


def test_a_square_left_and_taken_again_after_a_takeback_is_followed() -> None:
    game, index = games.bench_game("960#757qk")
    read = games.recognise(games.bench_stream(game, index, 1, 0.6)).ucis
    played = game.ucis()
    assert played[-3:] == ["f6g4", "h2h6", "g4h2"]
    assert read == played
