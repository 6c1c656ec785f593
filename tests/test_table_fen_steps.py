""":class:`service.table.views.FenMemo` keeps the FEN of its last positions by their squares
object: one memo asked in turn about several games that follow their recognisers' (moves and
takebacks, the same start squares shared between games) gives python-chess's own FEN each
time, and works most of them out from the FEN before (not from the board)."""

from __future__ import annotations

import random

import chess
import pytest
from test_table_helpers import take_back_or_play

from service.table import views
from service.table.views import FenMemo
from service.variants import get_variant


def test_one_memo_asked_about_games_in_turn_reads_as_python_chess(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = random.Random(5)
    variant = get_variant("standard")
    written = [0]
    chess_fen = views.chess_fen

    def counted(game: object) -> str | None:
        written[0] += 1
        return chess_fen(game)  # type: ignore[arg-type]

    monkeypatch.setattr(views, "chess_fen", counted)
    memo = FenMemo()
    games = []
    for _ in range(3):
        leader, follower = variant.new_game(), variant.new_game()
        follower.share_positions(leader)
        games.append((leader, follower, chess.Board()))
    asked = 0
    for step in range(3000):
        which = 0 if rng.random() < 0.8 else rng.randrange(len(games))  # mostly one game
        leader, follower, reference = games[which]
        legal = [la for la in leader.legal_actions() if la.changes]
        if not legal or reference.ply() > 150:  # a new game at the same table
            leader, follower = variant.new_game(), variant.new_game()
            follower.share_positions(leader)
            reference = chess.Board()
            games[which] = (leader, follower, reference)
        else:
            take_back_or_play(rng, legal, leader, follower, reference)
        assert memo.fen(step + 1, follower) == reference.fen(), step
        asked += 1
    assert asked == 3000
    assert written[0] < asked // 3  # most were worked out from the FEN before
