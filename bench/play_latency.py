"""``dgt-service play``: how soon a move reaches the site, and whether one is ever sent twice
or too early.

1. On a pty board (the emulator on a pseudo-terminal, opened through the serial code a USB
   board goes through), a WebSocket client subscribed as lichess's page is: the time from
   the last piece of a move set down to the feed message listing it (p50, p99), without a
   clock (the move is complete once the board stood still for the settle delay) and with
   one (the press completes it: time from the press).
2. Over replays of real games with human handling (tests/games.py: the lichess games, each
   set up as a site sets it up, on both board families, no clock), fed to the feed's core
   with a tick every 0.1 s as the server runs it: moves sent more than once (a ply listed
   again after the list shrank: no takebacks are made in these replays) and moves sent
   before completion (listed before the board ever showed the position after them, or a
   wrong move listed).  Goal: 0 and 0.

Prints figures; never fails on them.

    .venv/bin/python bench/play_latency.py              # 20 games per family, 20 pty moves
    .venv/bin/python bench/play_latency.py --games 100  # the 100 lichess games
    .venv/bin/python bench/play_latency.py --quick      # a CI smoke run
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
import chess

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from _figures import percentile  # noqa: E402
from games import Game, lichess_games, stream  # noqa: E402  (the harness lives with the tests)

from dgt.board import Board  # noqa: E402
from dgt.emulator import EmulatorServer, VirtualBoard  # noqa: E402
from dgt.emulator.human import Handling  # noqa: E402
from dgt.events import BoardSnapshot, SquareChanged  # noqa: E402
from dgt.protocol.constants import Piece  # noqa: E402
from service.play.eboard import CASTLING_HOLD, Eboard  # noqa: E402
from service.play.server import PLAY_SETTLE, BoardLink, PlayServer  # noqa: E402

TICK = 0.1
PTY_GAME = ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6", "d2d3", "f8c5", "c2c3", "d7d6",
            "e1g1", "e8g8", "c1g5", "h7h6", "g5f6", "d8f6", "b1d2", "c8e6", "c4e6"]  # fmt: skip


# -- 1. on a pty ---------------------------------------------------------------------------


async def pty_latency(moves: int, settle: float, clock: bool) -> list[float]:
    """Seconds from the last piece set down (or the press) to the feed listing the move."""
    device = VirtualBoard()
    out: list[float] = []
    async with EmulatorServer(device) as server:
        board = Board(server.path)
        await board.open()
        link = BoardLink(board, settle=settle)
        play = PlayServer([link], port=0)
        url = await play.start()
        try:
            async with aiohttp.ClientSession() as http, http.ws_connect(url) as ws:
                await ws.send_str('{"id":1,"call":"eboards"}')
                serial = json.loads(await ws.receive_str())["param"][0]["serialnr"]
                await ws.send_str(
                    json.dumps({"id": 2, "call": "subscribe", "param": {
                        "feed": "eboardevent", "id": 1, "param": {"serialnr": serial}}})
                )  # fmt: skip
                position = chess.Board()
                listed = 0
                for index in range(moves):
                    if index % len(PTY_GAME) == 0 and index:
                        await _set_up(server, device, chess.Board())
                        position = chess.Board()
                        await ws.send_str(json.dumps({"id": 3, "call": "call", "param": {
                            "id": 1, "method": "setup",
                            "param": {"fen": chess.STARTING_FEN}}}))  # fmt: skip
                        listed = 0
                    uci = PTY_GAME[index % len(PTY_GAME)]
                    await asyncio.sleep(0.3)
                    done = await _move(server, device, position, uci)
                    if clock:
                        await asyncio.sleep(0.2)
                        server.act(lambda now: device.press_lever(now))
                        done = time.monotonic()
                    listed += 1
                    while True:
                        message = json.loads(await ws.receive_str(timeout=10))
                        if message["response"] == "feed" and len(message["param"]["san"]) == listed:
                            out.append(time.monotonic() - done)
                            break
        finally:
            await play.close()
            await board.close()
    return out


async def _change(server: EmulatorServer, device: VirtualBoard, square: int, piece: Piece) -> float:
    await asyncio.sleep(0.08)
    if piece is Piece.EMPTY:
        server.act(lambda now: device.lift(square, now))
    else:
        server.act(lambda now: device.place(square, piece, now))
    return time.monotonic()


async def _move(
    server: EmulatorServer, device: VirtualBoard, position: chess.Board, uci: str
) -> float:
    move = position.parse_uci(uci)
    before = dict(position.piece_map())
    position.push(move)
    after = position.piece_map()
    lifts = sorted((s for s in before if after.get(s) != before[s]), key=lambda s: s not in after)
    done = 0.0
    for square in lifts:
        done = await _change(server, device, square, Piece.EMPTY)
    for square in (s for s in after if before.get(s) != after[s]):
        done = await _change(server, device, square, Piece.from_symbol(after[square].symbol()))
    return done


async def _set_up(server: EmulatorServer, device: VirtualBoard, board: chess.Board) -> None:
    target = {s: Piece.from_symbol(p.symbol()) for s, p in board.piece_map().items()}
    for square in range(64):
        if device.squares[square] is not Piece.EMPTY and square not in target:
            await _change(server, device, square, Piece.EMPTY)
    for square, piece in target.items():
        if device.squares[square] is not piece:
            await _change(server, device, square, piece)


# -- 2. over replays -----------------------------------------------------------------------


@dataclass
class Tally:
    games: int = 0
    moves: int = 0
    twice: int = 0
    early: int = 0
    wrong: int = 0
    missing: int = 0
    delays: list[float] = field(default_factory=list)
    """Virtual seconds from the board first showing a move's position to its listing."""
    notes: list[str] = field(default_factory=list)


