"""Games for the recogniser's replay tests and for ``bench/recognition.py``, and the
physical event streams a seeded human hand makes of them.  (No tests here.)

Sources:

* :func:`lichess_games`: the 100 real lichess games in ``tests/data/`` (lichess database,
  CC0; source in ``tests/data/README.md``);
* :func:`sdist_games`: the PGN files of the PyPI ``chess`` 1.11.2 source distribution
  (standard games and 4 Chess960 engine games; the antichess and crazyhouse games there are
  left out, their rules are not ours), fetched by name with ``pip download`` on first use
  and cached under ``.cache/games/`` (ignored by git, never committed).  A failed download
  raises :class:`GameSourceError` with what to do: a test using it fails, never skips;
* :func:`castling_games`: generated games from every one of the 960 starts, each side
  steering for a castling on a chosen wing, so that every kind of castling occurs (king and
  rook both moving, king only, rook only, king and rook swapping, king onto the rook's
  square, rook onto the king's);
* :func:`special_games`: seeded random games that promote (every kind, both colours),
  take en passant and castle whenever they can.

:func:`stream` turns a game into the board events a virtual board reports while a seeded
human (:mod:`dgt.emulator.human`) plays it, with the extras the model itself does not make:
a capture on a presence-only board where the captured piece is swept off as the mover lands
(the square never reads empty), and takebacks of one or two moves made by hand and replayed.
"""

from __future__ import annotations

import random
import subprocess
import sys
import tarfile
import tempfile
import time
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path

import chess
import chess.pgn

from dgt.emulator.human import Handling, Step, game_steps, setup_steps, squares_of
from dgt.events import BoardEvent, BoardSnapshot, LeverMoved, Side, SquareChanged
from dgt.protocol.constants import Piece
from service.recognize import MoveEvent, Recognizer, RecognizerEvent
from service.recognize.recognizer import SCAN_SLACK
from service.variants import StartPosition, get_variant
from service.variants.standard import squares_of as symbol_map

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
LICHESS = DATA / "lichess-2012-12-31-100.pgn"
CACHE = ROOT / ".cache" / "games"
SDIST = ("chess", "1.11.2")
"""The source distribution whose ``data/pgn/*.pgn`` files are fetched."""
PLAYABLE_VARIANTS = {"": "standard", "standard": "standard", "chess960": "chess960"}


class GameSourceError(RuntimeError):
    """A game source is not available (file missing, download failed)."""


@dataclass(frozen=True)
class Game:
    """A game to replay: its start, its moves, and whether it is played as Chess960."""

    name: str
    fen: str
    moves: tuple[chess.Move, ...]
    variant: str = "standard"

    def board(self) -> chess.Board:
        return chess.Board(self.fen, chess960=self.variant == "chess960")

    def ucis(self) -> list[str]:
        """The moves in UCI as the recogniser writes them (Chess960 castling: king takes
        rook; standard castling: e1g1)."""
        board = self.board()
        result = []
        for move in self.moves:
            result.append(board.uci(move))
            board.push(move)
        return result


# -- real games --------------------------------------------------------------------------


def _read_pgn(path: Path, prefix: str) -> list[Game]:
    games = []
    with path.open(encoding="utf-8-sig") as handle:
        index = 0
        while (game := chess.pgn.read_game(handle)) is not None:
            index += 1
            tag = game.headers.get("Variant", "").lower()
            variant = "chess960" if game.board().chess960 else PLAYABLE_VARIANTS.get(tag)
            if variant is None or game.errors:
                continue
            moves = tuple(game.mainline_moves())
            if chess.Move.null() in moves:  # a null move cannot be made on a board
                moves = moves[: moves.index(chess.Move.null())]
            if not moves:
                continue
            games.append(Game(f"{prefix}#{index}", game.board().fen(), moves, variant))
    return games


@cache
def lichess_games() -> tuple[Game, ...]:
    """The 100 lichess games kept in ``tests/data/``."""
    if not LICHESS.exists():
        raise GameSourceError(
            f"{LICHESS} is missing: it is part of the repository; restore it with "
            "`git checkout -- tests/data`"
        )
    return tuple(_read_pgn(LICHESS, "lichess"))


