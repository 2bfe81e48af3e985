"""Choosing a tuning round's change by its predicted effect, before anything restarts.

Why: a recommendation is a prediction; `servops tune` used to apply triage's top change and
learn only from the next ramp whether it helped (`make demo` once took --max-num-seqs 1 → 2
and measured safe point 4 → 4). Here every candidate change from triage — and, for the
batch-size flags, every sensible value of them — is replayed by the performance model on the
kept ramp, judged by the same criterion the measurement will be judged by, and the best one
is tried. A candidate the model predicts not to help is rejected with its reason; when none
is predicted to help, tuning stops.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from advisor.collect.logs import LogReadError, read_log
from advisor.errors import UserError
from advisor.perf.criterion import TuneCriterion, decide
from advisor.perf.forecast import BAND_FIGURES, QUANTILE_MARGIN_POINTS, PredictedRamp, Prediction, figure
from advisor.perf.limits import MODELLED_FLAGS, POOL_BYTES_FLAG, SHARE_FLAG
from advisor.perf.pool import POOL_SEARCH_MULTIPLES, SHARE_SEARCH_VALUES, share_search_values
from advisor.perf.pool import search_values as pool_search_values
from advisor.perf.whatif import FlagChanges, Forecaster
from loadtest.results import StepResult
from rules.events import LogEventKind

# Values the model compares for the batch-size flags: triage's rule of thumb is only a candidate.
SEARCH_VALUES: dict[str, tuple[int, ...]] = {
    "--max-num-seqs": (1, 2, 4, 8, 16, 32, 64, 128, 256),
    "--max-num-batched-tokens": (256, 512, 1024, 2048, 4096, 8192),
}


class EdgeVerdict(BaseModel):
    """The criterion before → after with every percentile read `shift_points` ranks away."""

    shift_points: float
    before: float | None = None
    after: float | None = None
    helps: bool = False
    decision: str = ""


class ChangeForecast(BaseModel):
    """One candidate change with what the model predicts it does."""

    rule: str | None = None
    title: str | None = None
    changes: list[dict[str, Any]]
    criterion_before: float | None = None
    criterion_after: float | None = None
    helps: bool = False
    helps_at_nominal_ranks: bool = False
    decision: str = ""
    prediction: dict[str, Any] | None = None
    rejected: str | None = None
    edges: list[EdgeVerdict] = []


def step_views(predicted: Prediction | PredictedRamp) -> list[dict[str, Any]]:
    """A predicted ramp's figures per step, with the contract's keys and each step's band (if any)."""
    steps = []
    for k, step in enumerate(predicted.steps):
        band = predicted.bands[k] if k < len(predicted.bands) else {}
        steps.append(
            {
                "offered": step.offered,
                "ttft_s": {"p50": step.ttft_s.p50, "p99": step.ttft_s.p99},
                "itl_s": {"p50": step.itl_s.p50, "p99": step.itl_s.p99},
                "output_tokens_per_s": step.output_tokens_per_s,
                "achieved_rate": step.achieved_rate,
                "valid": step.valid,
                "ok_requests": step.ok_requests,
                "band": {name: band[name].model_dump() for name in BAND_FIGURES if name in band},
            }
        )
    return steps


def compact(prediction: Prediction) -> dict[str, Any]:
    """A prediction's figures per step (the contract's keys), knee, safe point and uncertainty."""
    steps = step_views(prediction)
    return {
        "server_args_after": prediction.server_args_after,
        "steps": steps,
        "knee": prediction.knee.model_dump() if prediction.knee else None,
        "safe_operating_point": (
            prediction.safe_operating_point.model_dump() if prediction.safe_operating_point else None
        ),
        "relative_error": prediction.cost.relative_error,
        "cost": prediction.cost.describe(),
        "quantile_edges": [
            {
                "shift_points": edge.shift_points,
                "knee": edge.knee.offered if edge.knee else None,
                "safe_operating_point": edge.safe_operating_point.offered if edge.safe_operating_point else None,
            }
            for edge in prediction.edges
        ],
    }


