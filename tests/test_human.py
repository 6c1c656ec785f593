"""Tests of the seeded human move model (``dgt.emulator.human``).

The central property: the steps of every move, applied to the square map before the move,
give the square map after it, on both board families, tidy and noisy.  The games are
seeded random legal play biased towards castling, en passant and promotion, from the
classical start and from all 960 Chess960 starts.
"""

from __future__ import annotations

import functools
import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import fields, replace

import chess
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dgt.emulator.human import (
    Handling,
    Step,
    apply_steps,
    game_steps,
    move_steps,
    piece_code,
    setup_steps,
    squares_of,
    timeline,
)
from dgt.protocol.constants import Piece

FAST = replace(Handling(), think_time=(0.05, 0.2))
TIDY = replace(Handling.tidy(), think_time=(0.05, 0.2))
NOISY = replace(Handling.noisy(), think_time=(0.05, 0.2))
HANDLINGS = {"default": FAST, "tidy": TIDY, "noisy": NOISY}
NOISE_KNOBS = (
    "slide",
    "hesitate",
    "adjust",
    "knock_over",
    "bounce",
    "place_before_lift",
    "quick_reply",
    "jitter",
)


# -- helpers ------------------------------------------------------------------------------


def _weight(board: chess.Board, move: chess.Move) -> int:
    if board.pawns & chess.BB_SQUARES[move.from_square]:
        return 60 if move.promotion or board.is_en_passant(move) else 4
    if board.kings & chess.BB_SQUARES[move.from_square] and board.is_castling(move):
        return 60
    return 1


def biased_game(board: chess.Board, rng: random.Random, plies: int) -> list[chess.Move]:
    """Random legal play that takes castling, en passant and promotions (any piece)
    whenever it can, and pushes pawns, so that games reach all of them."""
    position = board.copy(stack=False)
    moves: list[chess.Move] = []
    for _ in range(plies):
        legal = list(position.legal_moves)
        if not legal:
            break
        move = rng.choices(legal, [_weight(position, m) for m in legal])[0]
        moves.append(move)
        position.push(move)
    return moves


@functools.cache
def standard_games() -> tuple[tuple[int, tuple[chess.Move, ...]], ...]:
    """(seed, moves) of seeded biased games from the classical start."""
    board = chess.Board()
    return tuple((seed, tuple(biased_game(board, random.Random(seed), 120))) for seed in range(20))


def check_move(
    board: chess.Board, move: chess.Move, steps: list[Step], presence_only: bool
) -> None:
    """The steps are physically possible and turn the position before into the one after:
    every step changes its square, and no piece is set down that was not picked up (but
    for a promotion or a drop; a piece may show on its new square just before its lift)."""
    squares = squares_of(board, presence_only)
    hand: Counter[Piece] = Counter()
    from_box = move.promotion is not None or move.drop is not None
    for step in steps:
        assert step.delay >= 0.0
        assert 0 <= step.square < 64
        before = squares.get(step.square, Piece.EMPTY)
        assert before is not step.piece, f"{move} {step}: no change"
        if presence_only:
            assert step.piece in (Piece.EMPTY, Piece.OCCUPIED)
        if before is not Piece.EMPTY:
            hand[before] += 1
        if step.piece is Piece.EMPTY:
            del squares[step.square]
        else:
            hand[step.piece] -= 1
            assert from_box or hand[step.piece] >= -1, f"{move}: {step.piece!r} from nowhere"
            squares[step.square] = step.piece
    assert from_box or min(hand.values(), default=0) >= 0, f"{move}: a piece from nowhere"
    after = board.copy(stack=False)
    after.push(move)
    assert squares == squares_of(after, presence_only), f"{board.fen()} {move}"


def play(
    board: chess.Board, moves: list[chess.Move], seed: int, handling: Handling, presence_only: bool
) -> None:
    """Generate a game's steps and check every move."""
    position = board.copy(stack=False)
    for index, steps in game_steps(board, moves, random.Random(seed), handling, presence_only):
        check_move(position, moves[index], steps, presence_only)
        position.push(moves[index])


def moves_of(
    board: chess.Board, seeds: range, plies: int
) -> Iterator[tuple[chess.Board, chess.Move]]:
    """(position, move) for every move of seeded biased games from ``board``."""
    for seed in seeds:
        position = board.copy(stack=False)
        for move in biased_game(board, random.Random(seed), plies):
            yield position.copy(stack=False), move
            position.push(move)


