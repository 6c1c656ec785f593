"""The chess game's short cuts answer as python-chess does: a legal move found without its
full generation (:func:`has_free_move`), the moves of a piece that cannot be pinned
(:func:`free_piece_moves`), the moves onto a square (:func:`moves_to`), a move made on
python-chess's internals (:func:`push`: the same board, state stack and move stack), and
moves made on the python-chess board only when it is read (a game sharing its positions
with another); with another python-chess than the 1.11 they were checked against, the short
cuts step aside for python-chess's own code."""

from __future__ import annotations

import logging
import random
import types
from collections.abc import Iterator

import chess
import pytest

from service.variants import get_variant, standard
from service.variants.base import Action, Move
from service.variants.standard import (
    ChessGame,
    free_piece_moves,
    from_chess_move,
    generated_moves_to,
    has_free_move,
    moves_to,
    push,
)
from tests.games import sample_positions


def test_free_moves_agree_with_python_chess() -> None:
    answered = free = 0
    for board in sample_positions(15, 4, "fast-paths", 25, 160):
        legal = any(board.generate_legal_moves())
        if has_free_move(board):
            answered += 1
            assert legal, board.fen()
        for square in chess.SQUARES:
            moves = free_piece_moves(board, square)
            if moves is not None:
                free += 1
                want = list(board.generate_legal_moves(chess.BB_SQUARES[square], chess.BB_ALL))
                assert moves == want, (board.fen(), chess.square_name(square))
    # the short cuts are taken, not only refused
    assert answered > 500
    assert free > 500


def test_free_moves_refuse_a_king_in_check_a_pinned_piece_and_en_passant() -> None:
    checked = chess.Board("4k3/8/8/8/8/8/3PPP2/r3K1N1 w - - 0 1")
    assert not has_free_move(checked)
    assert free_piece_moves(checked, chess.G1) is None
    pinned = chess.Board("4k3/8/8/b7/8/8/3N4/4K3 w - - 0 1")  # the knight on d2 is pinned
    assert free_piece_moves(pinned, chess.D2) is None
    assert free_piece_moves(pinned, chess.E1) is None  # the king: python-chess decides
    passing = chess.Board("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2")
    assert free_piece_moves(passing, chess.E5) is None
    assert free_piece_moves(passing, chess.D5) is None  # not the side to move's piece


def _leader_and_follower() -> tuple[ChessGame, ChessGame]:
    """Two standard games, the second sharing the first's positions (as a table's game
    shares its recogniser's)."""
    variant = get_variant("standard")
    leader = variant.new_game()
    follower = variant.new_game()
    follower.share_positions(leader)
    assert isinstance(leader, ChessGame)
    assert isinstance(follower, ChessGame)
    return leader, follower


def _both_play(rng: random.Random, leader: ChessGame, follower: ChessGame) -> Action | None:
    """A random legal action of ``leader``'s, made on both games (None: the game is over)."""
    actions = leader.legal_actions()
    if not actions:
        return None
    chosen = rng.choice(actions).action
    leader.apply(chosen)
    follower.apply(chosen)
    return chosen


def test_a_game_following_shared_positions_reads_as_one_that_made_every_move() -> None:
    """The follower (a table's game) makes its moves on its python-chess board only when
    the board is read; whatever is read, and in whatever order, it reads as a game that
    made them at once."""
    rng = random.Random("lazy-board")
    for _game in range(8):
        leader, follower = _leader_and_follower()
        for ply in range(rng.randrange(10, 80)):
            chosen = _both_play(rng, leader, follower)
            if chosen is None:
                break
            if rng.random() < 0.2:
                follower.undo()
                leader.undo()
                leader.apply(chosen)
                follower.apply(chosen)
            assert follower.ply == leader.ply == ply + 1
            assert follower.sides_to_act() == leader.sides_to_act()
            assert follower.squares == leader.squares
            if rng.random() < 0.3:  # read it now and then: the waiting moves are made
                assert follower.fen() == leader.fen()
                assert follower.chess_board().move_stack == leader.chess_board().move_stack
        assert follower.fen() == leader.fen()
        assert follower.outcome() == leader.outcome()
        while follower.ply:
            follower.undo()
        assert follower.fen() == chess.STARTING_FEN


