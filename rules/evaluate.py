"""Evaluation: run the catalog over Facts, rank the findings, resolve conflicting flag changes.

Ranking (most urgent first): severity, then confidence, then evidence strength (measured
evidence weighs more than configured or assumed), then the rule code so that equal findings
always come out in the same order.

Conflict resolution: docs/design.md says conflicting changes to one flag are resolved, not both
emitted. Walking the ranked list, the first finding to propose a flag keeps it; a later
finding's change to the same flag is moved to its `superseded` list with a note naming the
winner (a different value is a conflict; the same value is a duplicate). The finding itself
stays: its evidence still matters. Alternatives are advisory and never conflict.

A rule that raises is recorded in `errors` instead of stopping the others: triage on a
broken server must still report what it can. A fallback rule's finding (VC-2) is kept only when no
other finding cites one of its log lines: the rule that explains an error outranks the one that names it.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, Field

from rules.facts import Facts
from rules.model import Evidence, Finding, Rule, Severity, SupersededChange


class Resolution(BaseModel):
    """One dropped change: which rule wanted what, and which rule's value was kept."""

    flag: str
    kept_rule: str
    kept_proposed: str
    dropped_rule: str
    dropped_proposed: str
    duplicate: bool


class RuleError(BaseModel):
    rule: str
    error: str


class Evaluation(BaseModel):
    """Ranked findings plus what was skipped, resolved or broken along the way."""

    findings: list[Finding] = Field(default_factory=list)
    resolutions: list[Resolution] = Field(default_factory=list)
    rules_run: list[str] = Field(default_factory=list)
    rules_skipped: list[str] = Field(default_factory=list)  # inputs absent
    errors: list[RuleError] = Field(default_factory=list)

    @property
    def top(self) -> Finding | None:
        return self.findings[0] if self.findings else None

    def by_rule(self, code: str) -> list[Finding]:
        return [f for f in self.findings if f.rule == code]

    def worst_severity(self) -> Severity | None:
        return self.findings[0].severity if self.findings else None


def rank_key(finding: Finding) -> tuple:
    return (finding.severity.rank, -finding.confidence, -finding.evidence_strength, finding.rule, finding.title)


def rank(findings: Iterable[Finding]) -> list[Finding]:
    """Most urgent first (see module docstring)."""
    return sorted(findings, key=rank_key)


def resolve(ranked: list[Finding]) -> tuple[list[Finding], list[Resolution]]:
    """Keep one change per flag, from the highest-ranked finding; record the rest."""
    kept: dict[str, tuple[str, str]] = {}  # flag -> (rule, proposed)
    resolutions: list[Resolution] = []
    out: list[Finding] = []
    for finding in ranked:
        finding = finding.model_copy(deep=True)
        survivors = []
        for change in finding.changes:
            if change.flag not in kept:
                kept[change.flag] = (finding.rule, change.proposed)
                survivors.append(change)
                continue
            winner_rule, winner_value = kept[change.flag]
            duplicate = winner_value == change.proposed
            note = (
                f"same change already proposed by {winner_rule}"
                if duplicate
                else f"conflicts with {winner_rule}, which proposes {change.flag} {winner_value} and ranks higher"
            )
            finding.superseded.append(
                SupersededChange(change=change, kept_rule=winner_rule, kept_proposed=winner_value, note=note)
            )
            resolutions.append(
                Resolution(
                    flag=change.flag,
                    kept_rule=winner_rule,
                    kept_proposed=winner_value,
                    dropped_rule=finding.rule,
                    dropped_proposed=change.proposed,
                    duplicate=duplicate,
                )
            )
        finding.changes = survivors
        out.append(finding)
    return out, resolutions


def evaluate(facts: Facts, rules: Iterable[Rule] | None = None) -> Evaluation:
    """Run `rules` (default: the whole catalog) over `facts`; ranked, resolved findings."""
    if rules is None:
        from rules.catalog import ALL_RULES

        rules = ALL_RULES
    evaluation = Evaluation()
    findings: list[Finding] = []
    fallbacks: list[tuple[Rule, Finding]] = []
    for rule in rules:
        if not rule.applies_to(facts):
            evaluation.rules_skipped.append(rule.code)
            continue
        evaluation.rules_run.append(rule.code)
        try:
            found = rule.check(facts)
            if rule.fallback:
                fallbacks.extend((rule, finding) for finding in found)
            else:
                findings.extend(found)
        except Exception as exc:  # noqa: BLE001 - one broken rule must not hide the others
            evaluation.errors.append(RuleError(rule=rule.code, error=f"{type(exc).__name__}: {exc}"))
    findings.extend(unexplained(fallbacks, findings))
    evaluation.findings, evaluation.resolutions = resolve(rank(findings))
    return evaluation


def unexplained(fallbacks: list[tuple[Rule, Finding]], findings: list[Finding]) -> list[Finding]:
    """The fallback findings no other finding explains (`Rule.fallback`): for "line", none of their log lines is
    cited by another rule; for "failure", no other finding is at least as severe, nor cites one of their lines."""
    cited = {_log_line(e) for finding in findings for e in finding.evidence} - {None}
    worst = min((f.severity.rank for f in findings), default=None)
    kept = []
    for rule, finding in fallbacks:
        explained = bool(cited & {_log_line(e) for e in finding.evidence})
        if rule.fallback == "failure":
            explained = explained or (worst is not None and worst <= finding.severity.rank)
        if not explained:
            kept.append(finding)
    return kept


def _log_line(evidence: Evidence) -> str | None:
    return evidence.location if evidence.source == "log" and evidence.location else None