def fetch_sdist_pgns(cache_dir: Path = CACHE) -> Path:
    """The folder holding the ``data/pgn/*.pgn`` files of the ``chess`` sdist, downloaded
    with pip (by name and version, from the package index) unless cached already."""
    name, version = SDIST
    target = cache_dir / f"{name}-{version}" / "pgn"
    marker = target / ".complete"
    if marker.exists():
        return target
    with tempfile.TemporaryDirectory(prefix="dgt-games-") as tmp:
        command = [
            sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
            "--disable-pip-version-check", "--quiet", f"{name}=={version}", "-d", tmp,
        ]  # fmt: skip
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=300)
        except (OSError, subprocess.TimeoutExpired) as error:
            message = f"could not run pip to fetch {name}=={version}: {error}"
            raise GameSourceError(message) from None
        archives = sorted(Path(tmp).glob(f"{name}-{version}.tar.gz"))
        if done.returncode != 0 or not archives:
            raise GameSourceError(
                f"could not download the {name}=={version} source distribution from the "
                f"package index (needed for its data/pgn games; is the index reachable?): "
                f"{done.stderr.strip()[-500:]}"
            )
        target.mkdir(parents=True, exist_ok=True)
        prefix = f"{name}-{version}/data/pgn/"
        with tarfile.open(archives[0]) as archive:
            for member in archive.getmembers():
                if (
                    member.isfile()
                    and member.name.startswith(prefix)
                    and member.name.endswith(".pgn")
                ):
                    data = archive.extractfile(member)
                    assert data is not None
                    (target / Path(member.name).name).write_bytes(data.read())
    if not any(target.glob("*.pgn")):
        raise GameSourceError(f"the {name}=={version} sdist carried no data/pgn/*.pgn files")
    marker.write_text("ok\n")
    return target


@cache
def sdist_games() -> tuple[Game, ...]:
    """The standard and Chess960 games of the ``chess`` sdist (fetched and cached)."""
    folder = fetch_sdist_pgns()
    games: list[Game] = []
    for path in sorted(folder.glob("*.pgn")):
        games += _read_pgn(path, path.stem)
    return tuple(games)


# -- generated games ---------------------------------------------------------------------


def castling_kind(board: chess.Board, move: chess.Move) -> str | None:
    """How a castling looks on the board: ``"plain"`` (king and rook both move to free
    squares), ``"king-only"``, ``"rook-only"``, ``"swap"``, ``"king-onto-rook"`` (the king
    lands where the rook stood), ``"rook-onto-king"``; None if ``move`` is no castling."""
    if not board.is_castling(move):
        return None
    king_from = move.from_square
    rank = chess.square_rank(king_from)
    kingside = board.is_kingside_castling(move)
    rook_from = move.to_square if board.chess960 else chess.square(7 if kingside else 0, rank)
    king_to = chess.square(6 if kingside else 2, rank)
    rook_to = chess.square(5 if kingside else 3, rank)
    if rook_from == rook_to:
        return "king-only"
    if king_from == king_to:
        return "rook-only"
    if king_to == rook_from and rook_to == king_from:
        return "swap"
    if king_to == rook_from:
        return "king-onto-rook"
    if rook_to == king_from:
        return "rook-onto-king"
    return "plain"


def _steer(board: chess.Board, wing: str | None, rng: random.Random) -> chess.Move:
    """A move of a side that wants to castle on ``wing`` (``"k"``/``"q"``; None: castled
    already): castle as soon as allowed, meanwhile develop the pieces standing between
    king and rooks and never move the king or a rook."""
    if wing is not None:
        for move in board.generate_castling_moves():
            if board.is_kingside_castling(move) == (wing == "k"):
                return move
        back = chess.BB_RANK_1 if board.turn else chess.BB_RANK_8
        movers = board.occupied_co[board.turn] & ~board.kings & ~board.rooks
        quiet = list(board.generate_legal_moves(from_mask=movers))
        develop = [
            m
            for m in quiet
            if chess.BB_SQUARES[m.from_square] & back
            and not chess.BB_SQUARES[m.to_square] & back
            and not board.is_attacked_by(not board.turn, m.to_square)
        ]
        pawns = [m for m in quiet if chess.BB_SQUARES[m.from_square] & board.pawns]
        for pool in (develop, pawns, quiet):
            if pool:
                return rng.choice(pool)
    return rng.choice(list(board.legal_moves))


