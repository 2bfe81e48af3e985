"""Read a server's /metrics text (a live endpoint or a saved file) into `MetricSnapshot`s.

One scrape gives gauges and cumulative counters; two scrapes some seconds apart give a
`MetricWindow` with rates (preemptions/s, tokens/s) and latency percentiles over just that
window, which is what an on-call engineer means by "now". Parsing is prometheus_client's
own parser, so anything a real Prometheus accepts is accepted here; what it rejects is
reported as one line naming the file or URL, the line number and the fix. Names are kept
as exposed: `rules.metrics` owns the old/new spelling aliases.
"""

from __future__ import annotations

import http.client
import math
import time
import urllib.error
import urllib.request
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from advisor.collect.text_files import COMPRESSED_READ_ERRORS, read_text
from advisor.errors import UserError
from rules.metrics import HistogramSample, MetricSnapshot, MetricWindow, Sample

DEFAULT_TIMEOUT_S = 10.0  # one request to a server's /metrics or to Prometheus' API
VLLM_PREFIX = "vllm:"


class MetricsError(UserError):
    """Metrics text that cannot be read or fetched; the message names the input and the fix."""


def parse_exposition(text: str, source: str, taken_at_s: float | None = None) -> MetricSnapshot:
    """Parse Prometheus text exposition into a snapshot of its vllm:* series.

    A malformed line, an empty text or a text without any vllm:* series is a
    `MetricsError` naming the source (and the line) and what to pass instead.
    """
    if not text.strip():
        raise MetricsError(f"{source}: no metrics text (empty); pass the output of a server's /metrics")
    try:
        raw = [
            (family.type, sample.name, dict(sample.labels), float(sample.value))
            for family in text_string_to_metric_families(text)
            for sample in family.samples
        ]
    except Exception as exc:  # the parser raises ValueError/IndexError/… with no line number
        line_number, line = _find_bad_line(text)
        raise MetricsError(
            f"{source}: line {line_number} is not Prometheus exposition text "
            f"({line.strip()[:60]!r}: {exc}); pass the raw output of a server's /metrics"
        ) from None
    vllm_samples = [item for item in raw if item[1].startswith(VLLM_PREFIX)]
    if not vllm_samples:
        raise MetricsError(f"{source}: no vllm:* metrics in it; point at a vLLM-compatible server's /metrics")
    _refuse_duplicate_series(vllm_samples, source)
    return snapshot_from_samples(vllm_samples, source, taken_at_s)


def _refuse_duplicate_series(items: list[tuple[str, str, dict[str, str], float]], source: str) -> None:
    """Two samples of one series (same name, same labels) are two servers' texts pasted together,
    not one measurement: Prometheus refuses such a scrape, and summing them made impossible values."""
    seen: dict[tuple, float] = {}
    for _, name, labels, value in items:
        key = (name, tuple(sorted(labels.items())))
        if key in seen:
            shown = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
            raise MetricsError(
                f"{source}: series {name}{{{shown}}} appears twice ({seen[key]:g} and {value:g}); pass one "
                "server's /metrics per file (label each server, e.g. by scraping them through --prometheus)"
            )
        seen[key] = value


def load_file(path: str | Path) -> MetricSnapshot:
    """Read a saved /metrics dump; its modification time stands in for the scrape time."""
    file_path = Path(path)
    try:
        text = read_text(file_path)
        taken_at_s = file_path.stat().st_mtime
    except COMPRESSED_READ_ERRORS as exc:  # before OSError: gzip's BadGzipFile is one
        raise MetricsError(
            f"--metrics {path}: the gzip file is cut short or corrupt ({exc}); pass the whole dump"
        ) from None
    except OSError as exc:
        raise MetricsError(
            f"--metrics {path}: cannot read it ({exc.strerror}); pass a saved /metrics text file"
        ) from None
    return parse_exposition(text, f"--metrics {path}", taken_at_s=taken_at_s)


def metrics_url(endpoint: str) -> str:
    """`host:port`, `http://host:port`, `…/v1` or `…/metrics` → the /metrics URL."""
    base = endpoint.strip().rstrip("/")
    if "://" not in base:
        base = f"http://{base}"
    if base.endswith("/metrics"):
        return base
    if base.endswith("/v1"):
        base = base[: -len("/v1")]
    return f"{base}/metrics"


