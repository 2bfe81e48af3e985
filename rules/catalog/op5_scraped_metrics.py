"""OP-5.50: a metrics scraper in front of vLLM expects a family vLLM's /metrics does not have.

Why a rule of its own: routers that pick a vLLM pod by its load (the Gateway API Inference Extension's endpoint picker,
llm-d's scheduler built on it) scrape each pod's /metrics for named families, and log an error per scrape for one
that is missing (`metric family "vllm:lora_requests_info" not found`, kubernetes-sigs/gateway-api-inference-extension
#2900). Two causes, told apart by the name: a family vLLM exports only when a feature is on (vLLM 0.32's
v1/metrics/loggers.py registers `vllm:lora_requests_info` only when LoRA is configured, `--enable-lora`; the extension's
own maintainers noted that without LoRA the metric is absent and the picker logs errors, its PR #163), or a family
renamed or removed in the vLLM release the pods run (`vllm:gpu_cache_usage_perc`, which 0.9.2 renamed
`vllm:kv_cache_usage_perc` and 0.12.0 removed), which servops' table of vLLM's metrics by release names.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

LORA_INFO = "vllm:lora_requests_info"


def _check_scraped_metric(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.SCRAPED_METRIC_MISSING)
    if not events:
        return []
    event = events[0]
    if event.message == LORA_INFO:
        return [_lora_finding(event)]
    return [_renamed_finding(event) if event.known_releases else _unknown_finding(event)]


def _evidence(event: LogEvent) -> list:
    return [c.log_evidence(event, name="the family the scraper missed", value=event.message)]


def _lora_finding(event: LogEvent) -> Finding:
    return RULE.finding(
        Severity.LOW,
        f"the endpoint picker scrapes {LORA_INFO}, which vLLM exports only with LoRA on (--enable-lora)",
        summary="vLLM registers its LoRA gauge only when the engine is configured for LoRA adapters, so a pod "
        "serving without them has no such family, and the picker logs this on every scrape. Routing works without "
        "it; only LoRA-affinity routing needs it.",
        evidence=_evidence(event),
        alternatives=[
            ConfigChange(
                flag="--enable-lora",
                proposed="true",
                reason="only if the pool serves LoRA adapters and should route by them: vLLM then exports the gauge",
                cost="memory for the adapters' slots (--max-loras, --max-lora-rank) and LoRA's kernels on every step",
            )
        ],
        actions=[
            "Without LoRA adapters, the error is noise: leave vLLM as it is and see the picker's own settings for "
            "the LoRA-info family it scrapes (its metrics flags name it) to stop the lookup.",
        ],
        confidence=0.85,
    )


def _renamed_finding(event: LogEvent) -> Finding:
    """A family vLLM's table knows: renamed (its successor), removed after a release, or too new for the pods."""
    successor = event.accepted_instead
    since, _, until = (event.known_releases or "").partition("–")
    current = not until  # the table's newest release still exports it
    if successor:
        said = f"vLLM renamed it {successor} (the old name lasted to {until})"
    elif current:
        said = f"vLLM exports it from {since} on: the pods run an older release, or not vLLM"
    else:
        said = f"vLLM stopped exporting it after {until}"
    return RULE.finding(
        Severity.MEDIUM,
        f"the scraper expects {event.message}: {said}",
        summary="The scraper was configured for another vLLM release than the pods run: the family is missing from "
        "every scrape, and whatever reads it (routing by load, autoscaling, alerts) sees nothing.",
        evidence=_evidence(event),
        actions=[
            f"Point the scraper's metric setting at {successor}"
            if successor
            else "Match the scraper's settings to the pods' vLLM release (`GET /version` on a pod names it)",
            "Check alerts and dashboards for the same name: `servops alerts lint --vllm-version <release> FILE` reads "
            "them against the release's families.",
        ],
        confidence=0.85,
    )


def _unknown_finding(event: LogEvent) -> Finding:
    return RULE.finding(
        Severity.MEDIUM,
        f"the scraper expects {event.message}, a family servops' table of vLLM's metrics does not hold",
        summary="vLLM exports a fixed set of families per release, some only with a feature on (speculative "
        "decoding's with a draft, LoRA's with --enable-lora). A name outside them is another server's, a feature "
        "this server runs without, or a typo.",
        evidence=_evidence(event),
        actions=[
            "`curl -s http://<pod>:8000/metrics | grep '^# TYPE vllm:'` lists what the pod exports; set the scraper "
            "to one of them, or turn on the feature the family belongs to.",
        ],
        confidence=0.6,
    )


RULE = Rule(
    code="OP-5.50",
    title="a metrics scraper expects a family vLLM does not export",
    category=Category.CONFIGURATION,
    check=_check_scraped_metric,
    needs=("events",),
    page=RulePage(
        checks='The endpoint picker\'s `metric family "vllm:…" not found` (Gateway API Inference Extension, '
        "llm-d's scheduler).",
        why="A family exported only with a feature on, or renamed in the release the pods run: the scraper's "
        "setting or the server's flags are out of step.",
        example='`"error":"metric family \\"vllm:lora_requests_info\\" not found"` from the picker of the '
        "extension's v1.5.0 guide (kubernetes-sigs/gateway-api-inference-extension#2900).",
        fix="--enable-lora where LoRA routing is wanted, else quiet the picker's LoRA metric; the successor's name "
        "for a renamed family.",
        limits="The pods' vLLM release is not in the picker's line; the table's releases are vLLM's, 0.8–0.34.",
        references=[
            "https://github.com/kubernetes-sigs/gateway-api-inference-extension/issues/2900",
            "https://github.com/kubernetes-sigs/gateway-api-inference-extension/pull/163",
        ],
    ),
)

RULES: list[Rule] = [RULE]
