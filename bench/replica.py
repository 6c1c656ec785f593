"""How long a read replica takes to come up: by replaying every row, or from a snapshot.

N tables each play a seeded random game (moves made by hand as square events, a clock
press after each, a clock report every second while a player thinks), logged as a hall logs
them (registration, inputs with their outputs, an echo role for board events); the rows are
fed to a :class:`service.scaleout.replica.ReplicaHall` in batches of 500 as the centre hands
them on, but for each table's rows of its last ``--after`` seconds (a round in play: they
come after the snapshot).  Prints the replay's inputs per second, then a snapshot's size,
how long the event loop is held while a forked child writes it, the child's time, and the
come-up: reading and restoring the snapshot (its tables stay frozen), the rows after it
(each table is unpickled at its first) and every table's summary (the overview), for these
tables and, linearly, for 1,000 (the issue's goal: a web process up in under 10 s for
1,000 boards x 6 hours).  Checks that the restored tables, frozen and unpickled, answer as
the replayed ones.  ``--after 0`` (a round over) times the unpickling of every table
apart (``--profile``: under cProfile).

With ``--size N`` the come-up is measured at N tables, not extrapolated: the ``--tables``
played (6 hours each with ``--plies 120 --think 180``) are the models of N tables of the
same content under ids of their own (each frozen table's bytes with the id written in
again, its rows after the snapshot likewise), written as one snapshot; the come-up is
timed in this process as above and, with ``--process``, as a real ``dgt-service
central-web`` on a centre's database holding the rows after the snapshot: from its start
to the pages served.  Checks that every copy answers as its model (under its own id).

    .venv/bin/python bench/replica.py --tables 40 --plies 120 --think 180   # 6 h a table
    .venv/bin/python bench/replica.py --tables 10 --plies 120 --think 180 --size 1000 --process
    .venv/bin/python bench/replica.py --tables 200 --plies 80 --think 20
    .venv/bin/python bench/replica.py --quick
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import math
import os
import pickle
import pstats
import random
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

import chess

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dgt.events import BoardSnapshot, ClockUpdate, LeverMoved, Side, SquareChanged  # noqa: E402
from dgt.protocol.constants import Piece  # noqa: E402
from service.hall import default_table_factory  # noqa: E402
from service.scaleout.central_store import CentralStore  # noqa: E402
from service.scaleout.log_wire import Batch  # noqa: E402
from service.scaleout.replica import (  # noqa: E402
    ZLIB_LEVEL,
    FrozenTable,
    ReplicaHall,
    ReplicaState,
    ReplicaTable,
)
from service.scaleout.rows import REGISTRATION, LogRow  # noqa: E402
from service.scaleout.snapshot import (  # noqa: E402
    coming_up,
    read_snapshot,
    snapshot_bytes,
    write_forked,
    write_snapshot,
)
from service.store import board_input, echo_of, normalise, output_json  # noqa: E402

PIECES = {
    "P": Piece.WPAWN, "R": Piece.WROOK, "N": Piece.WKNIGHT, "B": Piece.WBISHOP,
    "K": Piece.WKING, "Q": Piece.WQUEEN, "p": Piece.BPAWN, "r": Piece.BROOK,
    "n": Piece.BKNIGHT, "b": Piece.BBISHOP, "k": Piece.BKING, "q": Piece.BQUEEN,
}  # fmt: skip


class NoLog:
    """The replica's outputs are read from the centre's database: none kept here."""

    def outputs(
        self, edge_id: str, table_id: str, *, after: int, limit: int
    ) -> list[tuple[int, dict[str, Any]]]:
        return []


def game_rows(table_id: str, seq: int, plies: int, think: int, rnd: random.Random) -> list[LogRow]:
    """The log rows of one table playing a random game (plain moves only)."""
    settings = {"white": f"W{table_id}", "black": f"B{table_id}", "round": "1",
                "rules": "casual", "time_control": "5400+30"}  # fmt: skip
    registration = json.dumps({"board": int(table_id), "settings": settings})
    rows = [LogRow(seq, table_id, REGISTRATION, REGISTRATION, 0.0, registration)]
    table = default_table_factory(table_id, settings)

    def log(kind: str, t: float, data: dict[str, Any], outs: list[dict[str, Any]]) -> None:
        role = "in"
        if outs and kind == "board" and outs[0] == echo_of(t, data):
            role, outs = "echo", outs[1:]
        rows.append(LogRow(seq + len(rows), table_id, role, kind, t, json.dumps(data)))
        for out in outs:
            when = float(out.get("time", t) or t)
            text = json.dumps(out)
            rows.append(LogRow(seq + len(rows), table_id, "out", out["type"], when, text))

    def feed(event: Any) -> None:
        ticks = [output_json(o) for o in table.tick(event.time)]
        if ticks:
            log("tick", event.time, {}, ticks)
        outs = [output_json(o) for o in table.feed(event)]
        log("board", event.time, normalise(board_input(event)), outs)

    board = chess.Board()
    squares = {s: PIECES[p.symbol()] for s, p in board.piece_map().items()}
    t, left, right = 1_000_000.0, 5400.0, 5400.0
    feed(ClockUpdate(t, left, right, False, Side.LEFT))
    feed(BoardSnapshot(t, tuple(squares.get(s, Piece.EMPTY) for s in range(64)), "connect"))
    for _ply in range(plies):
        plain = [
            m for m in board.legal_moves
            if not (m.promotion or board.is_castling(m) or board.is_en_passant(m))
        ]  # fmt: skip
        if not plain or board.is_game_over():
            break
        for _second in range(think):
            t += 1.0
            left, right = (left - 1, right) if board.turn else (left, right - 1)
            feed(ClockUpdate(t, left, right, True, Side.LEFT if board.turn else Side.RIGHT))
        move = rnd.choice(plain)
        piece = squares.pop(move.from_square)
        t += 0.3
        feed(SquareChanged(t, move.from_square, Piece.EMPTY, piece))
        if move.to_square in squares:
            t += 0.1
            feed(SquareChanged(t, move.to_square, Piece.EMPTY, squares.pop(move.to_square)))
        t += 0.3
        squares[move.to_square] = piece
        feed(SquareChanged(t, move.to_square, piece, Piece.EMPTY))
        board.push(move)
        t += 0.2
        feed(LeverMoved(t, Side.LEFT if board.turn else Side.RIGHT))
    return rows


MODEL_IDS = 9000
"""With ``--size``: the played tables are 9001, 9002, ... and their copies 1001, 1002, ...
(ids of one length, so that a copy's pickled bytes are its model's with the id written in
again)."""
COPY_IDS = 1000


def names(model: str, copy: str) -> list[tuple[str, str]]:
    """The strings of a model table written as its copy's (its id, its edge, its players)."""
    return [(f"{p}{model}", f"{p}{copy}") for p in ("", "e", "W", "B")]


