"""The registry of rule sets: every id a table, the configuration, the command line and the
web know, in the order they are offered (the web's list of rule sets is this order)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from service.arbiter.base import RuleSet, UnknownRuleSetError
from service.arbiter.casual import CASUAL
from service.arbiter.fide import FIDE_BLITZ, FIDE_RAPID, FIDE_STANDARD
from service.arbiter.uscf_speed import USCF_SPEED

RULE_SETS: Mapping[str, RuleSet] = MappingProxyType(
    {rules.id: rules for rules in (FIDE_STANDARD, FIDE_RAPID, FIDE_BLITZ, USCF_SPEED, CASUAL)}
)
"""Every rule set by id (its :attr:`RuleSet.name` says what it is)."""


def get_rules(rules_id: str) -> RuleSet:
    """The rule set registered under ``rules_id``; :class:`UnknownRuleSetError` (naming the
    known ids) for another."""
    try:
        return RULE_SETS[rules_id]
    except KeyError:
        raise UnknownRuleSetError(rules_id, list(RULE_SETS)) from None
