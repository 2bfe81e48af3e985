"""The periodic stats line in vLLM 0.33's wording."""

from __future__ import annotations

import logging
import re

from engine.observability.stats_logger import CachingMetrics, LoggingStatLogger, StatsSnapshot, device_label


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


LINE = re.compile(
    r"^Engine 000: Avg prompt throughput: (\d+\.\d) tokens/s, Avg generation throughput: (\d+\.\d) tokens/s, "
    r"Running: (\d+) reqs, Waiting: (\d+) reqs(, Preemptions: \d+)?, (\w+) KV cache usage: (\d+\.\d)%"
    r"(, Prefix cache hit rate: \d+\.\d%)?$"
)


def test_line_reports_interval_throughput_and_gauges_in_vllm_format():
    clock = _Clock()
    stats = LoggingStatLogger(device_type="cuda", clock=clock)
    stats.record_step(200, 50, 0, 2, 0, 0)
    clock.now += 10
    level, line = stats.make_line(StatsSnapshot(running=2, waiting=1, kv_cache_usage=0.125))
    assert level == logging.INFO
    assert line == (
        "Engine 000: Avg prompt throughput: 20.0 tokens/s, Avg generation throughput: 5.0 tokens/s, "
        "Running: 2 reqs, Waiting: 1 reqs, GPU KV cache usage: 12.5%"
    )
    assert LINE.match(line)


def test_preemptions_appear_only_when_some_happened_in_the_interval():
    clock = _Clock()
    stats = LoggingStatLogger(clock=clock)
    stats.record_step(0, 10, 3, 0, 0, 0)
    clock.now += 10
    _, line = stats.make_line(StatsSnapshot(1, 4, 0.99))
    assert ", Waiting: 4 reqs, Preemptions: 3, CPU KV cache usage: 99.0%" in line
    stats.record_step(0, 10, 0, 0, 0, 0)
    clock.now += 10
    _, line = stats.make_line(StatsSnapshot(1, 0, 0.5))
    assert "Preemptions" not in line


def test_idle_intervals_log_at_debug_after_one_quiet_interval():
    clock = _Clock()
    stats = LoggingStatLogger(clock=clock)
    stats.record_step(10, 10, 0, 1, 0, 0)
    clock.now += 10
    assert stats.make_line(StatsSnapshot(0, 0, 0.0))[0] == logging.INFO
    clock.now += 10
    assert stats.make_line(StatsSnapshot(0, 0, 0.0))[0] == logging.INFO  # previous interval was busy
    clock.now += 10
    assert stats.make_line(StatsSnapshot(0, 0, 0.0))[0] == logging.DEBUG


def test_prefix_cache_hit_rate_is_printed_once_queries_were_observed():
    clock = _Clock()
    fresh = LoggingStatLogger(clock=clock)
    fresh.record_step(10, 0, 0, 1, 0, 0)  # prefix caching off: no queries
    clock.now += 10
    assert "Prefix cache hit rate" not in fresh.make_line(StatsSnapshot(1, 0, 0.1))[1]
    fresh.record_step(10, 0, 0, 1, 40, 30)
    clock.now += 10
    assert fresh.make_line(StatsSnapshot(1, 0, 0.1))[1].endswith("Prefix cache hit rate: 75.0%")


def test_hit_rate_window_forgets_requests_older_than_the_most_recent_thousand():
    caching = CachingMetrics(max_recent_requests=10)
    caching.observe(10, 100, 0)  # old: all misses
    caching.observe(10, 100, 100)  # recent: all hits
    assert caching.hit_rate == 1.0


def test_device_label_is_gpu_on_cuda_and_upper_cased_elsewhere():
    assert device_label("cuda") == "GPU"
    assert device_label("cpu") == "CPU"
