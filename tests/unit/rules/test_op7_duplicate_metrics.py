"""OP-7.124: prometheus_client refusing a metric registered twice in one process."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_duplicate_metrics
from rules.facts import Facts
from tests.unit.rules.factories import top_finding


def test_a_cut_refusal_still_names_the_double_registration_and_the_connector_fix():
    # vllm#39906, verbatim (the paste ends after the brace)
    top = top_finding("(APIServer pid=1) ValueError: Duplicated timeseries in CollectorRegistry: {'")
    assert top.rule == "OP-7.124" and "registered twice" in top.title and "ends before the names" in top.title
    assert "MultiConnector" in top.actions[0] and "0.32" in top.actions[0]


def test_the_names_say_whose_metric_it_is():
    vllm_names = top_finding(
        "ValueError: Duplicated timeseries in CollectorRegistry: {'vllm:kv_offload_total_bytes', "
        "'vllm:kv_offload_total_bytes_created'}"
    )
    assert "vLLM's or a KV connector's" in vllm_names.title
    other = top_finding("ValueError: Duplicated timeseries in CollectorRegistry: {'lmcache:num_hit_tokens_total'}")
    assert "(lmcache:num_hit_tokens_total) say whose" in other.title


def test_another_prometheus_error_is_not_read_as_a_double_registration():
    line = "ValueError: Incorrect label names"
    assert op7_duplicate_metrics.RULE.evaluate(Facts(events=parse_lines([line]).events)) == []