def renamed_pickle(data: bytes, pairs: list[tuple[str, str]]) -> bytes:
    """Pickled ``data`` with each string ``old`` of ``pairs`` as ``new`` (of its length)."""
    for old, new in pairs:
        a, b = old.encode(), new.encode()
        assert len(a) == len(b) < 256
        data = data.replace(b"\x8c" + bytes([len(a)]) + a, b"\x8c" + bytes([len(b)]) + b)
    return data


def renamed_text(text: str, pairs: list[tuple[str, str]]) -> str:
    for old, new in pairs:
        text = text.replace(f'"{old}"', f'"{new}"')
    return text


def copied(runner: ReplicaTable, pairs: list[tuple[str, str]]) -> ReplicaTable:
    """A frozen table of a snapshot as another table of the same content."""
    copy: ReplicaTable = pickle.loads(renamed_pickle(pickle.dumps(runner), pairs))
    frozen = copy._frozen  # a bench making a snapshot's tables
    assert frozen is not None
    copy._frozen = FrozenTable(
        zlib.compress(renamed_pickle(zlib.decompress(frozen.table), pairs), ZLIB_LEVEL),
        zlib.compress(renamed_pickle(zlib.decompress(frozen.view), pairs), ZLIB_LEVEL),
    )
    return copy


