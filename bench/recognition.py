"""Move recognition figures: replayed games through the recogniser and through the usual
approach of existing tools, side by side, and the recogniser's cost per board event.

Every game of the replay harness (``tests/games.py``: the 100 lichess games in
``tests/data/``, the standard and Chess960 games of the ``chess`` 1.11.2 sdist, generated
games from all 960 starts steering for every kind of castling, generated games with promotions,
under-promotions and en passant) is played by the seeded human model
(``dgt.emulator.human``, noisy handling: slides, hesitations, knocked pieces, bounces,
place-before-lift, quick replies, jitter; on presence-only boards also fast hands: a third of
captures swept off in one motion, a third of capturing slides resting on their path) for each
seed and each board family (piece identity, presence only), half of the games with a clock
pressed after each move.  The event stream goes through

* ``service.recognize.Recognizer`` (timed: ``tick`` + ``feed`` per board event), and
* the usual approach (:func:`stable_board_moves`): wait until the board has not changed for
  a settle time, then compare it with the position after each legal move, accept the first
  that matches, no takebacks.

Prints per family and approach: games, moves, games reproduced exactly, phantom moves
(recognised but not played) and missed moves (played but not recognised) -- a move read
wrong counts once in each --, the moves matched (read right up to the first wrong one) and
the games that lost their way (the game read ends on another board than the game played: the
reading stopped following the board; goal 0), and, for the recogniser, ``offered``: the
games read wrong where every move read wrong named the move played among its alternatives
(the moves the board read the same, ``MoveEvent.alternatives``), so that a screen showed it
and one correction per such move makes the game exact, and (presence only)
``indistinguishable``: the games read wrong whose sensor readings are also those of a
handling of the game read -- proved by building that handling (``tests/games.py``:
``with_identities``, the same readings with the pieces of the game read) and reading it
right with a piece-identity board -- which no recogniser can tell from the game played; then
the recogniser's cost per board event, p50 and p99: the CPU time of the thread
(``time.thread_time``; ``--wall``: wall-clock time), each event's cost being the least of
``--repeat`` runs of the same stream (3 by default: the interruptions of a shared machine
are not the recogniser's cost; ``--repeat 1`` times each event once). The same figures
follow per board family. ``--profile N``: afterwards, one more pass of the first seed's
streams under ``cProfile``, untimed, printing the N functions with the most time of their
own and the N with the most time inclusive of what they call. Goals: every game exact, 0
phantom, 0 missed, p99 under 200 us. Exit status 1 only if a run raises; the figures never
fail it.

    .venv/bin/python bench/recognition.py             # all games, 5 seeds (long: minutes)
    .venv/bin/python bench/recognition.py --quick     # a few games, 1 seed (CI smoke run)
    .venv/bin/python bench/recognition.py --seeds 1 --sources lichess,sdist
    .venv/bin/python bench/recognition.py --quick --profile 25
    .venv/bin/python bench/recognition.py --sources 960 --games 960#283qk --family presence
"""

from __future__ import annotations

import argparse
import cProfile
import difflib
import io
import pstats
import statistics
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import chess

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from games import (  # noqa: E402  (the harness lives with the tests)
    Game,
    Stream,
    castling_game,
    castling_games,
    lichess_games,
    read_times,
    recognise,
    sdist_games,
    special_games,
    stream,
    with_identities,
)

from dgt.emulator.human import Handling  # noqa: E402
from dgt.events import BoardSnapshot, SquareChanged  # noqa: E402
from dgt.protocol.constants import Piece  # noqa: E402
from service.collector_pacer import CollectorPacer  # noqa: E402
from service.recognize import MoveEvent  # noqa: E402

BASELINE_SETTLE = 0.3
"""Seconds without a change before the usual approach looks at the board (existing hosts
use 0.25 to 0.5 s)."""
P99_GOAL_US = 200.0


