"""The ramp result document (`kind: "ramp"`), JSON first: `servops report` renders it later.

Keys named in issue #7 are stable: `steps[*].offered`, `achieved_rate`, `requests`, `errors`,
`ttft_s` / `itl_s` / `tpot_s` / `e2e_s` (each p50/p90/p95/p99), `output_tokens_per_s`,
`goodput_rps`, `valid`, `invalid_reason`, `server`; `knee`, `safe_operating_point`,
`metric_definitions`. Other fields are additions, never renames.
"""

from __future__ import annotations

import statistics
from datetime import datetime, timezone
from importlib import metadata
from typing import Literal

from pydantic import BaseModel, Field


def servops_version() -> str:
    try:
        return metadata.version("servops")
    except metadata.PackageNotFoundError:  # running from a source tree without install
        return "0+unknown"


class Percentiles(BaseModel):
    """Linear-interpolated percentiles of one metric over a step; null when nothing was measured."""

    p50: float | None = None
    p90: float | None = None
    p95: float | None = None
    p99: float | None = None
    count: int = 0


class ServerSignals(BaseModel):
    """What the endpoint's /metrics said during the step (sampled by the controller)."""

    samples: int
    kv_cache_usage_mean: float | None = None
    kv_cache_usage_max: float | None = None
    kv_metric: str | None = Field(default=None, description="which spelling the server exposes")
    running_mean: float | None = None
    running_max: float | None = None
    waiting_mean: float | None = None
    waiting_max: float | None = None
    preemptions_per_s: float | None = None
    # Counter deltas between the first and last sample of the window (the performance model's
    # calibration reads them): engine steps and tokens per step from vllm:iteration_tokens_total,
    # per-request phase means from the request_{queue,prefill,decode}_time_seconds histograms.
    engine_steps_per_s: float | None = None
    tokens_per_step_mean: float | None = None
    queue_time_mean_s: float | None = None
    prefill_time_mean_s: float | None = None
    decode_time_mean_s: float | None = None
    prompt_tokens_per_s: float | None = None
    generation_tokens_per_s: float | None = None


class ClientHealth(BaseModel):
    """Could the load generator keep its schedule? If not, the step's numbers describe the client."""

    cpu_percent_max: float | None = None
    send_lateness_p50_s: float | None = None
    send_lateness_p99_s: float | None = None
    load_processes: int = 1


class StepResult(BaseModel):
    step: int
    offered: float = Field(description="requests/s (rate ramp) or concurrent streams (concurrency ramp)")
    offered_unit: Literal["rps", "concurrency"]
    window_s: float
    window_start_ts: float = Field(description="wall-clock start of the measured window (after warm-up)")
    window_end_ts: float
    achieved_rate: float
    requests: int
    ok_requests: int
    errors: dict[str, int]
    error_examples: dict[str, str] = Field(default_factory=dict)
    ttft_s: Percentiles
    itl_s: Percentiles
    itl_request_mean_s: Percentiles
    tpot_s: Percentiles
    e2e_s: Percentiles
    output_tokens: int
    prompt_tokens: Percentiles | None = Field(default=None, description="usage.prompt_tokens of the ok requests")
    output_tokens_per_s: float
    streamed_tokens_per_s: float | None = Field(
        default=None, description="output tokens received in the window from any request / window (stats.py)"
    )
    goodput_rps: float
    slo_met: bool | None = None
    valid: bool
    invalid_reason: str | None = None
    client: ClientHealth
    server: ServerSignals | None = None


class Knee(BaseModel):
    step: int
    offered: float
    metric: str
    reason: str
    value_s: float | None = None
    threshold_s: float | None = None
    baseline_s: float | None = None


class SafeOperatingPoint(BaseModel):
    step: int
    offered: float
    reason: str


class ProbeTiming(BaseModel):
    """One lone request: its prompt as sent and as the server counted it, and its TTFT."""

    words: int
    prompt_tokens: int = Field(description="usage.prompt_tokens, the server's own count")
    ttft_s: float


class PrefillProbe(BaseModel):
    """Every timed request, in the order sent."""

    timings: list[ProbeTiming]

    def medians(self) -> list[tuple[int, float]]:
        """(median prompt tokens, median TTFT) per probed length, shortest first."""
        by_words: dict[int, list[ProbeTiming]] = {}
        for timing in self.timings:
            by_words.setdefault(timing.words, []).append(timing)
        return [
            (round(statistics.median(t.prompt_tokens for t in group)), statistics.median(t.ttft_s for t in group))
            for _, group in sorted(by_words.items())
        ]


class RampResult(BaseModel):
    kind: Literal["ramp"] = "ramp"
    servops_version: str = Field(default_factory=servops_version)
    created_at: str = Field(default_factory=lambda: datetime.now(timezone.utc).isoformat())
    config: dict
    steps: list[StepResult]
    knee: Knee | None
    safe_operating_point: SafeOperatingPoint | None
    stopped_early: str | None = None
    summary: str = ""
    metric_definitions: dict[str, str]
    prefill_probe: PrefillProbe | None = None
