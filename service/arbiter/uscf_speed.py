"""``uscf-speed``: the US Chess speed chess rules (adopted 2000) with the project's decisions
(``docs/rules.md``).  Articles are cited as ``US speed N`` (rule N of those rules).

- 2a touch-move applies (offered to the opponent as a claim);
- 2b checkmate and stalemate take precedence over a simultaneous flag fall;
- 2c a player with insufficient mating material only draws when the opponent oversteps;
- 2d / 12 a flag fall is called by the opponent only: the service offers the claim; both
  flags down before the claim is a draw;
- 8 a knocked-over piece is replaced before the press; the opponent may press back to
  enforce it;
- 10 a draw claim in queen v queen or rook v rook (the arbiter rules: the opponent may show
  a forced win);
- 11 an illegal move is correctable until the press; after it the opponent may claim the
  win (a draw when lacking mating material) until replying; taking the king left in check
  is a claim; an unclaimed illegal move stands if the position is legal, else play backs up
  to the infraction;
- 13 the Michigan twenty-move count (forty in K+Q v K+R, K+B+N v K, K+B+B v K, K+R v K).
"""

from __future__ import annotations

from service.arbiter.base import DisplacedPolicy, FlagPolicy, IllegalMovePolicy, RuleSet
from service.arbiter.rulings import ClaimKind

USCF_SPEED = RuleSet(
    id="uscf-speed",
    name="US speed chess rules (G/5 or faster)",
    source="US speed",
    touch_move=True,
    illegal_move=IllegalMovePolicy.CLAIM,
    flag=FlagPolicy.CLAIM,
    draw_claims=frozenset(
        {
            ClaimKind.MICHIGAN,
            ClaimKind.INSUFFICIENT_LOSING_CHANCES,
            ClaimKind.THREEFOLD,
            ClaimKind.FIFTY_MOVES,
        }
    ),
    takebacks=False,
    released_piece=True,
    displaced_pieces=DisplacedPolicy.OPPONENT_PRESSES,
)