def uci(text: str) -> chess.Move:
    return chess.Move.from_uci(text)


def names(steps: list[Step]) -> list[tuple[str, str]]:
    return [(chess.square_name(s.square), s.piece.symbol) for s in steps]


# -- square maps ------------------------------------------------------------------------------


def test_squares_of_start_position() -> None:
    squares = squares_of(chess.Board())
    assert len(squares) == 32
    assert squares[chess.E1] is Piece.WKING
    assert squares[chess.D8] is Piece.BQUEEN
    assert squares[chess.B1] is Piece.WKNIGHT
    assert set(squares_of(chess.Board(), presence_only=True).values()) == {Piece.OCCUPIED}


def test_piece_code_covers_every_piece() -> None:
    codes = {piece_code(chess.Piece(t, c)) for t in chess.PIECE_TYPES for c in chess.COLORS}
    assert codes == {p for p in Piece if p.is_chessman}
    for t in chess.PIECE_TYPES:
        assert piece_code(chess.Piece(t, chess.WHITE)).symbol == chess.piece_symbol(t).upper()


def test_apply_steps_does_not_change_its_input() -> None:
    squares = {chess.E2: Piece.WPAWN}
    result = apply_steps(
        squares, [Step(0.1, chess.E2, Piece.EMPTY), Step(0.5, chess.E4, Piece.WPAWN)]
    )
    assert result == {chess.E4: Piece.WPAWN}
    assert squares == {chess.E2: Piece.WPAWN}


def test_timeline_adds_up_delays() -> None:
    steps = [Step(1.0, 12, Piece.EMPTY), Step(0.5, 28, Piece.WPAWN)]
    assert [t for t, _ in timeline(steps, start=10.0)] == [11.0, 11.5]


# -- the invariant -----------------------------------------------------------------------------


def test_generated_games_reach_every_move_kind() -> None:
    kinds: Counter[str] = Counter()
    for _, moves in standard_games():
        board = chess.Board()
        for move in moves:
            if board.is_castling(move):
                kinds["O-O" if board.is_kingside_castling(move) else "O-O-O"] += 1
            kinds["en passant"] += board.is_en_passant(move)
            if move.promotion:
                kinds[chess.piece_name(move.promotion)] += 1
                kinds["capturing promotion"] += board.is_capture(move)
            board.push(move)
    assert set(kinds) >= {
        "O-O",
        "O-O-O",
        "en passant",
        "queen",
        "rook",
        "bishop",
        "knight",
        "capturing promotion",
    }, kinds


@pytest.mark.parametrize("presence_only", [False, True])
@pytest.mark.parametrize("name", sorted(HANDLINGS))
def test_standard_games_replay_faithfully(name: str, presence_only: bool) -> None:
    handling = HANDLINGS[name]
    for seed, moves in standard_games():
        play(chess.Board(), list(moves), seed, handling, presence_only)


@pytest.mark.slow
def test_every_chess960_start_replays_faithfully() -> None:
    kinds: Counter[str] = Counter()
    for number in range(960):
        board = chess.Board.from_chess960_pos(number)
        moves = biased_game(board, random.Random(number), 12)
        position = board.copy(stack=False)
        for move in moves:
            kinds["castling" if position.is_castling(move) else "other"] += 1
            kinds["en passant"] += position.is_en_passant(move)
            kinds["promotion"] += move.promotion is not None
            position.push(move)
        handling = (TIDY, FAST, NOISY)[number % 3]
        play(board, moves, number, handling, presence_only=number % 2 == 1)
    assert kinds["castling"] >= 100, kinds  # promotions: see the classical games
    assert kinds["en passant"] >= 10, kinds


def _castling_positions() -> Iterator[chess.Board]:
    """Every Chess960 start with one back rank cleared but for the king and one rook, that
    side to move: each castling of each start is legal in one of these."""
    for number in range(960):
        start = chess.Board.from_chess960_pos(number)
        for colour in chess.COLORS:
            rank = 0 if colour == chess.WHITE else 7
            back = [chess.square(file, rank) for file in range(8)]
            king = next(s for s in back if start.piece_type_at(s) == chess.KING)
            rooks = [s for s in back if start.piece_type_at(s) == chess.ROOK]
            for rook in rooks:
                board = start.copy(stack=False)
                for square in back:
                    if square not in (king, rook):
                        board.remove_piece_at(square)
                board.turn = colour
                yield board