def stable_board_moves(item: Stream, settle: float = BASELINE_SETTLE) -> list[str]:
    """The usual approach of existing tools, faithfully: keep the board as reported; once
    it has not changed for ``settle`` seconds, compare it with the position after each
    legal move (piece-identity boards: the piece on every square; presence-only boards:
    occupancy) and accept the first that matches; no takebacks, no amendments.  The
    promotion piece a presence-only player told (on a screen) is tried first, as such
    tools ask for it."""
    position = item.game.board()
    board: list[Piece] = [Piece.EMPTY] * 64
    presence = False
    moves: list[str] = []
    changed_at = 0.0
    pending = False

    def reading(piece: Piece) -> object:
        return piece is not Piece.EMPTY if presence else piece

    def expected(pos: chess.Board) -> list[object]:
        out: list[object] = [False if presence else Piece.EMPTY] * 64
        for square, piece in pos.piece_map().items():
            out[square] = True if presence else _CODES[piece.symbol()]
        return out

    def look() -> None:
        current = [reading(p) for p in board]
        if current == expected(position):
            return
        legal = list(position.legal_moves)
        kind = told.get("kind")
        legal.sort(key=lambda m: m.promotion is not None and m.promotion != kind)
        for move in legal:
            position.push(move)
            if current == expected(position):
                moves.append(uci_board.uci(move))
                uci_board.push(move)
                return
            position.pop()

    uci_board = item.game.board()
    told: dict[str, int] = {}
    for index, event in enumerate(item.events):
        if pending and event.time - changed_at >= settle:
            look()
            pending = False
        if index in item.promotions:
            told["kind"] = chess.PIECE_SYMBOLS.index(item.promotions[index])
        if isinstance(event, BoardSnapshot):
            board = list(event.squares)
            presence = Piece.OCCUPIED in board
        elif isinstance(event, SquareChanged):
            board[event.square] = event.piece
        else:
            continue
        changed_at, pending = event.time, True
    if pending:
        look()
    return moves


_CODES = {
    "P": Piece.WPAWN, "R": Piece.WROOK, "N": Piece.WKNIGHT, "B": Piece.WBISHOP,
    "Q": Piece.WQUEEN, "K": Piece.WKING, "p": Piece.BPAWN, "r": Piece.BROOK,
    "n": Piece.BKNIGHT, "b": Piece.BBISHOP, "q": Piece.BQUEEN, "k": Piece.BKING,
}  # fmt: skip


