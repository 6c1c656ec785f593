"""The interface of a rule set: what the arbiter enforces, and how.

A :class:`RuleSet` is a frozen description of one set of competition rules.  The arbiter
(:class:`service.arbiter.arbiter.Arbiter`) reads it; the modules :mod:`.casual`, :mod:`.fide`
and :mod:`.uscf_speed` each define theirs.  The policies:

- ``touch_move``: FIDE 4.3-4.7 (and US speed 2a) are checked; a violation is offered to the
  opponent as a claim (FIDE 4.8: the right lapses once the claimant touches a piece);
- ``illegal_move`` (:class:`IllegalMovePolicy`): ``none`` (casual: the board is simply not
  accepted until it shows a legal move), ``penalty`` (FIDE 7.5.1-7.5.5, A.4.2, B.3: the
  arbiter restores the position, gives the opponent ``illegal_extra_time`` seconds, and the
  ``illegal_moves_to_lose``-th completed illegal move loses) or ``claim`` (US speed 11: the
  opponent may claim the win until replying);
- ``flag`` (:class:`FlagPolicy`): ``auto`` (FIDE 6.8, 6.9: the arbiter declares a flag fall
  it sees), ``claim`` (US speed 2d, 12: only the opponent may call it; the service offers the
  claim) or ``clock`` (casual: declared only when a real clock reports it);
- ``draw_claims``: which claims a player may make (``threefold``, ``fifty-moves``,
  ``michigan``, ``insufficient-losing-chances``);
- ``takebacks``: completed moves may be taken back (casual) or stand (the rest);
- ``wrong_claim_extra_time``: FIDE 9.5.3, seconds added to the opponent after an incorrect
  draw claim;
- ``displaced_pieces`` (:class:`DisplacedPolicy`): ``none``, ``restore`` (FIDE 7.4.1: the
  player restores them on his own time) or ``opponent-presses`` (US speed 8);
- ``flag_article``, ``checkmate_before_flag_article``, ``stalemate_before_flag_article``:
  the articles cited when a flag falls and when a mate or stalemate made before it stands
  (FIDE 6.9, 5.1.1, 5.2.1; US speed 2b).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from service.arbiter.rulings import ClaimKind


class IllegalMovePolicy(StrEnum):
    """What a completed illegal move brings (see the module docstring)."""

    NONE = "none"
    PENALTY = "penalty"
    CLAIM = "claim"


class FlagPolicy(StrEnum):
    """Who declares a flag fall (see the module docstring)."""

    AUTO = "auto"
    CLAIM = "claim"
    CLOCK = "clock"


class DisplacedPolicy(StrEnum):
    """What pieces displaced at a clock press bring (see the module docstring)."""

    NONE = "none"
    RESTORE = "restore"
    OPPONENT_PRESSES = "opponent-presses"


@dataclass(frozen=True, slots=True)
class RuleSet:
    """One set of competition rules (see the module docstring for each policy)."""

    id: str
    name: str
    source: str  # how articles are cited: "FIDE", "US speed"
    touch_move: bool = False
    illegal_move: IllegalMovePolicy = IllegalMovePolicy.NONE
    illegal_extra_time: float = 0.0
    illegal_moves_to_lose: int | None = None
    press_without_move_is_illegal: bool = False
    flag: FlagPolicy = FlagPolicy.CLOCK
    draw_claims: frozenset[ClaimKind] = frozenset()
    takebacks: bool = True
    wrong_claim_extra_time: float = 0.0
    released_piece: bool = False
    displaced_pieces: DisplacedPolicy = DisplacedPolicy.NONE
    flag_article: str = "flag"
    checkmate_before_flag_article: str = "2b"
    stalemate_before_flag_article: str = "2b"

    def cite(self, article: str) -> str:
        """``"FIDE 7.5.1"`` for article ``"7.5.1"``."""
        return f"{self.source} {article}"


class UnknownRuleSetError(ValueError):
    def __init__(self, rules: str, known: list[str]) -> None:
        super().__init__(f"unknown rule set {rules!r}: choose one of {', '.join(known)}")
