"""End to end: games played with noisy human handling on the emulated board served on a
pseudo-terminal, read by the driver (``dgt.Board`` over pyserial), fed to the recogniser:
the recognised game equals the played one.  A classic board with a clock, a Pegasus
(presence only, no clock) and a board turned round, all at once, each playing the same three
games one after another (set up by hand in between): the shortest lichess game of tests/data, a
Chess960 engine game up to just after its castling, and a generated game with castling,
en passant and an under-promotion (see :func:`chosen_games`).

The hand plays ``SPEED`` times faster than a person; the recogniser gets the driver's
timestamps multiplied by ``SPEED`` back (it has no clock of its own), so its settle and
scan delays see human time."""

from __future__ import annotations

import asyncio
import random
from dataclasses import replace
from pathlib import Path

import chess
import games
import pytest
from conftest import FAST, wait_until

from dgt import Board
from dgt.emulator.board import VirtualBoard
from dgt.emulator.console import Player
from dgt.emulator.human import Handling, game_steps, setup_steps, squares_of
from dgt.emulator.pty import EmulatorServer
from dgt.events import BoardEvent, BoardSnapshot, ClockUpdate, LeverMoved, SquareChanged
from dgt.protocol.constants import Piece
from service.recognize import NewGame, Recognizer, RecognizerEvent
from service.variants import get_variant

pytestmark = pytest.mark.usefixtures("no_leaked_tasks")

SPEED = 15.0
HANDLING = replace(Handling.noisy(), think_time=(0.4, 1.2))
"""Noisy hands, quick thinkers (the games are short on time)."""


def scaled(event: BoardEvent, origin: float) -> BoardEvent:
    """The event with its time in human seconds since ``origin``."""
    return replace(event, time=(event.time - origin) * SPEED)  # type: ignore[type-var]


async def play_and_recognise(
    tmp_path: Path, name: str, vb: VirtualBoard, played: list[games.Game], seed: int
) -> list[list[str]]:
    """Play ``played`` one after another on ``vb`` (set up by hand between games) and return
    the completed moves of each game as recognised when it ended.

    A game's record is taken when the game ends, before the board is set up for the next
    one: setting up by hand may retrace the game move by move (on an identity board that
    *is* a takeback of every move, see ``test_a_reset_retracing_the_game_is_a_takeback``
    in ``test_recognize_scenarios.py``).  The next game is started explicitly, as a service
    does when the players start a new game, unless the recogniser saw its start position
    set up (a new game) on its own."""
    rng = random.Random(seed)
    # "standard": a classical start means standard chess (castling e1g1); a Chess960 start
    # still means Chess960 (a presence-only board is told which one)
    recognizer = Recognizer(variant="standard", presence_only=vb.pegasus)
    emitted: list[RecognizerEvent] = []
    recognised: list[list[str]] = []
    async with (
        EmulatorServer(vb, link=tmp_path / name, seed=seed) as server,
        Board(server.path, read_memory=False, **FAST) as board,
    ):
        loop = asyncio.get_running_loop()
        origin = loop.time()

        def now() -> float:
            return (loop.time() - origin) * SPEED

        def feed(event: BoardEvent) -> None:
            if isinstance(event, SquareChanged | BoardSnapshot | LeverMoved | ClockUpdate):
                event = scaled(event, origin)
                emitted.extend(recognizer.tick(event.time))
                emitted.extend(recognizer.feed(event))

        async def settled() -> None:
            await wait_until(lambda: list(board.squares) == list(vb.board_frame()), 5)
            await asyncio.sleep(3.0 / SPEED)
            emitted.extend(recognizer.tick(now()))  # a service ticks now and then

        feed(board.mirror.snapshot(loop.time(), "connect"))
        board.add_listener(feed)
        player = Player(server, vb, rng=rng, handling=HANDLING, speed=SPEED)
        white_high = None if vb.clock is None else vb.clock.right_high  # White to move
        for game in played:
            emitted.clear()
            start = game.board()
            # a Pegasus holds what the hand set down on it: pieces moved in a game are
            # occupancy only, so the set-up goes by occupancy too
            target = {s: p for s, p in enumerate(vb.squares) if p is not Piece.EMPTY}
            goal = squares_of(start, vb.pegasus)
            if target != goal:
                await player.play_steps(setup_steps(target, goal, rng, HANDLING))
            await settled()
            current = recognizer.game
            seen = any(isinstance(e, NewGame) and e.fen == game.fen for e in emitted)
            if current is None or current.start.fen != game.fen or current.ply or not seen:
                # a presence-only board cannot tell one Chess960 start from another, and a
                # game taken back to its start is no new game: say which game starts
                known = get_variant(game.variant).start_positions()
                chosen = next(s for s in known if s.fen == game.fen)
                recognizer.start_game(now(), chosen)
            if vb.clock is not None and vb.clock.right_high != white_high:
                # the clock set for the new game: Black presses, White's side goes up (a
                # press is physical, it always puts the high side down)
                server.act(vb.press_lever)
            for index, steps in game_steps(start, list(game.moves), rng, HANDLING, vb.pegasus):
                move = game.moves[index]
                if vb.pegasus and move.promotion:
                    await wait_until(lambda: list(board.squares) == list(vb.board_frame()), 5)
                    recognizer.set_promotion(chess.piece_symbol(move.promotion))
                await player.play_steps(steps)
                if vb.clock is not None:
                    await asyncio.sleep(rng.uniform(0.2, 0.6) / SPEED)
                    server.act(vb.press_lever)
            await settled()
            record = recognizer.record()
            assert record is not None
            recognised.append([m.uci for m in record.final_moves])
        board.remove_listener(feed)
    return recognised


def cut_after(game: games.Game, plies: int) -> games.Game:
    return replace(game, name=f"{game.name}[:{plies}]", moves=game.moves[:plies])


def special_game() -> games.Game:
    """The generated game that castles, takes en passant and promotes soonest, cut right
    after its first promotion."""
    best: tuple[int, games.Game] | None = None
    for game in games.special_games(20, seed=3):
        board = game.board()
        seen: set[str] = set()
        for ply, move in enumerate(game.moves, start=1):
            if board.is_castling(move):
                seen.add("castling")
            if board.is_en_passant(move):
                seen.add("en passant")
            board.push(move)
            if move.promotion:
                if {"castling", "en passant"} <= seen and (best is None or ply < best[0]):
                    best = (ply, game)
                break
    assert best is not None, "no generated game castles, takes en passant and promotes"
    return cut_after(best[1], best[0])


def chosen_games() -> list[games.Game]:
    """The shortest real game (7 plies: setting up the next game retraces it on the classic
    board), a Chess960 engine game cut after its first castling, and a generated game with
    castling, en passant and an under-promotion."""
    lichess = min(games.lichess_games(), key=lambda g: len(g.moves))
    fischer = next(g for g in games.sdist_games() if g.variant == "chess960")
    board = fischer.board()
    for ply, move in enumerate(fischer.moves, start=1):
        if board.is_castling(move):
            fischer = cut_after(fischer, ply + 1)
            break
        board.push(move)
    return [lichess, fischer, special_game()]


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
        assert recognised == expected, f"{name}: recognised {recognised}"