@pytest.mark.slow
def test_every_chess960_castling_on_both_families() -> None:
    shapes: Counter[str] = Counter()
    for number, board in enumerate(_castling_positions()):
        castlings = [m for m in board.legal_moves if board.is_castling(m)]
        assert len(castlings) == 1, board.fen()
        move = castlings[0]
        rank = chess.square_rank(move.from_square)
        king_from, rook_from = move.from_square, move.to_square
        king_to = chess.square(6 if rook_from > king_from else 2, rank)
        rook_to = chess.square(5 if rook_from > king_from else 3, rank)
        if king_from == king_to:
            shapes["king stays"] += 1
        elif rook_from == rook_to:
            shapes["rook stays"] += 1
        elif king_to == rook_from and rook_to == king_from:
            shapes["swap"] += 1
        elif king_to == rook_from:
            shapes["king onto rook"] += 1
        elif rook_to == king_from:
            shapes["rook onto king"] += 1
        else:
            shapes["apart"] += 1
        handling = (TIDY, FAST, NOISY)[number % 3]
        for presence_only in (False, True):
            steps = move_steps(board, move, random.Random(number), handling, presence_only)
            check_move(board, move, steps, presence_only)
    assert set(shapes) == {
        "king stays",
        "rook stays",
        "swap",
        "king onto rook",
        "rook onto king",
        "apart",
    }


def test_standard_castling_in_both_encodings() -> None:
    board = chess.Board("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1")
    for text in ("e1g1", "e1c1", "e1h1", "e1a1"):
        for seed in range(20):
            for presence_only in (False, True):
                steps = move_steps(board, uci(text), random.Random(seed), NOISY, presence_only)
                check_move(board, uci(text), steps, presence_only)


@given(
    seed=st.integers(0, 2**32 - 1),
    presence_only=st.booleans(),
    chess960=st.integers(0, 959),
    probabilities=st.lists(st.floats(0.0, 1.0), min_size=16, max_size=16),
)
@settings(max_examples=40, deadline=None)
def test_any_handling_replays_faithfully(
    seed: int, presence_only: bool, chess960: int, probabilities: list[float]
) -> None:
    knobs = [f.name for f in fields(Handling) if not isinstance(f.default, tuple)]
    handling = replace(Handling(), **dict(zip(knobs, probabilities, strict=False)))
    board = chess.Board.from_chess960_pos(chess960)
    play(board, biased_game(board, random.Random(seed), 40), seed, handling, presence_only)


# -- special moves --------------------------------------------------------------------------------


EN_PASSANT = [
    ("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2", "e5d6"),
    ("4k3/8/8/4Pp2/8/8/8/4K3 w - f6 0 2", "e5f6"),
    ("4k3/8/8/8/3pP3/8/8/4K3 b - e3 0 2", "d4e3"),
    ("4k3/8/8/8/4Pp2/8/8/4K3 b - e3 0 2", "f4e3"),
]


def test_en_passant_in_every_order() -> None:
    orders: Counter[str] = Counter()
    for fen, text in EN_PASSANT:
        board = chess.Board(fen)
        move = uci(text)
        assert board.is_en_passant(move)
        captured = chess.square(
            chess.square_file(move.to_square), chess.square_rank(move.from_square)
        )
        for seed in range(60):
            for presence_only in (False, True):
                steps = move_steps(board, move, random.Random(seed), FAST, presence_only)
                check_move(board, move, steps, presence_only)
                squares = [s.square for s in steps]
                at = squares.index(captured)
                if at == 0:
                    orders["first"] += 1
                elif at == len(steps) - 1:
                    orders["last"] += 1
                else:
                    orders["while held"] += 1
    assert set(orders) == {"first", "last", "while held"}


PROMOTIONS = [
    ("8/4P3/8/8/8/8/k7/4K3 w - - 0 1", "e7e8"),
    ("3r4/4P3/8/8/8/8/k7/4K3 w - - 0 1", "e7d8"),
    ("4k3/8/8/8/8/8/p7/4K3 b - - 0 1", "a2a1"),
    ("4k3/8/8/8/8/8/p7/1N2K3 b - - 0 1", "a2b1"),
]


