"""Variants: the registry, what each legal action changes, Chess960 starts and castling,
T20 scoring and game end."""

from __future__ import annotations

import random

import chess
import pytest

from service.variants import (
    BLACK,
    VARIANTS,
    WHITE,
    Choice,
    IllegalActionError,
    Move,
    NoDecisionError,
    NothingToUndoError,
    UnknownVariantError,
    VariantError,
    VariantGame,
    get_variant,
    variant_for_start,
)
from service.variants.chess960 import chess960_starts
from service.variants.t20 import T20_FEN


def play(game: VariantGame, *ucis: str) -> list:
    events = []
    for uci in ucis:
        action = next(a for a in game.legal_actions() if a.uci == uci)
        events.append(game.apply(action.action))
    return events


def test_registry_builds_every_variant_and_rejects_others() -> None:
    assert [get_variant(v).id for v in VARIANTS] == list(VARIANTS)
    assert {"standard", "chess960", "t20", "twenty-chess", "realtime"} <= set(VARIANTS)
    with pytest.raises(UnknownVariantError, match="choose one of"):
        get_variant("bughouse")


@pytest.mark.slow
@pytest.mark.parametrize("variant_id", ["standard", "chess960", "t20"])
def test_changes_of_every_legal_action_match_the_position_after_it(variant_id: str) -> None:
    variant = get_variant(variant_id)
    rng = random.Random(variant_id)
    starts = variant.start_positions()
    for _ in range(12):
        game = variant.new_game(rng.choice(starts))
        for _ply in range(rng.randrange(20, 90)):
            actions = game.legal_actions()
            if not actions:
                break
            for legal in actions:
                before = game.squares
                game.apply(legal.action)
                after = game.squares
                game.undo()
                expected = {s: after[s] for s in range(64) if before[s] != after[s]}
                assert dict(legal.changes) == expected, legal.uci
            for square in rng.sample(range(64), 6):
                wanted = sorted(a.uci for a in actions if square in a.changed_squares)
                assert sorted(a.uci for a in game.actions_changing(square)) == wanted
            game.apply(rng.choice(actions).action)


@pytest.mark.slow
@pytest.mark.parametrize("variant_id", ["standard", "chess960", "t20"])
def test_what_a_position_knows_survives_undo_and_reapply(variant_id: str) -> None:
    """The variants keep what they worked out per position; undo then re-apply must give
    the same actions, SAN and per-square lists as the first time, whichever was asked
    first, and SAN must be python-chess's."""
    variant = get_variant(variant_id)
    rng = random.Random(f"cache-{variant_id}")
    starts = variant.start_positions()
    for game_no in range(6):
        game = variant.new_game(rng.choice(starts))
        for _ply in range(rng.randrange(30, 80)):
            squares_first = game_no % 2 == 0  # half the games ask per square first
            per_square_before = (
                {sq: [a.uci for a in game.actions_changing(sq)] for sq in range(64)}
                if squares_first
                else None
            )
            actions = game.legal_actions()
            if not actions:
                break
            board = chess.Board(game.fen(), chess960=variant_id == "chess960")
            sans = {a.uci: game.san(a.action) for a in actions}
            assert sans == {a.uci: board.san(chess.Move.from_uci(a.uci)) for a in actions}
            per_square = {
                sq: [a.uci for a in actions if sq in a.changed_squares] for sq in range(64)
            }
            if per_square_before is not None:
                assert per_square_before == per_square
            assert {sq: [a.uci for a in game.actions_changing(sq)] for sq in range(64)} == (
                per_square
            )
            chosen = rng.choice(actions).action
            game.apply(chosen)
            game.undo()
            assert [a.uci for a in game.legal_actions()] == [a.uci for a in actions]
            assert {a.uci: game.san(a.action) for a in actions} == sans
            game.apply(chosen)


def test_a_flagged_game_has_no_actions_on_any_square() -> None:
    game = get_variant("standard").new_game()
    assert game.actions_changing(chess.E2)  # known before the flag
    game.flag(WHITE)
    assert list(game.legal_actions()) == []
    assert all(not game.actions_changing(sq) for sq in range(64))


