"""The arbiter: rule sets applied to the recogniser's actions, the lifts and the clock.

``get_rules(id)`` returns a :class:`RuleSet` (the ids are those of :data:`RULE_SETS`,
:mod:`.rule_sets`); :class:`Arbiter` applies one to a game and reports
:class:`Irregularity`, :class:`Claim` and :class:`Ruling` items (:mod:`.rulings`).
"""

from __future__ import annotations

from service.arbiter.arbiter import Arbiter, ArbiterError, ArbiterView
from service.arbiter.base import (
    DisplacedPolicy,
    FlagPolicy,
    IllegalMovePolicy,
    RuleSet,
    UnknownRuleSetError,
)
from service.arbiter.casual import CASUAL
from service.arbiter.fide import FIDE_BLITZ, FIDE_RAPID, FIDE_STANDARD
from service.arbiter.physical import Reading, read_difference
from service.arbiter.rule_sets import RULE_SETS, get_rules
from service.arbiter.rulings import (
    ArbiterEvent,
    Claim,
    ClaimKind,
    ClaimStatus,
    Irregularity,
    IrregularityKind,
    Ruling,
    RulingKind,
)
from service.arbiter.uscf_speed import USCF_SPEED

__all__ = [
    "CASUAL",
    "FIDE_BLITZ",
    "FIDE_RAPID",
    "FIDE_STANDARD",
    "RULE_SETS",
    "USCF_SPEED",
    "Arbiter",
    "ArbiterError",
    "ArbiterEvent",
    "ArbiterView",
    "Claim",
    "ClaimKind",
    "ClaimStatus",
    "DisplacedPolicy",
    "FlagPolicy",
    "IllegalMovePolicy",
    "Irregularity",
    "IrregularityKind",
    "Reading",
    "RuleSet",
    "Ruling",
    "RulingKind",
    "UnknownRuleSetError",
    "get_rules",
    "read_difference",
]