def test_a_follower_tells_its_move_number_without_making_its_waiting_moves() -> None:
    """The move number of a game whose moves wait to be made on its python-chess board is
    the one python-chess gives once they are made (black's moves among them start a move
    each, whichever side the board was left to move), and asking makes none of them."""
    rng = random.Random("move-number")
    waited = {True: 0, False: 0}  # the python-chess board's side to move while moves wait
    for _game in range(6):
        leader, follower = _leader_and_follower()
        for _ply in range(rng.randrange(20, 90)):
            if _both_play(rng, leader, follower) is None:
                break
            waiting = len(follower._unmade)
            if waiting:
                waited[follower._board.turn] += 1
            number = follower.move_number()
            assert len(follower._unmade) == waiting  # nothing made
            assert number == leader.chess_board().fullmove_number
            if rng.random() < 0.15:  # read now and then: the waiting moves are made
                assert follower.chess_board().fullmove_number == number
    assert waited[True]
    assert waited[False]


def test_a_move_from_python_chess_is_one_object_per_move() -> None:
    """:func:`from_chess_move` gives the same (immutable) move for equal python-chess
    moves, with the promotion kind's letter."""
    first = from_chess_move(chess.Move(chess.E7, chess.E8, chess.KNIGHT))
    assert first == Move(chess.E7, chess.E8, "n")
    assert from_chess_move(chess.Move(chess.E7, chess.E8, chess.KNIGHT)) is first
    assert from_chess_move(chess.Move(chess.E7, chess.E8, chess.QUEEN)).promotion == "q"
    assert from_chess_move(chess.Move(chess.G1, chess.F3)) == Move(chess.G1, chess.F3)


def _replayed(actions: list[Action]) -> ChessGame:
    game = get_variant("standard").new_game()
    assert isinstance(game, ChessGame)
    for action in actions:
        game.apply(action)
    return game


def test_a_takeback_past_the_forgotten_positions_works_them_out_again() -> None:
    """Positions more than two actions behind keep only the way on (their legal actions,
    by square and SAN are dropped); a takeback to one of them answers every question as a
    game that never left it."""
    rng = random.Random("forgotten")
    for _game in range(6):
        game = get_variant("standard").new_game()
        assert isinstance(game, ChessGame)
        played: list[Action] = []
        for _ply in range(rng.randrange(12, 60)):
            actions = game.legal_actions()
            if not actions:
                break
            for square in rng.sample(range(64), 4):
                game.actions_changing(square)
            chosen = rng.choice(actions)
            game.san(chosen.action)
            game.apply(chosen.action)
            played.append(chosen.action)
        far = game._line[: len(game._line) - 3]
        assert all(p.known is None and p.by_square is None and p.san is None for p in far)
        assert all(len(p.children) == 1 for p in far)
        back = rng.randrange(3, len(played) + 1)
        for _ in range(back):
            game.undo()
        fresh = _replayed(played[: len(played) - back])
        assert game.squares == fresh.squares
        assert game.fen() == fresh.fen()
        assert game.outcome() == fresh.outcome()
        for square in range(64):
            assert game.actions_changing(square) == fresh.actions_changing(square)
        assert game.legal_actions() == fresh.legal_actions()
        assert [game.san(a.action) for a in game.legal_actions()] == [
            fresh.san(a.action) for a in fresh.legal_actions()
        ]
        for action in played[len(played) - back :]:  # and forward again the same way
            game.apply(action)
        assert game.fen() == _replayed(played).fen()


def test_a_follower_behind_the_forgotten_positions_still_shares_them() -> None:
    """A table's game lagging several actions behind its recogniser's finds the positions
    the recogniser made (their squares are the same objects), though the recogniser has
    forgotten what it worked out there."""
    leader, follower = _leader_and_follower()
    rng = random.Random("lagging")
    played: list[Action] = []
    for _ply in range(30):
        chosen = rng.choice(leader.legal_actions())
        leader.apply(chosen.action)
        played.append(chosen.action)
    for action in played:
        follower.apply(action)
    assert follower.squares is leader.squares
    assert all(a is b for a, b in zip(follower._line, leader._line, strict=True))
    assert follower.fen() == leader.fen()