def rank_changes(
    forecaster: Forecaster,
    criterion: TuneCriterion,
    triage: dict[str, Any] | None,
    skip: set[tuple[str, str]],
    allow_unsafe: bool = False,
    search: bool = True,
    explore: bool = False,
    alternatives: bool = False,
) -> list[ChangeForecast]:
    """Every candidate, best predicted first; rejected ones (not predicted to help, not modelled, unsafe) last.

    `search`: also weigh every SEARCH_VALUES value of the batch-size flags (else only the rules' values).
    The best candidate's prediction carries the uncertainty bands; the others are ranked without them.
    `explore`: also weigh the batch-size flags triage did not propose (tune and demo: a triage taken at
    a lucky instant may miss the queue the ramp plainly measured; the model reads the whole ramp).
    `alternatives`: also weigh the findings' alternatives (triage shows each with its own prediction;
    tune applies only changes)."""
    baseline = _readings(forecaster.baseline)
    findings = list((triage or {}).get("findings") or [])
    if explore:
        findings += _model_searches(forecaster, findings)
    scored: list[tuple[tuple, ChangeForecast]] = []
    for finding in findings:
        weighed = [*(finding.get("changes") or []), *((finding.get("alternatives") or []) if alternatives else [])]
        for change in weighed:
            if (change.get("flag"), str(change.get("proposed"))) not in skip:
                scored += _weigh(forecaster, criterion, baseline, finding, change, skip, allow_unsafe, search)
    ranked = _best_per_flag(_unique(sorted(scored, key=lambda pair: pair[0])))
    if ranked and ranked[0].helps:
        best = ranked[0].changes[0]
        banded = forecaster.predict(FlagChanges.of({best["flag"]: str(best["proposed"])}), with_bands=True)
        ranked[0] = ranked[0].model_copy(update={"prediction": compact(banded)})
    return ranked


