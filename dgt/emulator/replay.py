"""Play the games of a PGN file on a virtual board, with human timing.

Between games the pieces are set up by hand (the human model's set-up steps) and the clock
is set for the game's time control (its ``TimeControl`` tag, when it has one); after each
move the mover presses the clock lever.  ``speed`` divides every delay (tests use 50 or
more); the clock itself keeps real time.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Iterable, Iterator
from pathlib import Path

import chess
import chess.pgn

from dgt.emulator import human
from dgt.emulator.board import VirtualBoard
from dgt.emulator.bus import BusLine
from dgt.emulator.console import Line, Player
from dgt.protocol.constants import Piece

__all__ = ["read_games", "replay_games", "time_control"]

log = logging.getLogger(__name__)

LEVER_DELAY = (0.2, 0.7)
"""Seconds from setting the piece down to pressing the clock."""


def read_games(path: str | Path) -> Iterator[chess.pgn.Game]:
    """The games of a PGN file, one by one (games python-chess cannot read are skipped
    with a warning)."""
    with open(path, encoding="utf-8-sig", errors="replace") as handle:
        while True:
            game = chess.pgn.read_game(handle)
            if game is None:
                return
            if game.errors:
                log.warning("%s: skipping a game python-chess cannot read: %s",
                            path, game.errors[0])  # fmt: skip
                continue
            yield game


def time_control(game: chess.pgn.Game) -> tuple[float, float] | None:
    """(base seconds, increment seconds) from a ``TimeControl`` tag like ``420+17``."""
    tag = game.headers.get("TimeControl", "")
    base, _, increment = tag.partition("+")
    try:
        return float(base), float(increment or 0)
    except ValueError:
        return None


async def replay_games(
    line: Line,
    games: Iterable[chess.pgn.Game] | str | Path,
    *,
    board: VirtualBoard | None = None,
    speed: float = 1.0,
    rng: random.Random | None = None,
    handling: human.Handling | None = None,
    pause: float = 5.0,
    repeat: bool = False,
) -> int:
    """Play ``games`` (or the games of a PGN file) on ``board`` (default: the line's board,
    the first board of a bus line).  Returns the number of games played.  ``pause`` is the
    time between games; ``repeat`` starts over after the last game (runs until cancelled).
    """
    if board is None:
        device = line.device
        board = device.boards[0] if isinstance(device, BusLine) else device
    rng = rng or random.Random()
    player = Player(line, board, rng=rng, handling=handling, speed=speed)
    played = 0
    while True:
        source = read_games(games) if isinstance(games, str | Path) else games
        any_game = False
        for game in source:
            any_game = True
            await _play(player, game, rng, pause)
            played += 1
        if not repeat or not any_game or not isinstance(games, str | Path):
            return played


async def _play(player: Player, game: chess.pgn.Game, rng: random.Random, pause: float) -> None:
    board, line, speed = player.board, player.line, player.speed
    start = game.board()
    log.info("replaying %s - %s", game.headers.get("White", "?"), game.headers.get("Black", "?"))
    current = {s: p for s, p in enumerate(board.squares) if p is not Piece.EMPTY}
    target = human.squares_of(start)
    if current != target:
        await player.play_steps(human.setup_steps(current, target, rng, player.handling))
    control = time_control(game)
    if board.clock is not None and control is not None:
        base, increment = control
        # White sits on the clock's left: the left side is up, ready for White's press.
        line.act(lambda now: _set_clock(board, base, increment, now))
    moves = list(game.mainline_moves())
    # the steps come from their own generator, worked out move by move: a whole game at
    # once took 4-5 ms, a pause for every board starting a game at the same moment.  The
    # generator keeps the game's position itself (this player's ``game`` is not used: the
    # replay makes no move through :meth:`Player.move`).
    steps_rng = random.Random(rng.getrandbits(64))
    for _, steps in human.iter_game_steps(start, moves, steps_rng, player.handling):
        await player.play_steps(steps)
        if board.clock is not None:
            await asyncio.sleep(rng.uniform(*LEVER_DELAY) / speed)
            line.act(board.press_lever)
    await asyncio.sleep(pause / speed)


def _set_clock(board: VirtualBoard, base: float, increment: float, now: float) -> bytes:
    assert board.clock is not None
    board.clock.set(base, base, now, increment=increment, right_high=False)
    return board.poll(now)
