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

from loadtest.figures import Count, Finite, NonNegative, Positive, PositiveCount


def servops_version() -> str:
    try:
        return metadata.version("servops")
    except metadata.PackageNotFoundError:  # running from a source tree without install
        return "0+unknown"


class Percentiles(BaseModel):
    """Linear-interpolated percentiles of one metric over a step; null when nothing was measured."""

    p50: NonNegative | None = None
    p90: NonNegative | None = None
    p95: NonNegative | None = None
    p99: NonNegative | None = None
    count: Count = 0


class ServerSignals(BaseModel):
    """What the endpoint's /metrics said during the step (sampled by the controller)."""

    samples: Count
    kv_cache_usage_mean: NonNegative | None = None
    kv_cache_usage_max: NonNegative | None = None
    kv_metric: str | None = Field(default=None, description="which spelling the server exposes")
    running_mean: NonNegative | None = None
    running_max: NonNegative | None = None
    waiting_mean: NonNegative | None = None
    waiting_max: NonNegative | None = None
    preemptions_per_s: NonNegative | None = None
    # Counter deltas between the first and last sample of the window (the performance model's
    # calibration reads them): engine steps and tokens per step from vllm:iteration_tokens_total,
    # per-request phase means from the request_{queue,prefill,decode}_time_seconds histograms.
    engine_steps_per_s: NonNegative | None = None
    tokens_per_step_mean: NonNegative | None = None
    queue_time_mean_s: NonNegative | None = None
    prefill_time_mean_s: NonNegative | None = None
    decode_time_mean_s: NonNegative | None = None
    prompt_tokens_per_s: NonNegative | None = None
    generation_tokens_per_s: NonNegative | None = None


class ClientHealth(BaseModel):
    """Could the load generator keep its schedule? If not, the step's numbers describe the client."""

    cpu_percent_max: NonNegative | None = None
    send_lateness_p50_s: Finite | None = None
    send_lateness_p99_s: Finite | None = None
    load_processes: PositiveCount = 1


class StepResult(BaseModel):
    step: Count
    offered: Positive = Field(description="requests/s (rate ramp) or concurrent streams (concurrency ramp)")
    offered_unit: Literal["rps", "concurrency"]
    window_s: Positive
    window_start_ts: Finite = Field(description="wall-clock start of the measured window (after warm-up)")
    window_end_ts: Finite
    achieved_rate: NonNegative
    requests: Count
    ok_requests: Count
    errors: dict[str, Count]
    error_examples: dict[str, str] = Field(default_factory=dict)
    ttft_s: Percentiles
    itl_s: Percentiles
    itl_request_mean_s: Percentiles
    tpot_s: Percentiles
    e2e_s: Percentiles
    output_tokens: Count
    prompt_tokens: Percentiles | None = Field(default=None, description="usage.prompt_tokens of the ok requests")
    output_tokens_per_s: NonNegative
    streamed_tokens_per_s: NonNegative | None = Field(
        default=None, description="output tokens received in the window from any request / window (stats.py)"
    )
    goodput_rps: NonNegative
    slo_met: bool | None = None
    valid: bool
    invalid_reason: str | None = None
    client: ClientHealth
    server: ServerSignals | None = None


class Knee(BaseModel):
    step: Count
    offered: Positive
    metric: str
    reason: str
    value_s: NonNegative | None = None
    threshold_s: NonNegative | None = None
    baseline_s: NonNegative | None = None


class SafeOperatingPoint(BaseModel):
    step: Count
    offered: Positive
    reason: str


class ProbeTiming(BaseModel):
    """One lone request: its prompt as sent and as the server counted it, and its TTFT."""

    words: PositiveCount
    prompt_tokens: Count = Field(description="usage.prompt_tokens, the server's own count")
    ttft_s: NonNegative


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
    config: dict = Field(default_factory=dict, description="the ramp's settings as run (RampConfig's fields)")
    steps: list[StepResult]
    knee: Knee | None = None
    safe_operating_point: SafeOperatingPoint | None = None
    stopped_early: str | None = None
    summary: str = ""
    metric_definitions: dict[str, str] = Field(default_factory=dict)
    prefill_probe: PrefillProbe | None = None
