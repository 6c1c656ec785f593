"""Presence-only boards: bench games whose reading lost its way (ended on another board than
the game played) under fast hands and that it now follows to the end, one per cause:

* 960#818kq (``--sweep 0.3 --seed 2``): bxa6 swept off, read as bxc6 (its other reading,
  kept); twenty plies later axb7 is made with the piece on c6 knocked over as the pawn on a6
  is lifted, read as cxb7.  Reading bxa6 again makes cxb7 illegal: the pawn stands on a6 in
  that reading, and the board reads a6 empty, so the later move is read again from there
  (:func:`service.recognize.recognizer._from_elsewhere`).

Each stream is the bench's (``bench/recognition.py --seeds 2 --sweep S``): the game's index
among the bench's games (every source) gives its seed and its clock."""

from __future__ import annotations

import games
import pytest

from dgt.emulator.human import Handling

_CHESS960_OFFSET = 116
"""The index of the first Chess960 start's game among the bench's games (the lichess and
sdist games come first)."""


def _game_and_index(name: str) -> tuple[games.Game, int]:
    source, _, rest = name.partition("#")
    if source == "960":
        number = int(rest[:-2])
        return games.castling_game(number, (rest[-2], rest[-1]), seed=number * 3), (
            _CHESS960_OFFSET + number
        )
    found = games.lichess_games()
    index = next(i for i, game in enumerate(found) if game.name == name)
    return found[index], index


def _read_and_played(name: str, seed: int, sweep: float) -> tuple[list[str], list[str]]:
    game, index = _game_and_index(name)
    assert game.name == name
    item = games.stream(
        game,
        seed=seed * 100_003 + index,
        handling=Handling.noisy(),
        presence_only=True,
        clock=index % 2 == 0,
        sweep=sweep,
    )
    return games.recognise(item).ucis, game.ucis()


@pytest.mark.parametrize(("name", "seed", "sweep"), [("960#818kq", 2, 0.3)])
def test_a_game_once_lost_is_followed_to_the_end(name: str, seed: int, sweep: float) -> None:
    read, played = _read_and_played(name, seed, sweep)
    assert read == played
