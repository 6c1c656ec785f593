"""Claims in progress: who may claim what, until when, and how they are decided.

The arbiter never decides for the players: where a rule gives the opponent a claim (touch-
move FIDE 4.3/4.8, US speed 2a; an illegal move under US speed 11; a flag fall under US
speed 2d/12), the claim is *offered* and waits for a decision, which comes from
:meth:`~service.arbiter.arbiter.Arbiter.decide` (the admin API) or a board gesture (taking
the king, US speed 11).  A claim a player *makes* that needs the arbiter's judgement (US
speed 10: queen v queen, rook v rook) waits in status ``made``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from service.arbiter.rulings import Claim, ClaimKind, ClaimStatus
from service.variants.base import Color


class Lapse(StrEnum):
    """What ends a claimant's right to an offered claim: touching a piece (FIDE 4.8),
    pressing the clock (US speed 11: until replying), or nothing."""

    TOUCH = "touch"
    PRESS = "press"
    NEVER = "never"


class Decision(StrEnum):
    """A decision on a claim: the claimant claims it / the arbiter upholds it, or not."""

    ACCEPT = "accept"
    REJECT = "reject"


class ClaimError(ValueError):
    """A decision about a claim that does not exist or is no longer open."""


@dataclass(slots=True)
class OpenClaim:
    """A claim and what deciding it needs."""

    claim: Claim
    lapses_on: Lapse
    context: dict[str, Any] = field(default_factory=dict)


class ClaimBook:
    """The open claims of one game, with deterministic ids ``c1``, ``c2``, ..."""

    def __init__(self) -> None:
        self._open: dict[str, OpenClaim] = {}
        self._count = 0

    def reset(self) -> None:
        self._open.clear()

    def any_open(self) -> bool:
        """Whether any claim is open (most of the time none is; asked at every lift and
        press: a method, as a property's call costs several times a method's)."""
        return bool(self._open)

    def offer(
        self,
        time: float,
        kind: ClaimKind,
        claimant: Color | None,
        against: Color | None,
        article: str,
        message: str,
        *,
        status: ClaimStatus = ClaimStatus.OFFERED,
        lapses_on: Lapse = Lapse.NEVER,
        context: dict[str, Any] | None = None,
        detail: dict[str, Any] | None = None,
    ) -> Claim:
        self._count += 1
        claim = Claim(
            time, f"c{self._count}", kind, claimant, against, article, status, message,
            detail or {},
        )  # fmt: skip
        self._open[claim.id] = OpenClaim(claim, lapses_on, context or {})
        return claim

    def get(self, claim_id: str) -> OpenClaim:
        try:
            return self._open[claim_id]
        except KeyError:
            known = ", ".join(self._open) or "none"
            raise ClaimError(f"no open claim {claim_id!r} (open claims: {known})") from None

    def close(self, claim_id: str, time: float, status: ClaimStatus) -> Claim:
        entry = self._open.pop(claim_id)
        return replace(entry.claim, time=time, status=status)

    def lapse(self, time: float, claimant: Color, trigger: Lapse) -> list[tuple[Claim, OpenClaim]]:
        """Close the claims of ``claimant`` that lapse on ``trigger``; returns them (closed)
        with their entries."""
        gone = [
            (cid, entry)
            for cid, entry in self._open.items()
            if entry.claim.claimant == claimant and entry.lapses_on == trigger
        ]
        return [(self.close(cid, time, ClaimStatus.LAPSED), entry) for cid, entry in gone]

    def of_kind(self, kind: ClaimKind) -> list[OpenClaim]:
        return [entry for entry in self._open.values() if entry.claim.kind == kind]

    def close_all(self, time: float) -> list[Claim]:
        return [self.close(cid, time, ClaimStatus.CLOSED) for cid in list(self._open)]

    def open_claims(self) -> list[Claim]:
        return [entry.claim for entry in self._open.values()]

    def open_count(self) -> int:
        """How many claims are open (``len(open_claims())`` without the list)."""
        return len(self._open)
