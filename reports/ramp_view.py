"""Turn a ramp result (JSON kind "ramp") into what the ramp template shows.

Why a view layer: the ramp JSON is written by loadtest and may grow or rename optional
fields; the template should not have to guess. This module reads the fields tolerantly
(missing optional figures become gaps, never errors), builds the per-step table rows and
draws the charts against offered load with the knee and safe operating point marked.
It only re-arranges numbers the ramp already measured; it computes no verdicts. Where a
figure is missing at every step, `absence` says why in words, from what the JSON lacks
(no `server` block at all: the target exposed no /metrics; no successful request; …), and
the chart helper shows those words instead of an empty line.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from reports.charts import PALETTE, Marker, Series, line_chart, no_data
from reports.fields import number, pick

__all__ = [
    "DEFAULT_METRIC_DEFINITIONS",
    "absence",
    "offered_load_label",
    "overlay_charts",
    "ramp_view",
    "server_figure",
]

LATENCY_METRICS = (("ttft_s", "TTFT"), ("itl_s", "ITL"), ("tpot_s", "TPOT"), ("e2e_s", "E2E"))

# Shown when a ramp document carries no `metric_definitions` of its own (older files);
# they state the formulas loadtest documents, so a reader can always check a number.
DEFAULT_METRIC_DEFINITIONS: dict[str, str] = {
    "offered": "target load of the step: requests/s (rate ramps) or concurrent users (concurrency ramps)",
    "achieved_rate": "completed requests / step duration (s)",
    "ttft_s": "time to first token = first streamed content token time − request send time",
    "itl_s": "inter-token latency = gap between consecutive streamed tokens, pooled over all requests",
    "tpot_s": "time per output token = (e2e − ttft) / (output tokens − 1), per request",
    "e2e_s": "end-to-end latency = last token (or [DONE]) time − request send time",
    "output_tokens_per_s": "sum of output tokens of requests finished in the step / step duration (s)",
    "goodput_rps": "requests finished in the step that met every latency SLO / step duration (s)",
    "errors": "requests that failed (HTTP error, broken stream) in the step",
    "server.kv_cache_usage": "mean of vllm:kv_cache_usage_perc (0–1) sampled during the step",
    "server.waiting": "mean of vllm:num_requests_waiting sampled during the step",
    "server.preemptions_per_s": "increase of vllm:num_preemptions_total over the step / step duration (s)",
}

# Alternative spellings accepted for the server block, first match wins.
_SERVER_KEYS: dict[str, tuple[str, ...]] = {
    "kv_cache_usage": ("kv_cache_usage", "kv_cache_usage_perc", "kv_usage", "kv_cache_usage_mean"),
    "running": ("running", "num_requests_running", "running_mean"),
    "waiting": ("waiting", "num_requests_waiting", "waiting_mean"),
    "preemptions_per_s": ("preemptions_per_s", "preemption_rate", "preemptions_rate"),
}
# What vLLM exposes for each server figure: named when /metrics answered without it.
_SERVER_METRICS: dict[str, str] = {
    "kv_cache_usage": "vllm:kv_cache_usage_perc (or the older vllm:gpu_cache_usage_perc)",
    "running": "vllm:num_requests_running",
    "waiting": "vllm:num_requests_waiting",
    "preemptions_per_s": "vllm:num_preemptions_total sampled twice or more within a step",
}


def server_figure(step: Mapping[str, Any], name: str) -> float | None:
    """One server-side figure of a step, under any of its accepted spellings."""
    server = step.get("server") or {}
    if not isinstance(server, Mapping):
        return None
    return number(pick(server, *_SERVER_KEYS[name]))


def absence(steps: Sequence[Mapping[str, Any]], figure: str, ramp: str = "the ramp") -> str:
    """Why no step of `ramp` has `figure` (a step key such as `itl_s`, or a server figure), in words.

    Read from what the JSON lacks, so an old or partial file gets as honest an answer as a new one.
    """
    if not steps:
        return f"{ramp} has no steps"
    if figure in _SERVER_KEYS:
        if not any(isinstance(s.get("server"), Mapping) and s.get("server") for s in steps):
            return f"the target exposed no /metrics during {ramp}"
        return f"the server's /metrics had no {_SERVER_METRICS[figure]}"
    if not any(figure in s for s in steps):
        return f"{ramp} records no {figure} (an older or partial file)"
    ok = [number(s.get("ok_requests")) for s in steps]
    if any(o is not None for o in ok) and not any(ok):
        return f"no request of {ramp} succeeded"
    if figure in ("itl_s", "tpot_s"):
        return f"no successful request of {ramp} streamed more than one token, so there are no gaps between tokens"
    return f"no step of {ramp} has a value for {figure}"


def ramp_view(ramp: Mapping[str, Any]) -> dict[str, Any]:
    """Table rows, charts and markers for one ramp document."""
    steps = [s for s in (ramp.get("steps") or []) if isinstance(s, Mapping)]
    offered = [number(s.get("offered")) or 0.0 for s in steps]
    valid = [bool(s.get("valid", True)) for s in steps]
    load_label = offered_load_label(ramp)
    markers = _markers(ramp)
    rows = [_row(i, s) for i, s in enumerate(steps)]
    if not steps:
        stopped = ramp.get("stopped_early")
        why = absence(steps, "steps") + (f" (stopped early: {stopped})" if stopped else "")
        charts = [{"title": "Charts", "svg": no_data("charts", why)}]
    else:
        charts = [
            {
                "title": "TTFT vs offered load",
                "svg": _latency_chart(steps, offered, valid, load_label, markers, LATENCY_METRICS[:1]),
            },
            {
                "title": "ITL and TPOT vs offered load",
                "svg": _latency_chart(steps, offered, valid, load_label, markers, LATENCY_METRICS[1:3]),
            },
            {
                "title": "Throughput vs offered load",
                "svg": _throughput_chart(steps, offered, valid, load_label, markers),
            },
            {"title": "Server state vs offered load", "svg": _server_chart(steps, offered, valid, load_label, markers)},
        ]
    definitions = dict(DEFAULT_METRIC_DEFINITIONS)
    given = ramp.get("metric_definitions")
    if isinstance(given, Mapping):
        definitions.update({str(k): _definition_text(v) for k, v in given.items()})
    return {
        "rows": rows,
        "charts": charts,
        "load_label": load_label,
        "knee": _knee(ramp),
        "safe": _safe(ramp),
        "definitions": definitions,
        "target": pick(ramp, "target", "base_url", "endpoint") or _config(ramp).get("endpoint"),
        "model": pick(ramp, "model", "served_model") or _config(ramp).get("model"),
        "workload": ramp.get("workload") or _config(ramp).get("workload"),
        "slo": ramp.get("slo") or _config(ramp).get("slo"),
        "summary": ramp.get("summary") or "",
        "stopped_early": ramp.get("stopped_early"),
        "step_s": _config(ramp).get("step_s"),
    }


def overlay_charts(
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    labels: Sequence[str] = ("before", "after"),
    quantile: str = "p99",
    bands: Sequence[Sequence[Any] | None] = (None, None),
) -> list[dict[str, str]]:
    """Before/after charts on shared axes: TTFT and ITL at `quantile`, and output throughput.

    The first ramp is drawn dashed. `bands` gives, per ramp, its per-step uncertainty bands (a
    prediction's `{"ttft_p99": {"low", "high"}, …}`, in seconds and tokens/s); a ramp with bands
    is drawn with the range shaded.
    """
    load_label = offered_load_label(after)
    ramps = (_Overlaid(labels[0], before, True, bands[0]), _Overlaid(labels[1], after, False, bands[1]))
    versus = f"{labels[0]} vs {labels[1]}"
    out: list[dict[str, str]] = []
    for key, metric in (("ttft_s", "TTFT"), ("itl_s", "ITL")):
        name = f"{metric} {quantile}"
        band_key = f"{key.removesuffix('_s')}_{quantile}"
        series = [
            _overlay_series(r, name, key, lambda s, key=key: _ms(_percentile(s, key, quantile)), band_key, 1000.0)
            for r in ramps
        ]
        out.append(
            {
                "title": f"{name}: {versus}",
                "svg": line_chart(f"{name}, {versus}", load_label, "ms", series, subject=name),
            }
        )
    throughput = "output_tokens_per_s"
    series = [
        _overlay_series(r, "output tokens/s", throughput, lambda s: number(s.get(throughput)), throughput, 1.0)
        for r in ramps
    ]
    svg = line_chart(f"Output throughput, {versus}", load_label, "tokens/s", series, subject="output throughput")
    out.append({"title": f"Throughput: {versus}", "svg": svg})
    return out


class _Overlaid(NamedTuple):
    """One ramp of an overlay: its label, its document, whether it is drawn dashed, its uncertainty bands."""

    label: str
    ramp: Mapping[str, Any]
    dashed: bool
    bands: Sequence[Any] | None


def _overlay_series(
    overlaid: _Overlaid,
    name: str,
    key: str,
    value_of: Callable[[Mapping[str, Any]], float | None],
    band_key: str,
    band_scale: float,
) -> Series:
    """One ramp's line of an overlay chart: `value_of` each step against its offered load, invalid steps
    marked, the band shaded when the ramp has one, and the steps that lack `key` said to be missing."""
    steps = _steps(overlaid.ramp)
    shaded = ", shaded: uncertainty" if overlaid.bands else ""
    return Series(
        label=f"{name} ({overlaid.label}{shaded})",
        x=[number(s.get("offered")) or 0.0 for s in steps],
        y=[value_of(s) for s in steps],
        valid=[bool(s.get("valid", True)) for s in steps],
        dashed=overlaid.dashed,
        band=_band(overlaid.bands, len(steps), band_key, band_scale),
        missing=absence(steps, key, f"the {overlaid.label} ramp"),
    )


def _steps(ramp: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [s for s in (ramp.get("steps") or []) if isinstance(s, Mapping)]


def _band(bands: Sequence[Any] | None, count: int, name: str, scale: float) -> tuple[list, list] | None:
    """(low, high) of one figure over the steps, scaled to the chart's unit; None without bands."""
    if not bands:
        return None
    edges: tuple[list[float | None], list[float | None]] = ([], [])
    for k in range(count):
        band = bands[k] if k < len(bands) and isinstance(bands[k], Mapping) else {}
        figure = band.get(name) if isinstance(band.get(name), Mapping) else {}
        for edge, side in zip(edges, ("low", "high"), strict=True):
            value = number(figure.get(side))
            edge.append(None if value is None else value * scale)
    return edges if any(v is not None for v in edges[0] + edges[1]) else None


def _row(index: int, step: Mapping[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {
        "index": pick(step, "index", "step", default=index),
        "offered": number(step.get("offered")),
        "achieved_rate": number(pick(step, "achieved_rate", "achieved_rps")),
        "requests": step.get("requests"),
        "errors": _error_count(step.get("errors")),
        "error_detail": step.get("errors") if isinstance(step.get("errors"), Mapping) else None,
        "output_tokens_per_s": number(step.get("output_tokens_per_s")),
        "goodput_rps": number(step.get("goodput_rps")),
        "valid": bool(step.get("valid", True)),
        "invalid_reason": step.get("invalid_reason") or "",
        "kv_cache_usage": server_figure(step, "kv_cache_usage"),
        "running": server_figure(step, "running"),
        "waiting": server_figure(step, "waiting"),
        "preemptions_per_s": server_figure(step, "preemptions_per_s"),
    }
    for key, _ in LATENCY_METRICS:
        row[key] = {p: _percentile(step, key, p) for p in ("p50", "p90", "p95", "p99")}
    return row


def _error_count(errors: Any) -> float | None:
    """Errors as one number; loadtest writes a dict of counts by error type."""
    if isinstance(errors, Mapping):
        return float(sum(number(v) or 0.0 for v in errors.values()))
    return number(errors)


def _percentile(step: Mapping[str, Any], key: str, which: str) -> float | None:
    block = step.get(key)
    if not isinstance(block, Mapping):
        return None
    return number(block.get(which))


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1000.0


def _config(ramp: Mapping[str, Any]) -> Mapping[str, Any]:
    config = ramp.get("config")
    return config if isinstance(config, Mapping) else {}


def offered_load_label(ramp: Mapping[str, Any]) -> str:
    """The x axis of a ramp's charts: offered load in the ramp's own unit."""
    mode = str(pick(ramp, "mode", "shape", "load_mode", default=None) or _config(ramp).get("mode") or "").lower()
    steps = ramp.get("steps") or []
    unit = pick(ramp, "offered_unit", "load_unit") or next(
        (s.get("offered_unit") for s in steps if isinstance(s, Mapping) and s.get("offered_unit")), None
    )
    if unit == "rps" or mode == "rate":
        return "offered load (requests/s)"
    if unit == "concurrency" or "concurr" in mode or "user" in mode:
        return "offered load (concurrent streams)"
    return "offered load (requests/s)"


def _knee(ramp: Mapping[str, Any]) -> dict[str, Any] | None:
    knee = ramp.get("knee")
    if isinstance(knee, Mapping):
        return {
            "offered": number(knee.get("offered")),
            "step": knee.get("step"),
            "metric": knee.get("metric") or "",
            "reason": knee.get("reason") or "",
        }
    return None


def _safe(ramp: Mapping[str, Any]) -> dict[str, Any] | None:
    safe = ramp.get("safe_operating_point")
    if isinstance(safe, Mapping):
        return {
            "offered": number(pick(safe, "offered", "load", "value")),
            "reason": pick(safe, "reason", "rule", default="") or "",
            "extra": {k: v for k, v in safe.items() if k not in ("offered", "reason", "step")},
        }
    value = number(safe)
    return None if value is None else {"offered": value, "reason": "", "extra": {}}


def _markers(ramp: Mapping[str, Any]) -> list[Marker]:
    markers = []
    knee, safe = _knee(ramp), _safe(ramp)
    if knee and knee["offered"] is not None:
        markers.append(Marker(knee["offered"], f"knee ({knee['offered']:g})", "#d62728", "--"))
    if safe and safe["offered"] is not None:
        markers.append(Marker(safe["offered"], f"safe operating point ({safe['offered']:g})", "#2ca02c", ":"))
    return markers


def _latency_chart(steps, offered, valid, load_label, markers, metrics) -> str:
    series = []
    for (key, name), colour in zip(metrics, PALETTE, strict=False):
        for which, dashed in (("p50", True), ("p99", False)):
            ys = [_ms(_percentile(s, key, which)) for s in steps]
            series.append(
                Series(f"{name} {which}", offered, ys, valid, dashed=dashed, colour=colour, missing=absence(steps, key))
            )
    names = " and ".join(name for _, name in metrics)
    return line_chart(f"{names} (p50 dashed, p99 solid)", load_label, "ms", series, markers, subject=names)


def _throughput_chart(steps, offered, valid, load_label, markers) -> str:
    series = [
        Series(
            "output tokens/s",
            offered,
            [number(s.get("output_tokens_per_s")) for s in steps],
            valid,
            missing=absence(steps, "output_tokens_per_s"),
        ),
        Series(
            "achieved req/s",
            offered,
            [number(pick(s, "achieved_rate", "achieved_rps")) for s in steps],
            valid,
            secondary_axis=True,
            missing=absence(steps, "achieved_rate"),
        ),
        Series(
            "goodput req/s",
            offered,
            [number(s.get("goodput_rps")) for s in steps],
            valid,
            dashed=True,
            secondary_axis=True,
            missing=absence(steps, "goodput_rps"),
        ),
    ]
    return line_chart(
        "Throughput", load_label, "output tokens/s", series, markers, y2_label="requests/s", subject="throughput"
    )


def _server_chart(steps, offered, valid, load_label, markers) -> str:
    def figure(name: str, label: str, **style: Any) -> Series:
        return Series(
            label, offered, [server_figure(s, name) for s in steps], valid, missing=absence(steps, name), **style
        )

    series = [
        figure("kv_cache_usage", "KV cache usage (0–1)"),
        figure("waiting", "waiting requests", secondary_axis=True),
        figure("running", "running requests", dashed=True, secondary_axis=True),
        figure("preemptions_per_s", "preemptions/s", dashed=True, secondary_axis=True),
    ]
    return line_chart(
        "Server KV usage, queue and preemptions",
        load_label,
        "KV cache usage (fraction)",
        series,
        markers,
        y2_label="requests · preemptions/s",
        subject="server KV usage, queue or preemptions",
    )


def _definition_text(value: Any) -> str:
    if isinstance(value, Mapping):
        return str(pick(value, "formula", "definition", "description", default=value))
    return str(value)
