"""Performance-model predictions in the report: what-if answers, and predictions checked by measurement.

Two places a prediction shows up:

- a `servops predict` document (kind "prediction"): the flag change as a command diff; per step the
  unchanged configuration replayed by the model ("baseline") beside the changed one ("predicted"),
  with the predicted figure's uncertainty band; knee and safe operating point as measured, as the model
  replays the measured configuration, and as predicted; the calibration's in-sample fit; the notes.
- a prediction next to the ramp measured after it (a tune round, a demo's after-ramp): per step
  predicted | measured | error, the median errors the run recorded, knee and safe point, charts with the
  prediction dashed, and the candidate changes the model weighed.

It re-arranges numbers the documents carry. The one figure it derives is the error shown beside a
predicted and a measured value, predicted / measured − 1, the formula advisor/perf/ranking.py records.
Latencies are converted to ms here, so the templates format every figure alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reports.charts import no_data
from reports.command_diff import command_diff
from reports.fields import number, pick
from reports.ramp_view import offered_load_label, overlay_charts

__all__ = ["FIGURES", "candidates_view", "prediction_check", "prediction_view"]

# (name in bands and errors, column heading, unit shown, scale from the JSON's unit)
FIGURES: tuple[tuple[str, str, str, float], ...] = (
    ("ttft_p50", "TTFT p50", "ms", 1000.0),
    ("ttft_p99", "TTFT p99", "ms", 1000.0),
    ("itl_p50", "ITL p50", "ms", 1000.0),
    ("itl_p99", "ITL p99", "ms", 1000.0),
    ("output_tokens_per_s", "output throughput", "tok/s", 1.0),
)
_COLUMNS = [{"name": name, "heading": heading, "unit": unit} for name, heading, unit, _ in FIGURES]
_SCALE = {name: scale for name, _, _, scale in FIGURES}
_LABELS = {name: heading for name, heading, _, _ in FIGURES} | {"tpot_p50": "TPOT p50", "e2e_p50": "E2E p50"}
# The load points both views set side by side: (shown name, key in each document).
_POINTS = (("knee", "knee"), ("safe operating point", "safe_operating_point"))

# The step cost's terms (advisor/perf/cost.py StepCost), each shown in the unit it is read in.
_COST_TERMS = (
    ("base_s", "per engine step", "ms", 1e3),
    ("prefill_token_s", "per prompt token prefilled", "µs", 1e6),
    ("prefill_seq_s", "per prompt chunk prefilled", "ms", 1e3),
    ("decode_seq_s", "per sequence decoded", "ms", 1e3),
    ("context_token_s", "per context token read", "µs", 1e6),
    ("overhead_s", "per request outside the engine", "ms", 1e3),
)


def _edge_points(doc: Mapping[str, Any], baseline: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The safe operating point with every percentile read half a rank either side (p98.5, p99.5): a
    predicted gain that differs between them rests on a cliff in the tail."""
    points = []
    base_edges = [_mapping(e) for e in baseline.get("edges") or []]
    for k, edge in enumerate(_mapping(e) for e in doc.get("edges") or []):
        shift = number(edge.get("shift_points"))
        if shift is None:
            continue
        base = base_edges[k] if k < len(base_edges) else {}
        points.append(
            {
                "name": f"safe operating point, percentiles read {shift:+g} ranks (p99 → p{99 + shift:g})",
                "measured": None,
                "baseline": _point(base.get("safe_operating_point")),
                "predicted": _point(edge.get("safe_operating_point")),
            }
        )
    return points