def at_size(
    args: argparse.Namespace,
    model_snapshot: bytes,
    tails: list[tuple[str, list[LogRow]]],
    played: ReplicaHall,
) -> bool:
    """The come-up of ``args.size`` tables copied from the played ones (see the module
    docstring); whether every copy answers as its model."""
    made = time.perf_counter()
    state: ReplicaState = pickle.loads(model_snapshot)["state"]
    models = sorted(state.runners)
    model_tails = dict(tails)
    runners: dict[str, ReplicaTable] = {}
    last_seq: dict[str, int] = {}
    rows: dict[str, int] = {}
    after: list[tuple[str, list[LogRow]]] = []
    copies: dict[str, str] = {}
    for number in range(1, args.size + 1):
        model = models[(number - 1) % len(models)]
        copy = str(COPY_IDS + number)
        pairs = names(model, copy)
        copies[copy] = model
        runners[copy] = copied(state.runners[model], pairs)
        last_seq[f"e{copy}"] = state.last_seq[f"e{model}"]
        rows[f"e{copy}"] = state.rows[f"e{model}"]
        tail = [
            LogRow(r.seq, copy, r.role, r.kind, r.t, renamed_text(r.data, pairs))
            for r in model_tails.get(model, [])
        ]
        if tail:
            after.append((f"e{copy}", tail))
    whole = ReplicaHall(log=NoLog())
    whole.restore(ReplicaState(runners, last_seq, rows, {}, set(), {}))
    del runners
    with tempfile.TemporaryDirectory() as folder:
        snapshot = Path(folder) / "central.db.snapshot"
        write_snapshot(snapshot, snapshot_bytes(whole))
        del whole
        size = snapshot.stat().st_size
        central = Path(folder) / "central.db"
        store = CentralStore(central)
        store.take(
            [
                (index, Batch(edge, "db", None, tuple(tail)))
                for index, (edge, tail) in enumerate(after, start=1)
            ]
        )
        store.close()
        print(f"{args.size:,} tables copied from {len(models)} ({size / 1e6:.1f} MB snapshot, "
              f"{sum(len(t) for _, t in after):,} rows after it) in "
              f"{time.perf_counter() - made:.1f} s")  # fmt: skip
        gc.collect()
        gc.freeze()
        cpu = time.process_time()
        before = time.perf_counter()
        restored = read_snapshot(snapshot)
        assert restored is not None, "the snapshot could not be read back"
        again = ReplicaHall(log=NoLog())
        again.restore(restored)
        read = time.perf_counter() - before
        with coming_up():  # as a web process comes up
            for edge, tail in after:
                again.on_rows(edge, tail)
        caught_up = time.perf_counter() - before - read
        overview = [again.summary(t) for t in again.table_ids()]
        up = time.perf_counter() - before
        cpu = time.process_time() - cpu
        gc.unfreeze()
        print(f"come-up of {args.size:,} tables in this process: read and restored "
              f"{read:.2f} s, the rows after the snapshot {caught_up:.2f} s, every table's "
              f"summary {up - read - caught_up:.2f} s: {up:.2f} s, {cpu:.2f} s of CPU "
              "(goal < 10 s)")  # fmt: skip
        same = len(overview) == args.size and all(
            json.dumps(again.state(copy))
            == renamed_text(json.dumps(played.state(model)), names(model, copy)).replace(
                f"edge e{model} ",
                f"edge e{copy} ",  # its link status: none yet
            )
            for copy, model in copies.items()
        )
        print(f"every copy answers as its model: {same}")
        if args.process:
            same = come_up_of_a_process(central, snapshot, args.size) and same
    return same


