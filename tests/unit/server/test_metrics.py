"""engine.observability.metrics: vLLM V1 names, types, labels and buckets, checked on the real exposition."""

from __future__ import annotations

from prometheus_client import CollectorRegistry
from prometheus_client.parser import text_string_to_metric_families

from engine.observability.metrics import (
    FINISHED_REASONS,
    TTFT_BUCKETS_S,
    EngineMetrics,
    FinishedRequestStats,
    build_1_2_5_buckets,
)


def _families(metrics: EngineMetrics) -> dict[str, object]:
    return {family.name: family for family in text_string_to_metric_families(metrics.exposition().decode())}


def _metrics(max_model_len: int = 2048) -> EngineMetrics:
    return EngineMetrics(model_name="tiny", max_model_len=max_model_len, registry=CollectorRegistry())


def test_request_token_buckets_are_1_2_5_capped_at_max_model_len():
    assert build_1_2_5_buckets(32768) == [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000]
    assert build_1_2_5_buckets(1) == [1]


def test_every_finished_reason_is_exposed_at_zero_before_any_request():
    families = _families(_metrics())
    samples = [s for s in families["vllm:request_success"].samples if s.name == "vllm:request_success_total"]
    assert {s.labels["finished_reason"] for s in samples} == set(FINISHED_REASONS)
    assert all(s.value == 0 for s in samples)
    assert all(s.labels["engine"] == "0" and s.labels["model_name"] == "tiny" for s in samples)


def test_counters_are_exposed_with_total_suffix():
    text = _metrics().exposition().decode()
    for name in (
        "vllm:num_preemptions_total",
        "vllm:prompt_tokens_total",
        "vllm:generation_tokens_total",
        "vllm:prefix_cache_queries_total",
        "vllm:prefix_cache_hits_total",
    ):
        assert f"# TYPE {name} counter" in text


def test_iteration_tokens_total_is_a_histogram_despite_its_suffix():
    text = _metrics().exposition().decode()
    assert "# TYPE vllm:iteration_tokens_total histogram" in text
    assert 'vllm:iteration_tokens_total_bucket{engine="0",le="16384.0",model_name="tiny"}' in text


def test_ttft_histogram_has_vllm_buckets():
    families = _families(_metrics())
    samples = families["vllm:time_to_first_token_seconds"].samples
    bounds = [s.labels["le"] for s in samples if s.name.endswith("_bucket")]
    assert bounds == [str(float(b)) for b in TTFT_BUCKETS_S] + ["+Inf"]


def test_cache_config_info_carries_fields_as_string_labels():
    metrics = _metrics()
    metrics.set_cache_config_info({"block_size": 16, "enable_prefix_caching": True, "num_gpu_blocks": 100})
    family = _families(metrics)["vllm:cache_config_info"]
    (sample,) = family.samples
    assert family.type == "gauge" and sample.value == 1
    assert sample.labels == {
        "block_size": "16",
        "enable_prefix_caching": "True",
        "num_gpu_blocks": "100",
        "engine": "0",
    }


def test_finished_request_moves_success_counter_and_histograms():
    metrics = _metrics()
    metrics.record_finished(
        FinishedRequestStats(
            finished_reason="length",
            e2e_latency_s=1.2,
            num_prompt_tokens=7,
            num_generation_tokens=5,
            max_tokens_param=5,
            queued_time_s=0.1,
            prefill_time_s=0.2,
            inference_time_s=1.0,
            decode_time_s=0.8,
            mean_time_per_output_token_s=0.2,
            num_cached_tokens=3,
            num_preemptions=1,
        )
    )
    families = _families(metrics)

    def value(family: str, sample: str, **labels: str) -> float:
        return next(
            s.value
            for s in families[family].samples
            if s.name == sample and all(s.labels.get(k) == v for k, v in labels.items())
        )

    assert value("vllm:request_success", "vllm:request_success_total", finished_reason="length") == 1
    assert value("vllm:request_success", "vllm:request_success_total", finished_reason="stop") == 0
    assert value("vllm:e2e_request_latency_seconds", "vllm:e2e_request_latency_seconds_sum") == 1.2
    assert value("vllm:request_prompt_tokens", "vllm:request_prompt_tokens_sum") == 7
    assert value("vllm:request_prefill_kv_computed_tokens", "vllm:request_prefill_kv_computed_tokens_sum") == 4
    assert value("vllm:prompt_tokens_cached", "vllm:prompt_tokens_cached_total") == 3
    assert value("vllm:request_num_preemptions", "vllm:request_num_preemptions_count") == 1


def test_admission_rejections_have_model_name_and_reason_but_no_engine_label():
    metrics = _metrics()
    metrics.record_admission_rejection()
    family = _families(metrics)["vllm:admission_rejections"]
    totals = [s for s in family.samples if s.name == "vllm:admission_rejections_total"]
    assert {tuple(sorted(s.labels)) for s in totals} == {("model_name", "reason")}
    assert next(s.value for s in totals if s.labels["reason"] == "max_num_queued_reqs") == 1
