"""/metrics: every vLLM 0.33 core metric with its type and labels, and counters that move."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.integration.server.metrics_reference import (
    BUCKETS,
    CACHE_CONFIG_INFO_LABELS,
    EXPECTED,
    FINISHED_REASONS,
    REMOVED,
)
from tests.integration.server.prom import value, wait_until

pytestmark = pytest.mark.integration


def _exposed(text: str) -> dict[str, tuple[str, list]]:
    """exposed name -> (type, samples), with counters under their `_total` name."""
    found = {}
    for family in text_string_to_metric_families(text):
        name = family.name + "_total" if family.type == "counter" else family.name
        found[name] = (family.type, family.samples)
    return found


def test_metrics_content_type_is_prometheus_text_0_0_4(server):
    status, _, headers = server.get("/metrics")
    assert status == 200
    assert headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"


def test_every_reference_metric_is_exposed_with_its_type_and_label_set(server):
    exposed = _exposed(server.metrics_text())
    for name, (metric_type, labels) in EXPECTED.items():
        assert name in exposed, f"{name} missing"
        found_type, found_samples = exposed[name]
        assert found_type == metric_type, f"{name}: {found_type} != {metric_type}"
        main = [s for s in found_samples if not s.name.endswith("_created")]
        assert main, f"{name} has no samples"
        for sample in main:
            assert set(sample.labels) - {"le"} == labels, f"{sample.name}: {sorted(sample.labels)}"
            assert sample.labels.get("model_name") == server.model
            if "engine" in labels:
                assert sample.labels["engine"] == "0"
    for name in REMOVED:
        assert name not in exposed, f"{name} was removed in vLLM 0.12/0.15 and must not be exposed"


def test_cache_config_info_is_one_with_cache_fields_as_labels(server):
    metric_type, samples = _exposed(server.metrics_text())["vllm:cache_config_info"]
    (sample,) = samples
    assert metric_type == "gauge" and sample.value == 1.0
    assert CACHE_CONFIG_INFO_LABELS <= set(sample.labels)
    assert sample.labels["block_size"] == "16" and int(sample.labels["num_gpu_blocks"]) > 0


def test_request_success_has_every_finished_reason_precreated(server):
    _, samples = _exposed(server.metrics_text())["vllm:request_success_total"]
    reasons = {s.labels["finished_reason"] for s in samples if s.name == "vllm:request_success_total"}
    assert reasons == FINISHED_REASONS


def test_histogram_buckets_are_vllms(server):
    exposed = _exposed(server.metrics_text())
    for name, bounds in BUCKETS.items():
        _, samples = exposed[name]
        found = [s.labels["le"] for s in samples if s.name == name + "_bucket"]
        assert found == [str(float(b)) for b in bounds] + ["+Inf"], name


def test_counters_and_histograms_move_as_a_request_runs(server):
    before = server.metrics_text()
    status, body = server.post_json(
        "/v1/completions",
        {"model": server.model, "prompt": "count me", "max_tokens": 9, "temperature": 0, "ignore_eos": True},
    )
    assert status == 200 and body["usage"]["completion_tokens"] == 9
    after = wait_until(
        server,
        lambda text: (
            value(text, "vllm:e2e_request_latency_seconds_count")
            > value(before, "vllm:e2e_request_latency_seconds_count")
        ),
    )

    def moved(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert moved("vllm:prompt_tokens_total") == 8
    assert moved("vllm:generation_tokens_total") == 9
    assert moved("vllm:request_success_total", finished_reason="length") == 1
    assert moved("vllm:request_success_total", finished_reason="abort") == 0
    assert moved("vllm:time_to_first_token_seconds_count") == 1
    assert moved("vllm:inter_token_latency_seconds_count") == 8
    assert moved("vllm:request_generation_tokens_sum") == 9
    assert moved("vllm:request_prompt_tokens_sum") == 8
    assert moved("vllm:request_params_max_tokens_sum") == 9
    assert moved("vllm:iteration_tokens_total_count") >= 9
    assert moved("vllm:prefix_cache_queries_total") >= 8
    assert value(after, "vllm:num_requests_running") == 0
    assert value(after, "vllm:kv_cache_usage_perc") == 0.0