def _shows(event_board: list[Piece], board: chess.Board, presence: bool) -> bool:
    for square in range(64):
        piece = board.piece_at(square)
        raw = event_board[square]
        if presence:
            if (raw is Piece.OCCUPIED) != (piece is not None):
                return False
        elif raw is not (Piece.EMPTY if piece is None else Piece.from_symbol(piece.symbol())):
            return False
    return True


def replay(
    game: Game, seed: int, presence: bool, settle: float, tally: Tally, *, noisy: bool = False
) -> None:
    handling = Handling.noisy() if noisy else Handling()
    item = stream(game, seed=seed, handling=handling, presence_only=presence, clock=False)
    truth = game.board()
    positions = []
    sans = []
    for move in game.moves:
        sans.append(truth.san(move))
        truth.push(move)
        positions.append(truth.copy())
    eboard = Eboard("bench", presence_only=presence, settle=settle)
    raw: list[Piece] = [Piece.EMPTY] * 64
    first_shown: dict[int, float] = {}
    listed_at: dict[int, list[float]] = {}
    current: list[str] = []

    def look(now: float) -> None:
        nonlocal current
        shown = eboard.san()
        if shown == current:
            return
        for ply in range(len(current), len(shown)):
            listed_at.setdefault(ply, []).append(now)
            if ply >= len(sans) or shown[ply] != sans[ply]:
                tally.wrong += 1
                tally.notes.append(f"{game.name} seed {seed}: ply {ply + 1} listed {shown[ply]}")
            elif ply not in first_shown:
                tally.early += 1
                tally.notes.append(f"{game.name} seed {seed}: ply {ply + 1} listed early")
            else:
                tally.delays.append(now - first_shown[ply])
        current = shown

    first = item.events[0]
    assert isinstance(first, BoardSnapshot)
    raw = list(first.squares)
    eboard.feed(first)
    eboard.setup(game.fen, first.time)  # as the site sets up the game
    look(first.time)
    now = first.time
    for index, event in enumerate(item.events[1:], start=1):
        while now + TICK < event.time:
            now += TICK
            eboard.tick(now)
            look(now)  # every tick, as the server does (a held move is listed by time)
        kind = item.promotions.get(index)
        if kind is not None:
            eboard.recognizer.set_promotion(kind)  # told on a screen: see the README
        if isinstance(event, SquareChanged):
            raw[event.square] = event.piece
            for ply, position in enumerate(positions):
                if ply not in first_shown and _shows(raw, position, presence):
                    first_shown[ply] = event.time
                    break
        if eboard.feed(event):
            look(event.time)
    end = item.events[-1].time
    for _ in range(int((3 * settle + CASTLING_HOLD) / TICK) + 2):
        end += TICK
        eboard.tick(end)
        look(end)
    tally.games += 1
    tally.moves += len(sans)
    tally.twice += sum(len(times) - 1 for times in listed_at.values())
    missing = len(sans) - len(current)
    if missing > 0:
        tally.missing += missing
        tally.notes.append(f"{game.name} seed {seed}: {missing} move(s) never listed")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=20, help="games per board family")
    parser.add_argument("--moves", type=int, default=20, help="moves timed on the pty")
    parser.add_argument("--settle", type=float, default=PLAY_SETTLE)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--noisy", action="store_true", help="noisy handling (knocks, slides, bounces...)"
    )
    parser.add_argument("--no-pty", action="store_true", help="the replays only")
    parser.add_argument("--quick", action="store_true", help="2 games, 4 pty moves")
    args = parser.parse_args()
    games_count, moves = (2, 4) if args.quick else (args.games, args.moves)
    settle = args.settle

    print(f"play latency (settle {settle:g} s), pty board, {moves} moves each way")
    for clock in () if args.no_pty else (False, True):
        values = asyncio.run(pty_latency(moves, settle, clock))
        label = "clock press -> feed" if clock else "last piece -> feed (no clock)"
        print(
            f"  {label:32} p50 {percentile(values, 0.5) * 1000:7.1f} ms"
            f"   p99 {percentile(values, 0.99) * 1000:7.1f} ms   (n={len(values)})"
        )
    games = lichess_games()[:games_count]
    handling = "noisy" if args.noisy else "tidy"
    print(f"replays: {len(games)} lichess games per family, {handling} human handling, no clock")
    for presence in (False, True):
        tally = Tally()
        for index, game in enumerate(games):
            replay(game, args.seed * 100_003 + index, presence, settle, tally, noisy=args.noisy)
        family = "presence-only" if presence else "piece-identity"
        delays = tally.delays or [0.0]
        print(
            f"  {family:15} {tally.games} games, {tally.moves} moves: sent twice {tally.twice}, "
            f"before completion {tally.early}, wrong {tally.wrong}, never sent {tally.missing}; "
            f"board shows it -> listed p50 {percentile(delays, 0.5):.2f} s, "
            f"p99 {percentile(delays, 0.99):.2f} s"
        )
        for note in tally.notes[:10]:
            print(f"    {note}")
    return 0


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
