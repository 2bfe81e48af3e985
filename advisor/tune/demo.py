"""The end-to-end demo: a poorly configured engine, measured, triaged, fixed, measured again.

Why this configuration: `--max-num-seqs 1` is what an operator ships after copying a
debugging command (one request at a time is easy to reason about). Every client beyond the
first waits in the queue, so TTFT grows with load while the KV pool sits almost empty.
Triage sees exactly that on /metrics (running pinned at the cap, requests waiting, KV
usage low) and proposes raising --max-num-seqs; the second ramp shows what it buys.

JSON first: the result (kind "demo") embeds both ramps, the triage and the change; the
HTML report is rendered from it and can be rendered again later with `servops report`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from advisor import __version__
from advisor.collect.server_args import ServeCommand
from advisor.errors import UserError
from advisor.perf.comparison import Comparison, compare_ramps
from advisor.perf.criterion import TuneCriterion
from advisor.tune.engines import BASE_FLAGS, POOR_FLAGS, Engine, apply, default_base_flags, start_command
from advisor.tune.measure import Measurement, RampSettings, measure
from advisor.tune.round import changes_text, choose_change, prediction_check

__all__ = ["DemoResult", "DemoSettings", "poor_command", "run_demo"]

Progress = Callable[[str], None]


class DemoSettings(BaseModel):
    model: str | None = Field(default=None, description="engine model argument; None = embedded SmolLM2")
    engine: Engine = Field(default="bundled", description="the server under test: bundled engine or vLLM")
    poor_flags: list[str] = Field(default_factory=lambda: list(POOR_FLAGS))
    base_flags: list[str] = Field(default_factory=lambda: list(BASE_FLAGS))
    ramp: RampSettings = Field(default_factory=RampSettings)

    @model_validator(mode="before")
    @classmethod
    def _engine_base_flags(cls, data: Any) -> Any:
        """Without explicit base flags, the engine's own defaults (vLLM has no --disable-log-requests)."""
        if isinstance(data, dict) and data.get("base_flags") is None:
            data = {**data, "base_flags": list(default_base_flags(data.get("engine") or "bundled"))}
        return data


class AppliedChange(BaseModel):
    rule: str | None
    title: str | None = None
    flag: str
    current: str | None
    proposed: str
    reason: str = ""
    all_changes: list[dict[str, Any]] = Field(default_factory=list)


class DemoResult(BaseModel):
    """The demo document `servops report` renders (before/after side by side)."""

    kind: Literal["demo"] = "demo"
    servops_version: str = __version__
    created_at: str = Field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds"))
    model: str
    settings: DemoSettings
    summary: str
    before: Measurement
    triage: dict[str, Any] | None
    applied_change: AppliedChange | None
    after: Measurement | None
    comparison: list[Comparison] = Field(default_factory=list)
    predicted: dict[str, Any] | None = Field(default=None, description="the model's ramp for the applied change")
    predicted_decision: str | None = None
    prediction_error: dict[str, Any] = Field(default_factory=dict, description="predicted vs measured, per step")
    candidates: list[dict[str, Any]] = Field(default_factory=list, description="every change the model weighed")
    timings: dict[str, float] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)