@pytest.mark.parametrize(("fen", "text"), PROMOTIONS)
@pytest.mark.parametrize("promotion", [chess.QUEEN, chess.ROOK, chess.BISHOP, chess.KNIGHT])
def test_promotion_and_under_promotion(fen: str, text: str, promotion: chess.PieceType) -> None:
    board = chess.Board(fen)
    move = chess.Move(uci(text).from_square, uci(text).to_square, promotion=promotion)
    assert board.is_legal(move)
    colour = board.turn
    pawn_first = 0
    for seed in range(30):
        for handling in (TIDY, NOISY):
            for presence_only in (False, True):
                steps = move_steps(board, move, random.Random(seed), handling, presence_only)
                check_move(board, move, steps, presence_only)
                last = [s for s in steps if s.square == move.to_square][-1]
                expected = (
                    Piece.OCCUPIED if presence_only else piece_code(chess.Piece(promotion, colour))
                )
                assert last.piece is expected
                pawn = (
                    Piece.OCCUPIED if presence_only else piece_code(chess.Piece(chess.PAWN, colour))
                )
                pawn_first += any(s.square == move.to_square and s.piece is pawn for s in steps)
    assert pawn_first > 0


def test_tidy_promotion_replaces_the_pawn_directly() -> None:
    board = chess.Board(PROMOTIONS[0][0])
    steps = move_steps(board, uci("e7e8n"), random.Random(3), TIDY)
    assert names(steps) == [("e7", "."), ("e8", "N")]


def test_drop_and_null_move() -> None:
    board = chess.Board("4k3/8/8/8/8/8/8/4K3 w - - 0 1")
    drop = uci("N@d4")
    steps = move_steps(board, drop, random.Random(1), NOISY)
    check_move(board, drop, steps, presence_only=False)
    assert move_steps(board, chess.Move.null(), random.Random(1), NOISY) == []


def test_move_from_an_empty_square_is_refused() -> None:
    with pytest.raises(ValueError, match="no piece on e3"):
        move_steps(chess.Board(), uci("e3e4"), random.Random(1), TIDY)


def test_handling_is_validated() -> None:
    with pytest.raises(ValueError, match="slide"):
        Handling(slide=1.5)
    with pytest.raises(ValueError, match="think_time"):
        Handling(think_time=(3.0, 1.0))


# -- tidy shapes and timing ------------------------------------------------------------------


def test_tidy_moves_are_lift_then_place() -> None:
    board = chess.Board("r3k2r/pppq1ppp/8/3pp3/4P3/8/PPPP1PPP/R3K2R w KQkq - 0 1")
    rng = random.Random(5)
    assert names(move_steps(board, uci("g2g4"), rng, TIDY)) == [("g2", "."), ("g4", "P")]
    assert names(move_steps(board, uci("e4d5"), rng, TIDY)) == [
        ("d5", "."),
        ("e4", "."),
        ("d5", "P"),
    ]
    assert names(move_steps(board, uci("e1g1"), rng, TIDY)) == [
        ("e1", "."),
        ("g1", "K"),
        ("h1", "."),
        ("f1", "R"),
    ]
    assert names(move_steps(board, uci("e1g1"), rng, TIDY, presence_only=True)) == [
        ("e1", "."),
        ("g1", "*"),
        ("h1", "."),
        ("f1", "*"),
    ]


def test_tidy_en_passant_removes_the_captured_pawn_first() -> None:
    fen, text = EN_PASSANT[0]
    assert names(move_steps(chess.Board(fen), uci(text), random.Random(1), TIDY)) == [
        ("d5", "."),
        ("e5", "."),
        ("d6", "P"),
    ]


def test_tidy_has_no_noise() -> None:
    """Tidy: each square the move changes is touched once (a capture square twice)."""
    for seed, moves in standard_games()[:5]:
        position = chess.Board()
        for index, steps in game_steps(position, moves, random.Random(seed), TIDY):
            move = moves[index]
            after = position.copy(stack=False)
            after.push(move)
            before_map, after_map = squares_of(position), squares_of(after)
            changed = {s for s in range(64) if before_map.get(s) is not after_map.get(s)}
            touched = Counter(step.square for step in steps)
            assert set(touched) == changed, (move, names(steps))
            captured = position.is_capture(move) and not position.is_en_passant(move)
            assert len(steps) == len(changed) + captured, (move, names(steps))
            assert index == 0 or steps[0].delay >= TIDY.think_time[0]
            position.push(move)


