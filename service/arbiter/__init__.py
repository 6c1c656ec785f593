"""The arbiter: rule sets applied to the recogniser's actions, the lifts and the clock.

``get_rules("casual" | "fide-standard" | "fide-rapid" | "fide-blitz" | "uscf-speed")`` returns
a :class:`RuleSet`; :class:`Arbiter` applies one to a game and reports
:class:`Irregularity`, :class:`Claim` and :class:`Ruling` items (:mod:`.rulings`).
"""

from __future__ import annotations

from service.arbiter.base import RuleSet, UnknownRuleSetError
from service.arbiter.casual import CASUAL
from service.arbiter.engine import Arbiter, ArbiterView
from service.arbiter.fide import FIDE_BLITZ, FIDE_RAPID, FIDE_STANDARD
from service.arbiter.physical import Reading, read_difference
from service.arbiter.rulings import ArbiterEvent, Claim, Irregularity, Ruling
from service.arbiter.uscf_speed import USCF_SPEED

RULE_SETS: dict[str, RuleSet] = {
    rules.id: rules for rules in (CASUAL, FIDE_STANDARD, FIDE_RAPID, FIDE_BLITZ, USCF_SPEED)
}


def get_rules(rules_id: str) -> RuleSet:
    """The rule set registered under ``rules_id``."""
    try:
        return RULE_SETS[rules_id]
    except KeyError:
        raise UnknownRuleSetError(rules_id, list(RULE_SETS)) from None


__all__ = [
    "CASUAL",
    "FIDE_BLITZ",
    "FIDE_RAPID",
    "FIDE_STANDARD",
    "RULE_SETS",
    "USCF_SPEED",
    "Arbiter",
    "ArbiterEvent",
    "ArbiterView",
    "Claim",
    "Irregularity",
    "Reading",
    "RuleSet",
    "Ruling",
    "UnknownRuleSetError",
    "get_rules",
    "read_difference",
]
