"""Metric facts: what one /metrics scrape holds, and what a window between two scrapes means.

Why a module of its own: vLLM renamed its metrics across versions (0.8 → 0.33) and a real
fleet runs several replicas, each with one or more engines. Rules must not care which
spelling a server used or how many replicas answered, so this module owns:

* `MetricSnapshot` — gauges, counters and histograms from one scrape (or one Prometheus
  instant query), with sample labels kept. Names are stored *as exposed*
  (`vllm:num_preemptions_total`, `vllm:time_to_first_token_seconds` for a histogram's base).
* `canonical_name` / `METRIC_ALIASES` — one lookup that accepts old and new spellings.
* `WindowStats` / `MetricWindow` — rates of counters, windowed percentiles from histogram
  bucket deltas (Prometheus `histogram_quantile` interpolation), per instance and summed.
  Built from two snapshots (`MetricWindow.from_snapshots`) or from Prometheus range queries
  that the collector already reduced (`MetricWindow.from_prometheus`).

Stability contract (the collectors build these): fields are only ever added, never renamed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field

# --- names ---------------------------------------------------------------------------------

#: canonical (newest) exposed name -> every spelling vLLM has used for it, newest first.
METRIC_ALIASES: dict[str, tuple[str, ...]] = {
    "vllm:kv_cache_usage_perc": ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"),
    "vllm:prefix_cache_queries_total": (
        "vllm:prefix_cache_queries_total",
        "vllm:gpu_prefix_cache_queries_total",
    ),
    "vllm:prefix_cache_hits_total": (
        "vllm:prefix_cache_hits_total",
        "vllm:gpu_prefix_cache_hits_total",
    ),
    "vllm:inter_token_latency_seconds": (
        "vllm:inter_token_latency_seconds",
        "vllm:time_per_output_token_seconds",
    ),
}

#: gauges that are fractions per engine: aggregate by mean, not by sum.
MEAN_AGGREGATED: frozenset[str] = frozenset({"vllm:kv_cache_usage_perc"})

#: label that tells replicas apart (Prometheus adds it); engines inside one server use "engine".
INSTANCE_LABEL = "instance"
DEFAULT_INSTANCE = "default"


def canonical_name(name: str) -> str:
    """Map any spelling (old/new, with or without `_total`) to the canonical exposed name."""
    for canonical, spellings in METRIC_ALIASES.items():
        if name in spellings:
            return canonical
        if not name.endswith("_total") and f"{name}_total" in spellings:
            return canonical
    return name


def _lookup(table: dict, name: str):
    """table[name] under any spelling of name; None when absent."""
    for spelled in _spellings(name):
        key = canonical_name(spelled)
        if key in table:
            return table[key]
    return None


def _spellings(name: str) -> tuple[str, ...]:
    canonical = canonical_name(name)
    names = METRIC_ALIASES.get(canonical, (canonical,))
    out: list[str] = []
    for spelled in names:
        out.append(spelled)
        out.append(spelled[: -len("_total")] if spelled.endswith("_total") else f"{spelled}_total")
    return tuple(out)


# --- one scrape -----------------------------------------------------------------------------


class Sample(BaseModel):
    """One gauge or counter series: its labels and value."""

    labels: dict[str, str] = Field(default_factory=dict)
    value: float


class HistogramSample(BaseModel):
    """One histogram series: cumulative bucket counts by upper bound (`le`, +Inf as math.inf)."""

    model_config = ConfigDict(ser_json_inf_nan="strings")

    labels: dict[str, str] = Field(default_factory=dict)
    buckets: list[tuple[float, float]] = Field(default_factory=list)
    count: float = 0.0
    sum: float = 0.0


class MetricSnapshot(BaseModel):
    """Every vLLM series of one scrape. `taken_at_s` is supplied by the collector (rules read no clock)."""

    source: str = ""
    instance: str | None = None
    taken_at_s: float | None = None
    gauges: dict[str, list[Sample]] = Field(default_factory=dict)
    counters: dict[str, list[Sample]] = Field(default_factory=dict)
    histograms: dict[str, list[HistogramSample]] = Field(default_factory=dict)

    def has(self, name: str) -> bool:
        """True when any spelling of `name` is present as gauge, counter or histogram."""
        return any(
            spelled in table for spelled in _spellings(name) for table in (self.gauges, self.counters, self.histograms)
        )

    def samples(self, name: str) -> list[Sample]:
        """Gauge or counter samples under the newest spelling present."""
        for spelled in _spellings(name):
            for table in (self.gauges, self.counters):
                if spelled in table:
                    return table[spelled]
        return []

    def histogram(self, name: str) -> list[HistogramSample]:
        for spelled in _spellings(name):
            if spelled in self.histograms:
                return self.histograms[spelled]
        return []

    def value(self, name: str, **label_filter: str) -> float | None:
        """Sum over engines and replicas (mean for fractions like KV usage); None if absent."""
        chosen = [s.value for s in self.samples(name) if _matches(s.labels, label_filter)]
        if not chosen:
            return None
        if canonical_name(name) in MEAN_AGGREGATED:
            return sum(chosen) / len(chosen)
        return sum(chosen)

    def max_value(self, name: str) -> float | None:
        """The largest single series (the hottest engine), or None."""
        values = [s.value for s in self.samples(name)]
        return max(values) if values else None

    def by_label(self, name: str, label: str) -> dict[str, float]:
        """Values summed per value of `label` (e.g. request_success_total by finished_reason)."""
        out: dict[str, float] = {}
        for sample in self.samples(name):
            key = sample.labels.get(label, "")
            out[key] = out.get(key, 0.0) + sample.value
        return out

    def instances(self) -> list[str]:
        """Replica keys present in this snapshot (the `instance` label, else the snapshot's own)."""
        keys = {
            self._instance_of(s.labels) for table in (self.gauges, self.counters) for ss in table.values() for s in ss
        }
        keys |= {self._instance_of(h.labels) for hs in self.histograms.values() for h in hs}
        return sorted(keys) or [self.instance or DEFAULT_INSTANCE]

    def for_instance(self, instance: str) -> MetricSnapshot:
        """The sub-snapshot of one replica (all of its engines)."""

        def keep(labels: dict[str, str]) -> bool:
            return self._instance_of(labels) == instance

        return MetricSnapshot(
            source=self.source,
            instance=instance,
            taken_at_s=self.taken_at_s,
            gauges={n: [s for s in ss if keep(s.labels)] for n, ss in self.gauges.items()},
            counters={n: [s for s in ss if keep(s.labels)] for n, ss in self.counters.items()},
            histograms={n: [h for h in hs if keep(h.labels)] for n, hs in self.histograms.items()},
        )

    def _instance_of(self, labels: dict[str, str]) -> str:
        return labels.get(INSTANCE_LABEL) or self.instance or DEFAULT_INSTANCE


def _matches(labels: dict[str, str], wanted: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in wanted.items())


# --- percentiles ----------------------------------------------------------------------------


def histogram_quantile(q: float, buckets: Iterable[tuple[float, float]]) -> float | None:
    """Prometheus `histogram_quantile`: linear interpolation inside the bucket holding rank q·N.

    Mirrors Prometheus: the first bucket's lower bound is 0 (when its upper bound is positive);
    a rank that lands in +Inf returns the largest finite bound. None when there are no
    observations (Prometheus would answer NaN).
    """
    ordered = sorted(buckets, key=lambda b: b[0])
    if not ordered or not 0.0 <= q <= 1.0:
        return None
    total = ordered[-1][1]
    if total <= 0:
        return None
    rank = q * total
    prev_bound, prev_count = 0.0, 0.0
    for index, (bound, count) in enumerate(ordered):
        if count >= rank and count > prev_count:
            if math.isinf(bound):
                finite = [b for b, _ in ordered if not math.isinf(b)]
                return finite[-1] if finite else None
            if index == 0 and bound <= 0:
                return bound
            return prev_bound + (bound - prev_bound) * (rank - prev_count) / (count - prev_count)
        prev_bound, prev_count = bound, count
    finite = [b for b, _ in ordered if not math.isinf(b)]
    return finite[-1] if finite else None


QUANTILES: dict[str, float] = {"p50": 0.50, "p90": 0.90, "p95": 0.95, "p99": 0.99}


# --- a window between two scrapes -----------------------------------------------------------


class WindowStats(BaseModel):
    """What one replica (or the sum of all) did over the window.

    gauges: value at the window's end (summed over engines; KV usage averaged).
    gauges_max: the hottest engine's value at the end (KV usage of the fullest engine).
    gauges_start: the value at the window's start (a scrape pair only): a rule that compares an
        instant with a steady load (OP-5.6) needs both ends, as one instant can catch a closed-loop
        client between two requests.
    rates: counter increase per second, keyed by canonical name.
    increases: counter increase over the window.
    labeled_rates: per-label rates, e.g. {"vllm:request_success_total": {"stop": 2.0, "abort": 0.1}}.
    quantiles: histogram percentiles over the window, e.g. {"vllm:time_to_first_token_seconds": {"p99": 1.2}}.
    observations: histogram observation counts over the window.
    sums: histogram `_sum` increases over the window (with observations, the window's mean).
    """

    instance: str = DEFAULT_INSTANCE
    gauges: dict[str, float] = Field(default_factory=dict)
    gauges_max: dict[str, float] = Field(default_factory=dict)
    gauges_start: dict[str, float] = Field(default_factory=dict)
    rates: dict[str, float] = Field(default_factory=dict)
    increases: dict[str, float] = Field(default_factory=dict)
    labeled_rates: dict[str, dict[str, float]] = Field(default_factory=dict)
    quantiles: dict[str, dict[str, float]] = Field(default_factory=dict)
    observations: dict[str, float] = Field(default_factory=dict)
    sums: dict[str, float] = Field(default_factory=dict)

    def gauge(self, name: str) -> float | None:
        return _lookup(self.gauges, name)

    def rate(self, name: str) -> float | None:
        """Per-second rate of a counter, by any spelling (`vllm:num_preemptions[_total]`)."""
        return _lookup(self.rates, name)

    def increase(self, name: str) -> float | None:
        return _lookup(self.increases, name)

    def by_label(self, name: str) -> dict[str, float]:
        return _lookup(self.labeled_rates, name) or {}

    def quantile(self, name: str, which: str = "p99") -> float | None:
        return (_lookup(self.quantiles, name) or {}).get(which)

    def mean(self, name: str) -> float | None:
        """A histogram's mean over the window (`_sum` increase / `_count` increase); None without traffic."""
        total, count = _lookup(self.sums, name), _lookup(self.observations, name)
        return total / count if total is not None and count else None

    def ratio(self, numerator: str, denominator: str) -> float | None:
        """rate(numerator)/rate(denominator), e.g. the prefix-cache hit rate; None if no traffic."""
        top, bottom = self.rate(numerator), self.rate(denominator)
        if top is None or not bottom:
            return None
        return top / bottom


class MetricWindow(BaseModel):
    """Rates and percentiles over `interval_s`, summed (`total`) and per replica (`per_instance`)."""

    interval_s: float
    origin: str = "scrape_pair"  # or "prometheus"
    total: WindowStats = Field(default_factory=WindowStats)
    per_instance: list[WindowStats] = Field(default_factory=list)

    @classmethod
    def from_snapshots(cls, before: MetricSnapshot, after: MetricSnapshot, interval_s: float) -> MetricWindow:
        """Window between two scrapes of the same server(s); counter resets count as restarts from 0."""
        if interval_s <= 0:
            raise ValueError(f"interval_s must be positive, got {interval_s}")
        instances = after.instances()
        per_instance = [_window_stats(before.for_instance(i), after.for_instance(i), interval_s, i) for i in instances]
        total = _window_stats(before, after, interval_s, "total")
        return cls(interval_s=interval_s, origin="scrape_pair", total=total, per_instance=per_instance)

    @classmethod
    def from_prometheus(
        cls, interval_s: float, per_instance: list[WindowStats], total: WindowStats | None = None
    ) -> MetricWindow:
        """Window from Prometheus queries the collector ran (rate(), histogram_quantile()).

        Pass `total` when the collector queried the fleet-wide figures (sum by (le) …); else it is
        derived: gauges and rates summed, KV usage averaged, percentiles the worst replica's.
        """
        return cls(
            interval_s=interval_s,
            origin="prometheus",
            total=total or _combine(per_instance),
            per_instance=per_instance,
        )


def _window_stats(before: MetricSnapshot, after: MetricSnapshot, interval_s: float, instance: str) -> WindowStats:
    stats = WindowStats(instance=instance)
    for name in after.gauges:
        value, hottest = after.value(name), after.max_value(name)
        if value is not None and hottest is not None:
            stats.gauges[canonical_name(name)] = value
            stats.gauges_max[canonical_name(name)] = hottest
        start = before.value(name)
        if start is not None:
            stats.gauges_start[canonical_name(name)] = start
    for name, samples in after.counters.items():
        key = canonical_name(name)
        old = {_label_key(s.labels): s.value for s in before.samples(name)}
        increase, labeled = 0.0, {}
        for sample in samples:
            delta = _counter_delta(old.get(_label_key(sample.labels), 0.0), sample.value)
            increase += delta
            for label, label_value in sample.labels.items():
                if label not in ("engine", "model_name", INSTANCE_LABEL, "job"):
                    labeled[label_value] = labeled.get(label_value, 0.0) + delta / interval_s
        stats.increases[key] = increase
        stats.rates[key] = increase / interval_s
        if labeled:
            stats.labeled_rates[key] = labeled
    for name, series in after.histograms.items():
        key = canonical_name(name)
        deltas = _bucket_deltas(before.histogram(name), series)
        if deltas is None:
            continue
        stats.observations[key] = deltas[-1][1] if deltas else 0.0
        stats.sums[key] = _sum_delta(before.histogram(name), series)
        values = {label: histogram_quantile(q, deltas) for label, q in QUANTILES.items()}
        stats.quantiles[key] = {label: v for label, v in values.items() if v is not None}
    return stats


def _sum_delta(before: list[HistogramSample], after: list[HistogramSample]) -> float:
    """The `_sum` increase summed over all series; a series that reset counts from 0."""
    old = {_label_key(h.labels): h.sum for h in before}
    return sum(_counter_delta(old.get(_label_key(h.labels), 0.0), h.sum) for h in after)


def _counter_delta(old: float, new: float) -> float:
    return new - old if new >= old else new  # a reset restarts the counter at 0


def _label_key(labels: dict[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(labels.items()))


def _bucket_deltas(before: list[HistogramSample], after: list[HistogramSample]) -> list[tuple[float, float]] | None:
    """Bucket increases summed over all series (engines, replicas) of one histogram."""
    if not after:
        return None
    old = {_label_key(h.labels): dict(h.buckets) for h in before}
    summed: dict[float, float] = {}
    for series in after:
        previous = old.get(_label_key(series.labels), {})
        reset = any(count < previous.get(bound, 0.0) for bound, count in series.buckets)
        for bound, count in series.buckets:
            delta = count if reset else count - previous.get(bound, 0.0)
            summed[bound] = summed.get(bound, 0.0) + delta
    return sorted(summed.items())


def _combine(parts: list[WindowStats]) -> WindowStats:
    total = WindowStats(instance="total")
    for part in parts:
        for field in ("gauges", "gauges_start", "rates", "increases", "observations", "sums"):
            _add_into(getattr(total, field), getattr(part, field))
        for name, value in part.gauges_max.items():
            total.gauges_max[name] = max(total.gauges_max.get(name, value), value)
        for name, by_label in part.labeled_rates.items():
            _add_into(total.labeled_rates.setdefault(name, {}), by_label)
        for name, qs in part.quantiles.items():
            into_q = total.quantiles.setdefault(name, {})
            for label, value in qs.items():
                into_q[label] = max(into_q.get(label, value), value)
    for name in MEAN_AGGREGATED:
        for field in ("gauges", "gauges_start"):
            summed = getattr(total, field)
            if name in summed and parts:
                count = sum(1 for p in parts if name in getattr(p, field))
                summed[name] = summed[name] / max(count, 1)
    return total


def _add_into(into: dict[str, float], values: dict[str, float]) -> None:
    for name, value in values.items():
        into[name] = into.get(name, 0.0) + value