def test_timing_is_realistic() -> None:
    handling = Handling()
    board = chess.Board()
    for seed in range(200):
        steps = move_steps(board, uci("g1f3"), random.Random(seed), handling)
        lift, place = steps
        assert handling.think_time[0] <= lift.delay <= handling.think_time[1]
        assert 0.3 <= place.delay <= 1.0
    slow = replace(Handling.tidy(), think_time=(5.0, 5.0))
    assert move_steps(board, uci("e2e4"), random.Random(1), slow)[0].delay == 5.0


# -- determinism ---------------------------------------------------------------------------------


def test_same_seed_same_stream() -> None:
    board = chess.Board.from_chess960_pos(123)
    moves = biased_game(board, random.Random(4), 80)
    for presence_only in (False, True):
        first = game_steps(board, moves, random.Random(99), NOISY, presence_only)
        again = game_steps(board, moves, random.Random(99), NOISY, presence_only)
        other = game_steps(board, moves, random.Random(100), NOISY, presence_only)
        assert first == again
        assert first != other
    start, goal = squares_of(chess.Board()), squares_of(chess.Board.from_chess960_pos(7))
    assert setup_steps(start, goal, random.Random(3), NOISY) == setup_steps(
        start, goal, random.Random(3), NOISY
    )


def test_game_steps_does_not_touch_the_board() -> None:
    board = chess.Board()
    moves = biased_game(board, random.Random(1), 20)
    result = game_steps(board, moves, random.Random(1), NOISY)
    assert [index for index, _ in result] == list(range(len(moves)))
    assert board == chess.Board()


# -- noise ---------------------------------------------------------------------------------------


def _signatures(board: chess.Board, move: chess.Move, steps: list[Step], index: int) -> set[str]:
    """Which kinds of noise show in the steps of one move."""
    found: set[str] = set()
    after = board.copy(stack=False)
    after.push(move)
    before_map, after_map = squares_of(board), squares_of(after)
    involved = {s for s in range(64) if before_map.get(s) is not after_map.get(s)}
    if index > 0 and steps[0].delay <= 0.05:
        found.add("quick_reply")
    seen: dict[int, list[Piece]] = {}
    for step in steps:
        seen.setdefault(step.square, []).append(step.piece)
    for square, pieces in seen.items():
        if square not in involved:
            if square in before_map:
                found.add("knock_over or adjust")
            else:
                found.add("slide")
        elif square == move.from_square and len(pieces) >= 3 and pieces[1] is before_map[square]:
            found.add("hesitate")
        elif (
            square in after_map
            and len(pieces) >= 3
            and pieces[-3:] == [after_map[square], Piece.EMPTY, after_map[square]]
        ):
            found.add("bounce")
    squares = [s.square for s in steps]
    if (
        not board.is_castling(move)
        and move.to_square in squares
        and squares.index(move.to_square) < squares.index(move.from_square)
        and steps[squares.index(move.to_square)].piece is not Piece.EMPTY
    ):
        found.add("place_before_lift")
    return found


def test_every_noise_kind_shows_in_noisy_games() -> None:
    found: Counter[str] = Counter()
    board = chess.Board()
    for seed in range(30):
        moves = biased_game(board, random.Random(seed), 80)
        position = board.copy(stack=False)
        for index, steps in game_steps(board, moves, random.Random(seed), NOISY):
            found.update(_signatures(position, moves[index], steps, index))
            position.push(moves[index])
    expected = {
        "quick_reply",
        "knock_over or adjust",
        "slide",
        "hesitate",
        "bounce",
        "place_before_lift",
    }
    assert set(found) == expected, found
    assert all(count >= 5 for count in found.values()), found


