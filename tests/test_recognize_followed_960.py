"""Chess960 games of the recognition bench that a presence-only board's reading lost (it ended
on another board than the game played) and that it now follows to the end, one per cause:

* 41: a promoted pawn taken off again to be exchanged for its piece (gxf1=Q+, f1 lifted, the
  queen fetched for more than the settle delay) is a promotion not yet complete: nothing is
  read again meanwhile (it read ...Bxf6 twelve plies back and gxh1=B, and lost the game);
* 357: the reading ahead from the position the last guesses started from may make as many
  actions as lie between that position and the board (a guess read ahead two actions after
  an earlier guess: ...Bxe2 and Nf5 read from a knocked-over knight and ...Bf5, the knight
  set back, then gxf7+: five actions from the first guess, more than :data:`AHEAD_PLIES`);
* 745: a promoted pawn exchanged for its piece (a1 lifted, a rook set down) is handling of
  the last action, not part of the reply: Nxf7 swept then ...e6 is read at the place;
* 879: a re-reading is a guess too (exf6+ swept, the rook resting on f7 on its way to take
  on f6 reads exd6 and ...Rf7): once the rook leaves f7 the game is read ahead again from
  before the actions read again (exf6+ and ...Rxf6 swept).

Each stream is the bench's (``bench/recognition.py --sweep 0.6 --seed 2``: the game's index
among the bench's games gives its seed and its clock)."""

from __future__ import annotations

import games
import pytest


def _read_and_played(number: int, seed: int, sweep: float) -> tuple[list[str], list[str]]:
    wings = "kq" if number % 2 == 0 else "qk"
    game, index = games.bench_game(f"960#{number}{wings}")
    item = games.bench_stream(game, index, seed, sweep)
    return games.recognise(item).ucis, game.ucis()


@pytest.mark.parametrize("number", [41, 357, 745, 879])
def test_a_chess960_game_once_lost_is_followed_to_the_end(number: int) -> None:
    read, played = _read_and_played(number, 2, 0.6)
    assert read == played