def castling_game(number: int, wings: tuple[str, str], seed: int, tail: int = 4) -> Game:
    """A game from Chess960 start ``number`` in which White steers for castling on
    ``wings[0]`` and Black on ``wings[1]``; it ends ``tail`` plies after both castled (or
    after 60 plies)."""
    rng = random.Random(seed)
    board = chess.Board.from_chess960_pos(number)
    start = board.fen()
    wanted = {chess.WHITE: wings[0], chess.BLACK: wings[1]}
    castled: dict[chess.Color, bool] = {chess.WHITE: False, chess.BLACK: False}
    moves: list[chess.Move] = []
    after = 0
    while len(moves) < 60 and after < tail and not board.is_game_over():
        turn = board.turn
        move = _steer(board, None if castled[turn] else wanted[turn], rng)
        if board.is_castling(move):
            castled[turn] = True
        moves.append(move)
        board.push(move)
        if all(castled.values()):
            after += 1
    return Game(f"960#{number}{''.join(wings)}", start, tuple(moves), "chess960")


def castling_games(both_wings: bool = True) -> list[Game]:
    """Games from all 960 starts: one with White castling king side and Black queen side,
    and (``both_wings``) one the other way round; without ``both_wings`` the wings
    alternate with the start number."""
    games = []
    for number in range(960):
        pairs = [("k", "q"), ("q", "k")] if both_wings else [("kq", "qk")[number % 2]]
        for pair in pairs:
            games.append(castling_game(number, (pair[0], pair[1]), seed=number * 2 + len(games)))
    return games


def random_game(rng: random.Random, board: chess.Board, plies: int) -> list[chess.Move]:
    """A seeded game that castles, takes en passant and promotes whenever it can (and moves
    pawns often, so that promotions come)."""
    position = board.copy()
    moves: list[chess.Move] = []
    for _ in range(plies):
        legal = list(position.legal_moves)
        if not legal:
            break
        special = [
            m for m in legal if position.is_castling(m) or position.is_en_passant(m) or m.promotion
        ]
        pawns = [m for m in legal if position.piece_type_at(m.from_square) == chess.PAWN]
        if special and rng.random() < 0.8:
            move = rng.choice(special)
        elif pawns and rng.random() < 0.4:
            move = rng.choice(pawns)
        else:
            move = rng.choice(legal)
        moves.append(move)
        position.push(move)
    return moves


def special_games(count: int = 20, seed: int = 7) -> list[Game]:
    """Seeded standard games rich in promotions (all kinds), en passant and castling."""
    rng = random.Random(seed)
    games = []
    for index in range(count):
        board = chess.Board()
        games.append(Game(f"special#{index}", board.fen(), tuple(random_game(rng, board, 120))))
    return games


def all_games(*, quick: bool = False) -> list[Game]:
    """Every source together (``quick``: a few of each)."""
    if quick:
        return [
            *lichess_games()[:3],
            *sdist_games()[:2],
            *[g for g in sdist_games() if g.variant == "chess960"][:1],
            *[castling_game(n, ("k", "q"), n) for n in (0, 518, 959)],
            *special_games(2),
        ]
    return [*lichess_games(), *sdist_games(), *castling_games(), *special_games()]


# -- event streams -----------------------------------------------------------------------


@dataclass
class Stream:
    """The board events of one replayed game.  ``promotions`` maps an event index to the
    promotion kind the player tells the service (on a screen) just before that event: a
    presence-only board cannot see it."""

    game: Game
    events: list[BoardEvent]
    promotions: dict[int, str] = field(default_factory=dict)
    takebacks: int = 0


