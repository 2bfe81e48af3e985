"""Derived signals: one number per question, from the best source available, with its evidence.

Rules ask "what is the KV usage?" and should not care whether the answer came from a window
between two scrapes, a single scrape, or the last periodic stats line in the log. Each
function here tries the sources strongest first (window > snapshot > log), returns a
`Signal` carrying the value and an `Evidence` that names the source, or None when no source
has it — which is how rules skip cleanly on partial facts. A NaN or ±Inf is never a
signal (`_finite_only`): rules see "no data", not `running inf`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

from rules.events import LogEvent, LogEventKind
from rules.facts import ConfigSource, Facts, flag_name
from rules.metrics import canonical_name
from rules.model import Evidence

STATS_INTERVAL_S = 10.0  # VLLM_LOG_STATS_INTERVAL default
RECENT_STATS_LINES = 30  # the last ~5 minutes of stats lines: an old burst is not today's problem


@dataclass(frozen=True)
class Signal:
    value: float
    evidence: Evidence
    strong: bool = True  # False for cumulative-since-start or assumed figures


def window_source(facts: Facts) -> str:
    """The evidence source of a windowed figure: "prometheus" for a Prometheus query, else "metrics" (two scrapes)."""
    return "prometheus" if facts.window and facts.window.origin == "prometheus" else "metrics"


def _log_evidence(event: LogEvent, name: str, value: float | None, unit: str | None = None) -> Evidence:
    return Evidence(source="log", name=name, value=value, unit=unit, location=event.where(), raw=event.raw or None)


def _finite_only(signal_function: Callable[..., Signal | None]) -> Callable[..., Signal | None]:
    """NaN and ±Inf are not measurements: a signal that would carry one is no signal at all."""

    @functools.wraps(signal_function)
    def checked(*args, **kwargs) -> Signal | None:
        signal = signal_function(*args, **kwargs)
        return signal if signal is not None and _finite(signal.value) else None

    return checked


def _finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


@_finite_only
def gauge(facts: Facts, metric: str, stats_field: str | None = None, hottest: bool = False) -> Signal | None:
    """A gauge from the window's end, else the snapshot, else the last stats line (the first finite one)."""
    if facts.window is not None:
        key = canonical_name(metric)
        value = facts.window.total.gauges_max.get(key) if hottest else None
        if not _finite(value):  # a Prometheus window may carry only the mean
            value = facts.window.total.gauges.get(key)
        if _finite(value):
            where = f"{facts.window.interval_s:.0f} s window"
            return Signal(value, Evidence(source=window_source(facts), name=metric, value=value, location=where))
    if facts.snapshot is not None:
        value = facts.snapshot.max_value(metric) if hottest else facts.snapshot.value(metric)
        if _finite(value):
            return Signal(
                value, Evidence(source="metrics", name=metric, value=value, location=facts.snapshot.source or None)
            )
    if stats_field:
        latest = latest_per_engine(facts, stats_field)
        if latest:
            values = [float(getattr(e, stats_field)) for e in latest]
            if stats_field in FRACTION_FIELDS:
                value = max(values) if hottest else sum(values) / len(values)
            else:
                value = sum(values)  # running/waiting: each data-parallel engine logs its own line
            event = max(latest, key=lambda e: e.line_no or 0)
            return Signal(value, _log_evidence(event, f"stats line {stats_field}", value))
    return None


FRACTION_FIELDS = frozenset({"kv_usage", "prefix_hit_rate"})


def latest_per_engine(facts: Facts, stats_field: str) -> list[LogEvent]:
    """The last stats line carrying `stats_field` of each engine (`Engine 000:`, `Engine 001:` …)."""
    latest: dict[str | None, LogEvent] = {}
    for event in facts.events_of(LogEventKind.STATS_LINE):
        if getattr(event, stats_field) is not None:
            latest[event.engine] = event
    return list(latest.values())


def _engine_count(stats: list[LogEvent]) -> int:
    return max(1, len({e.engine for e in stats}))


def stats_engines(facts: Facts) -> int:
    """How many engines' stats lines the text holds (`Engine 000:`, `Engine 001:` …): running and waiting sum them."""
    return _engine_count(facts.events_of(LogEventKind.STATS_LINE))


@_finite_only
def kv_usage(facts: Facts, hottest: bool = True) -> Signal | None:
    """KV-cache usage 0–1 (the fullest engine by default: one full engine preempts)."""
    return gauge(facts, "vllm:kv_cache_usage_perc", "kv_usage", hottest=hottest)


@_finite_only
def running(facts: Facts) -> Signal | None:
    return gauge(facts, "vllm:num_requests_running", "running")


