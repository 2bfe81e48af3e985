"""A tuning or demo round's change: the model's best candidate on the measured configuration.

Why apart from advisor/perf/ranking.py: this needs a `Measurement` (ramp, triage, log) and
triage itself uses the forecasting, so the choice sits above both.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from advisor.collect.server_args import ServeCommand
from advisor.errors import UserError
from advisor.perf.criterion import TuneCriterion
from advisor.perf.measured import measured_ramp
from advisor.perf.ranking import ChangeForecast, figure_errors, kv_tokens_from_log, rank_changes
from advisor.perf.whatif import Forecaster, ServerContext
from advisor.tune.measure import Measurement, top_change

Progress = Callable[[str], None]


def choose_change(
    kept: Measurement,
    current: ServeCommand,
    criterion: TuneCriterion,
    tried: set[tuple[str, str]],
    allow_unsafe: bool,
    progress: Progress,
) -> tuple[dict[str, Any] | None, list[dict[str, Any]], str]:
    """The round's change: the candidate the performance model predicts best, calibrated on the kept
    ramp. (None, candidates, why) when no candidate is predicted to help. Without a usable ramp to
    calibrate on, triage's own top change, and the round says it was not predicted."""
    if not kept.triage:
        return None, [], "no triage result to take a change from"
    try:
        server = ServerContext(command=current, kv_cache_tokens=kv_tokens_from_log(kept.log_path))
        forecaster = Forecaster(measured_ramp(kept.ramp, kept.label), kept.label, server).fit()
        ranked = rank_changes(forecaster, criterion, kept.triage, tried, allow_unsafe, explore=True)
    except UserError as exc:
        progress(f"tune: no prediction ({exc}); taking triage's top change as it stands")
        return _unpredicted(kept, tried, allow_unsafe)
    candidates = [r.model_dump() for r in ranked]
    for forecast in ranked:
        progress(
            f"tune: candidate {forecast.changes[0]['flag']} {forecast.changes[0]['proposed']}: "
            + (forecast.decision if forecast.prediction else f"rejected: {forecast.rejected}")
        )
    best = next((r for r in ranked if r.helps), None)
    if best is None:
        return None, candidates, _none_helps(ranked)
    chosen = {
        "rule": best.rule,
        "title": best.title,
        "changes": best.changes,
        "predicted": best.prediction,
        "predicted_decision": best.decision,
    }
    return chosen, candidates, ""


def _unpredicted(
    kept: Measurement, tried: set[tuple[str, str]], allow_unsafe: bool
) -> tuple[dict[str, Any] | None, list[dict[str, Any]], str]:
    """Triage's own top change, unpredicted: what a round can still try when the model cannot be fitted."""
    chosen = top_change(kept.triage, skip=tried, allow_unsafe=allow_unsafe)
    why = "triage of the kept configuration proposes no further flag change" + (
        "" if allow_unsafe else " marked safe (--unsafe-changes also tries unsafe ones)"
    )
    return chosen, [], why


def _none_helps(ranked: list[ChangeForecast]) -> str:
    """Why the round stops: each candidate with the reason the model turned it down, or that there were none."""
    reasons = "; ".join(f"{r.changes[0]['flag']} {r.changes[0]['proposed']}: {r.rejected}" for r in ranked)
    return "no change is predicted to help" + (
        f" ({reasons})" if reasons else ": triage of the kept configuration proposes no flag change"
    )


def changes_text(changes: list[dict[str, Any]]) -> str:
    """A chosen change's flags as the progress lines show them: `--max-num-seqs 1 -> 4, …`."""
    return ", ".join(f"{c['flag']} {c.get('current')} -> {c['proposed']}" for c in changes)


def prediction_check(
    predicted: dict[str, Any] | None, measured: dict[str, Any], prefix: str, progress: Progress
) -> dict[str, Any]:
    """The model's predicted ramp against the measured one (figure_errors), its median errors shown as
    progress as soon as they are known: every prediction shown is checked against what was measured."""
    errors = figure_errors(predicted, measured)
    if errors.get("median_abs_error"):
        progress(
            f"{prefix}: prediction error (median over steps): "
            + ", ".join(f"{name} {value:.0%}" for name, value in errors["median_abs_error"].items())
        )
    return errors
