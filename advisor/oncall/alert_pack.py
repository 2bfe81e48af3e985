"""The alert pack: every alert the rule catalog declares, as a Prometheus rules file or a PrometheusRule.

Why generated and not written: the public vLLM packs were written by hand and drifted (a preemption
alert on a series that does not exist, a runbook that contradicts vLLM's advice, no runbook at all).
Here each alert is read from its rule (rules/alerts.py): the expression from the rule's own
threshold constants, `summary` from the rule's title, `runbook_url` from the rule's page, the
`severity` label from the severity the rule gives the situation, and the `rule` label its code, so
an alert and a triage finding of the same situation say the same thing.

Two groups: symptoms users feel (severity critical: page) and causes to look at (warning and info:
ticket, or not routed), the monitoring-mixins convention. The PrometheusRule custom resource holds
the very same groups under `spec`, generated from the same dict, so the two forms cannot drift.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field

from advisor.catalog.vllm_metrics import ITL_BUCKETS, TTFT_BUCKETS
from rules.alerts import DEAD_MANS_SWITCH, DEAD_MANS_SWITCH_RULE, alert_severity
from rules.catalog import ALL_RULES
from rules.catalog.common import DEFAULT_ITL_SLO_S, DEFAULT_TTFT_SLO_S
from rules.model import Alert, Rule

# Where the docs live in the repository (rule-pages.md, oncall.md); a team sets --runbook-base to the
# URL it serves that folder at.
DEFAULT_RUNBOOK_BASE = "docs"
# The dead-man's switch: a scheduled triage (--serve-metrics) whose last success is older than this.
STALE_TRIAGE_S = 900
# How often Prometheus evaluates the pack's groups (vLLM's own example pack uses 30 s too).
EVALUATION_INTERVAL = "30s"
GROUP_PREFIX = "servops-vllm"


class PackSettings(BaseModel):
    """What a team chooses about its pack; everything else comes from the catalog."""

    runbook_base: str = Field(default=DEFAULT_RUNBOOK_BASE, description="URL of the docs/ folder as served")
    ttft_slo_s: float = Field(default=DEFAULT_TTFT_SLO_S, gt=0, allow_inf_nan=False)
    itl_slo_s: float = Field(default=DEFAULT_ITL_SLO_S, gt=0, allow_inf_nan=False)


def pack_alerts() -> list[tuple[Rule, Alert]]:
    """Every (rule, alert) pair of the catalog, in the catalog's order."""
    return [(rule, alert) for rule in ALL_RULES for alert in rule.alerts]


def rules_file(settings: PackSettings) -> dict[str, Any]:
    """The pack as a Prometheus rules file (`groups:`), for rule_files, promtool and Thanos/Mimir rulers."""
    symptoms, causes = [], []
    for rule, alert in pack_alerts():
        entry = _alerting_rule(rule, alert, settings)
        (symptoms if entry["labels"]["severity"] == "critical" else causes).append(entry)
    causes.append(_dead_mans_switch(settings))
    return {
        "groups": [
            {"name": f"{GROUP_PREFIX}-symptoms", "interval": EVALUATION_INTERVAL, "rules": symptoms},
            {"name": f"{GROUP_PREFIX}-causes", "interval": EVALUATION_INTERVAL, "rules": causes},
        ]
    }


def _dead_mans_switch(settings: PackSettings) -> dict[str, Any]:
    """The alert on servops itself: a scheduled triage serving its metrics (`--serve-metrics`) that has
    not completed a run for STALE_TRIAGE_S. Silent where no triage serves them (nothing to watch)."""
    return {
        "alert": DEAD_MANS_SWITCH,
        "expr": f"time() - max by (target) (servops_triage_last_success_timestamp_seconds) > {STALE_TRIAGE_S}",
        "for": "5m",
        "labels": {"severity": "warning", "rule": DEAD_MANS_SWITCH_RULE},
        "annotations": {
            "summary": "servops triage has not completed a run",
            "description": "The scheduled triage of {{ $labels.target }} last succeeded {{ $value | humanizeDuration }}"
            " ago; its findings (servops_triage_finding) are stale.",
            "runbook_url": f"{settings.runbook_base}/oncall.md#findings-as-metrics",
        },
    }


def prometheus_rule(settings: PackSettings, name: str, namespace: str | None, labels: dict[str, str]) -> dict[str, Any]:
    """The same groups as the `PrometheusRule` custom resource of the Prometheus Operator. `labels` must
    match the Prometheus object's ruleSelector (kube-prometheus-stack: `release: <its release name>`)."""
    metadata: dict[str, Any] = {"name": name, "labels": {"app.kubernetes.io/part-of": "servops", **labels}}
    if namespace:
        metadata["namespace"] = namespace
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": metadata,
        "spec": rules_file(settings),
    }


def summary(rule: Rule) -> str:
    """An alert's `summary` for `rule`: its code and title, as its page's heading reads."""
    return f"{rule.code} {rule.title}"


def runbook_url(rule: Rule, base: str) -> str:
    """The rule's page: its heading's anchor in `base`/rule-pages.md (`## OP-5.3: KV cache …`)."""
    return f"{base}/rule-pages.md#{heading_anchor(f'{rule.code}: {rule.title}')}"


def heading_anchor(heading: str) -> str:
    """A Markdown heading's anchor as GitHub and GitLab compute it: lower case, punctuation dropped,
    spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def alert_slos(settings: PackSettings) -> dict[str, tuple[float, float]]:
    """Each latency target as (given, alerted on): the bucket bound of vLLM's histogram at or above the
    target. `histogram_quantile` is exact only at a bound and interpolates between two (TTFT has bounds
    at 1 and 2.5 s, none at 2), so the alert reads the bound that holds the target: it never pages on
    an interpolated estimate, and `servops alerts lint` finds the pack clean."""
    return {
        "ttft": (settings.ttft_slo_s, _bound_at_or_above(settings.ttft_slo_s, TTFT_BUCKETS)),
        "itl": (settings.itl_slo_s, _bound_at_or_above(settings.itl_slo_s, ITL_BUCKETS)),
    }


def _bound_at_or_above(value: float, bounds: tuple[float, ...]) -> float:
    return min((b for b in bounds if b >= value - 1e-9), default=value)


def _alerting_rule(rule: Rule, alert: Alert, settings: PackSettings) -> dict[str, Any]:
    slo = alert_slos(settings)[alert.slo][1] if alert.slo else None
    expr, description = alert.expr, alert.description
    if slo is not None:
        expr = expr.replace("{slo_s}", f"{slo:g}")
        description = description.replace("{slo_s}", f"{slo:g}")
    return {
        "alert": alert.name,
        "expr": expr,
        "for": alert.for_,
        "labels": {"severity": alert_severity(alert.severity), "rule": rule.code},
        "annotations": {
            "summary": summary(rule),
            "description": description,
            "runbook_url": runbook_url(rule, settings.runbook_base),
        },
    }