@_finite_only
def waiting(facts: Facts) -> Signal | None:
    return gauge(facts, "vllm:num_requests_waiting", "waiting")


@_finite_only
def in_server_at_start(facts: Facts) -> Signal | None:
    """running + waiting at the window's first scrape; None without a scrape pair that has running.

    Why a second instant: a closed-loop client is between two requests for a moment after each
    answer, so one scrape of 4 clients can see 3 inside; a hold-up upstream shows at both ends."""
    start = facts.window.total.gauges_start if facts.window is not None else {}
    run = start.get(canonical_name("vllm:num_requests_running"))
    if run is None:
        return None
    value = run + start.get(canonical_name("vllm:num_requests_waiting"), 0.0)
    where = f"start of the {facts.window.interval_s:.0f} s window"
    return Signal(value, Evidence(source=window_source(facts), name="running + waiting", value=value, location=where))


GENERATION_TOKENS = "vllm:generation_tokens_total"
ENGINE_STEPS = "vllm:iteration_tokens_total"  # histogram: every engine step observes it once, prefill or decode


def work_rates(facts: Facts) -> tuple[Signal | None, Signal | None]:
    """The window's generated tokens/s and engine steps/s (each None without a window or its counter)."""
    return counter_rate(facts, GENERATION_TOKENS), observation_rate(facts, ENGINE_STEPS)


def moved(rates: tuple[Signal | None, ...]) -> list[Signal]:
    """Those of `rates` above zero: the engine did work in the window. Empty when neither moved or none is known."""
    return [signal for signal in rates if signal is not None and signal.value > 0]


@_finite_only
def counter_rate(facts: Facts, metric: str) -> Signal | None:
    """Per-second rate over the window; None without a window."""
    if facts.window is None:
        return None
    value = facts.window.total.rate(metric)
    if value is None:
        return None
    where = f"{facts.window.interval_s:.0f} s window"
    return Signal(
        value, Evidence(source=window_source(facts), name=f"rate({metric})", value=value, unit="/s", location=where)
    )


@_finite_only
def preemption_rate(facts: Facts) -> Signal | None:
    """Preemptions per second: window rate, else stats lines (0.12+), else cumulative counts (weak)."""
    signal = counter_rate(facts, "vllm:num_preemptions_total")
    if signal is not None:
        return signal
    stats = facts.events_of(LogEventKind.STATS_LINE)[-RECENT_STATS_LINES:]
    counted = [e for e in stats if e.preemptions is not None]
    if counted:
        total = sum(e.preemptions or 0 for e in counted)
        intervals = len(stats) / _engine_count(stats)  # engines log one line each per interval
        rate = total / (STATS_INTERVAL_S * intervals)
        return Signal(rate, _log_evidence(counted[-1], "stats line Preemptions", rate, "/s"))
    v0 = facts.last_event(LogEventKind.V0_PREEMPTION_WARNING)
    if v0 is not None:
        count = float(v0.total_preemptions or 1)
        return Signal(
            count, _log_evidence(v0, "V0 preemption warning (cumulative)", count, "preemptions"), strong=False
        )
    swapped = [e for e in stats if e.swapped]  # V0 swaps a preempted request's blocks to CPU (n > 1, beam search)
    if swapped:
        count = float(max(e.swapped or 0 for e in swapped))
        evidence = _log_evidence(
            swapped[-1], "stats line Swapped (V0: requests preempted to CPU)", count, "preemptions"
        )
        return Signal(count, evidence, strong=False)
    if facts.snapshot is not None:
        total = facts.snapshot.value("vllm:num_preemptions_total")
        if total is not None:
            evidence = Evidence(
                source="metrics", name="vllm:num_preemptions_total (since start)", value=total, unit="preemptions"
            )
            return Signal(total, evidence, strong=False)
    return None


# vLLM's count of requests answered from NaN logits (0.11.1+, only with VLLM_COMPUTE_NANS_IN_LOGITS=1)
CORRUPTED_COUNTER = "vllm:corrupted_requests_total"