def _sweep(steps: list[Step], target: int) -> tuple[list[Step], float]:
    """The captured piece swept off as the mover lands: on a presence-only board the target
    square then never changes; the delays of the dropped steps go to the next step (the
    second value: what is left for the next move's first step, the time the hand took to
    land)."""
    result: list[Step] = []
    carried = 0.0
    for step in steps:
        if step.square == target:
            carried += step.delay
            continue
        result.append(Step(step.delay + carried, step.square, step.piece))
        carried = 0.0
    return result, carried


FAST_HANDS = 1 / 3
"""The share of captures that fast hands make in one motion on a presence-only board (the
captured piece swept off, its square never read empty), and the share of captures whose
sliding piece rests on a square of its path first: the default of :func:`stream`."""


def stream(
    game: Game,
    *,
    seed: int,
    handling: Handling,
    presence_only: bool,
    clock: bool,
    sweep: float | None = None,
    rest: float | None = None,
    takeback: float = 0.0,
    rotated: bool = False,
) -> Stream:
    """The events a virtual board reports while a seeded human plays ``game``: a snapshot
    of the start, then square changes (and lever presses when ``clock``).  ``sweep``: the
    chance that a capture on a presence-only board sweeps the captured piece off in one go;
    ``rest``: the chance that the capturing piece, sliding, rests on a square of its path
    first (both :data:`FAST_HANDS` by default on presence-only boards, 0 on the others).
    ``takeback``: the chance, after a move, that the last one or two moves are taken back by
    hand and then made again.  ``rotated``: the board stands turned round (it reports
    square ``63 - s`` for the game's ``s``)."""
    if sweep is None:
        sweep = FAST_HANDS if presence_only else 0.0
    if rest is None:
        rest = FAST_HANDS if presence_only else 0.0
    resting = replace(handling, slide=1.0, slide_rest=1.0)
    rng = random.Random(seed)
    board = game.board()
    squares = squares_of(board, presence_only)
    now = 0.0
    out = Stream(game, [])

    def raw(square: int) -> int:
        return 63 - square if rotated else square

    out.events.append(
        BoardSnapshot(now, tuple(squares.get(raw(s), Piece.EMPTY) for s in range(64)), "connect")
    )

    def play(steps: Sequence[Step]) -> None:
        nonlocal now
        for step in steps:
            now += step.delay
            previous = squares.get(step.square, Piece.EMPTY)
            if step.piece is Piece.EMPTY:
                squares.pop(step.square, None)
            else:
                squares[step.square] = step.piece
            out.events.append(SquareChanged(now, raw(step.square), step.piece, previous))

    position = board.copy()
    history: list[dict[int, Piece]] = [dict(squares)]
    index = 0
    landing = 0.0  # the end of a swept capture: the hand landing, which no sensor saw
    moves = game.moves
    while index < len(moves):
        move = moves[index]
        hand = handling
        if presence_only and rest and position.is_capture(move) and rng.random() < rest:
            hand = resting
        ((_, steps),) = game_steps(position, [move], rng, hand, presence_only)
        if index and rng.random() < handling.quick_reply and steps:
            steps[0] = Step(
                round(rng.uniform(*handling.quick_reply_time), 4), steps[0].square, steps[0].piece
            )
        if landing and steps:
            steps[0] = Step(steps[0].delay + landing, steps[0].square, steps[0].piece)
        landing = 0.0
        if (
            presence_only
            and sweep
            and position.is_capture(move)
            and not position.is_en_passant(move)
            and rng.random() < sweep
        ):
            steps, landing = _sweep(steps, move.to_square)
        if presence_only and move.promotion:
            out.promotions[len(out.events)] = chess.piece_symbol(move.promotion)
        play(steps)
        if clock:
            now += rng.uniform(0.1, 0.6)
            out.events.append(LeverMoved(now, Side.LEFT if position.turn else Side.RIGHT))
        position.push(move)
        index += 1
        history.append(dict(squares))
        if takeback and index < len(moves) and rng.random() < takeback:
            back = min(index, rng.choice((1, 1, 2)))
            now += rng.uniform(*handling.think_time)
            play(setup_steps(squares, history[index - back], rng, handling))
            for _ in range(back):
                position.pop()
                history.pop()
            index -= back
            out.takebacks += 1
    return out


