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
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from advisor import __version__
from advisor.collect.server_args import ServeCommand
from advisor.perf.criterion import TuneCriterion, criterion_value, decide
from advisor.servers.process import display_command
from advisor.tune.engines import apply
from advisor.tune.measure import Measurement, RampSettings, measure
from advisor.tune.round import changes_text, choose_change, prediction_check

__all__ = ["TuneCriterion", "TuneResult", "TuneRound", "criterion_value", "decide", "run_tune"]

Progress = Callable[[str], None]


class TuneRound(BaseModel):
    round: int
    change: dict[str, Any]
    predicted: dict[str, Any] | None = Field(default=None, description="the model's ramp for this change")
    predicted_decision: str | None = None
    prediction_error: dict[str, Any] = Field(default_factory=dict, description="predicted vs measured, per step")
    candidates: list[dict[str, Any]] = Field(default_factory=list, description="every change the model weighed")
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


def run_tune(
    start: ServeCommand,
    criterion: TuneCriterion,
    settings: RampSettings,
    rounds: int,
    out_dir: Path,
    progress: Progress,
    allow_unsafe: bool = False,
) -> TuneResult:
    """Measure `start`, then up to `rounds` recommend/apply/measure/decide rounds."""

    began = time.monotonic()
    out_dir.mkdir(parents=True, exist_ok=True)
    progress(f"tune: baseline, then up to {rounds} round(s); criterion: {criterion.description}")
    base = measure(start, settings, out_dir, "baseline", progress)
    kept = _Kept(command=start, measurement=base)
    tried: set[tuple[str, str]] = set()
    done: list[TuneRound] = []
    stopped = f"reached --rounds {rounds}"
    for number in range(1, rounds + 1):
        chosen, candidates, why_not = choose_change(
            kept.measurement, kept.command, criterion, tried, allow_unsafe, progress
        )
        if chosen is None:
            stopped = why_not
            progress(f"tune: stopping: {stopped}")
            break
        tried.update((c["flag"], str(c["proposed"])) for c in chosen["changes"])
        trial = _Trial(number=number, of=rounds, chosen=chosen, candidates=candidates)
        done.append(_run_round(trial, kept, criterion, settings, out_dir, progress))
    return TuneResult(
        criterion={**criterion.model_dump(), "description": criterion.description},
        baseline=TuneBaseline(
            command=base.command,
            criterion_value=criterion_value(criterion, base.ramp),
            ramp=base.ramp,
            triage=base.triage,
            log_path=base.log_path,
        ),
        rounds=done,
        final_command=display_command(kept.command),
        stopped_reason=stopped,
        timings={"total_s": round(time.monotonic() - began, 1)},
    )


@dataclass
class _Kept:
    """The command in effect and its measurement: a round replaces both only when its change is kept, so
    the next round is chosen from, and judged against, what really runs."""

    command: ServeCommand
    measurement: Measurement


@dataclass(frozen=True)
class _Trial:
    """One round's number (of how many) and the change chosen for it, with every change weighed."""

    number: int
    of: int
    chosen: dict[str, Any]
    candidates: list[dict[str, Any]]


def _run_round(
    trial: _Trial,
    kept: _Kept,
    criterion: TuneCriterion,
    settings: RampSettings,
    out_dir: Path,
    progress: Progress,
) -> TuneRound:
    """Apply the chosen change, measure it, keep it (updating `kept`) or roll it back, and say how far the
    model's prediction of this ramp was from the measured one."""
    chosen, number = trial.chosen, trial.number
    candidate = apply(kept.command, chosen["changes"])
    progress(f"tune round {number}/{trial.of}: {chosen['rule']}: {changes_text(chosen['changes'])}")
    measured = measure(candidate, settings, out_dir, f"round-{number}", progress)
    before_value, after_value, keep, decision = decide(criterion, kept.measurement.ramp, measured.ramp)
    progress(f"tune round {number}: {decision}")
    errors = prediction_check(chosen.get("predicted"), measured.ramp, f"tune round {number}", progress)
    result = TuneRound(
        round=number,
        change={k: v for k, v in chosen.items() if k != "predicted"},
        predicted=chosen.get("predicted"),
        predicted_decision=chosen.get("predicted_decision"),
        prediction_error=errors,
        candidates=trial.candidates,
        command_before=display_command(kept.command),
        command=display_command(candidate),
        criterion_before=before_value,
        criterion_after=after_value,
        kept=keep,
        decision=decision,
        ramp=measured.ramp,
        triage=measured.triage,
        log_path=measured.log_path,
    )
    if keep:
        kept.command, kept.measurement = candidate, measured
    return result