@dataclass
class Tally:
    """Figures of one approach on one board family."""

    games: int = 0
    moves: int = 0
    exact: int = 0
    phantom: int = 0
    missed: int = 0
    offered: int = 0
    matched: int = 0  # moves read right before the first one read wrong
    lost: int = 0  # games whose read game ends where the board does not (lost their way)
    indistinguishable: int = 0
    relabelled: int = 0  # games read exactly, relabelled with their own moves (--check-relabel)
    relabelled_right: int = 0  # of them, read the same on a piece-identity board
    wrong: list[str] = field(default_factory=list)
    lost_games: list[str] = field(default_factory=list)

    def merge(self, other: Tally) -> None:
        self.games += other.games
        self.moves += other.moves
        self.exact += other.exact
        self.phantom += other.phantom
        self.missed += other.missed
        self.offered += other.offered
        self.matched += other.matched
        self.lost += other.lost
        self.indistinguishable += other.indistinguishable
        self.relabelled += other.relabelled
        self.relabelled_right += other.relabelled_right
        self.wrong += other.wrong
        self.lost_games += other.lost_games

    def add(
        self,
        name: str,
        expected: Sequence[str],
        got: Sequence[str],
        alternatives: Mapping[int, frozenset[str]] | None = None,
        lost: bool = False,
    ) -> None:
        """One game: ``alternatives`` are the UCI of the moves each ply's completed move
        event named as read the same (by ply, from 1); ``lost``: the game read ends on
        another board than the game played (:func:`lost_its_way`)."""
        self.games += 1
        self.moves += len(expected)
        self.lost += lost
        if lost:
            self.lost_games.append(name)
        if list(got) == list(expected):
            self.exact += 1
            self.matched += len(expected)
            return
        pairs = zip([*expected, None], [*got, None], strict=False)
        self.matched += next(n for n, (want, read) in enumerate(pairs) if want != read)
        self.wrong.append(name)
        if alternatives is not None and len(got) == len(expected):
            plies = enumerate(zip(expected, got, strict=True), 1)
            if all(want in alternatives.get(n, ()) for n, (want, read) in plies if want != read):
                self.offered += 1
        matcher = difflib.SequenceMatcher(a=list(expected), b=list(got), autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag != "equal":
                self.missed += i2 - i1
                self.phantom += j2 - j1


def lost_its_way(game: Game, got: Sequence[str], presence: bool) -> bool:
    """Whether the game read from ``game``'s stream ends on another board than the game
    played: what the board shows at the end (occupancy on a presence-only board, the pieces
    on a piece-identity board) is not the read game's final position, so the reading stopped
    following the board somewhere.  (A capture read on the wrong piece with the same
    occupancy has not lost its way: it is a move read wrong.)"""
    played, read = game.board(), game.board()
    for move in game.moves:
        played.push(move)
    try:
        for uci in got:
            read.push_uci(uci)
    except ValueError:
        return True
    if presence:
        return played.occupied != read.occupied
    return played.board_fen() != read.board_fen()


def select_games(sources: Sequence[str], quick: bool, both_wings: bool = False) -> list[Game]:
    games: list[Game] = []
    for source in sources:
        if source == "lichess":
            games += lichess_games()[:3] if quick else lichess_games()
        elif source == "sdist":
            found = sdist_games()
            games += [*found[:2], *[g for g in found if g.variant == "chess960"][:1]] if quick \
                else found  # fmt: skip
        elif source == "960":
            games += [castling_game(n, ("k", "q"), n) for n in (0, 518, 959)] if quick \
                else castling_games(both_wings)  # fmt: skip
        elif source == "special":
            games += special_games(2 if quick else 20)
        else:
            raise SystemExit(f"unknown source {source!r}: use lichess, sdist, 960, special")
    return games


def _streams(
    presence: bool,
    seed: int,
    sources: str,
    quick: bool,
    both_wings: bool,
    hands: tuple[float | None, float | None],
    takeback: float,
    only: frozenset[str] = frozenset(),
) -> Iterator[tuple[Game, Stream]]:
    """The event streams of one board family and one seed, one per game (made one at a
    time: a full run has many).  ``hands``: the chances of a swept capture and of a resting
    slide before a capture (None: the harness's default, a third on presence-only boards);
    ``only``: the names of the games to play (none: all), each with the seed and clock it
    has among all the games of ``sources``."""
    games = select_games(sources.split(","), quick, both_wings)
    for index, game in enumerate(games):
        if only and game.name not in only:
            continue
        yield (
            game,
            stream(
                game,
                seed=seed * 100_003 + index,
                handling=Handling.noisy(),
                presence_only=presence,
                clock=index % 2 == 0,
                sweep=hands[0],
                rest=hands[1],
                takeback=takeback,
            ),
        )


def profile(args: argparse.Namespace, top: int) -> str:
    """The report of one untimed pass of the first seed's streams (both families) under
    ``cProfile``: the ``top`` functions by own time, then by inclusive time."""
    hands = (args.sweep, args.rest)
    options = (args.sources, args.quick, args.both_wings, hands, args.takeback, _only(args))
    profiler = cProfile.Profile()
    for presence in _families(args):
        for _, item in _streams(presence, args.seed, *options):
            profiler.enable()
            recognise(item)
            profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out).strip_dirs()
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return out.getvalue()


def _run(
    job: tuple[
        bool,
        int,
        str,
        bool,
        bool,
        float,
        tuple[float | None, float | None],
        float,
        bool,
        int,
        bool,
        frozenset[str],
        str,
    ],
) -> tuple[Tally, Tally, list[float]]:
    """One board family and one seed over every game: both approaches' tallies and the
    recogniser's costs per board event (each the least of ``repeat`` runs of the stream
    through a fresh recogniser)."""
    (
        presence, seed, sources, quick, both_wings, settle, hands, takeback, wall, repeat, check,
        only, collector,
    ) = job  # fmt: skip
    if collector == "paced":
        CollectorPacer.start()
    try:
        return _run_paced(
            presence, seed, sources, quick, both_wings, settle, hands, takeback, wall, repeat,
            check, only,
        )  # fmt: skip
    finally:
        if collector == "paced":
            CollectorPacer.stop()


