"""The closed tuning loop: recommend → apply → re-ramp → keep or roll back, N rounds.

Why a stated criterion and a roll-back: a recommendation is a prediction; the ramp is the
proof. A change is kept only when the measured criterion improves (the safe operating
point rises, or p99 ITL at the target load falls by a margin); otherwise the previous
command stays and the change is not tried again. Every round — kept or not — is in the
result, with its ramp and the triage that proposed the next change.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from advisor import __version__
from advisor.collect.server_args import ServeCommand
from advisor.comparison import common_top_load, p99_at, safe_point
from advisor.demo import apply
from advisor.launch import display_command
from advisor.measure import Measurement, RampSettings, measure, top_change

__all__ = ["TuneCriterion", "TuneRound", "TuneResult", "run_tune", "criterion_value", "decide"]

Progress = Callable[[str], None]


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
            return (f"keep a change when p99 ITL at {where} falls by at least {self.min_improvement:.0%}; "
                    f"otherwise roll it back")
        return (f"keep a change when the safe operating point rises; if it is unchanged, keep only when "
                f"p99 TTFT at the highest load both runs measured falls by at least {self.min_improvement:.0%}; "
                f"otherwise roll it back")


class TuneRound(BaseModel):
    round: int
    change: dict[str, Any]
    command_before: str
    command: str
    criterion_before: float | None
    criterion_after: float | None
    kept: bool
    decision: str
    ramp: dict[str, Any]
    triage: dict[str, Any] | None = None
    log_path: str


class TuneBaseline(BaseModel):
    command: str
    criterion_value: float | None
    ramp: dict[str, Any]
    triage: dict[str, Any] | None = None
    log_path: str


class TuneResult(BaseModel):
    kind: Literal["tune"] = "tune"
    servops_version: str = __version__
    created_at: str = Field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds"))
    criterion: dict[str, Any]
    baseline: TuneBaseline
    rounds: list[TuneRound] = Field(default_factory=list)
    final_command: str
    stopped_reason: str
    timings: dict[str, float] = Field(default_factory=dict)


def run_tune(start: ServeCommand, criterion: TuneCriterion, settings: RampSettings, rounds: int,
             out_dir: Path, progress: Progress, allow_unsafe: bool = False) -> TuneResult:
    """Measure `start`, then up to `rounds` recommend/apply/measure/decide rounds."""
    began = time.monotonic()
    out_dir.mkdir(parents=True, exist_ok=True)
    progress(f"tune: baseline, then up to {rounds} round(s); criterion: {criterion.description}")
    base = measure(start, settings, out_dir, "baseline", progress)
    kept_measurement: Measurement = base
    current = start
    tried: set[tuple[str, str]] = set()
    done: list[TuneRound] = []
    stopped = f"reached --rounds {rounds}"
    for number in range(1, rounds + 1):
        chosen = top_change(kept_measurement.triage, skip=tried, allow_unsafe=allow_unsafe)
        if chosen is None:
            stopped = (("triage of the kept configuration proposes no further flag change"
                        + ("" if allow_unsafe else " marked safe (--unsafe-changes also tries unsafe ones)"))
                       if kept_measurement.triage else "no triage result to take a change from")
            progress(f"tune: stopping: {stopped}")
            break
        tried.update((c["flag"], str(c["proposed"])) for c in chosen["changes"])
        candidate = apply(current, chosen["changes"])
        progress(f"tune round {number}/{rounds}: {chosen['rule']}: "
                 + ", ".join(f"{c['flag']} {c.get('current')} -> {c['proposed']}" for c in chosen["changes"]))
        trial = measure(candidate, settings, out_dir, f"round-{number}", progress)
        before_value, after_value, kept, decision = decide(criterion, kept_measurement.ramp, trial.ramp)
        progress(f"tune round {number}: {decision}")
        done.append(TuneRound(
            round=number, change=chosen, command_before=display_command(current),
            command=display_command(candidate), criterion_before=before_value, criterion_after=after_value,
            kept=kept, decision=decision, ramp=trial.ramp, triage=trial.triage, log_path=trial.log_path,
        ))
        if kept:
            current, kept_measurement = candidate, trial
    return TuneResult(
        criterion={**criterion.model_dump(), "description": criterion.description},
        baseline=TuneBaseline(command=base.command, criterion_value=criterion_value(criterion, base.ramp),
                              ramp=base.ramp, triage=base.triage, log_path=base.log_path),
        rounds=done, final_command=display_command(current), stopped_reason=stopped,
        timings={"total_s": round(time.monotonic() - began, 1)},
    )


def criterion_value(criterion: TuneCriterion, ramp: dict[str, Any], load: float | None = None) -> float | None:
    """The criterion's headline figure for one ramp (safe point, or p99 ITL in seconds at `load`,
    default the target load, else the ramp's top valid load)."""
    if criterion.metric == "itl_p99":
        load = load if load is not None else criterion.target_load
        load = load if load is not None else _top_load(ramp)
        return p99_at(ramp, "itl_s", load) if load is not None else None
    return safe_point(ramp)


def decide(criterion: TuneCriterion, kept_ramp: dict[str, Any],
           trial_ramp: dict[str, Any]) -> tuple[float | None, float | None, bool, str]:
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
            return before, after, True, (f"kept: safe operating point unchanged at {_num(after)}, p99 TTFT at "
                                         f"offered {load:g} {_ms(old)} → {_ms(new)} (≥{margin:.0%} lower)")
        return before, after, False, (f"rolled back: safe operating point unchanged at {_num(after)} and p99 TTFT "
                                      f"at the top common load {_ms(old)} → {_ms(new)} (not ≥{margin:.0%} lower)")
    return before, after, False, f"rolled back: safe operating point {_num(before)} → {_num(after)}"


def _top_load(ramp: dict[str, Any]) -> float | None:
    loads = [float(s["offered"]) for s in ramp.get("steps") or [] if s.get("valid")]
    return max(loads) if loads else None


def _ms(seconds: float | None) -> str:
    return "–" if seconds is None else f"{seconds * 1000:.0f} ms"


def _num(value: float | None) -> str:
    return "none" if value is None else f"{value:g}"