def test_chess960_has_960_distinct_starts_with_518_classical() -> None:
    starts = chess960_starts()
    assert len({s.squares for s in starts}) == 960
    assert starts[518].classical
    assert starts[518].fen.startswith("rnbqkbnr/")
    assert get_variant("chess960").default_start().number == 518


@pytest.mark.parametrize(
    ("fen", "uci", "changed"),
    [
        # king only: K e1 -> c1 with the rook already on d1
        ("4k3/8/8/8/8/8/8/3RK3 w D - 0 1", "e1d1", {"e1": "", "c1": "K"}),
        # rook only: K g1 stays, R h1 -> f1
        ("4k3/8/8/8/8/8/8/6KR w H - 0 1", "g1h1", {"h1": "", "f1": "R"}),
        # king and rook swap: K f1 R g1 -> K g1 R f1
        ("4k3/8/8/8/8/8/8/5KR1 w G - 0 1", "f1g1", {"f1": "R", "g1": "K"}),
    ],
)
def test_chess960_castlings_change_only_the_squares_that_change(
    fen: str, uci: str, changed: dict[str, str]
) -> None:
    variant = get_variant("chess960")
    from service.variants import StartPosition
    from service.variants.standard import squares_of

    game = variant.new_game(StartPosition("chess960", fen, squares_of(chess.Board(fen))))
    legal = next(a for a in game.legal_actions() if a.uci == uci)
    assert {chess.square_name(s): v for s, v in legal.changes} == changed
    assert game.san(legal.action).startswith("O-O")


def test_illegal_action_and_empty_undo_raise_clear_errors() -> None:
    game = get_variant("standard").new_game()
    with pytest.raises(IllegalActionError, match="not legal"):
        game.apply(Move(chess.E2, chess.E5))
    with pytest.raises(NothingToUndoError):
        game.undo()


@pytest.mark.parametrize("variant_id", ["standard", "chess960", "t20"])
def test_an_action_made_without_asking_what_is_legal_leaves_python_chess_position(
    variant_id: str,
) -> None:
    """A move never generated in its position (a reading tried) is made from what its two
    squares hold: the squares and FEN after it must be python-chess's, castlings, en
    passant and promotions among them."""
    from service.variants.standard import from_chess_move, squares_of

    variant = get_variant(variant_id)
    rng = random.Random(f"unasked-{variant_id}")
    starts = variant.start_positions()
    made = set()
    for _ in range(8):
        start = rng.choice(starts)
        game = variant.new_game(start)
        board = chess.Board(start.fen, chess960=variant_id == "chess960")
        for _ply in range(120):
            moves = list(board.legal_moves)
            if not moves or game.outcome() is not None:
                break
            # castlings, en passant and promotions first when there are any
            special = [
                m for m in moves if board.is_castling(m) or board.is_en_passant(m) or m.promotion
            ]
            move = rng.choice(special or moves)
            made.update(
                kind
                for kind, test in (
                    ("castling", board.is_castling),
                    ("en passant", board.is_en_passant),
                    ("promotion", lambda m: bool(m.promotion)),
                )
                if test(move)
            )
            game.apply(from_chess_move(move))
            board.push(move)
            assert game.squares == squares_of(board), move.uci()
        assert game.fen() == board.fen()
    kinds = {"castling", "en passant", "promotion"}
    assert made == (kinds - {"castling"} if variant_id == "t20" else kinds)  # (T20: none)