def _run_paced(
    presence: bool,
    seed: int,
    sources: str,
    quick: bool,
    both_wings: bool,
    settle: float,
    hands: tuple[float | None, float | None],
    takeback: float,
    wall: bool,
    repeat: int,
    check: bool,
    only: frozenset[str],
) -> tuple[Tally, Tally, list[float]]:
    """:func:`_run` with the cycle collector as asked."""
    clock = time.perf_counter if wall else time.thread_time
    ours, usual = Tally(), Tally()
    costs: list[float] = []
    streams = _streams(presence, seed, sources, quick, both_wings, hands, takeback, only)
    for game, item in streams:
        expected = game.ucis()
        result = recognise(item, timed=True, clock=clock)
        offered = {
            e.ply: frozenset(uci for uci, _ in e.alternatives)
            for e in result.events
            if isinstance(e, MoveEvent) and e.final
        }
        least = result.costs
        for _ in range(repeat - 1):
            least = list(map(min, least, recognise(item, timed=True, clock=clock).costs))
        costs += least
        name = f"{game.name}/seed{seed}"
        ours.add(name, expected, result.ucis, offered, lost_its_way(game, result.ucis, presence))
        if presence and (check or result.ucis != expected):
            # the proof that no recogniser could tell: the same sensor readings are a
            # handling of the game read, which a piece-identity board reads so
            labelled = with_identities(item, result.ucis, read_times(result.events))
            same = labelled is not None and recognise(labelled).ucis == result.ucis
            if result.ucis != expected:
                ours.indistinguishable += same
            else:
                ours.relabelled += 1
                ours.relabelled_right += same
        theirs = stable_board_moves(item, settle)
        usual.add(name, expected, theirs, lost=lost_its_way(game, theirs, presence))
    return ours, usual, costs


def _only(args: argparse.Namespace) -> frozenset[str]:
    """The game names of ``--games`` (none: every game)."""
    return frozenset(name for name in args.games.split(",") if name)