def with_identities(item: Stream, ucis: Sequence[str], read: Sequence[float]) -> Stream | None:
    """The stream a piece-identity board would have sent for the handling of ``item`` (a
    presence-only stream: the same squares emptied and occupied at the same times) had the
    game been ``ucis``, whose move ``j`` (from 0) was read when ``read[j]`` came.

    A lift takes the piece standing there into the hand.  A piece set down during move
    ``j`` (up to ``read[j]``) or after it is the one the game has there after the move if
    the hand holds it or it is lifted soon after (a place reported before its lift: within
    a scan, or before the move was read), else the one the square had before (put back),
    else the last one lifted, else any piece lifted soon after.  A promotion's new piece
    comes from the box (the pawn goes there), unless the pawn is set down first and
    exchanged after.  Once a move was read, the piece it captured leaves the hand.  None if
    no piece fits: no handling of ``ucis`` gives these sensor readings.  (Unrotated streams;
    the told promotion kinds are dropped: the piece set down tells.)"""
    board = item.game.board()
    positions = [board.copy()]
    captured: list[str | None] = []
    for uci in ucis:
        move = chess.Move.from_uci(uci)
        taken = None
        if board.is_capture(move):
            square = move.to_square
            if board.is_en_passant(move):
                square += -8 if board.turn else 8
            piece = board.piece_at(square)
            taken = piece.symbol() if piece else None
        captured.append(taken)
        board.push(move)
        positions.append(board.copy())
    placed = {square: piece.symbol() for square, piece in positions[0].piece_map().items()}
    hand: list[str] = []
    early: set[int] = set()  # squares whose piece was set down before its lift came
    lifted_from: dict[int, str] = {}  # the piece last lifted from each square
    done = 0  # moves read before the event
    events: list[BoardEvent] = []
    for index, event in enumerate(item.events):
        if isinstance(event, BoardSnapshot):
            squares = tuple(
                Piece.from_symbol(placed[square]) if square in placed else Piece.EMPTY
                for square in range(64)
            )
            events.append(BoardSnapshot(event.time, squares, event.reason))
            continue
        if not isinstance(event, SquareChanged):
            events.append(event)
            continue
        square = event.square
        now_done = bisect_left(read, event.time)
        for taken in captured[done:now_done]:
            if taken in hand:
                hand.remove(taken)
        done = max(done, now_done)
        if event.piece is Piece.EMPTY:
            symbol = placed.pop(square, None)
            if symbol is None:
                return None
            lifted_from[square] = symbol
            if square in early:
                early.discard(square)
            else:
                hand.append(symbol)
            events.append(SquareChanged(event.time, square, Piece.EMPTY, Piece.from_symbol(symbol)))
            continue
        ply = min(now_done, len(ucis))
        before, after = positions[ply], positions[min(ply + 1, len(ucis))]
        there, was = after.piece_at(square), before.piece_at(square)
        wanted = there.symbol() if there else None
        reading = read[ply] if ply < len(read) else None  # when the move in progress was read
        # a promotion on the square, being made or just read (the pawn set down first)
        promoting = next(
            (q for q in (ply, ply - 1) if 0 <= q < len(ucis) and _promotes_on(ucis[q], square)),
            None,
        )
        if promoting is not None and promoting < ply and lifted_from.get(square) not in ("P", "p"):
            promoting = None  # not the pawn exchanged: the square's piece was taken since
        new = None if promoting is None else positions[promoting + 1].piece_at(square)
        if promoting is not None and new is not None:
            wanted = new.symbol()
            pawn = "P" if positions[promoting].turn == chess.WHITE else "p"
            later = read[promoting + 1] if promoting + 1 < len(read) else float("inf")
            if promoting < ply or not _lifted_again(item.events, index, square, later):
                # the new piece, from the box; the pawn goes there (from the hand, or as
                # its lift is reported)
                soon = _lifted_soon(item.events, index, reading, placed, early, {pawn})
                if pawn in hand:
                    hand.remove(pawn)
                elif soon is not None:
                    early.add(soon)
                placed[square] = wanted
                events.append(
                    SquareChanged(event.time, square, Piece.from_symbol(wanted), Piece.EMPTY)
                )
                continue
            wanted = pawn  # set down first, exchanged for the new piece after
        kinds = {wanted} - {None}
        soon = _lifted_soon(item.events, index, reading, placed, early, kinds) if kinds else None
        back = was.symbol() if was and new is None and soon is None else None
        if wanted in hand or back in hand:
            symbol = wanted if wanted in hand else back  # type: ignore[assignment]
            hand.reverse()
            hand.remove(symbol)  # the one lifted last
            hand.reverse()
        elif soon is not None:  # set down before its lift was reported
            early.add(soon)
            symbol = placed[soon]
        elif hand:
            symbol = hand.pop()
        else:
            lifted = _lifted_soon(item.events, index, reading, placed, early, set())
            if lifted is None:
                return None
            early.add(lifted)
            symbol = placed[lifted]
        placed[square] = symbol
        events.append(SquareChanged(event.time, square, Piece.from_symbol(symbol), Piece.EMPTY))
    return Stream(item.game, events, {}, item.takebacks)