def come_up_of_a_process(central: Path, snapshot: Path, size: int) -> bool:
    """``dgt-service central-web`` on ``central`` and its snapshot: from its start to its
    pages served (its own figure: from the snapshot read to the pages served), and the CPU
    time it took (robust to the machine's other work)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DGT_ADMIN_TOKEN": "replica-bench-token"}
    command = [sys.executable, "-m", "service.cli", "central-web", "--db", str(central),
               "--snapshot", str(snapshot), "--snapshot-every", "0", "--listen", "127.0.0.1:0",
               "--seconds", "1"]  # fmt: skip
    began = time.perf_counter()
    process = subprocess.Popen(command, env=env, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    said = []
    for line in process.stdout:
        said.append(line.rstrip())
        if "to come up" in line:
            wall = time.perf_counter() - began
            print(f"dgt-service central-web: {line.strip()}; {wall:.2f} s from its start "
                  f"(goal < 10 s)")  # fmt: skip
            break
    process.stdout.close()
    _pid, status, usage = os.wait4(process.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    process.returncode = code
    print(f"central-web's CPU time, its come-up and 1 s of serving: "
          f"{usage.ru_utime + usage.ru_stime:.2f} s")  # fmt: skip
    tables = f"({size} tables"
    ok = code == 0 and any(tables in line for line in said)
    if not ok:
        print(f"central-web said (exit status {code}):", *said, sep="\n  ")
    return ok


def edges_of(rows: list[LogRow]) -> list[tuple[str, list[LogRow]]]:
    """``rows`` as batches of each table's edge (``e`` and its id), in order."""
    out: dict[str, list[LogRow]] = {}
    for row in rows:
        out.setdefault(f"e{row.table_id}", []).append(row)
    return list(out.items())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--plies", type=int, default=80)
    parser.add_argument("--think", type=int, default=20, help="clock reports before a move")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--after",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="each table's rows of its last SECONDS come after the snapshot (a round in play; "
        "0: a round over)",
    )
    parser.add_argument(
        "--size",
        type=int,
        default=0,
        metavar="N",
        help="time the come-up of N tables copied from the --tables played (at most 8,999)",
    )
    parser.add_argument(
        "--process",
        action="store_true",
        help="with --size: also time a real 'dgt-service central-web' coming up on them",
    )
    parser.add_argument("--quick", action="store_true", help="a small run (smoke test)")
    parser.add_argument(
        "--profile", action="store_true", help="cProfile the unpickling of every table"
    )
    args = parser.parse_args()
    if args.quick:
        args.tables, args.plies, args.think = 4, 20, 3
    rnd = random.Random(args.seed)
    made = time.perf_counter()
    rows: list[LogRow] = []
    tails: list[tuple[str, list[LogRow]]] = []
    """Each table's rows of its last ``--after`` seconds, fed after the snapshot (each
    table is an edge of its own here, so that they can come later than the other
    tables' rows)."""
    for number in range(1, args.tables + 1):
        table_id = str(number + (MODEL_IDS if args.size else 0))
        table_rows = game_rows(table_id, 0, args.plies, args.think, rnd)
        end = table_rows[-1].t - args.after if args.after > 0 else math.inf
        cut = next((i for i, r in enumerate(table_rows) if i > 0 and r.t > end), len(table_rows))
        while 0 < cut < len(table_rows) and table_rows[cut].role == "out":
            cut -= 1  # the tail begins with an input
        rows += table_rows[:cut]
        tails.append((table_id, table_rows[cut:]))
    started = time.perf_counter()
    replica = ReplicaHall(log=NoLog())
    for first in range(0, len(rows), 500):
        for edge, batch in edges_of(rows[first : first + 500]):
            replica.on_rows(edge, batch)
    replayed = time.perf_counter() - started
    inputs = sum(r.inputs for r in replica.runners.values())
    moves = sum(len(r.table.moves()) for r in replica.runners.values())
    divergences = sum(r.divergences for r in replica.runners.values())
    print(f"{args.tables} tables, {moves:,} moves, {len(rows):,} rows, {inputs:,} inputs "
          f"(logged in {started - made:.1f} s)")  # fmt: skip
    print(f"replay: {replayed:.2f} s, {inputs / replayed:,.0f} inputs/s; divergences {divergences}")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "replica.snapshot"
        before = time.perf_counter()
        pid = write_forked(replica, path)
        held = time.perf_counter() - before
        if pid is not None:
            os.waitpid(pid, 0)
        child = time.perf_counter() - before
        size = path.stat().st_size
        model_snapshot = path.read_bytes()
        gc.collect()
        gc.freeze()  # the collector leaves the rows and the replayed replica (a web process
        # does not hold them) out of its walks while the come-up is timed
        before = time.perf_counter()
        state = read_snapshot(path)
        if state is None:
            print("the snapshot could not be read back")
            return 1
        again = ReplicaHall(log=NoLog())
        again.restore(state)
        restored = time.perf_counter() - before
    before = time.perf_counter()
    after = [(f"e{table_id}", tail) for table_id, tail in tails if tail]
    for edge, tail in after:  # the rows after the snapshot
        again.on_rows(edge, tail)
    caught_up = time.perf_counter() - before
    for edge, tail in after:
        replica.on_rows(edge, tail)
    before = time.perf_counter()
    overview = [again.summary(t) for t in again.table_ids()]  # what the overview reads
    read_all = time.perf_counter() - before
    gc.unfreeze()
    print(f"snapshot: {size / 1e6:.1f} MB, {size / args.tables / 1e3:.1f} kB a table; loop "
          f"held {held * 1000:.1f} ms, the forked child wrote it in {child:.2f} s")  # fmt: skip
    up = restored + caught_up + read_all
    print(f"come-up: read and restored {restored:.2f} s, the rows of the last {args.after:g} s "
          f"({sum(len(t) for _, t in after):,} rows of {len(after)} tables, each unpickled "
          f"at its first) {caught_up:.2f} s, every table's summary {read_all:.2f} s: "
          f"{up:.2f} s ({up / args.tables * 1000:.1f} s for 1,000 tables; "
          "goal < 10 s)")  # fmt: skip
    same = overview == [replica.summary(t) for t in replica.table_ids()] and all(
        json.dumps(again.state(t)) == json.dumps(replica.state(t)) for t in replica.table_ids()
    )
    frozen = sum(r.frozen for r in again.runners.values())
    print(f"restored tables ({frozen} still frozen) answer as the replayed ones: {same}")
    profile = cProfile.Profile() if args.profile else None
    before = time.perf_counter()
    if profile is not None:
        profile.enable()
    still = [runner for runner in again.runners.values() if runner.frozen]
    for runner in still:
        runner.table  # noqa: B018 - a table's next input unpickles it: all of them here
    if profile is not None:
        profile.disable()
    thawed = time.perf_counter() - before
    if still:
        print(f"unpickling a table at its next input: {thawed / len(still) * 1000:.1f} ms "
              f"({thawed:.2f} s for {len(still)}, {thawed / len(still) * 1000:.1f} s "
              f"for 1,000)")  # fmt: skip
    same_after = all(
        json.dumps(again.state(t)) == json.dumps(replica.state(t)) for t in replica.table_ids()
    )
    print(f"unpickled tables answer as the replayed ones: {same_after}")
    if args.size:
        same_after = at_size(args, model_snapshot, tails, replica) and same_after
    if profile is not None:
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(8)
        print(out.getvalue())
    return 0 if same and same_after and divergences == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