def scrape(
    endpoint: str, timeout_s: float = DEFAULT_TIMEOUT_S, headers: dict[str, str] | None = None
) -> MetricSnapshot:
    """GET the endpoint's /metrics once; unreachable or slow endpoints are one-line errors."""
    url = metrics_url(endpoint)
    try:
        request = urllib.request.Request(url, headers=headers or {})
        with urllib.request.urlopen(request, timeout=timeout_s) as response:  # noqa: S310 (user's URL)
            text = response.read().decode("utf-8", errors="replace")
    except http.client.HTTPException as exc:  # BadStatusLine & co: the port speaks something else
        raise MetricsError(
            f"--endpoint {endpoint}: {url} did not answer HTTP ({type(exc).__name__}); "
            "check the port is the vLLM server's"
        ) from None
    except urllib.error.HTTPError as exc:
        raise MetricsError(
            f"--endpoint {endpoint}: {url} answered HTTP {exc.code}; "
            "check the URL points at a vLLM server (its /metrics route)"
        ) from None
    except (urllib.error.URLError, TimeoutError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, TimeoutError) or "timed out" in str(reason):
            raise MetricsError(
                f"--endpoint {endpoint}: no answer from {url} within {timeout_s:g} s; "
                "check the server is up or raise --timeout"
            ) from None
        raise MetricsError(
            f"--endpoint {endpoint}: cannot reach {url} ({reason}); "
            "check the host and port and that the server is running"
        ) from None
    return parse_exposition(text, url, taken_at_s=time.time())


def scrape_pair(
    endpoint: str, interval_s: float, timeout_s: float = DEFAULT_TIMEOUT_S, headers: dict[str, str] | None = None
) -> tuple[MetricSnapshot, MetricSnapshot]:
    """Two scrapes `interval_s` apart, for rates; the wait is the caller's bounded flag."""
    first = scrape(endpoint, timeout_s, headers)
    time.sleep(max(0.0, interval_s))
    return first, scrape(endpoint, timeout_s, headers)


def window_between(before: MetricSnapshot, after: MetricSnapshot, interval_s: float | None = None) -> MetricWindow:
    """The window between two snapshots: `interval_s` if given, else their scrape times.

    Saved files carry no trustworthy clock (a copy resets mtime), so offline use should
    pass `--metrics-interval`; a missing or non-positive interval is a user error.
    """
    if interval_s is None and before.taken_at_s is not None and after.taken_at_s is not None:
        interval_s = after.taken_at_s - before.taken_at_s
    if interval_s is None or interval_s <= 0:
        raise MetricsError(
            f"{before.source} → {after.source}: cannot tell how far apart the two snapshots are; "
            "pass --metrics-interval SECONDS"
        )
    return MetricWindow.from_snapshots(before, after, interval_s)


def snapshot_from_samples(
    items: list[tuple[str, str, dict[str, str], float]], source: str, taken_at_s: float | None
) -> MetricSnapshot:
    """Sort samples into gauges, counters and histograms by family type and suffix.

    Untyped text (no `# TYPE` lines, as some proxies strip them) is classified by suffix:
    `_bucket{le=…}` is a histogram, `_total` a counter, anything else a gauge. The
    `_created` series prometheus_client adds are timestamps, not measurements: dropped, as are
    NaN and ±Inf values (rules would read `running inf` as a fact).
    """
    histogram_bases = {
        name[: -len("_bucket")] for _, name, labels, _ in items if name.endswith("_bucket") and "le" in labels
    }
    snapshot = MetricSnapshot(source=source, taken_at_s=taken_at_s)
    histograms: dict[str, dict[tuple, HistogramSample]] = {}
    for family_type, name, labels, value in items:
        if name.endswith("_created"):
            continue
        if not math.isfinite(value):  # NaN/±Inf are not measurements (a +Inf *label*, le="+Inf", is fine)
            continue
        base, part = _histogram_part(name, histogram_bases)
        if base is not None:
            series_labels = {k: v for k, v in labels.items() if k != "le"}
            key = tuple(sorted(series_labels.items()))
            series = histograms.setdefault(base, {}).setdefault(key, HistogramSample(labels=series_labels))
            if part == "bucket":
                series.buckets.append((float(labels["le"]), value))
            elif part == "count":
                series.count = value
            else:
                series.sum = value
            continue
        table = snapshot.counters if family_type == "counter" or name.endswith("_total") else snapshot.gauges
        table.setdefault(name, []).append(Sample(labels=labels, value=value))
    for base, by_labels in histograms.items():
        for series in by_labels.values():
            series.buckets.sort(key=lambda bucket: bucket[0])
            if not series.count and series.buckets:
                series.count = series.buckets[-1][1]
        snapshot.histograms[base] = list(by_labels.values())
    return snapshot


def _histogram_part(name: str, histogram_bases: set[str]) -> tuple[str | None, str]:
    for part in ("bucket", "count", "sum"):
        suffix = f"_{part}"
        if name.endswith(suffix) and name[: -len(suffix)] in histogram_bases:
            return name[: -len(suffix)], part
    return None, ""


def _find_bad_line(text: str) -> tuple[int, str]:
    """The first line the parser rejects on its own (its error for the whole text names none)."""
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            list(text_string_to_metric_families(line + "\n"))
        except Exception:
            return number, line
    return 1, lines[0] if lines else ""