def test_keep_current_keeps_positions_a_try_returns_to() -> None:
    """Once a caller says when to forget (``keep_current``), actions tried three or more
    deep and taken back leave the current position (and its children) as worked out; the
    next ``keep_current`` forgets every position more than two actions back, as making the
    actions one by one does without it."""
    rng = random.Random("kept")
    game = get_variant("standard").new_game()
    assert isinstance(game, ChessGame)
    game.keep_current()
    for _ply in range(20):
        here = game._line[-1]
        actions = list(game.legal_actions())
        for _try in range(3):  # a try four actions deep, taken back
            depth = 0
            for _ in range(4):
                tried = game.legal_actions()
                if not tried:
                    break
                game.apply(rng.choice(tried).action)
                depth += 1
            for _ in range(depth):
                game.undo()
            assert game._line[-1] is here
            assert here.actions is actions or here.actions == actions
            assert here.known is not None
        chosen = rng.choice(actions)
        game.apply(chosen.action)
        game.keep_current()
        far = game._line[: max(0, len(game._line) - 3)]
        assert all(p.known is None and p.by_square is None and p.san is None for p in far)
        assert all(len(p.children) == 1 for p in far)


# -- push and moves_to against python-chess, move by move ------------------------------------


@pytest.fixture
def short_cuts() -> Iterator[None]:
    """The short cuts on without their probe (so that a fault in them fails the test that
    finds it, not only the probe, which would hand every move to python-chess)."""
    saved = standard._short_cuts
    standard._short_cuts = True
    yield
    standard._short_cuts = saved


def _state(board: chess.Board) -> dict[str, object]:
    """All a python-chess board holds, its state stack entry by entry."""
    state = dict(vars(board))
    state["_stack"] = [vars(entry) for entry in board._stack]
    return state


def _chosen(rng: random.Random, board: chess.Board, moves: list[chess.Move]) -> chess.Move:
    """A random move, castling, en passant and promotions (and captures, which lead to
    them) more often than their share."""
    special = [m for m in moves if board.is_castling(m) or board.is_en_passant(m) or m.promotion]
    if special and rng.random() < 0.8:
        return rng.choice(special)
    pawns = [m for m in moves if board.pawns & chess.BB_SQUARES[m.from_square]]
    doubles = [m for m in pawns if abs(m.to_square - m.from_square) == 16]
    if doubles and rng.random() < 0.3:
        return rng.choice(doubles)
    captures = [m for m in moves if board.is_capture(m)]
    if captures and rng.random() < 0.3:
        return rng.choice(captures)
    if pawns and rng.random() < 0.3:
        return rng.choice(pawns)
    return rng.choice(moves)


def _agree(ours: chess.Board, theirs: chess.Board, tally: dict[str, int]) -> None:
    """``ours`` (moves made by :func:`push`) and ``theirs`` (by python-chess) are the same
    board, and every move list onto a square answers as python-chess's does."""
    assert _state(ours) == _state(theirs), theirs.fen()
    assert len(ours._stack) == len(theirs._stack) == len(theirs.move_stack)
    assert ours.move_stack == theirs.move_stack
    assert ours.fen() == theirs.fen()
    assert list(ours.legal_moves) == list(theirs.legal_moves), theirs.fen()
    assert ours.is_check() == theirs.is_check()
    assert ours.outcome() == theirs.outcome()
    own = theirs.occupied_co[theirs.turn]
    for square in chess.SQUARES:
        if own & chess.BB_SQUARES[square]:
            continue
        got = moves_to(ours, square)
        if got is not None:
            tally["moves_to"] += 1
            assert got == generated_moves_to(theirs, square), (theirs.fen(), square)


_DEVELOPED = "r3k2r/pppq1ppp/2npbn2/2b1p3/2B1P3/2NPBN2/PPPQ1PPP/R3K2R w KQkq - 4 8"
"""Both sides may castle either way."""


def _play(seed: str, games: int) -> dict[str, int]:
    """Random games (from a random Chess960 start, the classical start, or a position where
    both sides may castle either way, in turn), each move made by :func:`push` on one board
    and by python-chess on another, compared after each; now and then a move is taken back
    on both (a state stack :func:`push` filled pops as python-chess's)."""
    rng = random.Random(seed)
    tally = dict.fromkeys(("plies", "short", "moves_to", "O-O", "O-O-O", "ep", "promotion"), 0)
    for number in range(games):
        if number % 3 == 0:
            theirs = chess.Board.from_chess960_pos(rng.randrange(960))
        else:
            theirs = chess.Board(_DEVELOPED if number % 3 == 2 else chess.STARTING_FEN)
        ours = theirs.copy()
        for _ply in range(rng.randrange(40, 160)):
            _agree(ours, theirs, tally)
            moves = list(theirs.legal_moves)
            if not moves:
                break
            move = _chosen(rng, theirs, moves)
            tally["O-O"] += theirs.is_kingside_castling(move)
            tally["O-O-O"] += theirs.is_queenside_castling(move)
            tally["ep"] += theirs.is_en_passant(move)
            tally["promotion"] += bool(move.promotion)
            tally["plies"] += 1
            before = len(theirs._stack)
            states = [vars(entry) for entry in ours._stack]
            passed = chess.Move(move.from_square, move.to_square, move.promotion)
            push(ours, passed)
            theirs.push(move)
            tally["short"] += ours.move_stack[-1] is passed  # (python-chess stacks a copy)
            assert len(ours._stack) == before + 1
            assert [vars(entry) for entry in ours._stack[:-1]] == states
            if rng.random() < 0.1:
                assert ours.pop() == theirs.pop()
                _agree(ours, theirs, tally)
                push(ours, move)
                theirs.push(move)
        _agree(ours, theirs, tally)
    return tally


