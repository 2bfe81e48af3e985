"""Where latency turns: the knee of p99 ITL and p99 TTFT against offered load, and the safe point.

Method (a threshold on growth over a baseline, chosen over curve-fitting methods such as
Kneedle because a ramp has 4-10 points and noisy tails):

1. Take the valid steps (client kept its schedule) with at least one successful request,
   ordered by offered load. The first one is the baseline.
2. For each metric m in (p99 ITL, p99 TTFT) a step *exceeds* when
   m(step) > max(factor * m(baseline), m(baseline) + floor_m).
   The floor keeps tiny baselines (a 10 ms ITL) from calling noise a knee.
3. The knee is the first step from which some metric exceeds at that step *and at every
   later valid step* - a single noisy spike followed by recovery is not a knee. When both
   metrics turn at the same step, the knee names the one with the larger value/threshold.

Queueing in the server (a concurrency cap, a full KV cache) shows first in TTFT, batching
interference first in ITL, so both are watched; the reason names which one crossed.
"""

from __future__ import annotations

from collections.abc import Sequence

from loadtest.config import ramp_default
from loadtest.results import Knee, SafeOperatingPoint, StepResult

DEFAULT_FACTOR: float = ramp_default("knee_factor")  # --knee-factor's default, stated in loadtest/config.py
DEFAULT_FLOORS_S = {"itl": 0.005, "ttft": 0.050}


def find_knee(
    steps: Sequence[StepResult], factor: float = DEFAULT_FACTOR, floors_s: dict[str, float] | None = None
) -> Knee | None:
    floors = {**DEFAULT_FLOORS_S, **(floors_s or {})}
    usable = sorted((s for s in steps if s.valid and s.ok_requests > 0), key=lambda s: s.offered)
    if len(usable) < 2:
        return None
    base = usable[0]
    candidates: list[Knee] = []
    for metric in ("itl", "ttft"):
        baseline = _p99(base, metric)
        if baseline is None:
            continue
        threshold = max(factor * baseline, baseline + floors[metric])
        exceeds = [(_p99(s, metric) or 0.0) > threshold for s in usable]
        for i in range(1, len(usable)):
            if all(exceeds[i:]):
                step = usable[i]
                value = _p99(step, metric) or 0.0
                unit = "rps" if step.offered_unit == "rps" else "streams"
                candidates.append(
                    Knee(
                        step=step.step,
                        offered=step.offered,
                        metric=f"{metric}_p99",
                        value_s=value,
                        threshold_s=threshold,
                        baseline_s=baseline,
                        reason=(
                            f"p99 {metric.upper()} {value * 1e3:.1f} ms at offered {step.offered:g} {unit} exceeds "
                            f"{threshold * 1e3:.1f} ms (max of {factor:g}x and +{floors[metric] * 1e3:.0f} ms over "
                            f"the {baseline * 1e3:.1f} ms baseline at {base.offered:g}) and stays above at every "
                            f"higher load"
                        ),
                    )
                )
                break
    if not candidates:
        return None
    # Lowest load first; when both metrics turn at the same step, name the one that overshoots more.
    return min(candidates, key=lambda k: (k.offered, -(k.value_s or 0.0) / (k.threshold_s or 1.0)))


def safe_operating_point(steps: Sequence[StepResult], knee: Knee | None, have_slos: bool) -> SafeOperatingPoint | None:
    """Highest valid step meeting the SLOs; without SLOs, the highest valid step below the knee."""
    valid = sorted((s for s in steps if s.valid and s.ok_requests > 0), key=lambda s: s.offered)
    if have_slos:
        meeting = [s for s in valid if s.slo_met]
        if not meeting:
            return None
        best = meeting[-1]
        return SafeOperatingPoint(
            step=best.step,
            offered=best.offered,
            reason=f"highest valid step meeting every SLO (offered {best.offered:g})",
        )
    below = [s for s in valid if knee is None or s.offered < knee.offered]
    if not below:
        return None
    best = below[-1]
    where = "below the knee" if knee else "tested (no knee found)"
    return SafeOperatingPoint(
        step=best.step,
        offered=best.offered,
        reason=f"no SLOs given: highest valid step {where} (offered {best.offered:g})",
    )


def _p99(step: StepResult, metric: str) -> float | None:
    return (step.itl_s if metric == "itl" else step.ttft_s).p99
