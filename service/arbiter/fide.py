"""The FIDE Laws of Chess as in force from 1 January 2023: standard, rapid (Appendix A) and
blitz (Appendix B) play, as three parameter sets of one rule set.

- Article 4.3-4.7 touch-move, castling after the rook (4.4.2), a released piece stays (4.7);
  4.8: the opponent's right to claim lapses once the opponent touches a piece;
- 6.8/6.9 flag fall: declared when observed; a loss, or a draw when the opponent cannot
  checkmate by any series of legal moves; checkmate and stalemate made before it stand
  (5.1.1, 5.2.1);
- 7.4.1 displaced pieces are restored by the player on his own time;
- 7.5.1 an illegal move completed by the clock press: the position before it is reinstated,
  and 4.3 applies to the replacing move; 7.5.2 a pawn on the last rank not replaced counts as
  illegal and becomes a queen; 7.5.3 a press without a move counts as an illegal move;
  7.5.5 the first completed illegal move gives the opponent two minutes, the second loses
  (a draw if the opponent cannot mate); in rapid and blitz (A.4.2, B.3 as amended in 2023)
  one minute, the second loses;
- 9.2 threefold and 9.3 fifty moves on claim; 9.5 an incorrect claim gives the opponent two
  minutes (one in rapid and blitz); 9.6 fivefold and seventy-five moves, 5.2.2 dead position,
  automatically.
"""

from __future__ import annotations

from dataclasses import replace

from service.arbiter.base import DisplacedPolicy, FlagPolicy, IllegalMovePolicy, RuleSet
from service.arbiter.rulings import ClaimKind

FIDE_STANDARD = RuleSet(
    id="fide-standard",
    name="FIDE Laws of Chess 2023, standard play",
    source="FIDE",
    touch_move=True,
    illegal_move=IllegalMovePolicy.PENALTY,
    illegal_extra_time=120.0,
    illegal_moves_to_lose=2,
    press_without_move_is_illegal=True,
    flag=FlagPolicy.AUTO,
    draw_claims=frozenset({ClaimKind.THREEFOLD, ClaimKind.FIFTY_MOVES}),
    takebacks=False,
    wrong_claim_extra_time=120.0,
    released_piece=True,
    displaced_pieces=DisplacedPolicy.RESTORE,
    flag_article="6.9",
    checkmate_before_flag_article="5.1.1",
    stalemate_before_flag_article="5.2.1",
)
FIDE_RAPID = replace(
    FIDE_STANDARD,
    id="fide-rapid",
    name="FIDE Laws of Chess 2023, rapid (Appendix A)",
    illegal_extra_time=60.0,
    wrong_claim_extra_time=60.0,
)
FIDE_BLITZ = replace(
    FIDE_RAPID,
    id="fide-blitz",
    name="FIDE Laws of Chess 2023, blitz (Appendix B)",
)