def test_push_and_moves_to_agree_with_python_chess(short_cuts: None) -> None:
    tally = _play("push", 15)
    # the short cuts are taken, and the special moves met
    assert tally["short"] > 0.5 * tally["plies"]
    assert tally["moves_to"] > 20 * tally["plies"]
    assert tally["O-O"] >= 5
    assert tally["O-O-O"] >= 5
    assert tally["ep"] >= 5
    assert tally["promotion"] >= 5


@pytest.mark.slow
def test_push_and_moves_to_agree_with_python_chess_on_many_games(short_cuts: None) -> None:
    tally = _play("push-many", 200)
    assert tally["O-O"] > 50
    assert tally["O-O-O"] > 50
    assert tally["ep"] > 50
    assert tally["promotion"] > 50


def test_push_hands_what_it_does_not_cover_to_python_chess(short_cuts: None) -> None:
    """A king's move, a castling, en passant, a promotion, a move on a board holding a
    promoted piece, and (python-chess's push takes any pseudo-legal move) a move onto a
    king or of the other side's piece: the same board as python-chess's push leaves."""
    cases = [
        ("r3k2r/8/8/3pP3/8/8/8/R3K2R w KQkq d6 0 2", "e1g1"),
        ("r3k2r/8/8/3pP3/8/8/8/R3K2R w KQkq d6 0 2", "e1c1"),
        ("r3k2r/8/8/3pP3/8/8/8/R3K2R w KQkq d6 0 2", "e5d6"),
        ("r3k2r/8/8/3pP3/8/8/8/R3K2R w KQkq d6 0 2", "e1e2"),
        ("4k3/1P6/8/8/8/8/8/4K3 w - - 0 1", "b7b8n"),
        ("4k3/8/8/8/8/8/8/3QK3 w - - 0 1", "d1d8"),  # not legal: onto the king's line
        ("3k4/8/8/8/8/8/8/3QK3 w - - 0 1", "d1d8"),  # not legal: takes the king
        ("4k3/8/8/8/8/8/6p1/4K3 w - - 0 1", "g2g1"),  # the other side's pawn
    ]
    for fen, uci in cases:
        ours, theirs = chess.Board(fen), chess.Board(fen)
        push(ours, chess.Move.from_uci(uci))
        theirs.push(chess.Move.from_uci(uci))
        assert _state(ours) == _state(theirs), (fen, uci)
    promoted = chess.Board("4k3/1P6/8/8/8/8/8/4K3 w - - 0 1")
    promoted.push_uci("b7b8q")
    promoted.push_uci("e8d7")
    theirs = promoted.copy()
    push(promoted, chess.Move.from_uci("b8b5"))
    theirs.push_uci("b8b5")
    assert _state(promoted) == _state(theirs)
    assert promoted.promoted == chess.BB_B5


def test_push_takes_a_rook_and_its_castling_right(short_cuts: None) -> None:
    """A rook taken on its corner takes its side's castling right with it (python-chess
    keeps the right it cleans when it makes the next move: the board right after differs)."""
    start = "r3k2r/p7/8/8/8/8/P5B1/R3K2R w KQkq - 0 1"
    ours, theirs = chess.Board(start), chess.Board(start)
    for uci in ("g2a8", "h8h1"):
        passed = chess.Move.from_uci(uci)
        push(ours, passed)
        theirs.push(passed)
        assert ours.move_stack[-1] is passed  # made by the short cut
        assert _state(ours) == _state(theirs), uci
    assert ours.castling_rights == chess.BB_A1