@pytest.mark.parametrize("variant_id", ["standard", "chess960", "t20"])
def test_a_chess_game_tests_one_action_as_the_generated_actions_say(variant_id: str) -> None:
    """ChessGame.legal_action tests one move by python-chess; it must answer what looking
    the move up among the generated actions (VariantGame's way) answers, equal actions,
    for legal and illegal moves, castlings, en passant and promotions among them, whether
    the position's actions were asked for before or not."""
    from service.variants.standard import from_chess_move

    variant = get_variant(variant_id)
    rng = random.Random(f"one-{variant_id}")
    starts = variant.start_positions()
    tried = legal = 0
    for game_no in range(6):
        game = variant.new_game(rng.choice(starts))
        for _ply in range(rng.randrange(30, 90)):
            # the moves python-chess finds legal (read off a board of its own: the game is
            # asked nothing about its position) and moves made up, promotions among them
            board = chess.Board(game.fen(), chess960=variant_id == "chess960")
            moves = [from_chess_move(m) for m in board.legal_moves]
            if not moves:
                break
            moves += [
                Move(rng.randrange(64), rng.randrange(64), rng.choice([None, None, "q", "n"]))
                for _ in range(12)
            ]
            moves += [Move(m.from_square, m.to_square, "q") for m in moves[:4]]
            if game_no % 2:  # half the games ask for the actions first
                game.legal_actions()
            for action in moves:
                mine = game.legal_action(action)
                theirs = VariantGame.legal_action(game, action)
                assert mine == theirs, action
                tried += 1
                legal += mine is not None
            actions = game.legal_actions()
            if not actions:  # (the game ended: T20 after 20 moves, python-chess goes on)
                break
            game.apply(rng.choice(actions).action)
    assert legal > 100
    assert tried - legal > 100


def test_an_illegal_action_names_the_position_it_was_tried_in() -> None:
    game = get_variant("standard").new_game()
    try:
        game.apply(Move(chess.E2, chess.E5))
    except IllegalActionError as exc:
        error = exc
    play(game, "e2e4")  # (the message is written when read: still the position before)
    assert str(error) == (
        f"{Move(chess.E2, chess.E5)} is not legal in position {chess.STARTING_FEN}: "
        "pick one of legal_actions()"
    )


def test_standard_game_ends_by_mate_and_time_out_rules() -> None:
    game = get_variant("standard").new_game()
    play(game, "f2f3", "e7e5", "g2g4", "d8h4")
    end = game.outcome()
    assert end is not None
    assert (end.result, end.reason) == ("0-1", "checkmate")
    assert game.sides_to_act() == frozenset()
    fresh = get_variant("standard").new_game()
    assert fresh.flag(WHITE).result == "0-1"


def test_t20_starts_from_its_fen_without_castling() -> None:
    game = get_variant("t20").new_game()
    assert game.fen() == T20_FEN
    assert game.pgn_tags() == {
        "Variant": "From Position",
        "VariantName": "Chess T20",
        "SetUp": "1",
        "FEN": T20_FEN,
    }
    assert not any(game.board.is_castling(m) for m in game.board.legal_moves)


def test_t20_scores_captures_as_they_stand_check_once_and_mate_instead_of_check() -> None:
    variant = get_variant("t20")
    from service.variants import StartPosition
    from service.variants.standard import squares_of

    # promotion with capture of a rook giving check: 16 + 5 + 10
    fen = "r3k3/1P6/8/8/8/8/8/4K3 w - - 0 1"
    game = variant.new_game(StartPosition("t20", fen, squares_of(chess.Board(fen))))
    (events,) = play(game, "b7a8q")
    assert sorted((e.reason, e.points) for e in events) == [
        ("capture", 5),
        ("check", 10),
        ("promotion", 16),
    ]
    # the promoted queen is captured as a queen: 9
    (events,) = play(game, "e8d7")
    (events,) = play(game, "e1d1")
    assert game.scores() == {WHITE: 31, BLACK: 0}
    # mate scores 50 instead of 10
    fen = "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1"
    game = variant.new_game(StartPosition("t20", fen, squares_of(chess.Board(fen))))
    (events,) = play(game, "a1a8")
    assert [(e.reason, e.points) for e in events] == [("checkmate", 50)]
    end = game.outcome()
    assert end is not None
    assert end.result == "1-0"
    assert end.reason == "checkmate"
    game.undo()
    assert game.scores() == {WHITE: 0, BLACK: 0}