@_finite_only
def corrupted_requests(facts: Facts) -> Signal | None:
    """Requests that finished with NaN in their logits (vLLM counts them only with VLLM_COMPUTE_NANS_IN_LOGITS=1):
    the window's increase, else the stats lines' per-interval counts summed, else the count since start (weak).
    A count, not a rate: one such request is already garbage served as an answer."""
    metric = CORRUPTED_COUNTER
    if facts.window is not None:
        added = facts.window.total.increase(metric)
        if added is not None:
            where = f"{facts.window.interval_s:.0f} s window"
            evidence = Evidence(source=window_source(facts), name=f"increase({metric})", value=added, location=where)
            return Signal(added, evidence)
    counted = [e for e in facts.events_of(LogEventKind.STATS_LINE) if e.corrupted is not None]
    if counted:
        total = float(sum(e.corrupted or 0 for e in counted))
        last = next((e for e in reversed(counted) if e.corrupted), counted[-1])
        return Signal(total, _log_evidence(last, "stats lines Corrupted (summed)", total, "requests"))
    if facts.snapshot is not None:
        total = facts.snapshot.value(metric)
        if total is not None:
            evidence = Evidence(source="metrics", name=f"{metric} (since start)", value=total, unit="requests")
            return Signal(total, evidence, strong=False)
    return None


@_finite_only
def prefix_hit_rate(facts: Facts) -> Signal | None:
    """rate(hits)/rate(queries) over the window, else the stats line, else since-start totals."""
    if facts.window is not None:
        ratio = facts.window.total.ratio("vllm:prefix_cache_hits_total", "vllm:prefix_cache_queries_total")
        if ratio is not None:
            evidence = Evidence(
                source=window_source(facts),
                name="prefix cache hit rate",
                value=ratio,
                description="rate(prefix_cache_hits) / rate(prefix_cache_queries)",
            )
            return Signal(ratio, evidence)
    latest = latest_per_engine(facts, "prefix_hit_rate")
    if latest:
        value = sum(float(e.prefix_hit_rate or 0.0) for e in latest) / len(latest)
        event = max(latest, key=lambda e: e.line_no or 0)
        return Signal(value, _log_evidence(event, "stats line Prefix cache hit rate", value))
    if facts.snapshot is not None:
        hits = facts.snapshot.value("vllm:prefix_cache_hits_total")
        queries = facts.snapshot.value("vllm:prefix_cache_queries_total")
        if hits is not None and queries:
            evidence = Evidence(source="metrics", name="prefix cache hit rate (since start)", value=hits / queries)
            return Signal(hits / queries, evidence, strong=False)
    return None


@_finite_only
def quantile(facts: Facts, metric: str, which: str = "p99") -> Signal | None:
    """A windowed histogram percentile (Prometheus interpolation)."""
    if facts.window is None:
        return None
    value = facts.window.total.quantile(metric, which)
    if value is None:
        return None
    evidence = Evidence(
        source=window_source(facts),
        name=f"{metric} {which}",
        value=value,
        location=f"{facts.window.interval_s:.0f} s window",
    )
    return Signal(value, evidence)


def histogram_mean(facts: Facts, metric: str) -> float | None:
    """A histogram's mean over the window, else since the server started (e.g. prompt tokens per request)."""
    value = facts.window.total.mean(metric) if facts.window is not None else None
    if value is None and facts.snapshot is not None:
        series = facts.snapshot.histogram(metric)
        count = sum(h.count for h in series)
        value = sum(h.sum for h in series) / count if count else None
    return value if _finite(value) else None


@_finite_only
def observation_rate(facts: Facts, metric: str) -> Signal | None:
    """Histogram observations per second over the window (e.g. engine steps from iteration_tokens)."""
    if facts.window is None:
        return None
    count = facts.window.total.observations.get(canonical_name(metric))
    if count is None:
        return None
    value = count / facts.window.interval_s
    evidence = Evidence(
        source=window_source(facts),
        name=f"rate({metric}_count)",
        value=round(value, 3),
        unit="/s",
        location=f"{facts.window.interval_s:.0f} s window",
    )
    return Signal(value, evidence)


def config_value(facts: Facts, field_name: str) -> tuple[object | None, Evidence | None]:
    """A typed ServerConfig field and the evidence naming its source."""
    if facts.config is None:
        return None, None
    value = getattr(facts.config, field_name, None)
    if value is None:
        return None, None
    flag = flag_name(field_name)
    source = facts.config.source_of(flag)
    shown = value if isinstance(value, (int, float, bool, str)) else str(value)
    evidence = Evidence(source="config", name=flag, value=shown, description=f"from {source.value}" if source else "")
    return value, evidence


def is_default(facts: Facts, field_name: str) -> bool:
    return facts.config is not None and facts.config.source_of(field_name) == ConfigSource.DEFAULT


def fmt(value: float | None, digits: int = 2) -> str:
    """Numbers for titles: compact, no trailing zeros."""
    if value is None:
        return "?"
    if abs(value) >= 100 or float(value).is_integer():
        return f"{value:,.0f}"
    return f"{value:.{digits}f}".rstrip("0").rstrip(".")
