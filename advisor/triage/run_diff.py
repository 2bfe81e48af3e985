"""What changed between two triage runs: new, resolved and re-graded findings.

Shared by the result model (a scheduled result carries its `changes_since_last`) and the
scheduler that computes it. Findings are identified by rule code, not title, because a
title carries live values ("KV usage 0.97 > 0.95") that differ on every run.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from rules.model import Finding


class FindingState(BaseModel):
    """A finding as the history remembers it."""

    key: str
    rule: str
    severity: str
    title: str


class RunDiff(BaseModel):
    """What changed between the previous run and this one."""

    previous_run_at: str | None = None
    new: list[FindingState] = Field(default_factory=list)
    resolved: list[FindingState] = Field(default_factory=list)
    severity_changed: list[dict[str, str]] = Field(default_factory=list)
    unchanged: int = 0
    previous_error: str | None = None

    def summary(self) -> str:
        if self.previous_run_at is None:
            return "first run: no earlier history to compare with"
        parts = []
        if self.previous_error:
            parts.append(f"previous run had failed ({self.previous_error})")
        parts += [f"new {f.rule} [{f.severity}] {f.title}" for f in self.new]
        parts += [f"resolved {f.rule} {f.title}" for f in self.resolved]
        parts += [f"{c['rule']} {c['before']} → {c['after']}" for c in self.severity_changed]
        if not parts:
            return f"no change since {self.previous_run_at} ({self.unchanged} finding(s) still open)"
        return f"since {self.previous_run_at}: " + "; ".join(parts)


def finding_states(findings: list[Finding]) -> list[FindingState]:
    """Findings keyed by rule code (titles carry live values, so they are not the identity)."""
    seen: dict[str, int] = {}
    states = []
    for finding in findings:
        seen[finding.rule] = seen.get(finding.rule, 0) + 1
        key = finding.rule if seen[finding.rule] == 1 else f"{finding.rule}#{seen[finding.rule]}"
        states.append(FindingState(key=key, rule=finding.rule, severity=finding.severity.value, title=finding.title))
    return states


def diff_runs(previous, current: list[FindingState]) -> RunDiff:
    """Compare with the previous history entry (anything with created_at, findings, error)."""
    if previous is None:
        return RunDiff()
    before = {state.key: state for state in previous.findings}
    after = {state.key: state for state in current}
    diff = RunDiff(previous_run_at=previous.created_at, previous_error=previous.error)
    diff.new = [state for key, state in after.items() if key not in before]
    diff.resolved = [state for key, state in before.items() if key not in after]
    for key in before.keys() & after.keys():
        if before[key].severity != after[key].severity:
            diff.severity_changed.append(
                {"rule": after[key].rule, "before": before[key].severity, "after": after[key].severity}
            )
        else:
            diff.unchanged += 1
    return diff
