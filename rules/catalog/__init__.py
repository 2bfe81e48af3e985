"""The rule catalog: every rule with a stable code, in a fixed order, and lookup by code.

Codes: OP-1 … OP-6 (the operations runbook, sub-rules `OP-5.3`), AP-n (anti-patterns in the
launch configuration), HL-n (engine health: hangs and death). Codes never change meaning;
a retired rule keeps its code out of use.
"""

from __future__ import annotations

from rules.catalog import (
    antipatterns,
    health,
    op1_cudagraph,
    op1_startup,
    op2_quantization,
    op3_parallelism,
    op4_prefix,
    op5_floors,
    op5_live,
    op6_specdec,
)
from rules.model import Rule

ALL_RULES: tuple[Rule, ...] = tuple(
    op1_startup.RULES
    + op1_cudagraph.RULES
    + op2_quantization.RULES
    + op3_parallelism.RULES
    + op4_prefix.RULES
    + op5_live.RULES
    + op5_floors.RULES
    + op6_specdec.RULES
    + antipatterns.RULES
    + health.RULES
)

_BY_CODE: dict[str, Rule] = {rule.code: rule for rule in ALL_RULES}
if len(_BY_CODE) != len(ALL_RULES):  # pragma: no cover - a duplicate code is a programming error
    raise RuntimeError("duplicate rule code in the catalog")


class UnknownRuleError(LookupError):
    """A rule code that is not in the catalog (a user-facing input error)."""

    user_facing = True


def get_rule(code: str) -> Rule:
    """The rule with this code (case-insensitive, `op-5.3` works); UnknownRuleError otherwise."""
    wanted = code.strip().upper()
    if wanted in _BY_CODE:
        return _BY_CODE[wanted]
    family = [c for c in _BY_CODE if c.startswith(wanted + ".")]
    hint = f"; it has sub-rules {', '.join(family)}" if family else ""
    raise UnknownRuleError(
        f"rule code '{code}' is not in the catalog{hint}; run 'servops rules list' for the codes"
    )


def codes() -> list[str]:
    return [rule.code for rule in ALL_RULES]