@pytest.mark.parametrize("variant_id", ["standard", "chess960", "t20"])
def test_games_of_every_variant_on_python_chess_agree_with_python_chess(
    variant_id: str, short_cuts: None
) -> None:
    """A game of each variant built on :class:`ChessGame` (its moves made by :func:`push`,
    its moves onto a square read by :func:`moves_to`) reads as python-chess's board: FEN,
    move stack, the legal actions in order, what each square's change allows, the end."""
    variant = get_variant(variant_id)
    rng = random.Random(variant_id)
    starts = variant.start_positions()
    for _game in range(4):
        start = rng.choice(starts)
        game = variant.new_game(start)
        assert isinstance(game, ChessGame)
        theirs = game.chess_board().copy()
        for _ply in range(rng.randrange(30, 80)):
            assert game.fen() == theirs.fen()
            assert game.chess_board().move_stack == theirs.move_stack
            if game.outcome() is not None:
                break
            legal = list(theirs.legal_moves)
            assert [a.action for a in game.legal_actions()] == [from_chess_move(m) for m in legal]
            fresh = variant.new_game(start)
            assert isinstance(fresh, ChessGame)
            for move in theirs.move_stack:
                fresh.apply(from_chess_move(move))
            for square in rng.sample(range(64), 16):  # a game not asked for all its moves yet
                changing = fresh.actions_changing(square)
                assert list(changing) == [
                    a for a in game.legal_actions() if any(sq == square for sq, _ in a.changes)
                ], (theirs.fen(), square)
            move = _chosen(rng, theirs, legal)
            game.apply(from_chess_move(move))
            theirs.push(move)
        assert game.chess_board().move_stack == theirs.move_stack


# -- another python-chess -----------------------------------------------------------------------


def test_the_probe_finds_this_python_chess_fit_for_the_short_cuts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """python-chess 1.11 (pinned in pyproject.toml) is the one the short cuts were checked
    against: its probe passes, and the short cuts are taken."""
    assert chess.__version__.startswith("1.11.")
    monkeypatch.setattr(standard, "_short_cuts", None)
    assert standard._probe_short_cuts() is None
    assert standard._short_cuts_on()
    board = chess.Board()
    push(board, chess.Move.from_uci("g1f3"))
    assert board.move_stack[-1] is not None
    assert moves_to(board, chess.E5) is not None


def _fallen_back(caplog: pytest.LogCaptureFixture) -> None:
    """What a python-chess the short cuts do not fit gets: python-chess's own answers, the
    reason logged once at debug level."""
    caplog.set_level(logging.DEBUG, logger=standard.__name__)
    ours, theirs = chess.Board(), chess.Board()
    for uci in ("e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "g8f6", "e1g1"):
        assert moves_to(ours, chess.E5 if ours.turn else chess.E4) is None
        push(ours, chess.Move.from_uci(uci))
        theirs.push_uci(uci)
        assert ours.fen() == theirs.fen()
        assert ours.move_stack == theirs.move_stack
    game = get_variant("standard").new_game()
    for action in list(game.legal_actions())[:3]:
        game.apply(action.action)
        assert game.actions_changing(chess.E4) is not None
        game.undo()
    assert standard._short_cuts is False
    said = [r for r in caplog.records if r.name == standard.__name__]
    assert len(said) == 1
    assert said[0].levelno == logging.DEBUG
    assert "python-chess makes and generates every move itself" in said[0].getMessage()


def test_without_the_internals_python_chess_makes_every_move(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A python-chess that names its board states otherwise (its own push uses the new
    name; ``chess._BoardState`` is gone)."""
    state = chess._BoardState
    own_push = chess.Board.push
    renamed_push = types.FunctionType(
        own_push.__code__, {**vars(chess), "_BoardState": state}, own_push.__name__
    )
    monkeypatch.setattr(chess.Board, "push", renamed_push)
    monkeypatch.delattr(chess, "_BoardState")
    monkeypatch.setattr(chess, "_PositionState", state, raising=False)
    monkeypatch.setattr(standard, "_short_cuts", None)
    _fallen_back(caplog)
    assert "_BoardState" in caplog.records[-1].getMessage()


def test_a_python_chess_whose_push_does_more_makes_every_move_itself(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A python-chess whose push keeps something more (here a count) than the short cut
    does: the probe sees the boards differ."""
    original = chess.Board.push

    def counting_push(board: chess.Board, move: chess.Move) -> None:
        original(board, move)
        vars(board)["pushes"] = vars(board).get("pushes", 0) + 1

    monkeypatch.setattr(standard, "_short_cuts", None)
    monkeypatch.setattr(chess.Board, "push", counting_push)
    _fallen_back(caplog)