def read_times(events: Sequence[RecognizerEvent]) -> list[float]:
    """When each move (by ply, from the first) was first read, for :func:`with_identities`."""
    read: dict[int, float] = {}
    for event in events:
        if isinstance(event, MoveEvent) and event.ply not in read:
            read[event.ply] = event.time
    return [read[ply] for ply in sorted(read)]


def _lifted_soon(
    events: Sequence[BoardEvent],
    index: int,
    reading: float | None,
    placed: dict[int, str],
    early: set[int],
    kinds: set[str],
) -> int | None:
    """The square of the first lift soon after ``events[index]`` (within a scan, or the
    lift at ``reading``, the time the move was read) of a piece still standing
    (``placed``), not taken already (``early``) and of one of ``kinds`` (any, if none are
    given)."""
    until = max(events[index].time + SCAN_SLACK, reading or 0.0)
    for later in events[index + 1 :]:
        if later.time > until:
            return None
        if (later.time <= events[index].time + SCAN_SLACK or later.time == reading) and (
            isinstance(later, SquareChanged)
            and later.piece is Piece.EMPTY
            and later.square in placed
            and later.square not in early
            and (not kinds or placed[later.square] in kinds)
        ):
            return later.square
    return None


def _promotes_on(uci: str, square: int) -> bool:
    """Whether the move ``uci`` promotes on ``square``."""
    return len(uci) == 5 and chess.parse_square(uci[2:4]) == square


def _lifted_again(events: Sequence[BoardEvent], index: int, square: int, before: float) -> bool:
    """Whether ``square`` is lifted again after ``events[index]``, before ``before`` and
    before any other square is lifted (the pawn exchanged for the new piece, not taken by
    the opponent's next move)."""
    for later in events[index + 1 :]:
        if later.time >= before:
            return False
        if isinstance(later, SquareChanged) and later.piece is Piece.EMPTY:
            return later.square == square
    return False


BENCH_CHESS960_OFFSET = 116
"""The index of the first Chess960 start's game among the recognition bench's games (every
source: the lichess and sdist games come first)."""


def bench_game(name: str) -> tuple[Game, int]:
    """The recognition bench's game ``name`` (``lichess#88``, ``960#818kq``: as its
    ``--list-wrong`` names them) and its index among the bench's games (every source)."""
    source, _, rest = name.partition("#")
    if source == "960":
        number = int(rest[:-2])
        game = castling_game(number, (rest[-2], rest[-1]), seed=number * 3)
        return game, BENCH_CHESS960_OFFSET + number
    found = lichess_games()
    index = next(i for i, game in enumerate(found) if game.name == name)
    return found[index], index


