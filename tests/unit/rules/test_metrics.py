"""Metric facts: old/new vLLM names, sums over engines, windowed rates and Prometheus-style percentiles."""

import math

import pytest

from rules.metrics import (
    MetricSnapshot,
    MetricWindow,
    Sample,
    WindowStats,
    canonical_name,
    histogram_quantile,
)
from tests.unit.rules.factories import ITL_BUCKETS, histogram, snapshot


def test_quantile_interpolates_linearly_inside_the_bucket_like_prometheus():
    # 100 observations: 10 <= 0.1, 50 in (0.1, 0.5], 30 in (0.5, 1.0], 10 above.
    buckets = [(0.1, 10), (0.5, 60), (1.0, 90), (math.inf, 100)]
    # rank 50 lies 40/50 of the way through (0.1, 0.5]
    assert histogram_quantile(0.5, buckets) == pytest.approx(0.1 + 0.4 * 40 / 50)


def test_quantile_in_the_first_bucket_starts_from_zero():
    assert histogram_quantile(0.05, [(0.1, 10), (math.inf, 100)]) == pytest.approx(0.05)


def test_quantile_landing_in_inf_bucket_returns_the_largest_finite_bound():
    assert histogram_quantile(0.99, [(0.1, 10), (1.0, 90), (math.inf, 100)]) == 1.0


def test_quantile_of_an_empty_histogram_is_none():
    assert histogram_quantile(0.5, [(0.1, 0), (math.inf, 0)]) is None


@pytest.mark.parametrize(
    "old, new",
    [
        ("vllm:gpu_cache_usage_perc", "vllm:kv_cache_usage_perc"),
        ("vllm:gpu_prefix_cache_queries_total", "vllm:prefix_cache_queries_total"),
        ("vllm:gpu_prefix_cache_hits_total", "vllm:prefix_cache_hits_total"),
        ("vllm:time_per_output_token_seconds", "vllm:inter_token_latency_seconds"),
    ],
)
def test_old_spellings_map_to_the_new_name(old, new):
    assert canonical_name(old) == new


def test_snapshot_with_only_the_old_kv_name_answers_the_new_name():
    snap = snapshot(gauges={"vllm:gpu_cache_usage_perc": 0.97})
    assert snap.value("vllm:kv_cache_usage_perc") == pytest.approx(0.97)


def test_counter_is_found_with_or_without_the_total_suffix():
    snap = snapshot(counters={"vllm:num_preemptions_total": 7})
    assert snap.value("vllm:num_preemptions") == 7
    assert snap.value("vllm:num_preemptions_total") == 7


def test_running_is_summed_across_engines_but_kv_usage_is_averaged():
    snap = MetricSnapshot(
        gauges={
            "vllm:num_requests_running": [
                Sample(labels={"engine": "0"}, value=3),
                Sample(labels={"engine": "1"}, value=5),
            ],
            "vllm:kv_cache_usage_perc": [
                Sample(labels={"engine": "0"}, value=0.5),
                Sample(labels={"engine": "1"}, value=0.9),
            ],
        }
    )
    assert snap.value("vllm:num_requests_running") == 8
    assert snap.value("vllm:kv_cache_usage_perc") == pytest.approx(0.7)
    assert snap.max_value("vllm:kv_cache_usage_perc") == pytest.approx(0.9)


def test_window_rate_is_the_counter_increase_per_second():
    before = snapshot(counters={"vllm:num_preemptions_total": 30})
    after = snapshot(counters={"vllm:num_preemptions_total": 42})
    window = MetricWindow.from_snapshots(before, after, 10.0)
    assert window.total.rate("vllm:num_preemptions") == pytest.approx(1.2)
    assert window.total.increase("vllm:num_preemptions_total") == 12


def test_a_counter_reset_counts_from_zero_not_negative():
    before = snapshot(counters={"vllm:num_preemptions_total": 500})
    after = snapshot(counters={"vllm:num_preemptions_total": 20})
    window = MetricWindow.from_snapshots(before, after, 10.0)
    assert window.total.rate("vllm:num_preemptions_total") == pytest.approx(2.0)


