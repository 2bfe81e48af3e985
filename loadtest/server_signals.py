"""Sampling the endpoint's Prometheus /metrics during a ramp, and summarising it per step.

Why here and not in advisor/collect: loadtest may import nothing else of the project, and it
needs only a few series, read the same way on vLLM and on our engine: KV usage
(`vllm:kv_cache_usage_perc`, or `vllm:gpu_cache_usage_perc` before vLLM 0.9.2; a 0-1
fraction), `vllm:num_requests_running`, `vllm:num_requests_waiting` and the counter
`vllm:num_preemptions_total`, plus the counters the performance model calibrates from
(`vllm:iteration_tokens_total`, the request phase-time histograms, prompt and generation
token totals), summarised as deltas over the step. Series with several label sets (data-parallel engines) are
summed, except KV usage, which is averaged.

The sampler is a plain thread in the controller process, one GET per interval with a timeout
(SCRAPE_TIMEOUT_S); a server without /metrics simply yields `server: null`.
"""

from __future__ import annotations

import math
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass

from loadtest.results import ServerSignals

KV_NAMES = ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc")
# Counters whose deltas over a step feed the performance model's calibration (advisor/perf).
ITERATION = "vllm:iteration_tokens_total"
PHASES = {
    "queue": "vllm:request_queue_time_seconds",
    "prefill": "vllm:request_prefill_time_seconds",
    "decode": "vllm:request_decode_time_seconds",
}
TOKEN_COUNTERS = {"prompt": "vllm:prompt_tokens_total", "generation": "vllm:generation_tokens_total"}
HISTOGRAMS = (ITERATION, *PHASES.values())
WANTED = (
    *KV_NAMES,
    "vllm:num_requests_running",
    "vllm:num_requests_waiting",
    "vllm:num_preemptions_total",
    *(f"{h}_{part}" for h in HISTOGRAMS for part in ("sum", "count")),
    *TOKEN_COUNTERS.values(),
)
MAX_SAMPLES = 100_000
# A saturated server answers /metrics late, and its saturated steps are the ones whose signals matter: vLLM 0.32 on
# two CPU cores with another process beside it gave a 2 s timeout one sample in a 14 s step and none in the next
# (BENCHMARKS.md, the CI run of cebd241). A late scrape only delays the next one.
SCRAPE_TIMEOUT_S = 5.0


def parse_prometheus_text(text: str, wanted: Sequence[str] = WANTED) -> dict[str, list[float]]:
    """Values of each wanted metric name, one per series; unknown lines are ignored."""
    values: dict[str, list[float]] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        if "{" in line:
            name = line[: line.index("{")]
            rest = line[line.rindex("}") + 1 :]
        else:
            name, _, rest = line.partition(" ")
        if name not in wanted:
            continue
        try:
            value = float(rest.split()[0])
        except (IndexError, ValueError):
            continue
        if math.isfinite(value) and value >= 0:  # every wanted series is a count, a gauge of use or a time
            values.setdefault(name, []).append(value)
    return values


@dataclass(slots=True)
class Sample:
    ts: float
    values: dict[str, list[float]]


class MetricsSampler:
    """Polls `url` every `interval_s` in a daemon thread until `stop()`; bounded in count."""

    def __init__(self, url: str, interval_s: float = 1.0, timeout_s: float = SCRAPE_TIMEOUT_S) -> None:
        self.url = url
        self.interval_s = interval_s
        self.timeout_s = timeout_s
        self.samples: list[Sample] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="servops-metrics-sampler", daemon=True)

    def probe(self) -> bool:
        """True when the endpoint serves vLLM-style metrics at all."""
        sample = self._fetch()
        return sample is not None and any(sample.values.values())

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=self.timeout_s + 1)

    def _run(self) -> None:
        while not self._stop.is_set() and len(self.samples) < MAX_SAMPLES:
            sample = self._fetch()
            if sample is not None:
                self.samples.append(sample)
            self._stop.wait(self.interval_s)

    def _fetch(self) -> Sample | None:
        try:
            with urllib.request.urlopen(self.url, timeout=self.timeout_s) as resp:
                text = resp.read(16 * 1024 * 1024).decode("utf-8", errors="replace")
        except (urllib.error.URLError, OSError, ValueError):
            return None
        return Sample(ts=time.time(), values=parse_prometheus_text(text))


def summarise(samples: Sequence[Sample], start_ts: float, end_ts: float) -> ServerSignals | None:
    """Summary of the samples taken in [start_ts, end_ts); None when there are none."""
    window = [s for s in samples if start_ts <= s.ts < end_ts]
    if not window:
        return None
    kv_name = next((n for n in KV_NAMES if any(n in s.values for s in window)), None)
    kv = [sum(s.values[kv_name]) / len(s.values[kv_name]) for s in window if kv_name and s.values.get(kv_name)]
    running = [sum(s.values["vllm:num_requests_running"]) for s in window if "vllm:num_requests_running" in s.values]
    waiting = [sum(s.values["vllm:num_requests_waiting"]) for s in window if "vllm:num_requests_waiting" in s.values]
    preempt_rate = _rate(window, "vllm:num_preemptions_total")
    steps = _delta(window, f"{ITERATION}_count")
    elapsed = window[-1].ts - window[0].ts
    return ServerSignals(
        samples=len(window),
        kv_metric=kv_name,
        kv_cache_usage_mean=_mean(kv),
        kv_cache_usage_max=max(kv) if kv else None,
        running_mean=_mean(running),
        running_max=max(running) if running else None,
        waiting_mean=_mean(waiting),
        waiting_max=max(waiting) if waiting else None,
        preemptions_per_s=preempt_rate,
        engine_steps_per_s=steps / elapsed if steps is not None and elapsed > 0 else None,
        tokens_per_step_mean=_histogram_mean(window, ITERATION),
        queue_time_mean_s=_histogram_mean(window, PHASES["queue"]),
        prefill_time_mean_s=_histogram_mean(window, PHASES["prefill"]),
        decode_time_mean_s=_histogram_mean(window, PHASES["decode"]),
        prompt_tokens_per_s=_rate(window, TOKEN_COUNTERS["prompt"]),
        generation_tokens_per_s=_rate(window, TOKEN_COUNTERS["generation"]),
    )


def _delta(window: Sequence[Sample], name: str) -> float | None:
    """Increase of a counter (summed over its series) from the first to the last sample that has it."""
    seen = [sum(s.values[name]) for s in window if s.values.get(name)]
    return max(0.0, seen[-1] - seen[0]) if len(seen) >= 2 else None


def _rate(window: Sequence[Sample], name: str) -> float | None:
    seen = [(s.ts, sum(s.values[name])) for s in window if s.values.get(name)]
    if len(seen) < 2 or seen[-1][0] <= seen[0][0]:
        return None
    return max(0.0, seen[-1][1] - seen[0][1]) / (seen[-1][0] - seen[0][0])


def _histogram_mean(window: Sequence[Sample], name: str) -> float | None:
    """Mean observation over the window: delta of _sum over delta of _count (None when nothing was observed)."""
    total, count = _delta(window, f"{name}_sum"), _delta(window, f"{name}_count")
    return total / count if total is not None and count else None


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None
