"""OP-5.50: a metrics scraper in front of vLLM expecting a family vLLM's /metrics does not have."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op5_scraped_metrics
from rules.evaluate import evaluate
from rules.facts import Facts

# kubernetes-sigs/gateway-api-inference-extension#2900, verbatim: the endpoint picker's JSON log
PICKER = (
    '{"level":"error","ts":1777491250.9224765,"caller":"datalayer/collector.go:211","msg":"extract failed",'
    '"endpoint":"10.72.7.74","extractor":"core-metrics-extractor/core-metrics-extractor","error":"metric family '
    '\\"vllm:lora_requests_info\\" not found","stacktrace":"sigs.k8s.io/gateway-api-inference-extension/pkg/epp/'
    "datalayer.logErrorTransition\\n\\t/src/pkg/epp/datalayer/collector.go:211\\nsigs.k8s.io/gateway-api-inference-"
    'extension/pkg/epp/datalayer.(*Collector).startCollection.func1.1\\n\\t/src/pkg/epp/datalayer/collector.go:157"}'
)


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_the_lora_gauge_is_exported_only_with_lora_on():
    top = evaluate(_facts([PICKER])).findings[0]
    assert top.rule == "OP-5.50" and "--enable-lora" in top.title
    assert [(a.flag, a.proposed) for a in top.alternatives] == [("--enable-lora", "true")]
    assert top.actions[0].startswith("Without LoRA adapters, the error is noise")


def test_a_renamed_family_names_its_successor_and_the_releases_that_had_it():
    [finding] = op5_scraped_metrics.RULE.evaluate(
        _facts(['error: metric family "vllm:gpu_cache_usage_perc" not found'])
    )
    assert finding.title == (
        "the scraper expects vllm:gpu_cache_usage_perc: vLLM renamed it vllm:kv_cache_usage_perc (the old name lasted "
        "to 0.11)"
    )
    assert finding.actions[0] == "Point the scraper's metric setting at vllm:kv_cache_usage_perc"


def test_a_family_newer_than_the_pods_says_so():
    [finding] = op5_scraped_metrics.RULE.evaluate(_facts(['metric family "vllm:admission_rejections_total" not found']))
    assert finding.title.endswith("vLLM exports it from 0.32 on: the pods run an older release, or not vLLM")


def test_a_family_outside_the_table_asks_for_what_the_pod_exports():
    [finding] = op5_scraped_metrics.RULE.evaluate(_facts(['metric family "vllm:no_such_thing" not found']))
    assert "does not hold" in finding.title and "/metrics" in finding.actions[0]
