"""FrameParser throughput on a realistic recorded-style stream.

The stream is what boards in update mode send during real-paced blitz games (3 min + 2 s):
a board dump at the start, a clock message about once a second, the field updates of
every move the way hands make them (lift, place; captures, castling, en passant,
promotions; now and then a piece set down twice), a few dumps during the game and the
clock's acks.  The games are seeded random legal games played with python-chess; the
stream is cut into chunks of 1 to 64 bytes, as serial and USB reads deliver them.

Only the feeding is timed, in CPU time of the process (a shared machine disturbs that far
less than wall time).  Prints frames per second for several runs, their median, min and
max, and the goal of 500,000 frames/s (the traffic of over 2,500 boards each saturating
its 9600-baud line).  Never fails on a timing: the exit status is non-zero only if the
parser decodes the stream wrongly.

    .venv/bin/python bench/parser_throughput.py            # 1,000,000 frames, 7 runs
    .venv/bin/python bench/parser_throughput.py --quick    # CI smoke run
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Iterator

import chess

from dgt.protocol import (
    BoardDump,
    ClockAck,
    ClockTimes,
    FieldUpdate,
    FrameParser,
    Message,
    Piece,
    square_to_index,
)

GOAL = 500_000
"""Frames per second the parser should reach on one core (issue 2)."""

BASE_SECONDS = 180.0
INCREMENT = 2.0


def code(piece: chess.Piece) -> int:
    """The board's wire code of a python-chess piece."""
    return Piece.from_symbol(piece.symbol()).to_wire()


def dump_of(board: chess.Board) -> BoardDump:
    squares = [Piece.EMPTY] * 64
    for square, piece in board.piece_map().items():
        squares[square] = Piece.from_symbol(piece.symbol())
    return BoardDump.from_pieces(squares)


def update(square: int, piece: chess.Piece | None) -> FieldUpdate:
    return FieldUpdate(square_to_index(square), code(piece) if piece else 0)


def move_updates(board: chess.Board, move: chess.Move, rng: random.Random) -> list[FieldUpdate]:
    """The field updates a board reports while a hand makes ``move`` (before it is pushed)."""
    mover = board.piece_at(move.from_square)
    assert mover is not None
    placed = chess.Piece(move.promotion, mover.color) if move.promotion else mover
    out: list[FieldUpdate] = []
    if board.is_castling(move):
        rank = chess.square_rank(move.from_square)
        kingside = chess.square_file(move.to_square) > chess.square_file(move.from_square)
        rook_from = chess.square(7 if kingside else 0, rank)
        rook_to = chess.square(5 if kingside else 3, rank)
        king_to = chess.square(6 if kingside else 2, rank)
        rook = board.piece_at(rook_from)
        out += [update(move.from_square, None), update(king_to, mover)]
        out += [update(rook_from, None), update(rook_to, rook)]
        return out
    if board.is_en_passant(move):
        captured = chess.square(
            chess.square_file(move.to_square), chess.square_rank(move.from_square)
        )
        return [
            update(move.from_square, None),
            update(move.to_square, placed),
            update(captured, None),
        ]
    if board.is_capture(move) and rng.random() < 0.6:  # captured piece lifted first
        out.append(update(move.to_square, None))
    out.append(update(move.from_square, None))
    if rng.random() < 0.08:  # set down on a neighbour, then moved on
        out += [update(move.to_square ^ 1, placed), update(move.to_square ^ 1, None)]
    out.append(update(move.to_square, placed))
    if rng.random() < 0.05:  # the piece bounces
        out += [update(move.to_square, None), update(move.to_square, placed)]
    return out