@pytest.mark.parametrize("knob", NOISE_KNOBS)
def test_each_noise_knob_alone(knob: str) -> None:
    """With one knob fully on (over tidy), its noise shows; with none, nothing shows."""
    handling = replace(TIDY, **{knob: 1.0})
    board = chess.Board()
    found: Counter[str] = Counter()
    quiet: Counter[str] = Counter()
    for seed in range(6):
        moves = biased_game(board, random.Random(seed), 60)
        noisy = game_steps(board, moves, random.Random(seed), handling)
        tidy = game_steps(board, moves, random.Random(seed), TIDY)
        position = board.copy(stack=False)
        for (index, steps), (_, plain) in zip(noisy, tidy, strict=True):
            check_move(position, moves[index], steps, presence_only=False)
            found.update(_signatures(position, moves[index], steps, index))
            quiet.update(_signatures(position, moves[index], plain, index))
            if knob == "jitter":
                found["jitter"] += [s.delay for s in steps] != [s.delay for s in plain]
            position.push(moves[index])
    assert not quiet
    label = "knock_over or adjust" if knob in ("knock_over", "adjust") else knob
    assert found[label] > 10, found


def test_slide_visits_only_empty_squares_between() -> None:
    board = chess.Board("4k3/8/8/8/8/8/8/B3K3 w - - 0 1")
    handling = replace(TIDY, slide=1.0, slide_square_seen=1.0)
    steps = move_steps(board, uci("a1h8"), random.Random(1), handling)
    assert [chess.square_name(s.square) for s in steps] == [
        "a1",
        *[name for name in ("b2", "c3", "d4", "e5", "f6", "g7") for _ in range(2)],
        "h8",
    ]
    blocked = chess.Board("4k3/8/8/8/8/8/8/R2NK3 w - - 0 1")
    steps = move_steps(blocked, uci("a1a8"), random.Random(1), handling)
    assert len(steps) == 2 + 2 * 6
    knight = chess.Board("4k3/8/8/8/8/8/8/1N2K3 w - - 0 1")
    assert len(move_steps(knight, uci("b1c3"), random.Random(1), handling)) == 2


def test_knocked_piece_is_a_neighbour_and_comes_back() -> None:
    handling = replace(TIDY, knock_over=1.0)
    board = chess.Board()
    steps = move_steps(board, uci("e2e4"), random.Random(2), handling)
    knocked = [s for s in steps if s.square not in (chess.E2, chess.E4)]
    assert len(knocked) == 2
    off, back = knocked
    assert off.square == back.square
    assert off.piece is Piece.EMPTY
    assert back.piece is squares_of(board)[off.square]
    assert min(chess.square_distance(off.square, s) for s in (chess.E2, chess.E4)) == 1


def test_castling_order_options_both_occur() -> None:
    board = chess.Board("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1")
    first = Counter(
        chess.square_name(move_steps(board, uci("e1g1"), random.Random(seed), FAST)[0].square)
        for seed in range(100)
    )
    assert set(first) == {"e1", "h1"}
    assert first["e1"] > first["h1"]
    # a Chess960 swap (king d1 -> c1, rook c1 -> d1): both landing orders
    swap = chess.Board("2rk4/8/8/8/8/8/8/2RK4 w Cc - 0 1", chess960=True)
    swap_move = uci("d1c1")
    assert swap.is_castling(swap_move)
    landings = Counter()
    for seed in range(60):
        steps = move_steps(swap, swap_move, random.Random(seed), FAST)
        check_move(swap, swap_move, steps, presence_only=False)
        landings[tuple(s.square for s in steps if s.piece is not Piece.EMPTY)] += 1
    assert set(landings) == {(chess.C1, chess.D1), (chess.D1, chess.C1)}


def test_king_touch_signals_castling_when_the_king_stays() -> None:
    board = chess.Board("4k3/8/8/8/8/8/8/6KR w H - 0 1", chess960=True)
    move = uci("g1h1")
    assert board.is_castling(move)
    touched = 0
    for seed in range(40):
        steps = move_steps(board, move, random.Random(seed), FAST)
        check_move(board, move, steps, presence_only=False)
        touched += steps[0].square == chess.G1 and steps[0].piece is Piece.EMPTY
    assert 0 < touched < 40
    assert names(move_steps(board, move, random.Random(1), TIDY)) == [("h1", "."), ("f1", "R")]


