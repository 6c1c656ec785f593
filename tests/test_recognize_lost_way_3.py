"""Presence-only boards: bench games whose reading lost its way (ended on another board than
the game played) under fast hands and that it now follows to the end, one per cause:

* 960#818kq (``--sweep 0.3 --seed 2``): bxa6 swept off, read as bxc6 (its other reading,
  kept); twenty plies later axb7 is made with the piece on c6 knocked over as the pawn on a6
  is lifted, read as cxb7.  Reading bxa6 again makes cxb7 illegal: the pawn stands on a6 in
  that reading, and the board reads a6 empty, so the later move is read again from there
  (:func:`service.recognize.recognizer._from_elsewhere`).
* lichess#88 (``--sweep 0.6 --seed 2``): Nxe4 and ...Rxd3+ swept off, read as Nxf7 and
  ...Rxf7 (their other readings, kept); then Qxd3, its slide resting on c3 (read as Qc3,
  still provisional) before it goes on to take on d3, the rook swept off.  Reading Nxe4 and
  ...Rxd3+ again makes Qc3 illegal (the king is in check): the last action, provisional, is
  read again as its piece going on along the same line past c3 (Qxd3), and the board is
  followed (:func:`service.recognize.recognizer._goes_on`).

Each stream is the bench's (``bench/recognition.py --seeds 2 --sweep S``): the game's index
among the bench's games (every source) gives its seed and its clock."""

from __future__ import annotations

import games
import pytest


def _read_and_played(name: str, seed: int, sweep: float) -> tuple[list[str], list[str]]:
    game, index = games.bench_game(name)
    assert game.name == name
    item = games.bench_stream(game, index, seed, sweep)
    return games.recognise(item).ucis, game.ucis()


@pytest.mark.parametrize(("name", "seed", "sweep"), [("960#818kq", 2, 0.3), ("lichess#88", 2, 0.6)])
def test_a_game_once_lost_is_followed_to_the_end(name: str, seed: int, sweep: float) -> None:
    read, played = _read_and_played(name, seed, sweep)
    assert read == played
