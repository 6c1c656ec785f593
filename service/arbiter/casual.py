"""``casual``: friendly play.  Takebacks are allowed, nothing is penalised, touch-move is not
enforced, a position no legal move explains is simply not accepted (the recogniser waits),
and a flag falls only when a real clock reports it.  Automatic ends (checkmate, stalemate,
fivefold repetition, seventy-five moves, dead position) still end the game."""

from __future__ import annotations

from service.arbiter.base import RuleSet
from service.arbiter.rulings import ClaimKind

CASUAL = RuleSet(
    id="casual",
    name="Casual (takebacks allowed, no penalties)",
    source="casual",
    draw_claims=frozenset({ClaimKind.THREEFOLD, ClaimKind.FIFTY_MOVES}),
)
