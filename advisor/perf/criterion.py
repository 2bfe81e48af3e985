"""How a tuning round is judged: the criterion, its value on a ramp, keep or roll back.

Why its own module: the same judgement is made twice per round, on the performance
model's predicted ramp before anything restarts (advisor/perf/ranking.py) and on the
measured ramp after, so a prediction and a measurement are compared by one rule.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from advisor.perf.comparison import common_top_load, p99_at, safe_point

__all__ = ["TuneCriterion", "criterion_value", "decide"]


class TuneCriterion(BaseModel):
    """How a round is judged. `safe_operating_point`: higher is better, ties broken by p99
    TTFT at the top load both runs measured; `itl_p99`: p99 ITL at `target_load`, lower is better."""

    metric: Literal["safe_operating_point", "itl_p99"] = "safe_operating_point"
    target_load: float | None = None
    min_improvement: float = Field(default=0.10, ge=0, lt=1)

    @property
    def description(self) -> str:
        if self.metric == "itl_p99":
            where = f"offered {self.target_load:g}" if self.target_load is not None else "the top load step"
            return (
                f"keep a change when p99 ITL at {where} falls by at least {self.min_improvement:.0%}; "
                f"otherwise roll it back"
            )
        return (
            f"keep a change when the safe operating point rises; if it is unchanged, keep only when "
            f"p99 TTFT at the highest load both runs measured falls by at least {self.min_improvement:.0%}; "
            f"otherwise roll it back"
        )


def criterion_value(criterion: TuneCriterion, ramp: dict[str, Any], load: float | None = None) -> float | None:
    """The criterion's headline figure for one ramp (safe point, or p99 ITL in seconds at `load`,
    default the target load, else the ramp's top valid load)."""
    if criterion.metric == "itl_p99":
        load = load if load is not None else criterion.target_load
        load = load if load is not None else _top_load(ramp)
        return p99_at(ramp, "itl_s", load) if load is not None else None
    return safe_point(ramp)


def decide(
    criterion: TuneCriterion, kept_ramp: dict[str, Any], trial_ramp: dict[str, Any]
) -> tuple[float | None, float | None, bool, str]:
    """(value before, value after, keep?, the sentence saying why)."""
    load = criterion.target_load if criterion.target_load is not None else common_top_load(kept_ramp, trial_ramp)
    before, after = criterion_value(criterion, kept_ramp, load), criterion_value(criterion, trial_ramp, load)
    margin = criterion.min_improvement
    if criterion.metric == "itl_p99":
        if after is None:
            return before, after, False, "rolled back: no valid p99 ITL at the target load after the change"
        if before is None or after <= before * (1 - margin):
            return before, after, True, f"kept: p99 ITL {_ms(before)} → {_ms(after)} (≥{margin:.0%} lower)"
        return before, after, False, f"rolled back: p99 ITL {_ms(before)} → {_ms(after)} (not ≥{margin:.0%} lower)"
    if after is not None and (before is None or after > before):
        return before, after, True, f"kept: safe operating point {_num(before)} → {_num(after)}"
    if after is not None and before is not None and after == before:
        load = common_top_load(kept_ramp, trial_ramp)
        old = p99_at(kept_ramp, "ttft_s", load) if load is not None else None
        new = p99_at(trial_ramp, "ttft_s", load) if load is not None else None
        if old and new is not None and new <= old * (1 - margin):
            return (
                before,
                after,
                True,
                (
                    f"kept: safe operating point unchanged at {_num(after)}, p99 TTFT at "
                    f"offered {load:g} {_ms(old)} → {_ms(new)} (≥{margin:.0%} lower)"
                ),
            )
        return (
            before,
            after,
            False,
            (
                f"rolled back: safe operating point unchanged at {_num(after)} and p99 TTFT "
                f"at the top common load {_ms(old)} → {_ms(new)} (not ≥{margin:.0%} lower)"
            ),
        )
    return before, after, False, f"rolled back: safe operating point {_num(before)} → {_num(after)}"


def _top_load(ramp: dict[str, Any]) -> float | None:
    loads = [float(s["offered"]) for s in ramp.get("steps") or [] if s.get("valid")]
    return max(loads) if loads else None


def _ms(seconds: float | None) -> str:
    return "–" if seconds is None else f"{seconds * 1000:.0f} ms"


def _num(value: float | None) -> str:
    return "none" if value is None else f"{value:g}"