def prediction_view(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The what-if answer: diff, baseline → predicted per step, knee and safe point, calibration, notes."""
    baseline = _mapping(doc.get("baseline"))
    steps, base_steps = _steps(doc), _steps(baseline)
    bands = doc.get("bands") if isinstance(doc.get("bands"), list) else []
    before, after = doc.get("server_args"), doc.get("server_args_after")
    measured = _mapping(doc.get("measured"))
    return {
        "ramp": doc.get("ramp"),
        "engine": doc.get("engine"),
        "changes": [str(c) for c in (doc.get("changes") or [])],
        "server_args": before,
        "server_args_after": after,
        "diff": command_diff(before, after) if before and after else [],
        "limits": _limits(doc.get("limits_before"), doc.get("limits_after")),
        "figures": _COLUMNS,
        "rows": _whatif_rows(steps, base_steps, bands),
        "load_label": offered_load_label(doc),
        "points": [
            *(
                {
                    "name": name,
                    "measured": _point(measured.get(key)),
                    "baseline": _point(baseline.get(key)),
                    "predicted": _point(doc.get(key)),
                }
                for name, key in _POINTS
            ),
            *_edge_points(doc, baseline),
        ],
        "cost": _cost(doc.get("cost")),
        "calibration": _calibration(doc.get("calibration")),
        # a side without steps is said in words by the chart helper; neither side: one line for all charts
        "charts": overlay_charts(baseline, doc, ("baseline", "predicted"), bands=(None, bands))
        if steps or base_steps
        else [{"title": "Charts", "svg": no_data("charts", "the prediction has no steps")}],
        "notes": [n for n in (doc.get("notes") or []) if n],
    }


def prediction_check(predicted: Any, measured: Any, errors: Any = None) -> dict[str, Any] | None:
    """A prediction beside the ramp measured after it, step by step; None when there is no prediction.

    `predicted` is the compact form tune records (steps with ttft_s/itl_s p50 and p99, output tok/s and
    a band each; knee; safe point; relative_error; cost); `errors` its `prediction_error`, of which the
    recorded median |error| per figure is shown.
    """
    if not isinstance(predicted, Mapping) or not _steps(predicted):
        return None
    measured = _mapping(measured)
    errors = _mapping(errors)
    medians = _mapping(errors.get("median_abs_error"))
    predicted_steps = _steps(predicted)
    return {
        "server_args_after": predicted.get("server_args_after"),
        "figures": _COLUMNS,
        "rows": _checked_rows(predicted_steps, _steps(measured)),
        "load_label": offered_load_label(measured),
        "median_abs_error": [{"name": _LABELS.get(str(k), str(k)), "value": number(v)} for k, v in medians.items()],
        "points": [
            {"name": name, "predicted": _point(predicted.get(key)), "measured": _point(measured.get(key))}
            for name, key in _POINTS
        ],
        "relative_error": number(predicted.get("relative_error")),
        "cost": predicted.get("cost") if isinstance(predicted.get("cost"), str) else None,
        "charts": overlay_charts(
            predicted,
            measured,
            ("predicted", "measured"),
            quantile="p50",
            bands=([s.get("band") for s in predicted_steps], None),
        ),
    }


def _whatif_rows(
    steps: list[Mapping[str, Any]], base_steps: list[Mapping[str, Any]], bands: list[Any]
) -> list[dict[str, Any]]:
    """Per predicted step, each figure as the model replays the unchanged configuration at the same load
    beside the predicted one and its band."""
    base_by_offered = {number(s.get("offered")): s for s in base_steps}
    rows = []
    for k, step in enumerate(steps):
        base = base_by_offered.get(number(step.get("offered")), {})
        band = _mapping(bands[k]) if k < len(bands) else {}
        rows.append(
            {
                "offered": number(step.get("offered")),
                "valid": bool(step.get("valid", True)),
                "invalid_reason": step.get("invalid_reason") or "",
                "figures": [
                    {
                        "baseline": step_figure(base, name),
                        "predicted": step_figure(step, name),
                        "low": _band_edge(band, name, "low"),
                        "high": _band_edge(band, name, "high"),
                    }
                    for name, *_ in FIGURES
                ],
            }
        )
    return rows


def _checked_rows(guessed: list[Mapping[str, Any]], measured: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per load either side has, each figure predicted, measured and their error, with the prediction's band;
    a step's validity is the measured one's."""
    guesses = {number(s.get("offered")): s for s in guessed}
    reals = {number(s.get("offered")): s for s in measured}
    rows = []
    for offered in sorted(o for o in guesses.keys() | reals.keys() if o is not None):
        guess, real = guesses.get(offered, {}), reals.get(offered, {})
        band = _mapping(guess.get("band"))
        figures = []
        for name, *_ in FIGURES:
            p, m = step_figure(guess, name), step_figure(real, name)
            figures.append(
                {
                    "predicted": p,
                    "measured": m,
                    "error": p / m - 1 if p is not None and m else None,
                    "low": _band_edge(band, name, "low"),
                    "high": _band_edge(band, name, "high"),
                }
            )
        rows.append(
            {
                "offered": offered,
                "figures": figures,
                "valid": bool(real.get("valid", True)),
                "invalid_reason": real.get("invalid_reason") or "",
            }
        )
    return rows


def candidates_view(candidates: Any, chosen: Any = None) -> list[dict[str, Any]]:
    """The changes the model weighed, in the order it ranked them; the one tried is marked."""
    tried = _change_keys(chosen.get("changes") if isinstance(chosen, Mapping) else None)
    rows = []
    for candidate in candidates or []:
        if not isinstance(candidate, Mapping):
            continue
        changes = [c for c in (candidate.get("changes") or []) if isinstance(c, Mapping)]
        keys = _change_keys(changes)
        rejected = candidate.get("rejected")
        if keys and keys == tried:
            status = "tried"
        elif rejected:
            status = "rejected"
        else:
            status = "predicted to help" if candidate.get("helps") else "not tried"
        rows.append(
            {
                "rule": candidate.get("rule"),
                "title": candidate.get("title") or "",
                "changes": [
                    {
                        "flag": c.get("flag"),
                        "current": c.get("current"),
                        "proposed": c.get("proposed"),
                        "reason": c.get("reason") or "",
                    }
                    for c in changes
                ],
                "criterion_before": number(candidate.get("criterion_before")),
                "criterion_after": number(candidate.get("criterion_after")),
                "status": status,
                "reason": str(rejected or candidate.get("decision") or ""),
            }
        )
    return rows


def step_figure(step: Mapping[str, Any], name: str) -> float | None:
    """A step's headline figure by its short name, in the unit the report shows (ms, tok/s)."""
    if name == "output_tokens_per_s":
        return number(step.get("output_tokens_per_s"))
    metric, _, quantile = name.rpartition("_")
    block = step.get(f"{metric}_s")
    value = number(block.get(quantile)) if isinstance(block, Mapping) else None
    return None if value is None else value * 1000.0


def _band_edge(band: Mapping[str, Any], name: str, side: str) -> float | None:
    figure = band.get(name)
    value = number(figure.get(side)) if isinstance(figure, Mapping) else None
    return None if value is None else value * _SCALE[name]


def _point(point: Any) -> dict[str, Any] | None:
    if isinstance(point, Mapping):
        return {"offered": number(pick(point, "offered", "load", "value")), "reason": point.get("reason") or ""}
    value = number(point)
    return None if value is None else {"offered": value, "reason": ""}


def _limits(before: Any, after: Any) -> list[dict[str, Any]]:
    """The scheduler limits the replay used before and after the change (max_num_seqs, num_blocks, …)."""
    before, after = _mapping(before), _mapping(after)
    return [
        {"name": k, "before": before.get(k), "after": after.get(k), "changed": before.get(k) != after.get(k)}
        for k in dict.fromkeys([*before, *after])
    ]


def _cost(cost: Any) -> dict[str, Any] | None:
    if not isinstance(cost, Mapping):
        return None
    known = {key for key, *_ in _COST_TERMS} | {"relative_error", "source"}
    terms = [
        {"name": label, "value": None if number(cost.get(key)) is None else number(cost.get(key)) * scale, "unit": unit}
        for key, label, unit, scale in _COST_TERMS
        if key in cost
    ]
    terms += [{"name": k, "value": v, "unit": ""} for k, v in cost.items() if k not in known]
    return {"relative_error": number(cost.get("relative_error")), "source": cost.get("source") or "", "terms": terms}


def _calibration(calibration: Any) -> dict[str, Any] | None:
    """In-sample fit: each measured figure beside the value the fitted model replays for it."""
    if not isinstance(calibration, Mapping):
        return None
    rows = []
    for row in calibration.get("rows") or []:
        if not isinstance(row, Mapping):
            continue
        name = str(row.get("figure") or "")
        scale = 1.0 if name == "output_tokens_per_s" or not name.endswith(("_p50", "_p99")) else 1000.0
        measured, fitted = number(row.get("measured")), number(row.get("fitted"))
        rows.append(
            {
                "offered": number(row.get("offered")),
                "figure": _LABELS.get(name, name),
                "unit": "tok/s" if scale == 1.0 else "ms",
                "measured": None if measured is None else measured * scale,
                "fitted": None if fitted is None else fitted * scale,
                "error": fitted / measured - 1 if measured and fitted is not None else None,
            }
        )
    return {
        "rows": rows,
        "iterations": calibration.get("iterations"),
        "used_server_metrics": calibration.get("used_server_metrics"),
    }


def _change_keys(changes: Any) -> tuple[tuple[str, str], ...]:
    return tuple((str(c.get("flag")), str(c.get("proposed"))) for c in changes or [] if isinstance(c, Mapping))


def _steps(doc: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [s for s in (doc.get("steps") or []) if isinstance(s, Mapping)]


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}