def test_t20_en_passant_scores_one() -> None:
    variant = get_variant("t20")
    from service.variants import StartPosition
    from service.variants.standard import squares_of

    fen = "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2"
    game = variant.new_game(StartPosition("t20", fen, squares_of(chess.Board(fen))))
    (events,) = play(game, "e5d6")
    assert [(e.reason, e.points) for e in events] == [("capture", 1)]


def test_t20_threefold_repetition_ends_the_game() -> None:
    game = get_variant("t20").new_game()
    play(game, "g3h5", "g6h4", "h5g3", "h4g6")
    assert game.outcome() is None
    play(game, "g3h5", "g6h4", "h5g3", "h4g6")
    end = game.outcome()
    assert end is not None
    assert (end.reason, end.result) == ("threefold repetition", "1/2-1/2")


def test_t20_ends_after_black_twentieth_move_and_higher_score_wins() -> None:
    reasons = []
    for seed in range(12):
        game = get_variant("t20").new_game()
        rng = random.Random(seed)
        while game.outcome() is None:
            assert game.ply < 40
            play(game, rng.choice(game.legal_actions()).uci)
        end = game.outcome()
        assert end is not None
        reasons.append(end.reason)
        if end.reason == "twenty moves":
            assert game.ply == 40
        white, black = game.scores()[WHITE], game.scores()[BLACK]
        expected = "1/2-1/2" if white == black else ("1-0" if white > black else "0-1")
        assert end.result == expected
    assert "twenty moves" in reasons


def test_t20_time_out_moves_fifty_points_never_below_zero() -> None:
    game = get_variant("t20").new_game()
    end = game.flag(WHITE)
    assert dict(end.scores) == {WHITE: 0, BLACK: 50}
    assert end.result == "0-1"
    assert end.reason == "time-out"
    assert game.outcome() == end
    assert game.legal_actions() == []


def test_optional_features_have_neutral_defaults_where_a_variant_lacks_them() -> None:
    for variant_id in ("standard", "chess960", "t20"):
        variant = get_variant(variant_id)
        game = variant.new_game()
        assert game.chess_board() is not None
        assert (game.turn, game.hand(WHITE), game.pending_choice()) == (None, (), None)
        assert (game.rule_hint(), game.clock_text(), game.record_note(), game.panel()) == (
            None,
            None,
            None,
            None,
        )
        assert dict(variant.stand_ins) == {}
        with pytest.raises(NoDecisionError, match="no decision is due"):
            game.decide(Choice("rule", "1"))
    assert get_variant("realtime").new_game().chess_board() is None
    twenty = get_variant("twenty-chess").new_game()
    assert (twenty.turn, twenty.chess_board()) == (1, None)
    assert twenty.clock_text() == "RULE 1"
    assert twenty.rule_hint()


def test_variant_features_replace_the_id_tests() -> None:
    assert [v for v in VARIANTS if VARIANTS[v].plays_classical_start] == [
        "chess960",
        "twenty-chess",
    ]
    assert [v for v in VARIANTS if VARIANTS[v].time_out is not None] == ["t20"]
    assert [v for v in VARIANTS if VARIANTS[v].chess960] == ["chess960"]
    assert [v for v in VARIANTS if not VARIANTS[v].accepts_start_fen] == ["twenty-chess"]
    classical = get_variant("standard").default_start()
    assert variant_for_start(get_variant("chess960"), classical).id == "chess960"
    assert variant_for_start(get_variant("t20"), classical).id == "standard"
    t20_start = get_variant("t20").default_start()
    assert variant_for_start(get_variant("standard"), t20_start).id == "t20"


def test_only_variants_with_options_take_them() -> None:
    assert get_variant("twenty-chess", "cast").id == "twenty-chess"
    with pytest.raises(VariantError, match="variant chess960 takes no options"):
        get_variant("chess960", "cast")


def test_readme_names_every_variant_and_rule_set() -> None:
    from pathlib import Path

    from service.arbiter import RULE_SETS

    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    for variant_id in VARIANTS:
        assert f"`{variant_id}`" in readme
    for rules_id in RULE_SETS:
        assert rules_id in readme
