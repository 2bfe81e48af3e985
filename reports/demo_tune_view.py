"""Turn demo and tune results (JSON kinds "demo" and "tune") into what their templates show.

Both are runs around a change: a demo is one before/after pair with the triage between them,
a tune is rounds of recommend → apply → re-ramp → keep or roll back. Each embeds ramp, triage
and prediction documents, so this view composes those views rather than reading them again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reports.command_diff import command_diff
from reports.fields import pick
from reports.prediction_view import candidates_view, prediction_check
from reports.ramp_view import overlay_charts, ramp_view
from reports.triage_view import change_view, triage_view


def demo_view(doc: Mapping[str, Any]) -> dict[str, Any]:
    """Before and after ramps side by side, the triage between them and the applied change."""
    before, after = doc.get("before") or {}, doc.get("after") or {}
    before_ramp = before.get("ramp") if isinstance(before.get("ramp"), Mapping) else before
    after_ramp = after.get("ramp") if isinstance(after.get("ramp"), Mapping) else after
    triage = doc.get("triage") if isinstance(doc.get("triage"), Mapping) else None
    before_cmd = pick(before, "command", default=doc.get("before_command"))
    after_cmd = pick(after, "command", default=doc.get("after_command"))
    return {
        "summary": doc.get("summary"),
        "model": doc.get("model"),
        "applied_change": doc.get("applied_change"),
        "comparison": [c for c in (doc.get("comparison") or []) if isinstance(c, Mapping)],
        "before": ramp_view(before_ramp) if before_ramp.get("steps") is not None else None,
        "after": ramp_view(after_ramp) if after_ramp.get("steps") is not None else None,
        "before_command": before_cmd,
        "after_command": after_cmd,
        "diff": command_diff(before_cmd, after_cmd) if before_cmd and after_cmd else [],
        # both ramps present: a side without steps is said in words by the chart helper
        "overlay": overlay_charts(before_ramp, after_ramp)
        if isinstance(before_ramp.get("steps"), list) and isinstance(after_ramp.get("steps"), list)
        else [],
        "triage": triage_view(triage) if triage else None,
        # the after-ramp as predicted before the restart, when the demo made a prediction (a tune round's form)
        "prediction": prediction_check(
            doc.get("predicted") or after.get("predicted"),
            after_ramp,
            doc.get("prediction_error") or after.get("prediction_error"),
        ),
        "candidates": candidates_view(doc.get("candidates"), _applied(doc.get("applied_change"))),
        "timings": doc.get("timings"),
        "notes": doc.get("notes") or [],
    }


def tune_view(doc: Mapping[str, Any]) -> dict[str, Any]:
    """Every round of recommend → apply → re-ramp → keep or roll back, with its numbers."""
    baseline = doc.get("baseline") if isinstance(doc.get("baseline"), Mapping) else {}
    baseline_ramp = baseline.get("ramp") if isinstance(baseline.get("ramp"), Mapping) else None
    rounds = []
    for rnd in doc.get("rounds") or []:
        if not isinstance(rnd, Mapping):
            continue
        ramp = rnd.get("ramp") if isinstance(rnd.get("ramp"), Mapping) else None
        triage = rnd.get("triage") if isinstance(rnd.get("triage"), Mapping) else None
        before_cmd, after_cmd = rnd.get("command_before"), rnd.get("command")
        candidates = candidates_view(rnd.get("candidates"), rnd.get("change"))
        rounds.append(
            {
                "round": rnd.get("round"),
                "change": _round_change(rnd.get("change")),
                "command": after_cmd,
                "diff": command_diff(before_cmd, after_cmd) if before_cmd and after_cmd else [],
                "kept": rnd.get("kept"),
                "decision": rnd.get("decision") or "",
                "criterion_before": rnd.get("criterion_before"),
                "criterion_after": rnd.get("criterion_after"),
                "stopped_reason": rnd.get("stopped_reason"),
                "ramp": ramp_view(ramp) if ramp else None,
                "triage": triage_view(triage) if triage else None,
                "predicted_decision": rnd.get("predicted_decision") or "",
                "predicted_after": next((c["criterion_after"] for c in candidates if c["status"] == "tried"), None),
                "prediction": prediction_check(rnd.get("predicted"), ramp, rnd.get("prediction_error")),
                "candidates": candidates,
            }
        )
    return {
        "criterion": doc.get("criterion") if isinstance(doc.get("criterion"), Mapping) else {},
        "baseline_command": baseline.get("command"),
        "baseline_value": baseline.get("criterion_value"),
        "baseline_ramp": ramp_view(baseline_ramp) if baseline_ramp else None,
        "rounds": rounds,
        "predicted": any(r["prediction"] or r["candidates"] for r in rounds),  # older files predict nothing
        "final_command": doc.get("final_command"),
        "stopped_reason": doc.get("stopped_reason"),
    }


def _applied(change: Any) -> dict[str, Any] | None:
    """A demo's applied change as {changes: [...]}, the form a tune round's change has."""
    if not isinstance(change, Mapping):
        return None
    return {"changes": change.get("all_changes") or [change]}


def _round_change(change: Any) -> dict[str, Any] | None:
    """A tune round's change: {rule, title, changes: [...]} (or one bare change, older files)."""
    if not isinstance(change, Mapping):
        return None
    items = change.get("changes") if isinstance(change.get("changes"), list) else [change]
    return {
        "rule": change.get("rule"),
        "title": change.get("title") or "",
        "changes": [change_view(c) for c in items if isinstance(c, Mapping)],
    }