def _families(args: argparse.Namespace) -> tuple[bool, ...]:
    """The board families of ``--family`` (True: presence only)."""
    return {"both": (False, True), "identity": (False,), "presence": (True,)}[args.family]


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a few games, 1 seed")
    parser.add_argument("--seeds", type=int, default=5, help="noise seeds (default 5)")
    parser.add_argument("--seed", type=int, default=1, help="first seed (default 1)")
    parser.add_argument("--sources", default="lichess,sdist,960,special")
    parser.add_argument(
        "--settle", type=float, default=BASELINE_SETTLE,
        help="the usual approach's settle time (default %(default)s s)",
    )  # fmt: skip
    parser.add_argument(
        "--sweep", type=float, default=None,
        help="presence-only: chance a capture sweeps the captured piece off (default: a third)",
    )  # fmt: skip
    parser.add_argument(
        "--rest", type=float, default=None,
        help="presence-only: chance a capturing piece rests on a square of its slide first "
        "(default: a third)",
    )  # fmt: skip
    parser.add_argument("--takeback", type=float, default=0.0,
                        help="chance of a takeback of one or two moves after a move")  # fmt: skip
    parser.add_argument("--both-wings", action="store_true",
                        help="two castling games per Chess960 start instead of one")  # fmt: skip
    parser.add_argument("--jobs", type=int, default=1, help="processes (default 1)")
    parser.add_argument(
        "--repeat", type=int, default=3,
        help="runs of each stream; an event's cost is the least (default %(default)s)",
    )  # fmt: skip
    parser.add_argument("--wall", action="store_true",
                        help="time board events by the wall clock, not CPU time")  # fmt: skip
    parser.add_argument(
        "--list-wrong", action="store_true",
        help="name the games read wrong (and those the recogniser read that lost their way)",
    )  # fmt: skip
    parser.add_argument(
        "--check-relabel", action="store_true",
        help="also give the pieces to every presence-only game read exactly and read it "
        "again (how often the indistinguishable proof can work)",
    )  # fmt: skip
    parser.add_argument(
        "--games", default="", metavar="NAME,...",
        help="only these games (as --list-wrong names them, without /seed), each with the seed "
        "and clock it has among the games of --sources",
    )  # fmt: skip
    parser.add_argument("--family", choices=("both", "identity", "presence"), default="both",
                        help="the board families to run (default both)")  # fmt: skip
    parser.add_argument(
        "--collector", choices=("paced", "unpaced"), default="paced",
        help="the cycle collector as the service runs it (paced, the default: "
        "service.collector_pacer, each collection walking only what was made since the last) "
        "or as Python has it (a middle-generation collection then walks every recogniser of "
        "the run, charged to the board event it lands in)",
    )  # fmt: skip
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="then profile one pass, printing the top N functions")  # fmt: skip
    args = parser.parse_args(argv)
    seeds = [args.seed] if args.quick else list(range(args.seed, args.seed + args.seeds))
    games = select_games(args.sources.split(","), args.quick, args.both_wings)
    only = _only(args)
    if only:
        games = [game for game in games if game.name in only]
        missing = only - {game.name for game in games}
        if missing:
            raise SystemExit(f"no game {', '.join(sorted(missing))} in --sources {args.sources}")
    started = time.perf_counter()
    costs: list[float] = []
    print(f"games per run: {len(games)}, seeds: {len(seeds)}, handling: noisy, "
          f"usual approach settle: {args.settle} s; cycle collector {args.collector}")  # fmt: skip
    jobs = [(presence, seed) for presence in _families(args) for seed in seeds]
    options = (
        args.sources, args.quick, args.both_wings, args.settle, (args.sweep, args.rest),
        args.takeback,
        args.wall, max(1, args.repeat), args.check_relabel, _only(args), args.collector,
    )  # fmt: skip
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as pool:
            results = list(pool.map(_run, [(*job, *options) for job in jobs]))
    else:
        results = [_run((*job, *options)) for job in jobs]
    by_family: dict[str, list[float]] = {}
    for presence in _families(args):
        family = "presence-only" if presence else "piece-identity"
        ours, usual = Tally(), Tally()
        family_costs = by_family[family] = []
        for (job_presence, _), (our, their, timed) in zip(jobs, results, strict=True):
            if job_presence == presence:
                ours.merge(our)
                usual.merge(their)
                family_costs += timed
        costs += family_costs
        for label, tally in (("recogniser", ours), ("usual approach", usual)):
            offered = (
                f" offered: {tally.offered}"
                + (f" indistinguishable: {tally.indistinguishable}" if presence else "")
                if tally is ours
                else ""
            )
            print(
                f"{family} {label}: games: {tally.games} moves: {tally.moves} "
                f"exact: {tally.exact} phantom: {tally.phantom} missed: {tally.missed}{offered}"
            )
            print(
                f"  {family} {label}: moves matched (up to the first wrong one): "
                f"{tally.matched} of {tally.moves}, games that lost their way: {tally.lost}"
                + (" (goal 0)" if tally is ours else "")
            )
            if args.list_wrong and tally.wrong:
                print(f"  read wrong: {' '.join(tally.wrong[:40])}")
            if args.list_wrong and tally.lost_games and tally is ours:
                print(f"  lost their way: {' '.join(tally.lost_games[:40])}")
            if tally.relabelled:
                print(f"  games read exactly, given pieces (with_identities) and read again on a "
                      f"piece-identity board: {tally.relabelled_right} of {tally.relabelled} "
                      "read the same")  # fmt: skip
    micro = [c * 1e6 for c in costs]
    clock = "wall clock" if args.wall else "CPU time"
    print(f"board events timed: {len(micro)} ({clock}, least of {max(1, args.repeat)} runs)")
    print(f"cost per board event p50: {statistics.median(micro):.1f} us")
    p99 = percentile(micro, 0.99)
    print(f"cost per board event p99: {p99:.1f} us (goal < {P99_GOAL_US:.0f} us)")
    for family, family_costs in by_family.items():
        if family_costs:
            figures = [c * 1e6 for c in family_costs]
            print(
                f"  {family}: p50 {statistics.median(figures):.1f} us, "
                f"p90 {percentile(figures, 0.9):.1f} us, p99 {percentile(figures, 0.99):.1f} us, "
                f"max {max(figures):.1f} us"
            )
    print(f"elapsed: {time.perf_counter() - started:.1f} s")
    if args.profile > 0:
        print(profile(args, args.profile))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
