"""Bus mode: how long a poll cycle of N boards takes, and the latency from a piece moved on
one board of a bus line to its ``dgt.bus_master.BusBoard`` event, per board.

The emulator (``dgt.emulator``'s ``EmulatorServer`` around a ``BusLine`` of N boards) runs
in a second process, as the boards on the far end of a cable would; the driver polls the
pty with pyserial through ``BusMaster``.  One change is in flight at a time: the
emulator notes ``time.monotonic()`` (system-wide) right before it moves a piece on the
board named by the trigger pipe, and the clock stops in the board's event listener.  Each
trigger waits a random time up to two poll periods after the previous event, so changes
fall at every phase of the poll cycle.  In bus mode a board sends nothing by itself: a
change waits for the board's next turn, so the latency is about half a poll period on
average.

A pty carries bytes as fast as the processes move them; on a real 9600-baud line every
byte takes 1.04 ms.  The script also prints the cycle a real line would need for the same
requests (bytes x 1.04 ms, plus :data:`TURNAROUND` per request), computed, not measured.

    .venv/bin/python bench/bus.py                # 3 and 16 boards, 30 events per board
    .venv/bin/python bench/bus.py --quick        # 3 boards, a few events (CI smoke)
    .venv/bin/python bench/bus.py --boards 3,16 --events 50 --cycle-min 0

Prints figures; never fails on a timing.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
from multiprocessing.connection import Connection

from _figures import percentile
from _pty_emulator import EmulatorProcess, serve_on_pty

from dgt.bus_master import CLOCK_INTERVAL, CYCLE_MIN, BusMaster
from dgt.emulator import EmulatorServer, make_bus
from dgt.events import BoardEvent, SquareChanged
from dgt.protocol import Piece

SQUARE = 12  # e2: lifted and put back, over and over
FIRST_SERIAL = 10001
BYTE_TIME = 10 / 9600
TURNAROUND = 0.002
"""Seconds assumed between a command's last byte and the reply's first on a real line."""


def emulator_process(link: str, pipe: Connection, ready: Connection, count: int) -> None:
    """The boards' side, in its own process: on each address from the pipe, move the
    piece on that board and send back when it was moved."""
    line = make_bus(count, first_serial=FIRST_SERIAL)
    lifted = {b.bus_address: False for b in line.boards}

    def on_request(server: EmulatorServer, address: int) -> None:
        board = line.board(address)

        def step(now: float) -> bytes:
            up = lifted[address]
            lifted[address] = not up
            pipe.send(time.monotonic())  # the change is in the board's memory now
            if up:
                return board.place(SQUARE, Piece.WPAWN, now)
            return board.lift(SQUARE, now)

        server.act(step)

    serve_on_pty(line, link, pipe, ready, on_request)


async def measure(
    count: int, per_board: int, cycle_min: float, seed: int
) -> tuple[dict[int, list[float]], list[float]]:
    """Latencies by address, and the busy time of every poll cycle (seconds)."""
    rng = random.Random(seed)
    with EmulatorProcess(emulator_process, count, prefix="dgt-bus-bench-") as boards:
        path = boards.path
        addresses = list(range(FIRST_SERIAL, FIRST_SERIAL + count))
        bus = BusMaster(path, addresses, cycle_min=cycle_min, reply_timeout=0.25)
        latencies: dict[int, list[float]] = {a: [] for a in addresses}
        loop = asyncio.get_running_loop()
        waiting: dict[int, asyncio.Future[float]] = {}

        def listener(address: int) -> object:
            def on_event(event: BoardEvent) -> None:
                if isinstance(event, SquareChanged) and event.square == SQUARE:
                    future = waiting.pop(address, None)
                    if future is not None and not future.done():
                        future.set_result(time.monotonic())

            return on_event

        try:
            await bus.open()
            for address in addresses:
                bus.board(address).add_listener(listener(address))  # type: ignore[arg-type]
            bus.cycle_times.clear()
            order = [a for _ in range(per_board) for a in addresses]
            rng.shuffle(order)
            for address in order:
                await asyncio.sleep(rng.uniform(0.0, max(2 * cycle_min, 0.02)))
                future: asyncio.Future[float] = loop.create_future()
                waiting[address] = future
                boards.send(address)
                seen = await asyncio.wait_for(future, 30)
                moved = boards.recv()
                latencies[address].append(seen - moved)
            cycles = list(bus.cycle_times)
        finally:
            await bus.close()
        return latencies, cycles


def line_cycle(count: int) -> tuple[float, float]:
    """A real 9600-baud line: one cycle of empty change requests (4 + 6 bytes each), and
    the clock requests (4 + 13 bytes) spread over a second, as a share of it."""
    changes = count * ((4 + 6) * BYTE_TIME + TURNAROUND)
    clocks = count * ((4 + 13) * BYTE_TIME + TURNAROUND) / CLOCK_INTERVAL
    return changes, clocks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 boards, a few events (CI)")
    parser.add_argument("--boards", default=None, help="bus sizes, comma separated (3,16)")
    parser.add_argument("--events", type=int, default=None, help="events per board")
    parser.add_argument("--cycle-min", type=float, default=CYCLE_MIN,
                        help=f"BusMaster cycle_min (default {CYCLE_MIN})")  # fmt: skip
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in (args.boards or ("3" if args.quick else "3,16")).split(",")]
    per_board = args.events or (4 if args.quick else 30)
    ms = 1e3
    print(f"bus line on a pty, python {sys.version.split()[0]}, cycle_min {args.cycle_min} s, "
          f"{per_board} events per board")  # fmt: skip
    for count in sizes:
        latencies, cycles = asyncio.run(measure(count, per_board, args.cycle_min, args.seed))
        every = [v for values in latencies.values() for v in values]
        print(f"{count} boards:")
        cycle_median, cycle_p99 = statistics.median(cycles), percentile(cycles, 0.99)
        print(f"  poll cycle (busy) on the pty: median {cycle_median * ms:.2f} ms   "
              f"p99 {cycle_p99 * ms:.2f} ms   ({len(cycles)} cycles)")  # fmt: skip
        period = max(cycle_median, args.cycle_min)
        print(f"  poll period: {period * ms:.1f} ms (cycle_min {args.cycle_min * ms:.0f} ms)")
        changes, clocks = line_cycle(count)
        print(f"  on a 9600-baud line (computed): cycle {changes * ms:.0f} ms of change "
              f"requests; clock requests take {clocks * 100:.0f} % of the line")  # fmt: skip
        for address, values in latencies.items():
            median, p99 = statistics.median(values), percentile(values, 0.99)
            print(f"  board {address}: latency median {median * ms:.1f} ms   "
                  f"p99 {p99 * ms:.1f} ms   ({len(values)} events)")  # fmt: skip
        median, p99, worst = statistics.median(every), percentile(every, 0.99), max(every)
        print(f"  all boards: latency median {median * ms:.1f} ms   p99 {p99 * ms:.1f} ms   "
              f"max {worst * ms:.1f} ms")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