def run_demo(settings: DemoSettings, out_dir: Path, progress: Progress) -> DemoResult:
    """Poor config → ramp + triage → apply the top change → ramp again. Stops every engine it starts."""

    started = time.monotonic()
    poor = poor_command(settings)
    out_dir.mkdir(parents=True, exist_ok=True)
    progress("demo 1/3: measuring the poor configuration (ramp, with triage during the last step)")
    before = measure(poor, settings.ramp, out_dir, "before", progress)
    notes: list[str] = []
    if before.triage_error:
        notes.append(f"triage failed: {before.triage_error}")
    chosen, candidates, why_not = choose_change(before, poor, TuneCriterion(), set(), False, progress)
    after: Measurement | None = None
    applied: AppliedChange | None = None
    if chosen is None:
        notes.append(f"{why_not}, so there is no 'after' run")
        progress(f"demo 2/3: {why_not}; skipping the second ramp")
    else:
        applied = _applied(chosen)
        after = _measure_after(apply(poor, chosen["changes"]), chosen, settings, out_dir, progress, notes)
    comparison = compare_ramps(before.ramp, after.ramp) if after else []
    predicted = chosen.get("predicted") if chosen else None
    errors = prediction_check(predicted, after.ramp, "demo", progress) if after else {}
    progress("demo 3/3: writing the result and the report")
    return DemoResult(
        model=_model_label(settings),
        settings=settings,
        summary=_summary(before, applied, comparison, errors),
        before=before,
        triage=before.triage,
        applied_change=applied,
        after=after,
        comparison=comparison,
        predicted=predicted,
        predicted_decision=chosen.get("predicted_decision") if chosen else None,
        prediction_error=errors,
        candidates=candidates,
        timings={
            "total_s": round(time.monotonic() - started, 1),
            "before_startup_s": before.startup_s,
            "before_ramp_s": before.ramp_s,
            **({"after_startup_s": after.startup_s, "after_ramp_s": after.ramp_s} if after else {}),
        },
        notes=notes,
    )


def _applied(chosen: dict[str, Any]) -> AppliedChange:
    """The chosen candidate as the demo's result names it: its first flag change, with all of them kept."""
    first = chosen["changes"][0]
    return AppliedChange(
        rule=chosen["rule"],
        title=chosen["title"],
        flag=first["flag"],
        current=first.get("current"),
        proposed=str(first["proposed"]),
        reason=first.get("reason", ""),
        all_changes=chosen["changes"],
    )


def _measure_after(
    fixed: ServeCommand,
    chosen: dict[str, Any],
    settings: DemoSettings,
    out_dir: Path,
    progress: Progress,
    notes: list[str],
) -> Measurement | None:
    """The ramp with the change applied; None, with a note, when that run fails: the before run and its
    triage still stand, so the result is written without it."""
    progress(f"demo 2/3: applying {chosen['rule']}: {changes_text(chosen['changes'])}")
    try:
        return measure(fixed, settings.ramp, out_dir, "after", progress, with_triage=False)
    except UserError as exc:
        notes.append(f"the 'after' run failed: {exc}")
        progress(f"demo: the 'after' run failed ({exc}); writing the result without it")
        return None


def poor_command(settings: DemoSettings) -> ServeCommand:
    """The command the demo measures first: base flags, then the poor ones, on the chosen engine."""
    return start_command(settings.engine, [*settings.base_flags, *settings.poor_flags], settings.model)


def _model_label(settings: DemoSettings) -> str:
    """The model as the report names it, with the engine when it is not the bundled one."""
    label = settings.model or "SmolLM2-135M-Instruct (embedded)"
    return f"{label} on vLLM" if settings.engine == "vllm" else label


def _summary(
    before: Measurement,
    applied: AppliedChange | None,
    comparison: list[Comparison],
    errors: dict[str, Any] | None = None,
) -> str:
    if applied is None:
        return f"Measured '{before.command}'; triage proposed no flag change."
    if not comparison:
        return (
            f"Started with '{before.command}'. Triage ranked {applied.rule} first and proposed "
            f"{applied.flag} {applied.current} → {applied.proposed}; the 'after' run did not complete."
        )
    moved = "; ".join(f"{c.name}: {_fmt(c.before)} → {_fmt(c.after)}" for c in comparison[:3])
    text = (
        f"Started with '{before.command}'. Triage ranked {applied.rule} first; the performance model chose "
        f"{applied.flag} {applied.current} → {applied.proposed}. After the change: {moved}."
    )
    safe = (errors or {}).get("safe_operating_point") or {}
    if safe:
        median = (errors or {}).get("median_abs_error") or {}
        text += (
            f" Predicted safe operating point {_fmt(safe.get('predicted'))}, measured "
            f"{_fmt(safe.get('measured'))}; median prediction error "
            + ", ".join(f"{name} {value:.0%}" for name, value in median.items())
            + "."
        )
    return text


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.3g}"
