"""OP-7.124: prometheus_client refuses a metric this process already registered, and the server dies at start-up.

Why a rule of its own: the error is prometheus_client's (`ValueError: Duplicated timeseries in CollectorRegistry:
{'name', …}`, prometheus_client/registry.py), raised when a second collector registers a name the process-wide
registry holds. vLLM's own stat logger removes its earlier `vllm:` collectors before it builds new ones
(`unregister_vllm_metrics`, vllm/v1/metrics/prometheus.py), so the second registration comes from something built
twice beside it: in vllm#39906 (llm-d's image, April 2026) a MultiConnector holding two OffloadingConnectors built
the connector's metrics once per instance. vLLM 0.32's MultiConnector builds them once per connector class
(`build_prom_metrics` skips a class it has seen; read in the 0.32 wheel). Outside the server the same error comes
from a second engine or stat logger created in one Python process (a notebook cell run twice, a test).
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

DUPLICATED = re.compile(r"Duplicated timeseries in CollectorRegistry:?\s*(?P<names>\{[^}]*\}?)?")
_NAME = re.compile(r"'([^']+)'")


def _duplicate_metrics_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    names = _NAME.findall(match["names"] or "")
    whose = (
        f"the names ({', '.join(names[:3])}{', …' if len(names) > 3 else ''}) are vLLM's or a KV connector's"
        if names and all(name.startswith("vllm:") for name in names)
        else f"the names ({', '.join(names[:3])}) say whose metric it is"
        if names
        else "the paste ends before the names, which say whose metric it is"
    )
    return RULE.finding(
        Severity.CRITICAL,
        f"a Prometheus metric was registered twice in one process and prometheus_client refused the second: {whose}",
        summary="vLLM replaces its own earlier metrics, so the second registration is something built twice "
        "beside them: a KV connector configured twice, or a second engine or stat logger in the same process.",
        evidence=[c.log_evidence(event, name="prometheus_client's refusal", value=match.group(0))],
        actions=[
            "A MultiConnector holding the same connector twice (vllm#39906: two OffloadingConnectors, one to CPU "
            "and one to storage) built its metrics once per instance; vLLM 0.32 builds them once per connector "
            "class. Upgrade, or keep one instance of each connector class in --kv-transfer-config.",
            "In your own Python (LLM or AsyncLLMEngine created twice, a custom stat logger or a plugin): build "
            "the engine once per process, or start a fresh process for the second one.",
        ],
        confidence=0.7,
    )


RULE = Rule(
    code="OP-7.124",
    title="a Prometheus metric registered twice in one process",
    category=Category.STARTUP,
    check=c.on_phrase(DUPLICATED, _duplicate_metrics_finding),
    needs=("events",),
    page=RulePage(
        checks="prometheus_client's `ValueError: Duplicated timeseries in CollectorRegistry: {…}`.",
        why="The process dies while building its metrics, before it serves; the names in braces say whose they are.",
        example="llm-d's image with a MultiConnector of two OffloadingConnectors: the API server refuses to start "
        "(vllm#39906).",
        fix="One instance of each KV connector class (or vLLM 0.32, which builds a class's metrics once), one engine "
        "per process.",
        limits="Which component registered first is not in the error; its traceback, when pasted, names the caller.",
        references=["https://github.com/vllm-project/vllm/issues/39906"],
    ),
)

RULES: list[Rule] = [RULE]
