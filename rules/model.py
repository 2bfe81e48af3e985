"""The rule model: stable codes, a page per rule, findings with the measured value beside the threshold.

Modelled on ruff / kube-score / Popeye (docs/rules.md): a rule has a code users can grep and cite
(`OP-5.3`, `AP-1`, `HL-1`), a page (what it checks, why, an example, the fix, its limits), and
produces `Finding`s. A finding's title puts the measured value beside the threshold
("KV usage 0.99 > 0.95"); its evidence says where each number came from; its `changes` name
flags exactly as `vllm serve` spells them, with what the change costs and whether it is
safe (no behaviour change beyond the stated cost) or unsafe (may change accuracy or reject
requests), like ruff's fix safety. The advisor fills `predicted_effect` later.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field, computed_field

if TYPE_CHECKING:
    from rules.facts import Facts


class Severity(str, Enum):
    """Small scale, most urgent first: critical = not serving; high = hurting users now;
    medium = a measured risk or waste; low = a configuration smell; info = a note."""

    CRITICAL = "critical"
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"
    INFO = "info"

    @property
    def rank(self) -> int:
        """0 for critical … 4 for info (sort ascending = most urgent first)."""
        return list(Severity).index(self)


class Category(str, Enum):
    STARTUP = "startup"
    MEMORY = "memory"
    QUANTIZATION = "quantization"
    PARALLELISM = "parallelism"
    PREFIX_CACHE = "prefix_cache"
    LATENCY = "latency"
    SATURATION = "saturation"
    KV_CACHE = "kv_cache"
    SPEC_DECODE = "spec_decode"
    RELIABILITY = "reliability"
    CONFIGURATION = "configuration"
    HEALTH = "health"


class Evidence(BaseModel):
    """One measured fact behind a finding: a metric value, a log line, a ramp figure or a flag."""

    source: str  # "metrics" | "prometheus" | "log" | "config" | "advisor" | "ramp" | "probe" | "workload"
    name: str  # metric name, event kind, flag or figure
    description: str = ""
    value: bool | int | float | str | None = None
    threshold: int | float | str | None = None
    comparison: str | None = None  # ">", "<", ">=", "==" …: how value relates to threshold
    unit: str | None = None
    location: str | None = None  # file:line for logs, instance for metrics
    raw: str | None = None  # the log line as printed

    @property
    def weight(self) -> float:
        """How strongly this evidence supports a finding: measured > configured > assumed."""
        if self.source in ("metrics", "prometheus", "log", "ramp", "probe"):
            return 1.0
        if self.source in ("config", "advisor", "workload"):
            return 0.6
        return 0.3


class PredictedEffect(BaseModel):
    """What the advisor's memory model predicts the change does (filled outside rules/)."""

    text: str = ""
    figures: dict[str, float] = Field(default_factory=dict)
    command: str = ""  # the `servops predict …` that reproduces these figures, when a ramp was given


class ConfigChange(BaseModel):
    """One change to how the server runs: a `vllm serve` flag (as vLLM spells it), an environment
    variable of the server's process, or a setting of its host or container (`--shm-size`)."""

    flag: str  # the flag, the variable's name or the setting, as `kind` says
    current: str | None = None
    proposed: str  # "" for a flag: take it off the command; for a variable: unset it
    reason: str
    cost: str = ""
    safety: str = "safe"  # "safe" | "unsafe" (may change accuracy or reject requests)
    predicted_effect: PredictedEffect | None = None
    kind: Literal["flag", "env", "setting"] = "flag"

    @property
    def removes(self) -> bool:
        """A flag or environment variable proposed empty: taken off the command, or unset."""
        return self.kind in ("flag", "env") and self.proposed == ""

    def command_line(self) -> str:
        """`--flag value` (booleans as `--flag` / `--no-flag`) for pasting into `vllm serve`, `remove --flag` for a
        flag proposed empty (taken off the command); `NAME=value` for an environment variable, `unset NAME` for
        one proposed empty; the setting and its value for the host or container."""
        if self.kind == "env":
            return f"unset {self.flag}" if self.removes else f"{self.flag}={self.proposed}"
        if self.kind == "setting":
            return f"{self.flag} {self.proposed}".strip()
        if self.removes:
            return f"remove {self.flag}"
        if self.proposed.lower() == "true":
            return self.flag
        if self.proposed.lower() == "false":
            return "--no-" + self.flag.removeprefix("--")
        return f"{self.flag} {self.proposed}"


class SupersededChange(BaseModel):
    """A change dropped in conflict resolution, kept so the report can show the alternative."""

    change: ConfigChange
    kept_rule: str
    kept_proposed: str
    note: str


