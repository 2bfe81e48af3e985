"""Read many replicas at once through a Prometheus server's HTTP API (prometheus-api-client).

A fleet is not triaged by scraping each pod: Prometheus already holds every replica's
series with an `instance` label, and PromQL does the windowed maths (`rate`, `increase`,
`histogram_quantile` over `sum by (le)`) exactly as the dashboards the on-call engineer
looks at. This collector asks for: the latest value of every `vllm:*` series matching the
user's `--selector` (a snapshot), per-instance rates and percentiles over `--window`, and
fleet-wide percentiles — and returns them as `rules.metrics` models.
"""

from __future__ import annotations

import math
import re

import requests
from prometheus_api_client import PrometheusApiClientException, PrometheusConnect
from urllib3.util.retry import Retry

from advisor.collect.metrics import DEFAULT_TIMEOUT_S, snapshot_from_samples
from advisor.errors import UserError
from rules.metrics import QUANTILES, MetricSnapshot, MetricWindow, WindowStats, canonical_name

DEFAULT_WINDOW_S = 300.0
INSTANCE = "instance"
# labels that say *which* series, not *what kind*: no per-label rates for them (Kubernetes
# service discovery adds the pod/namespace/… ones to every series)
_SERIES_LABELS = (
    "engine",
    "model_name",
    INSTANCE,
    "job",
    "__name__",
    "pod",
    "namespace",
    "service",
    "endpoint",
    "container",
    "node",
    "cluster",
    "prometheus",
    "replica",
)
_SELECTOR = re.compile(r'^\{\s*(?:[a-zA-Z_]\w*\s*(?:=~|!~|!=|=)\s*"(?:[^"\\]|\\.)*"\s*,?\s*)*\}$')


class PrometheusError(UserError):
    """Prometheus unreachable, slow, refusing a query, or holding no vLLM series."""


def collect(
    url: str,
    selector: str = "",
    window_s: float = DEFAULT_WINDOW_S,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    headers: dict[str, str] | None = None,
) -> tuple[MetricSnapshot, MetricWindow]:
    """The latest vLLM series matching `selector`, and their window of `window_s` seconds."""
    matchers = selector_matchers(selector)
    client = _Client(url, timeout_s, selector, headers)
    snapshot = _snapshot(client, url, matchers)
    window = _window(client, snapshot, matchers, window_s)
    return snapshot, window


def selector_matchers(selector: str) -> str:
    """`{job="vllm"}` → `job="vllm"` (to join into our own matchers); '' when none given."""
    text = (selector or "").strip()
    if not text:
        return ""
    if not _SELECTOR.match(text):
        raise PrometheusError(f"--selector {selector!r}: not a PromQL label matcher; write it like '{{job=\"vllm\"}}'")
    return text[1:-1].strip().rstrip(",")


class _Client:
    """PrometheusConnect with our timeout, no retries, and one-line errors."""

    def __init__(self, url: str, timeout_s: float, selector: str, headers: dict[str, str] | None = None) -> None:
        self.url, self.timeout_s, self.selector = url.rstrip("/"), timeout_s, selector
        if "://" not in self.url:
            self.url = f"http://{self.url}"
        self._prom = PrometheusConnect(
            url=self.url,
            headers=headers or None,
            disable_ssl=True,
            retry=Retry(total=0, raise_on_status=False),
            timeout=timeout_s,
        )

    def query(self, promql: str) -> list[dict]:
        try:
            return self._prom.custom_query(promql, timeout=self.timeout_s)
        except ValueError:  # not JSON (requests' JSONDecodeError is also a RequestException)
            raise PrometheusError(
                f"--prometheus {self.url}: the answer is not Prometheus API JSON; pass the Prometheus base URL"
            ) from None
        except requests.exceptions.RequestException as exc:
            text = str(exc)
            if isinstance(exc, requests.exceptions.Timeout) or "ReadTimeout" in text or "timed out" in text:
                raise PrometheusError(
                    f"--prometheus {self.url}: no answer within {self.timeout_s:g} s; "
                    "check the server is up or raise --timeout"
                ) from None
            raise PrometheusError(
                f"--prometheus {self.url}: cannot reach it ({_reason(text, exc)}); "
                "check the URL and that Prometheus is running"
            ) from None
        except PrometheusApiClientException as exc:
            raise PrometheusError(
                f"--prometheus {self.url}: it rejected the query ({_short(str(exc))}); "
                f"check --selector {self.selector!r}"
            ) from None


def _snapshot(client: _Client, url: str, matchers: str) -> MetricSnapshot:
    joined = '__name__=~"vllm:.+"' + (f", {matchers}" if matchers else "")
    result = client.query(f"{{{joined}}}")
    items: list[tuple[str, str, dict[str, str], float]] = []
    taken_at = None
    for series in result:
        labels = dict(series.get("metric", {}))
        name = labels.pop("__name__", "")
        timestamp, value = series.get("value", [None, "nan"])
        taken_at = float(timestamp) if timestamp is not None else taken_at
        items.append(("unknown", name, labels, float(value)))
    if not items:
        raise PrometheusError(
            f"--prometheus {url}: no vllm:* series match {{{matchers}}}; "
            "check --selector and that Prometheus scrapes the servers' /metrics"
        )
    return snapshot_from_samples(items, f"prometheus {url} {{{matchers}}}", taken_at)