def game(rng: random.Random) -> Iterator[Message]:
    """One board's messages during one game, in order."""
    board = chess.Board()
    yield dump_of(board)
    yield ClockAck(0x10, 0x09, 0x20, 0x00)  # the clock's version
    times = [BASE_SECONDS, BASE_SECONDS]  # white (left), black (right)
    yield ClockTimes.build(times[0], times[1], right_high=True, left_running=True)
    plies = 0
    while not board.is_game_over() and plies < 160:
        side = 0 if board.turn == chess.WHITE else 1
        think = min(times[side], rng.expovariate(1 / 3.0) + 0.3)
        while think > 0:  # one clock message a second while the mover thinks
            step = min(1.0, think)
            think -= step
            times[side] -= step
            yield ClockTimes.build(
                times[0], times[1], running=True, right_high=side == 1, left_running=side == 0
            )
        if times[side] <= 0:
            break
        move = rng.choice(list(board.legal_moves))
        yield from move_updates(board, move, rng)
        board.push(move)
        times[side] += INCREMENT
        plies += 1
        if plies % 30 == 0:  # the host asks for a dump now and then
            yield dump_of(board)
        if plies % 40 == 0:  # and shows something on the clock
            yield ClockAck(0x10, 0x0C, 0x00, 0x00)
    yield ClockTimes.build(times[0], times[1], right_high=board.turn == chess.BLACK)


def recorded_stream(frames: int, seed: int) -> tuple[bytes, list[Message]]:
    """At least ``frames`` frames of consecutive games, and the messages they hold."""
    rng = random.Random(seed)
    games: list[list[Message]] = []
    total = 0
    while total < frames and len(games) < 64:  # then repeat the games already played
        games.append(list(game(rng)))
        total += len(games[-1])
    messages: list[Message] = []
    i = 0
    while len(messages) < frames:
        messages += games[i % len(games)]
        i += 1
    del messages[frames:]
    return b"".join(m.to_bytes() for m in messages), messages


def chunks(data: bytes, seed: int, largest: int) -> list[bytes]:
    """``data`` cut as reads deliver it: 1 to ``largest`` bytes per read."""
    rng = random.Random(seed)
    out: list[bytes] = []
    i = 0
    while i < len(data):
        size = rng.randint(1, largest)
        out.append(data[i : i + size])
        i += size
    return out


def run_once(pieces: list[bytes]) -> tuple[float, int]:
    """Feed every chunk through a fresh parser; (CPU seconds, messages decoded).

    CPU time of this process, not wall time: other processes on a shared machine then
    disturb the figure much less, and the figure is what one core does."""
    parser = FrameParser()
    feed = parser.feed
    count = 0
    gc.collect()
    start = time.process_time()
    for piece in pieces:
        count += len(feed(piece))
    return time.process_time() - start, count


def mix(messages: list[Message]) -> str:
    kinds = Counter(type(m).__name__ for m in messages)
    total = len(messages)
    return ", ".join(f"{name} {100 * n / total:.1f} %" for name, n in kinds.most_common())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=1_000_000, help="frames per run")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--chunk", type=int, default=64, help="largest read, bytes")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="CI smoke run: small and fast")
    args = parser.parse_args(argv)
    if args.quick:
        args.frames, args.runs = min(args.frames, 50_000), min(args.runs, 3)

    data, messages = recorded_stream(args.frames, args.seed)
    pieces = chunks(data, args.seed, args.chunk)
    print(
        f"stream: {len(messages):,} frames, {len(data):,} bytes, {len(pieces):,} reads "
        f"of 1-{args.chunk} bytes"
    )
    print(f"mix: {mix(messages)}")
    if FrameParser().feed(data) != messages:
        print("error: the parser does not decode the stream it was given", file=sys.stderr)
        return 1

    rates: list[float] = []
    for run in range(1, args.runs + 1):
        seconds, count = run_once(pieces)
        if count != len(messages):
            print(f"error: run {run} decoded {count} of {len(messages)} frames", file=sys.stderr)
            return 1
        rates.append(count / seconds)
        print(f"run {run}: {rates[-1]:,.0f} frames/s ({seconds:.3f} s CPU)")
    print(f"median: {statistics.median(rates):,.0f} frames/s")
    print(f"min: {min(rates):,.0f} frames/s")
    print(f"max: {max(rates):,.0f} frames/s")
    print(f"goal: {GOAL:,} frames/s (median is {statistics.median(rates) / GOAL:.0%} of it)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