def test_window_percentile_uses_only_observations_inside_the_window():
    # 10,000 fast tokens before the window; the window adds 100 slow ones at 0.25 s.
    before = snapshot(histograms={"vllm:inter_token_latency_seconds": histogram({0.02: 10_000}, ITL_BUCKETS)})
    after = snapshot(histograms={"vllm:inter_token_latency_seconds": histogram({0.02: 10_000, 0.25: 100}, ITL_BUCKETS)})
    window = MetricWindow.from_snapshots(before, after, 10.0)
    p50 = window.total.quantile("vllm:inter_token_latency_seconds", "p50")
    assert 0.2 < p50 <= 0.3  # the since-start p50 would be ~0.02
    assert window.total.observations["vllm:inter_token_latency_seconds"] == 100


def test_window_over_old_itl_name_is_queried_by_the_new_name():
    before = snapshot(histograms={"vllm:time_per_output_token_seconds": histogram({0.02: 10}, ITL_BUCKETS)})
    after = snapshot(histograms={"vllm:time_per_output_token_seconds": histogram({0.02: 10, 0.07: 10}, ITL_BUCKETS)})
    window = MetricWindow.from_snapshots(before, after, 5.0)
    assert window.total.quantile("vllm:inter_token_latency_seconds", "p50") == pytest.approx(0.05 + 0.025 * 0.5)


def test_request_success_rates_are_kept_per_finished_reason():
    labels = {"engine": "0", "model_name": "m"}

    def snap(stop, abort):
        return MetricSnapshot(
            counters={
                "vllm:request_success_total": [
                    Sample(labels=labels | {"finished_reason": "stop"}, value=stop),
                    Sample(labels=labels | {"finished_reason": "abort"}, value=abort),
                ]
            }
        )

    window = MetricWindow.from_snapshots(snap(100, 0), snap(190, 10), 10.0)
    assert window.total.by_label("vllm:request_success_total") == {"stop": 9.0, "abort": 1.0}


def test_replicas_are_windowed_separately_and_together():
    def snap(a, b):
        return MetricSnapshot(
            counters={
                "vllm:prefix_cache_queries_total": [
                    Sample(labels={"instance": "a:8000"}, value=a),
                    Sample(labels={"instance": "b:8000"}, value=b),
                ]
            }
        )

    window = MetricWindow.from_snapshots(snap(0, 0), snap(100, 300), 10.0)
    per = {w.instance: w.rate("vllm:prefix_cache_queries_total") for w in window.per_instance}
    assert per == {"a:8000": 10.0, "b:8000": 30.0}
    assert window.total.rate("vllm:prefix_cache_queries_total") == 40.0


def test_prometheus_window_combines_replicas_sum_rates_mean_kv_worst_percentile():
    parts = [
        WindowStats(
            instance="a",
            gauges={"vllm:kv_cache_usage_perc": 0.2},
            rates={"vllm:num_preemptions_total": 1},
            quantiles={"vllm:time_to_first_token_seconds": {"p99": 0.5}},
        ),
        WindowStats(
            instance="b",
            gauges={"vllm:kv_cache_usage_perc": 0.6},
            rates={"vllm:num_preemptions_total": 2},
            quantiles={"vllm:time_to_first_token_seconds": {"p99": 3.0}},
        ),
    ]
    window = MetricWindow.from_prometheus(300.0, parts)
    assert window.origin == "prometheus"
    assert window.total.rate("vllm:num_preemptions_total") == 3
    assert window.total.gauge("vllm:kv_cache_usage_perc") == pytest.approx(0.4)
    assert window.total.quantile("vllm:time_to_first_token_seconds") == 3.0


def test_snapshot_with_inf_bucket_survives_a_json_round_trip():
    snap = snapshot(histograms={"vllm:inter_token_latency_seconds": histogram({0.02: 3}, ITL_BUCKETS)})
    again = MetricSnapshot.model_validate_json(snap.model_dump_json())
    assert again.histograms["vllm:inter_token_latency_seconds"][0].buckets[-1] == (math.inf, 3.0)


def test_window_needs_a_positive_interval():
    with pytest.raises(ValueError):
        MetricWindow.from_snapshots(snapshot(), snapshot(), 0)
