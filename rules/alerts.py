"""A rule stated over Prometheus series: the alert `servops alerts export` writes for it.

Why beside the rules and not in a pack of its own: the public vLLM packs drifted from what vLLM
exposes (both query `vllm:num_preemptions`, a series that does not exist, so their preemption
alert can never fire) and from vLLM's advice (one tells on-call to lower
`--gpu-memory-utilization` against preemptions). Here an alert is declared in the rule's own
`Rule(...)`, its expression built from the same module constants the rule's check compares
against, its summary the rule's title and its runbook the rule's page: one source, so the pack
cannot say something the rule does not.

Only what a rule can state over /metrics series becomes an alert: a threshold on a gauge, a rate
or a histogram quantile over a window. A rule that needs the log, the launch flags or a ramp has
none (triage keeps those).

Every expression keeps its own guard against idle servers: a quantile only where the window saw
at least MIN_REQUESTS_PER_S requests (an idle histogram gives NaN, and NaN never fires: the alert
would be silently off), a ratio only over a non-zero denominator, a stall only while requests are
in the server. Severities follow the monitoring-mixins convention: `critical` pages (a symptom
users feel now), `warning` makes a ticket (a cause to look at), `info` is not routed.
"""

from __future__ import annotations

from typing import Literal

from rules.metrics import METRIC_ALIASES
from rules.model import Alert, Severity

__all__ = [
    "BY",
    "CLIENT_ALERT_PREFIX",
    "DEAD_MANS_SWITCH",
    "DEAD_MANS_SWITCH_RULE",
    "MIN_REQUESTS_PER_S",
    "Alert",
    "alert_severity",
    "client_alert_name",
    "latency_over_slo",
    "quantile",
    "rate",
    "series",
    "spellings",
    "traffic_at_least",
]

# The labels every expression aggregates by: one alert per server (Prometheus's `instance`) and
# served model. vLLM labels its series with `model_name` (and `engine` inside one server).
BY = "instance, model_name"
# Below this request rate (per second, over the window) a latency quantile is noise: one slow
# request of two is a p99 of that request. 0.05/s is 15 requests in a 5-minute window.
MIN_REQUESTS_PER_S = 0.05

AlertSeverity = Literal["critical", "warning", "info"]

# The pack's alert on servops itself (a scheduled triage that stopped succeeding) and its `rule` label: declared here,
# beside the rules' own alerts, because the pack writes them and triage reads them back from a pasted notification.
DEAD_MANS_SWITCH = "ServopsTriageNotSucceeding"
DEAD_MANS_SWITCH_RULE = "servops-triage"
# The alert names servops's Alertmanager client posts findings under: one per rule, `OP-5.3` -> `ServopsOP5_3`.
CLIENT_ALERT_PREFIX = "Servops"


def client_alert_name(code: str) -> str:
    """`OP-5.3` -> `ServopsOP5_3`: one alert name per rule, so Alertmanager groups by rule."""
    return CLIENT_ALERT_PREFIX + code.replace("-", "").replace(".", "_")


def alert_severity(severity: Severity) -> AlertSeverity:
    """The rule's severity as the alert's `severity` label: critical and high page; medium is a
    ticket; low and info are not routed."""
    if severity in (Severity.CRITICAL, Severity.HIGH):
        return "critical"
    return "warning" if severity is Severity.MEDIUM else "info"


def spellings(name: str) -> tuple[str, ...]:
    """Every name vLLM has exposed a series under, newest first (rules.metrics.METRIC_ALIASES), so one
    pack serves old and new servers: `gpu_cache_usage_perc` became `kv_cache_usage_perc` in 0.9.2, and
    dashboards that knew only one name went blank for months."""
    return METRIC_ALIASES.get(name, (name,))


def series(name: str) -> str:
    """A series by every name it has had (`(a or b)`)."""
    names = spellings(name)
    return names[0] if len(names) == 1 else "(" + " or ".join(names) + ")"


def rate(name: str, window: str) -> str:
    """The per-second rate of a counter summed per server and model, by every name it has had."""
    return " or ".join(f"sum by ({BY}) (rate({n}[{window}]))" for n in spellings(name))


def traffic_at_least(histogram: str, window: str, per_s: float = MIN_REQUESTS_PER_S) -> str:
    """The guard of a latency quantile: the window saw at least `per_s` requests a second."""
    return f"sum by ({BY}) (rate({histogram}_count[{window}])) >= {per_s:g}"


def quantile(q: float, histogram: str, window: str) -> str:
    """`histogram_quantile` over the buckets' rate of one spelling of a histogram, per server and model."""
    return f"histogram_quantile({q:g}, sum by (le, {BY}) (rate({histogram}_bucket[{window}])))"


def latency_over_slo(q: float, histogram: str, window: str) -> str:
    """A latency quantile above `{slo_s}` where the window had traffic enough to read one, by every name
    the histogram has had."""
    return " or ".join(
        f"({quantile(q, name, window)} > {{slo_s}}) and on ({BY}) ({traffic_at_least(name, window)})"
        for name in spellings(histogram)
    )