def bench_stream(game: Game, index: int, seed: int, sweep: float | None) -> Stream:
    """The presence-only stream the recognition bench plays of ``game`` (its index among
    the bench's games) for ``seed`` and the chance ``sweep`` of a swept capture: the seed
    mixed with the index, a clock in every other game (``bench/recognition.py``)."""
    return stream(
        game,
        seed=seed * 100_003 + index,
        handling=Handling.noisy(),
        presence_only=True,
        clock=index % 2 == 0,
        sweep=sweep,
    )


def iter_streams(
    games: Sequence[Game], seeds: Sequence[int], **options: object
) -> Iterator[Stream]:
    """Streams of every game for every seed (the seed mixed with the game's index)."""
    for seed in seeds:
        for index, game in enumerate(games):
            yield stream(game, seed=seed * 100_003 + index, **options)  # type: ignore[arg-type]


# -- through the recogniser --------------------------------------------------------------


@dataclass
class Recognised:
    """What the recogniser made of a stream: the completed moves in UCI, the cost of each
    board event (seconds, ``tick`` and ``feed`` together) and every emitted event."""

    ucis: list[str]
    costs: list[float]
    events: list[RecognizerEvent]


def recognise(
    item: Stream, *, timed: bool = False, clock: Callable[[], float] = time.perf_counter
) -> Recognised:
    """Feed a stream to a fresh :class:`Recognizer` as a service would: ``tick`` at each
    event's time, then the event; the promotion kind told before a promotion on a
    presence-only board; at the end, a pause of 5 s and :meth:`Recognizer.finish`.
    ``timed``: measure each board event with ``clock`` (e.g. ``time.thread_time`` for the
    CPU time alone, unaffected by other processes on a shared machine)."""
    game = item.game
    first = item.events[0]
    presence = any(
        isinstance(e, SquareChanged | BoardSnapshot) and Piece.OCCUPIED in _pieces(e)
        for e in item.events[:1]
    )
    recognizer = Recognizer(variant=game.variant, presence_only=presence)
    out: list[RecognizerEvent] = []
    costs: list[float] = []
    out += recognizer.feed(first)
    if recognizer.game is None or recognizer.game.start.fen != game.fen:
        # a presence-only board cannot tell one Chess960 start from another: say which
        start = next(
            (s for s in get_variant(game.variant).start_positions() if s.fen == game.fen), None
        ) or StartPosition(game.variant, game.fen, symbol_map(game.board()))
        out += recognizer.start_game(first.time, start)
    for index, event in enumerate(item.events[1:], start=1):
        kind = item.promotions.get(index)
        if kind is not None:
            recognizer.set_promotion(kind)
        if timed:
            started = clock()
            out += recognizer.tick(event.time)
            out += recognizer.feed(event)
            costs.append(clock() - started)
        else:
            out += recognizer.tick(event.time)
            out += recognizer.feed(event)
    end = item.events[-1].time + 5.0
    out += recognizer.tick(end)
    out += recognizer.finish(end)
    record = recognizer.record()
    ucis = [] if record is None else [m.uci for m in record.final_moves]
    return Recognised(ucis, costs, out)


def _pieces(event: BoardEvent) -> tuple[Piece, ...]:
    if isinstance(event, BoardSnapshot):
        return event.squares
    if isinstance(event, SquareChanged):
        return (event.piece,)
    return ()


def sample_positions(
    games: int, every: int, seed: str, random_games: int, longest: int
) -> list[chess.Board]:
    """Positions to test a move-generation shortcut on: every ``every``-th ply of the first
    ``games`` lichess games, then every ply of ``random_games`` random Chess960 games of 20
    to ``longest`` plies drawn from ``seed`` (checks, pins, promotions, castling and en
    passant among them)."""
    boards = []
    with LICHESS.open(encoding="utf-8") as handle:
        for _ in range(games):
            game = chess.pgn.read_game(handle)
            assert game is not None
            board = game.board()
            for ply, move in enumerate(game.mainline_moves()):
                board.push(move)
                if ply % every == 0:
                    boards.append(board.copy(stack=False))
    rng = random.Random(seed)
    for _ in range(random_games):
        board = chess.Board.from_chess960_pos(rng.randrange(960))
        for _ply in range(rng.randrange(20, longest)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
            boards.append(board.copy(stack=False))
    return boards