def _model_searches(forecaster: Forecaster, findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A pseudo-finding per batch-size flag triage proposed no change to, for the model to search."""
    proposed = {c.get("flag") for f in findings for c in f.get("changes") or []}
    current = {
        "--max-num-seqs": forecaster.limits.max_num_seqs,
        "--max-num-batched-tokens": forecaster.limits.max_num_batched_tokens,
    }
    return [
        {
            "rule": "model",
            "title": f"the performance model's search over {flag}",
            "changes": [
                {"flag": flag, "current": str(value), "proposed": str(value), "reason": "searched by the model"}
            ],
        }
        for flag, value in current.items()
        if flag not in proposed
    ]


def _weigh(
    forecaster: Forecaster,
    criterion: TuneCriterion,
    baseline: list[tuple[float, dict]],
    finding: dict[str, Any],
    change: dict[str, Any],
    skip: set[tuple[str, str]],
    allow_unsafe: bool,
    search: bool,
) -> list[tuple[tuple, ChangeForecast]]:
    """One change as scored candidates: rejected (unsafe, or a flag the model does not predict), or each of
    its searched values with its forecast."""
    flag, proposed = change.get("flag"), str(change.get("proposed"))
    base = ChangeForecast(rule=finding.get("rule"), title=finding.get("title"), changes=[change])
    if not allow_unsafe and change.get("safety", "safe") == "unsafe":
        return [((2,), base.model_copy(update={"rejected": "unsafe (--unsafe-changes to try it)"}))]
    if flag not in MODELLED_FLAGS:
        rejected = f"the performance model does not predict {flag}, so its effect is unknown"
        return [((2,), base.model_copy(update={"rejected": rejected}))]
    scored = []
    for value in _values(flag, proposed, change.get("current"), forecaster) if search else [proposed]:
        if (flag, value) in skip:
            continue
        candidate = dict(change, proposed=value)
        if finding.get("rule") == "model":
            candidate["reason"] = (
                f"the value the performance model predicts best among "
                f"{_searched(flag)} (triage proposed no change to {flag})"
            )
        elif value != proposed:
            candidate["reason"] = (
                f"the value the performance model predicts best among "
                f"{_searched(flag)} (triage proposed {proposed}: {change.get('reason', '')})"
            )
        forecast = _forecast(forecaster, criterion, baseline, base.model_copy(update={"changes": [candidate]}))
        scored.append((_score(forecast, criterion), forecast))
    return scored


def _unique(scored: list[tuple[tuple, ChangeForecast]]) -> list[ChangeForecast]:
    """The forecasts in score order, each set of changes once (its best-scored copy)."""
    seen: set[tuple] = set()
    ranked = []
    for _, forecast in scored:
        key = tuple((c.get("flag"), str(c.get("proposed"))) for c in forecast.changes)
        if key not in seen:
            seen.add(key)
            ranked.append(forecast)
    return ranked


def _forecast(
    forecaster: Forecaster, criterion: TuneCriterion, baseline: list[tuple[float, dict]], item: ChangeForecast
) -> ChangeForecast:
    """The candidate judged by `criterion` at its percentiles' nominal ranks and at both quantile edges.

    Why every edge: a p99 on the cliff between two kinds of gap is the one or the other by a tenth of
    a percent of share, and the model cannot promise which (QUANTILE_MARGIN_POINTS). A gain is
    counted only when it holds at every reading, and ranked by its smallest size."""
    change = item.changes[0]
    try:
        prediction = forecaster.predict(FlagChanges.of({change["flag"]: str(change["proposed"])}), with_bands=False)
    except UserError as exc:
        return item.model_copy(update={"rejected": str(exc)})
    readings = zip(baseline, _readings(prediction), strict=True)
    verdicts = [_verdict(criterion, shift, was, now) for (shift, was), (_, now) in readings]
    nominal, edges = verdicts[0], verdicts[1:]
    helps = all(v.helps for v in verdicts)
    decision = nominal.decision
    if helps and edges:
        decision += f" (and with every percentile read ±{QUANTILE_MARGIN_POINTS:g} ranks)"
    if nominal.helps and not helps:
        read = "; ".join(f"at p{99 + v.shift_points:g}, {_said(v.decision)}" for v in edges)
        decision = (
            f"not predicted to help: {_said(nominal.decision)} with the percentiles at their own ranks, but "
            f"not with them read ±{QUANTILE_MARGIN_POINTS:g} ranks away ({read}): the gain rests on which "
            f"side of a cliff in the tail the measured figure falls"
        )
    decision = decision.replace("kept:", "predicted to help:").replace("rolled back:", "not predicted to help:")
    return item.model_copy(
        update={
            "criterion_before": nominal.before,
            "criterion_after": nominal.after,
            "helps": helps,
            "helps_at_nominal_ranks": nominal.helps,
            "decision": decision,
            "prediction": compact(prediction),
            "rejected": None if helps else decision,
            "edges": edges,
        }
    )


def _verdict(criterion: TuneCriterion, shift: float, was: dict, now: dict) -> EdgeVerdict:
    before, after, helps, decision = decide(criterion, was, now)
    return EdgeVerdict(shift_points=shift, before=before, after=after, helps=helps, decision=decision)


def _readings(predicted: Prediction | PredictedRamp) -> list[tuple[float, dict]]:
    """(percentile shift, the ramp as the criterion reads it): the nominal ranks first, then each edge."""
    readings = [(0.0, predicted.steps, predicted.safe_operating_point)]
    readings += [(edge.shift_points, edge.steps, edge.safe_operating_point) for edge in predicted.edges]
    return [
        (shift, {"steps": [s.model_dump(mode="json") for s in steps], "safe_operating_point": _dump(safe)})
        for shift, steps, safe in readings
    ]


def _said(decision: str) -> str:
    """A criterion's sentence without its verdict ("kept: safe operating point 2 → 4" → "safe …")."""
    return decision.split(": ", 1)[-1]


def _score(forecast: ChangeForecast, criterion: TuneCriterion) -> tuple:
    """Sort key: predicted to help first, then the larger predicted gain at its weakest reading, then the
    smaller change; of the rest, those that help at the nominal ranks only, larger gain first."""
    if not forecast.helps:
        nominal = _gain(criterion, forecast.criterion_before, forecast.criterion_after)
        return (1, -round(nominal, 6) if forecast.helps_at_nominal_ranks else 0.0)
    readings = [(forecast.criterion_before, forecast.criterion_after)] + [(v.before, v.after) for v in forecast.edges]
    gain = min(_gain(criterion, before, after) for before, after in readings)
    if criterion.metric != "itl_p99":
        steps = (forecast.prediction or {}).get("steps") or []
        top = steps[-1]["ttft_s"]["p99"] if steps and steps[-1]["ttft_s"]["p99"] else None
        gain += 1e-3 / top if top else 0.0  # ties on the safe point: the lower predicted TTFT p99 wins
    proposed = forecast.changes[0].get("proposed")
    size = abs(float(proposed)) if str(proposed).replace(".", "", 1).isdigit() else 0.0
    return (0, -round(gain, 6), size)


def _gain(criterion: TuneCriterion, before: float | None, after: float | None) -> float:
    if not before or after is None:
        return 0.0
    return (before - after) / before if criterion.metric == "itl_p99" else (after - before) / before


def _searched(flag: str) -> str:
    """The values the model weighed for `flag`, in words."""
    if flag == POOL_BYTES_FLAG:
        return ", ".join(f"{m}x" for m in POOL_SEARCH_MULTIPLES) + " the pool the server runs"
    if flag == SHARE_FLAG:
        return ", ".join(f"{v:.2f}" for v in SHARE_SEARCH_VALUES) + " above the share the server runs"
    return ", ".join(map(str, SEARCH_VALUES[flag]))


def _values(flag: str, proposed: str, current: Any, forecaster: Forecaster) -> list[str]:
    """Triage's value, and for the batch-size flags every search value except the current one; for the
    KV pool's bytes, POOL_SEARCH_MULTIPLES of the server's pool; for its device share, SHARE_SEARCH_VALUES
    above the server's own."""
    values = [proposed]
    if flag == POOL_BYTES_FLAG:
        values += pool_search_values(forecaster.command)
    if flag == SHARE_FLAG:
        values += share_search_values(forecaster.command, forecaster.device_share)
    if flag in SEARCH_VALUES:
        top = max((s.offered for s in forecaster.ramp.steps), default=1.0)
        limit = max(int(top) * 2, 16) if forecaster.ramp.plan.mode == "concurrency" else max(SEARCH_VALUES[flag])
        values += [str(v) for v in SEARCH_VALUES[flag] if v <= limit or flag != "--max-num-seqs"]
    return [v for v in dict.fromkeys(values) if v != str(current)]


def _best_per_flag(ranked: list[ChangeForecast]) -> list[ChangeForecast]:
    """Keep each flag's best value and the rejected triage proposals; of the other searched values only,
    for a flag no value of which helps, the best that helps at the nominal ranks but not at an edge
    (the near miss says why the search found nothing)."""
    kept, flags, near = [], set(), set()
    for forecast in ranked:
        flag = forecast.changes[0].get("flag")
        if forecast.helps:
            if flag in flags:
                continue
            flags.add(flag)
        elif forecast.changes[0].get("reason", "").startswith("the value the performance model"):
            if not forecast.helps_at_nominal_ranks or flag in flags or flag in near:
                continue
            near.add(flag)
        kept.append(forecast)
    return kept


def _dump(model) -> dict | None:
    return model.model_dump() if model is not None else None


def figure_errors(prediction: dict[str, Any] | None, measured: dict[str, Any]) -> dict[str, Any]:
    """Predicted vs measured per step for the headline figures, and the median |error| of each."""

    if not prediction:
        return {}
    rows, errors = [], {"ttft_p50": [], "itl_p50": [], "output_tokens_per_s": []}
    measured_steps = {float(s["offered"]): StepResult.model_validate(s) for s in measured.get("steps") or []}
    for guess in prediction.get("steps") or []:
        real = measured_steps.get(float(guess["offered"]))
        if real is None or not real.valid or not real.ok_requests:
            continue
        row = {"offered": guess["offered"]}
        for name, found in errors.items():
            p = guess["output_tokens_per_s"] if name == "output_tokens_per_s" else guess[name[:-4] + "_s"]["p50"]
            m = figure(real, name)
            if p is not None and m:
                row[name] = {"predicted": p, "measured": m, "error": p / m - 1}
                found.append(abs(p / m - 1))
        rows.append(row)
    median = {name: sorted(v)[len(v) // 2] for name, v in errors.items() if v}
    knee = (measured.get("knee") or {}).get("offered")
    return {
        "steps": rows,
        "median_abs_error": median,
        "knee": {"predicted": (prediction.get("knee") or {}).get("offered"), "measured": knee},
        "safe_operating_point": {
            "predicted": (prediction.get("safe_operating_point") or {}).get("offered"),
            "measured": (measured.get("safe_operating_point") or {}).get("offered"),
        },
    }


def kv_tokens_from_log(path: str) -> int | None:
    """The KV pool the server logged at start ('GPU/CPU KV cache size: N tokens'), if it did."""

    try:
        events = read_log(path).of_kind(LogEventKind.KV_CACHE_SIZE)
    except LogReadError:
        return None
    tokens = [e.kv_cache_tokens for e in events if e.kv_cache_tokens]
    return int(tokens[-1]) if tokens else None