def test_captures_in_every_order() -> None:
    board = chess.Board("4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1")
    move = uci("e4d5")
    shapes = Counter()
    for seed in range(200):
        steps = move_steps(board, move, random.Random(seed), FAST)
        shapes[tuple(names(steps))] += 1
        presence = move_steps(board, move, random.Random(seed), FAST, presence_only=True)
        check_move(board, move, presence, presence_only=True)
        assert any(s.square == chess.D5 and s.piece is Piece.EMPTY for s in presence)
    assert set(shapes) == {
        (("d5", "."), ("e4", "."), ("d5", "P")),
        (("e4", "."), ("d5", "."), ("d5", "P")),
        (("e4", "."), ("d5", "P")),
    }


# -- setting up ---------------------------------------------------------------------------------


def check_setup(
    start: dict[int, Piece], goal: dict[int, Piece], seed: int, handling: Handling
) -> list[Step]:
    steps = setup_steps(start, goal, random.Random(seed), handling)
    squares = dict(start)
    for step in steps:
        assert step.delay >= 0.0
        assert squares.get(step.square, Piece.EMPTY) is not step.piece
        squares = apply_steps(squares, [step])
    assert squares == goal
    untouched = {s for s in range(64) if start.get(s) is goal.get(s)}
    if handling.slide == 0 and handling.knock_over == 0:
        assert not untouched & {s.square for s in steps}
    return steps


def test_setup_start_position_and_clear_board() -> None:
    start = squares_of(chess.Board())
    for seed in range(10):
        steps = check_setup({}, start, seed, TIDY)
        assert len(steps) == 32
        assert len(check_setup(start, {}, seed, TIDY)) == 32


def test_setup_between_chess960_starts_moves_pieces() -> None:
    for number in range(0, 960, 7):
        for presence_only in (False, True):
            start = squares_of(chess.Board(), presence_only)
            goal = squares_of(chess.Board.from_chess960_pos(number), presence_only)
            check_setup(start, goal, number, NOISY)
            steps = check_setup(start, goal, number, FAST)
            if presence_only:
                assert not steps
            else:
                # pieces are moved within the back ranks, not taken off and put back
                assert sum(s.piece is Piece.EMPTY for s in steps) <= len(
                    {s for s in range(64) if start.get(s) is not goal.get(s)}
                )


def test_takebacks_restore_the_previous_position() -> None:
    for board, move in moves_of(chess.Board.from_chess960_pos(300), range(10), 60):
        after = board.copy(stack=False)
        after.push(move)
        for presence_only in (False, True):
            steps = check_setup(
                squares_of(after, presence_only), squares_of(board, presence_only), 1, FAST
            )
            if not board.is_castling(move) and not board.is_capture(move) and not move.promotion:
                assert len(steps) == 2


def test_setup_handles_a_swap() -> None:
    start = {chess.E1: Piece.WKING, chess.D1: Piece.WQUEEN}
    goal = {chess.D1: Piece.WKING, chess.E1: Piece.WQUEEN}
    for seed in range(10):
        assert len(check_setup(start, goal, seed, TIDY)) == 4


square_maps = st.dictionaries(
    st.integers(0, 63),
    st.sampled_from([p for p in Piece if p.is_chessman] + [Piece.OCCUPIED, Piece.EMPTY]),
    max_size=40,
)


@given(start=square_maps, goal=square_maps, seed=st.integers(0, 1000), noisy=st.booleans())
@settings(max_examples=100, deadline=None)
def test_setup_any_maps(
    start: dict[int, Piece], goal: dict[int, Piece], seed: int, noisy: bool
) -> None:
    start = {s: p for s, p in start.items() if p is not Piece.EMPTY}
    goal = {s: p for s, p in goal.items() if p is not Piece.EMPTY}
    check_setup(start, goal, seed, NOISY if noisy else TIDY)


def test_steps_one_move_at_a_time_are_the_steps_of_the_whole_game() -> None:
    from dgt.emulator.human import iter_game_steps

    board = chess.Board()
    moves = [chess.Move.from_uci(u) for u in ("e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6")]
    whole = game_steps(board, moves, random.Random(7), NOISY)
    lazy = iter_game_steps(board, moves, random.Random(7), NOISY)
    first = next(lazy)
    assert first == whole[0]  # worked out before the rest is asked for
    assert [first, *lazy] == whole
    assert board == chess.Board()  # the board given is not changed
