"""Chess T20: the FIDE moves from a fixed start, twenty moves each, winner by score.

Rules: the Chess T20 rules, and the project's decisions in ``docs/rules.md``:

- start ``rbnqbrk1/pppppppp/6n1/8/8/6N1/PPPPPPPP/RBNQBRK1 w - - 0 1``, no castling;
- a capture scores the captured piece as it stands (pawn 1, knight 3, bishop 3, rook 5,
  queen 9; a promoted queen scores 9; en passant scores 1);
- a promotion scores 16; a check scores 10 once (double check too); a mate scores 50
  instead of the 10; the points of one move add up;
- the game ends after Black's 20th move (ply 40), or earlier by mate, stalemate, threefold
  repetition, insufficient material or time-out; the higher score wins, equal scores draw;
- time-out (:meth:`T20Game.flag`): the flagged side loses 50 points (never below 0), the
  opponent gains 50, and the game ends.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache

import chess

from service.variants.base import (
    BLACK,
    WHITE,
    Action,
    Color,
    GameEnd,
    ScoreEvent,
    StartPosition,
    TimeOutRule,
    Variant,
    result_string,
)
from service.variants.standard import ChessGame, may_lack_material, may_repeat, squares_of

T20_FEN = "rbnqbrk1/pppppppp/6n1/8/8/6N1/PPPPPPPP/RBNQBRK1 w - - 0 1"
PLIES = 40
"""The game ends after this many actions (twenty moves each)."""

CAPTURE_POINTS: Mapping[chess.PieceType, int] = {
    chess.PAWN: 1,
    chess.KNIGHT: 3,
    chess.BISHOP: 3,
    chess.ROOK: 5,
    chess.QUEEN: 9,
}
CHECK_POINTS = 10
MATE_POINTS = 50
PROMOTION_POINTS = 16
TIME_OUT_POINTS = 50


@cache
def t20_start() -> StartPosition:
    return StartPosition("t20", T20_FEN, squares_of(chess.Board(T20_FEN)))


class T20Game(ChessGame):
    """A T20 game: chess moves, with a score per side."""

    def __init__(self, variant: Variant, start: StartPosition) -> None:
        super().__init__(variant, start, chess960=False)
        self._history: list[list[ScoreEvent]] = []
        self._time_out: list[ScoreEvent] = []

    def pgn_tags(self) -> dict[str, str]:
        return {**super().pgn_tags(), "VariantName": "Chess T20"}

    def apply(self, action: Action) -> list[ScoreEvent]:
        move = self._checked_move(action)
        side = self.board.turn
        reached = self._line[-1].child(action)
        if reached is not None and reached.scores is not None:  # made from here before
            self._push(action, move)
            events = list(reached.scores)
        else:
            events = self._material_events(side, move)
            sans = self._line[-1].san
            san = sans.get(action) if sans is not None else None
            after = self._push(action, move)
            if san is None:
                mate, check = self.board.is_checkmate(), self.board.is_check()
            else:  # SAN, asked for before the move, ends in "#" for mate, "+" for check
                mate, check = san.endswith("#"), san.endswith("+")
            if mate:
                events.append(ScoreEvent(side, MATE_POINTS, "checkmate"))
            elif check:
                events.append(ScoreEvent(side, CHECK_POINTS, "check"))
            after.scores = tuple(events)
        self._history.append(events)
        return list(events)

    def _material_events(self, side: Color, move: chess.Move) -> list[ScoreEvent]:
        """What ``move`` (legal now, not made yet) scores by capture and promotion."""
        board = self.board
        events: list[ScoreEvent] = []
        if board.is_en_passant(move):
            events.append(ScoreEvent(side, CAPTURE_POINTS[chess.PAWN], "capture"))
        else:
            captured = board.piece_type_at(move.to_square)
            if captured is not None:
                events.append(ScoreEvent(side, CAPTURE_POINTS[captured], "capture"))
        if move.promotion:
            events.append(ScoreEvent(side, PROMOTION_POINTS, "promotion"))
        return events

    def undo(self) -> Action:
        action = super().undo()
        self._history.pop()
        self._time_out = []
        return action

    def scores(self) -> Mapping[Color, int]:
        totals = {WHITE: 0, BLACK: 0}
        for events in self._history:
            for event in events:
                totals[event.side] += event.points
        for event in self._time_out:
            totals[event.side] = max(0, totals[event.side] + event.points)
        return totals

    def _by_score(self, reason: str) -> GameEnd:
        scores = dict(self.scores())
        if scores[WHITE] == scores[BLACK]:
            winner = None
        else:
            winner = WHITE if scores[WHITE] > scores[BLACK] else BLACK
        return GameEnd(result_string(winner), reason, winner, scores)

    def _rules_outcome(self) -> GameEnd | None:
        board = self.board
        if not self._can_move():
            return self._by_score("checkmate" if board.is_check() else "stalemate")
        if self.ply >= PLIES:
            return self._by_score("twenty moves")
        if may_repeat(board, 3) and board.is_repetition(3):
            return self._by_score("threefold repetition")
        if may_lack_material(board) and board.is_insufficient_material():
            return self._by_score("insufficient material")
        return None

    def flag(self, side: Color) -> GameEnd:
        self._time_out = [
            ScoreEvent(side, -TIME_OUT_POINTS, "time-out"),
            ScoreEvent(not side, TIME_OUT_POINTS, "time-out"),
        ]
        self._flagged = None
        end = self._by_score("time-out")
        self._flagged = end
        return end

    def time_out_events(self) -> Sequence[ScoreEvent]:
        """The score events of a time-out, once :meth:`flag` was called."""
        return tuple(self._time_out)


class T20(Variant):
    """Chess T20."""

    id = "t20"
    name = "Chess T20"
    pgn_name = "From Position"
    time_out = TimeOutRule(
        "T20 time-out",
        f"time-out: {TIME_OUT_POINTS} points from the flagged player to the opponent; "
        "the higher score wins",
    )
    """PGN readers and broadcast relays know no T20: its moves are FIDE moves from a set-up
    position, so the record says that (``Variant``, ``SetUp``, ``FEN``) and names the variant
    in a tag of its own (:meth:`T20Game.pgn_tags`)."""

    def start_positions(self) -> Sequence[StartPosition]:
        return (t20_start(),)

    def new_game(self, start: StartPosition | None = None) -> T20Game:
        return T20Game(self, self._check_start(start))