def _window(client: _Client, snapshot: MetricSnapshot, matchers: str, window_s: float) -> MetricWindow:
    """Per-instance gauges, rates and percentiles, then fleet-wide percentiles."""
    query = _RangeQuery(client, f"{{{matchers}}}" if matchers else "", f"[{max(1, int(round(window_s)))}s]")
    per_instance: dict[str, WindowStats] = {
        instance: WindowStats(instance=instance) for instance in snapshot.instances()
    }
    _gauges(snapshot, per_instance)
    for name, samples in snapshot.counters.items():
        _counter(query, name, samples, per_instance, window_s)
    total_quantiles: dict[str, dict[str, float]] = {}
    for name in snapshot.histograms:
        _histogram(query, name, per_instance, total_quantiles)
    window = MetricWindow.from_prometheus(window_s, list(per_instance.values()))
    window.total.quantiles = total_quantiles
    return window


class _RangeQuery:
    """The client, the series selector and the range every window query shares."""

    def __init__(self, client: _Client, selector: str, range_: str) -> None:
        self.client, self.selector, self.range = client, selector, range_

    def over(self, function: str, series: str, by: str) -> list[dict]:
        """`sum by (BY) (FUNCTION(SERIES{selector}[range]))`."""
        return self.client.query(f"sum by ({by}) ({function}({series}{self.selector}{self.range}))")

    def quantile(self, quantile: float, histogram: str, by: str) -> list[dict]:
        bucket_rate = f"rate({histogram}_bucket{self.selector}{self.range})"
        return self.client.query(f"histogram_quantile({quantile}, sum by ({by}) ({bucket_rate}))")


def _gauges(snapshot: MetricSnapshot, per_instance: dict[str, WindowStats]) -> None:
    """Each instance's gauges as the snapshot holds them: the value and the hottest series."""
    for instance, stats in per_instance.items():
        part = snapshot.for_instance(instance)
        for name in part.gauges:
            value, hottest = part.value(name), part.max_value(name)
            if value is not None and hottest is not None:
                stats.gauges[canonical_name(name)] = value
                stats.gauges_max[canonical_name(name)] = hottest


def _counter(
    query: _RangeQuery, name: str, samples: list, per_instance: dict[str, WindowStats], window_s: float
) -> None:
    """A counter's increase and rate per instance, and its rate per value of each extra label."""
    key = canonical_name(name)
    for row in query.over("increase", name, INSTANCE):
        stats = _stats_for(per_instance, row)
        stats.increases[key] = _value(row)
        stats.rates[key] = _value(row) / window_s
    extra = sorted({label for sample in samples for label in sample.labels} - set(_SERIES_LABELS))
    for label in extra:
        for row in query.over("rate", name, f"{INSTANCE}, {label}"):
            stats = _stats_for(per_instance, row)
            stats.labeled_rates.setdefault(key, {})[row["metric"].get(label, "")] = _value(row)


def _histogram(
    query: _RangeQuery, name: str, per_instance: dict[str, WindowStats], total_quantiles: dict[str, dict[str, float]]
) -> None:
    """A histogram's observations, sum and quantiles per instance, and its fleet-wide quantiles."""
    key = canonical_name(name)
    for row in query.over("increase", f"{name}_count", INSTANCE):
        _stats_for(per_instance, row).observations[key] = _value(row)
    for row in query.over("increase", f"{name}_sum", INSTANCE):
        _stats_for(per_instance, row).sums[key] = _value(row)
    for label, quantile in QUANTILES.items():
        for row in query.quantile(quantile, name, f"{INSTANCE}, le"):
            if not math.isnan(_value(row)):
                _stats_for(per_instance, row).quantiles.setdefault(key, {})[label] = _value(row)
        for row in query.quantile(quantile, name, "le"):
            if not math.isnan(_value(row)):
                total_quantiles.setdefault(key, {})[label] = _value(row)


def _stats_for(per_instance: dict[str, WindowStats], row: dict) -> WindowStats:
    instance = row.get("metric", {}).get(INSTANCE) or next(iter(per_instance), "default")
    return per_instance.setdefault(instance, WindowStats(instance=instance))


def _value(row: dict) -> float:
    try:
        return float(row["value"][1])
    except (KeyError, IndexError, TypeError, ValueError):
        return math.nan


def _reason(text: str, exc: Exception) -> str:
    """The part of a requests/urllib3 error a user can act on, not its connection-pool repr."""
    for needle, reason in (
        ("Connection refused", "connection refused"),
        ("Failed to resolve", "host not found"),
        ("Name or service not known", "host not found"),
        ("No route to host", "no route to host"),
        ("Invalid URL", "invalid URL"),
        ("No connection adapters", "invalid URL"),
    ):
        if needle in text:
            return reason
    return type(exc).__name__


def _short(text: str) -> str:
    return " ".join(text.split())[:160]
