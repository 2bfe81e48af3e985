"""The collector's /metrics parse vs prometheus_client's text parser alone, on the same fixture.

`advisor.collect.metrics.parse_exposition` is prometheus_client's parser plus the collector's
own work on its samples (keep vllm:*, refuse a series twice, drop `_created` and NaN, sort into
gauges, counters and histograms). Baseline: the library parser with every sample read out,
nothing else; the ratio (below 1) is what the collector's part costs on top of it. Input: the
largest /metrics fixture (two vLLM 0.33 replicas, 156 lines). Both sides must hold the same
vllm:* series and values.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from advisor.collect.metrics import parse_exposition
from tests.benchmarks.sides import record_side

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "vllm" / "v0_33_fleet_after.prom"


def _library_samples(text: str) -> list[tuple[str, str, dict[str, str], float]]:
    return [
        (family.type, sample.name, sample.labels, sample.value)
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    ]


def _key(name: str, labels: dict) -> tuple:
    return name, tuple(sorted((k, float(v) if k == "le" else v) for k, v in labels.items()))


def _series_from_library(samples) -> dict[tuple, float]:
    return {
        _key(name, labels): float(value)
        for _, name, labels, value in samples
        if name.startswith("vllm:") and not name.endswith("_created") and math.isfinite(value)
    }


def _series_from_snapshot(snapshot) -> dict[tuple, float]:
    series = {
        _key(name, s.labels): s.value
        for table in (snapshot.gauges, snapshot.counters)
        for name, samples in table.items()
        for s in samples
    }
    for base, histograms in snapshot.histograms.items():
        for h in histograms:
            series.update({_key(f"{base}_bucket", {**h.labels, "le": le}): count for le, count in h.buckets})
            series[_key(f"{base}_count", h.labels)] = h.count
            series[_key(f"{base}_sum", h.labels)] = h.sum
    return series


# side -> (what is timed, its result as {(name, labels): value})
SIDES = {
    "prometheus-client": (_library_samples, _series_from_library),
    "parse-exposition": (lambda text: parse_exposition(text, FIXTURE.name), _series_from_snapshot),
}


@pytest.mark.benchmark(group="metrics-parse")
@pytest.mark.parametrize("side", ["baseline-prometheus-client", "servops-parse-exposition"])
def test_metrics_parse(benchmark, side):
    name = record_side(benchmark, side)
    text = FIXTURE.read_text()
    parse, to_series = SIDES[name]
    result = to_series(benchmark(parse, text))
    for other, (other_parse, other_series) in SIDES.items():
        assert other_series(other_parse(text)) == result, f"{name} and {other} read different series"
    assert len(result) > 100
