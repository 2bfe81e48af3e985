"""A predicted ramp: the measured ramp's load steps, replayed under a (changed) configuration.

Why the ramp's own statistics: each replayed step's requests become `RequestRecord`s and go
through `loadtest.stats.step_stats`, the knee through `loadtest.knee`, so a predicted step
and a measured one are computed by the same code over the same window; a prediction has the
shape of a ramp result and reports can set them side by side.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import BaseModel, Field

from advisor.perf.calibrate import Calibration
from advisor.perf.cost import StepCost
from advisor.perf.limits import SchedulerLimits
from advisor.perf.measured import MeasuredRamp
from advisor.perf.memo import kept
from advisor.perf.readings import predicted_readings
from advisor.perf.workload import ReplayWorkload
from loadtest.knee import find_knee, safe_operating_point
from loadtest.results import (
    Knee,
    Percentiles,
    SafeOperatingPoint,
    StepResult,
    servops_version,
)

BAND_FIGURES = ("ttft_p50", "ttft_p99", "itl_p50", "itl_p99", "output_tokens_per_s")

# How many percentile ranks either side a predicted percentile is also read at (p99 → p98.5 and
# p99.5). Why 0.5: the replay's share of rare gaps (a decode step that carries a newcomer's
# prefill) is a modelled count, and on real vLLM's preempting window it came out at 0.95-1.21 %
# across loads of one configuration, so whether the p99 is the plain step or the stall is decided
# by a tenth of a percent; the measured p99 landed on the other side (BENCHMARKS.md, "The
# live-window choice on a preempting vLLM"). Half a point either side covers that spread several
# times over and moves a percentile of a smooth body by little.
QUANTILE_MARGIN_POINTS = 0.5


class Band(BaseModel):
    """A figure's range when every cost term is off by the stated relative error either way and its
    percentile is read QUANTILE_MARGIN_POINTS ranks either side (p99: p98.5 to p99.5)."""

    low: float | None = None
    high: float | None = None


class EdgeStep(BaseModel):
    """One predicted step's figures read at shifted percentile ranks (what a decision needs of it)."""

    offered: float
    valid: bool
    ok_requests: int
    ttft_s: Percentiles
    itl_s: Percentiles
    slo_met: bool | None = None


class QuantileEdge(BaseModel):
    """The predicted ramp with every percentile read `shift_points` ranks away (p99 → p99.5 at +0.5),
    and the knee and safe operating point found on those figures.

    Why: a gain that holds at its percentiles' nominal ranks but not a half-point away rests on
    which side of a cliff in the tail the measured figure will fall; the choice counts a gain only
    when it holds at both edges as well (advisor/perf/ranking.py)."""

    shift_points: float
    steps: list[EdgeStep]
    knee: Knee | None
    safe_operating_point: SafeOperatingPoint | None


class PredictedRamp(BaseModel):
    steps: list[StepResult]
    knee: Knee | None
    safe_operating_point: SafeOperatingPoint | None
    bands: list[dict[str, Band]] = Field(default_factory=list, description="per step, BAND_FIGURES")
    edges: list[QuantileEdge] = Field(default_factory=list, description="at -/+ QUANTILE_MARGIN_POINTS")


class Prediction(BaseModel):
    """`servops predict`'s result: the ramp's steps predicted under the changed flags."""

    kind: Literal["prediction"] = "prediction"
    servops_version: str = Field(default_factory=servops_version)
    created_at: str = Field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds"))
    ramp: str
    engine: str
    server_args: str
    changes: list[str]
    server_args_after: str
    limits_before: SchedulerLimits
    limits_after: SchedulerLimits
    cost: StepCost
    calibration: Calibration | None = None
    offered_unit: str
    steps: list[StepResult]
    bands: list[dict[str, Band]] = Field(default_factory=list)
    knee: Knee | None
    safe_operating_point: SafeOperatingPoint | None
    edges: list[QuantileEdge] = Field(default_factory=list, description="at -/+ QUANTILE_MARGIN_POINTS")
    baseline: PredictedRamp | None = Field(default=None, description="the unchanged configuration, replayed")
    measured: dict[str, Any] | None = Field(default=None, description="the input ramp's knee and safe point")
    notes: list[str] = Field(default_factory=list)


@kept
def predict_ramp(
    ramp: MeasuredRamp, limits: SchedulerLimits, cost: StepCost, workload: ReplayWorkload, with_bands: bool = True
) -> PredictedRamp:
    """The ramp replayed under `limits`; always its quantile edges, and with `with_bands` the band of
    each figure over the cost's relative error either way and the edges' percentile shifts."""
    margin = QUANTILE_MARGIN_POINTS
    shifts = (0.0, -margin, margin)
    readings = [predicted_readings(ramp, k, limits, cost, workload, shifts) for k in range(ramp.plan.steps)]
    steps = [r[0] for r in readings]
    knee = find_knee(steps, factor=ramp.knee_factor)
    safe = safe_operating_point(steps, knee, bool(ramp.slos))
    edges = [_edge(ramp, shift, [r[i] for r in readings]) for i, shift in enumerate(shifts) if shift]
    bands: list[dict[str, Band]] = []
    if with_bands and cost.relative_error > 0:
        scaled = [
            [predicted_readings(ramp, k, limits, cost.scaled(factor), workload, shifts) for k in range(ramp.plan.steps)]
            for factor in (1 - min(cost.relative_error, 0.9), 1 + cost.relative_error)
        ]
        for k in range(ramp.plan.steps):
            variants = [*readings[k], *scaled[0][k], *scaled[1][k]]
            values = {name: [v for v in (figure(s, name) for s in variants) if v is not None] for name in BAND_FIGURES}
            bands.append({name: Band(low=min(v), high=max(v)) if v else Band() for name, v in values.items()})
    return PredictedRamp(steps=steps, knee=knee, safe_operating_point=safe, bands=bands, edges=edges)


def _edge(ramp: MeasuredRamp, shift: float, steps: list[StepResult]) -> QuantileEdge:
    knee = find_knee(steps, factor=ramp.knee_factor)
    return QuantileEdge(
        shift_points=shift,
        steps=[EdgeStep.model_validate(s.model_dump(include=set(EdgeStep.model_fields))) for s in steps],
        knee=knee,
        safe_operating_point=safe_operating_point(steps, knee, bool(ramp.slos)),
    )


def figure(step: StepResult, name: str) -> float | None:
    """A headline figure of a step by its short name (ttft_p50, itl_p99, output_tokens_per_s, …)."""
    if name in ("output_tokens_per_s", "streamed_tokens_per_s", "achieved_rate"):
        return getattr(step, name)
    metric, _, quantile = name.rpartition("_")
    return getattr(getattr(step, f"{metric}_s"), quantile)


def calibration_note(calibration: Calibration) -> str:
    worst = max((abs(r.error) for r in calibration.rows), default=0.0)
    return (
        f"cost {calibration.cost.source} in {calibration.iterations} fixed-point iteration(s); in-sample "
        f"error RMS {calibration.cost.relative_error:.0%}, worst {worst:.0%}"
    )