class Finding(BaseModel):
    rule: str
    severity: Severity
    category: Category
    title: str  # one line, measured value beside the threshold
    summary: str = ""
    evidence: list[Evidence] = Field(default_factory=list)
    changes: list[ConfigChange] = Field(default_factory=list)  # apply together
    alternatives: list[ConfigChange] = Field(default_factory=list)  # or instead of `changes`
    actions: list[str] = Field(default_factory=list)  # remedies that are not flags
    confidence: float = Field(default=0.8, ge=0.0, le=1.0)
    superseded: list[SupersededChange] = Field(default_factory=list)

    @property
    def evidence_strength(self) -> float:
        return sum(e.weight for e in self.evidence)

    @computed_field  # in the JSON too, like a Prometheus alert's runbook_url
    @property
    def explain(self) -> str:
        """The command that prints this rule's page."""
        return f"servops rules explain {self.rule}"


class RulePage(BaseModel):
    """The page `servops rules explain CODE` prints and reports render."""

    checks: str
    why: str
    example: str
    fix: str
    limits: str
    references: list[str] = Field(default_factory=list)

    def sections(self) -> list[tuple[str, str]]:
        """(heading, text) in the order every rendering of a page uses (`servops rules explain`,
        docs/rule-pages.md, the reports)."""
        return [
            ("What it checks", self.checks),
            ("Why it matters", self.why),
            ("Example", self.example),
            ("Fix", self.fix),
            ("Limits", self.limits),
        ]


@dataclass(frozen=True, kw_only=True)
class Alert:
    """One Prometheus alerting rule for a servops rule.

    `name`: CamelCase, prefixed `Vllm` (one prefix for the pack); `expr`: PromQL, with `{slo_s}` where
    the latency target goes (alerts on the user's `--slo`); `for_`: how long the expression must hold;
    `severity`: the severity the rule gives this situation; `description`: a template with the
    measured value (`{{ $value }}`) and the server (`{{ $labels.instance }}`); `slo`: the latency
    metric whose `--slo` bound the expression takes, if any.
    """

    name: str
    expr: str
    for_: str
    severity: Severity
    description: str
    slo: Literal["ttft", "itl"] | None = None


@dataclass(frozen=True, kw_only=True)
class Rule:
    """A stable code, a page, and a pure check over Facts.

    The catalog declares every rule one way, keyword arguments only, right after its check:

        RULE_X = Rule(code="OP-5.2", title=..., category=Category.SATURATION, check=_check_x,
                      needs=("window",), page=RulePage(checks=f"... >= {THRESHOLD:.2f} ...", ...))

    Thresholds are module constants formatted into the title and page, never restated as literals.
    `needs` lists Facts attributes of which at least one must be present for the rule to
    run; when none is, evaluation records the rule as skipped instead of silently passing.
    `fallback` marks a rule that names what nothing else explains, so the rule that knows the cause is not
    followed by one that says to read the traceback. "line" (VC-2: one exception by its class and component):
    evaluation drops its finding when another rule's finding cites the same log line. "failure" (OP-1.9: the
    engine failed to start and nothing says why): it drops it when any other finding is at least as severe,
    since that finding names a cause of the failure as a whole, or cites one of its log lines, as for "line".
    """

    code: str
    title: str
    category: Category
    page: RulePage
    check: Callable[[Facts], list[Finding]]
    needs: tuple[str, ...] = field(default_factory=tuple)
    alerts: tuple[Alert, ...] = ()  # the rule over Prometheus series (rules/alerts.py): what the pack exports
    fallback: Literal["", "line", "failure"] = ""

    def applies_to(self, facts: Facts) -> bool:
        if not self.needs:
            return True
        for name in self.needs:
            value = getattr(facts, name, None)
            if value:  # None, empty list and empty models are absent
                return True
        return False

    def evaluate(self, facts: Facts) -> list[Finding]:
        return self.check(facts) if self.applies_to(facts) else []

    def finding(self, severity: Severity, title: str, **fields) -> Finding:
        """A Finding stamped with this rule's code and category."""
        return Finding(rule=self.code, severity=severity, category=self.category, title=title, **fields)

    def explain(self) -> str:
        """The rule page as plain text (also what reports show)."""
        page = self.page
        parts = [f"{self.code}  {self.title}", f"category: {self.category.value}"]
        parts += [f"{heading}\n{text}" for heading, text in page.sections()]
        if page.references:
            parts.append("References\n" + "\n".join(f"- {ref}" for ref in page.references))
        return "\n\n".join(parts) + "\n"
