"""The driver's CPU per board frame, by kind: what ``dgt.Board`` spends between the bytes
read from the line and the event handed to its consumer (parser, mirror, clock state,
event objects), with nothing of the service behind it.

N boards (2,000 by default, so that their objects do not all sit in the CPU's caches, as
in a hall) are set up as a hall's are after their handshake (mirror loaded, clock seen,
a consumer taking each event), then fed, one board after the other, the frames a board in
UPDATE_NICE mode sends: a running clock's report (a clock frame with new times), a lever
press (a clock frame whose lever bit changed), a square change (a lift or a placing) and the
settle re-dump after a move (a board dump equal to the mirror: no event).  Each kind is
timed on its own, in CPU time of the process (robust to other load), over several rounds;
the figure is the median round's microseconds per frame.  The frames go straight to the
board's receive callback (``Board._on_data``): the transport's read and the event loop are
not in the figure.

    .venv/bin/python bench/driver_cost.py            # 2,000 boards, 7 rounds
    .venv/bin/python bench/driver_cost.py --quick    # CI smoke run

Never fails on a timing: the exit status is non-zero only if a board gave other events
than a frame means.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import gc
import random
import statistics
import sys
import time
from collections.abc import Callable

from dgt.board import Board, BoardState
from dgt.emulator.board import start_squares
from dgt.events import BoardEvent, ClockUpdate, LeverMoved, SquareChanged
from dgt.protocol import ClockTimes, MessageId, Piece
from dgt.transports.emulator import EmulatorTransport
from service import event_loop

KINDS = ("clock", "lever", "square", "dump")


class Tally:
    """The consumer of every board: counts the events by type (and keeps none, as a
    hall's table keeps few: kept, they would fill the caches the figure is about)."""

    def __init__(self) -> None:
        self.counts: collections.Counter[type] = collections.Counter()

    def __call__(self, event: BoardEvent) -> None:
        self.counts[type(event)] += 1


def ready_board(loop: asyncio.AbstractEventLoop, tally: Tally) -> Board:
    """A board as it stands after its handshake: start position, a running clock seen."""
    board = Board(EmulatorTransport(), liveness_idle=0, reconnect=False)
    board._loop = loop
    board.state = BoardState.READY
    board._mirror_valid = True
    board.mirror.load(start_squares(), time.monotonic())
    board.consume(tally)
    board._on_data(ClockTimes.build(300, 300, running=True, left_running=True).to_bytes())
    return board


def frames(kind: str, n: int, boards: list[Board], rng: random.Random) -> list[bytes]:
    """``n`` frames of ``kind`` for each board, round by round (a board's frames in its
    own order: each lever frame flips the lever, each square frame flips a square)."""
    if kind == "clock":
        return [
            ClockTimes.build(300 - i, 300, running=True, left_running=True).to_bytes()
            for i in range(n)
        ]
    if kind == "lever":
        return [
            ClockTimes.build(
                200, 200, running=True, right_high=i % 2 == 0, left_running=i % 2 == 1
            ).to_bytes()
            for i in range(n)
        ]
    if kind == "square":
        out = []
        for _ in range(n // 2):  # a pawn lifted and put back
            field = rng.choice((8, 9, 10, 11, 48, 49, 50, 51))  # the pawns' rows
            code = (Piece.BPAWN if field < 16 else Piece.WPAWN).to_wire()
            out.append(bytes((MessageId.FIELD_UPDATE, 0, 5, field, 0)))
            out.append(bytes((MessageId.FIELD_UPDATE, 0, 5, field, code)))
        return out
    return [boards[0].mirror.to_dump().to_bytes()] * n


async def measure(n_boards: int, per_board: int, rounds: int, seed: int) -> int:
    loop = asyncio.get_running_loop()
    tally = Tally()
    boards = [ready_board(loop, tally) for _ in range(n_boards)]
    rng = random.Random(seed)
    expected: dict[str, tuple[type, int]] = {
        "clock": (ClockUpdate, 1),
        "lever": (LeverMoved, 2),  # a lever frame: the LeverMoved, then the ClockUpdate
        "square": (SquareChanged, 1),
        "dump": (type(None), 0),
    }
    bad = 0
    print(f"boards: {n_boards:,}; frames per board and kind: {per_board}; rounds: {rounds}")
    for kind in KINDS:
        # a square frame lifts or places a pawn: every board's own sequence must alternate
        stream = frames(kind, per_board, boards, rng)
        calls: list[Callable[[bytes], None]] = [board._on_data for board in boards]
        results = []
        for _ in range(rounds):
            tally.counts.clear()
            gc.collect()
            t0 = time.process_time_ns()
            for frame in stream:
                for call in calls:
                    call(frame)
            spent = time.process_time_ns() - t0
            results.append(spent / (len(stream) * len(calls)) / 1000)
            cls, per_frame = expected[kind]
            want = {cls: len(stream) * len(calls)} if per_frame else {}
            if per_frame == 2:  # a lever frame gives its LeverMoved and its ClockUpdate
                want[ClockUpdate] = len(stream) * len(calls)
            if dict(tally.counts) != want:
                bad += 1
                print(f"{kind}: events {dict(tally.counts)}, expected {want}", file=sys.stderr)
        print(
            f"{kind}: {statistics.median(results):.2f} us per frame "
            f"(min {min(results):.2f}, max {max(results):.2f})"
        )
    for board in boards:
        board._stop_timers()
    return 1 if bad else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--boards", type=int, default=2000)
    parser.add_argument("--frames", type=int, default=20, help="frames per board and kind (even)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="20 boards, 3 rounds")
    args = parser.parse_args()
    if args.quick:
        args.boards, args.rounds = 20, 3
    # the service's event loop (uvloop where installed): the board arms its timers on it
    return event_loop.run(measure(args.boards, args.frames, args.rounds, args.seed))


if __name__ == "__main__":
    sys.exit(main())
