"""Turn a triage result (JSON kind "triage") into what the triage template shows.

Findings in triage's rank (or most severe first for unranked input), each with its severity
class, evidence, flag changes and page; the current and proposed commands with their diff;
the sources, resolutions and rejected changes. Read tolerantly, like every view: a missing
optional field is a gap. `change_view` is shared with the tune view, whose rounds apply
triage's changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reports.command_diff import apply_changes, command_diff
from reports.fields import number, pick

# rules' scale (critical/high/medium/low/info) plus common synonyms from older files.
_SEVERITY_CLASS = {
    "critical": "critical",
    "error": "critical",
    "page": "critical",
    "high": "high",
    "warning": "medium",
    "warn": "medium",
    "medium": "medium",
    "low": "low",
    "notice": "low",
    "info": "info",
    "ok": "ok",
}
SEVERITY_CLASSES = ("critical", "high", "medium", "low", "info", "ok")
_SEVERITY_ORDER = {name: i for i, name in enumerate(SEVERITY_CLASSES)}


def triage_view(doc: Mapping[str, Any]) -> dict[str, Any]:
    """Findings ranked (as triage ranked them), each with badges, evidence, changes, page."""
    pages = doc.get("rule_pages") if isinstance(doc.get("rule_pages"), Mapping) else {}
    findings = [f for f in (doc.get("findings") or []) if isinstance(f, Mapping)]
    views = [_finding_view(position, finding, pages) for position, finding in enumerate(findings)]
    if not any("rank" in f for f in findings):  # unranked input: most severe first, stable
        views.sort(key=lambda v: (_SEVERITY_ORDER.get(v["severity_class"], 9), v["position"]))
    current, proposed = _commands(doc, findings)
    counts: dict[str, int] = {}
    for view in views:
        counts[view["severity_class"]] = counts.get(view["severity_class"], 0) + 1
    return {
        "findings": views,
        "counts": counts,
        "current_command": current,
        "proposed_command": proposed,
        "diff": command_diff(current, proposed) if (current and proposed) else [],
        "target": pick(doc, "target", "base_url", "endpoint", "metrics_url") or _inputs_target(doc),
        "sources": [_source(s) for s in (doc.get("sources") or [])],
        "warnings": [*(doc.get("warnings") or []), *(doc.get("notes") or [])],
        "resolutions": [r for r in (doc.get("resolutions") or []) if isinstance(r, Mapping)],
        "rejected": [
            {"rule": r.get("rule") or "?", "change": change_view(r["change"]), "reason": r.get("reason") or ""}
            for r in (doc.get("rejected_changes") or [])
            if isinstance(r, Mapping) and isinstance(r.get("change"), Mapping)
        ],
        "rule_errors": list(doc.get("rule_errors") or []),
        "rules_run": len(doc.get("rules_run") or []),
        "severity_classes": SEVERITY_CLASSES,
    }


def _finding_view(position: int, finding: Mapping[str, Any], pages: Mapping[str, Any]) -> dict[str, Any]:
    """One finding as the template shows it; older files' field names (rule_id, rule_page) read too."""
    severity = str(finding.get("severity") or "info").lower()
    rule = str(pick(finding, "rule", "rule_id", "code", default="?"))
    return {
        "position": position,
        "rank": pick(finding, "rank", default=position + 1),
        "rule": rule,
        "severity": severity,
        "severity_class": _SEVERITY_CLASS.get(severity, "info"),
        "category": finding.get("category") or "",
        "title": pick(finding, "title", "summary", default=rule),
        "summary": finding.get("summary") if finding.get("title") else None,
        "evidence": [_evidence(e) for e in (finding.get("evidence") or [])],
        "changes": [change_view(c) for c in (finding.get("changes") or []) if isinstance(c, Mapping)],
        "alternatives": [change_view(c) for c in (finding.get("alternatives") or []) if isinstance(c, Mapping)],
        "actions": [a for a in (finding.get("actions") or []) if a],
        "superseded": [s for s in (finding.get("superseded") or []) if isinstance(s, Mapping)],
        "confidence": number(finding.get("confidence")),
        "page": pick(finding, "page", "rule_page", default=None) or pages.get(rule),
    }


def _commands(doc: Mapping[str, Any], findings: list[Mapping[str, Any]]) -> tuple[Any, Any]:
    """The current and proposed commands; a file with only the proposed one gets the current one back by
    undoing the findings' changes."""
    current = pick(doc, "current_command", "command")
    proposed = doc.get("proposed_command")
    all_changes = [c for f in findings for c in (f.get("changes") or []) if isinstance(c, Mapping)]
    if proposed and not current and all_changes:
        current = apply_changes(str(proposed), all_changes, "current")
    return current, proposed


def _inputs_target(doc: Mapping[str, Any]) -> str | None:
    inputs = doc.get("inputs")
    if isinstance(inputs, Mapping):
        return pick(inputs, "endpoint", "prometheus")
    return None


def _source(source: Any) -> str:
    if isinstance(source, Mapping):
        text = " ".join(str(source.get(k)) for k in ("kind", "location") if source.get(k))
        return f"{text} ({source['note']})" if source.get("note") else text
    return str(source)


def _evidence(item: Any) -> dict[str, Any]:
    if not isinstance(item, Mapping):
        return {"source": "", "value": item, "threshold": None, "detail": "", "extra": {}}
    known = (
        "source",
        "name",
        "value",
        "threshold",
        "comparison",
        "unit",
        "detail",
        "message",
        "metric",
        "line",
        "description",
        "raw",
        "location",
    )
    detail = pick(item, "description", "detail", "message", default="")
    extra = {k: v for k, v in item.items() if k not in known and v not in (None, "", [], {})}
    name = pick(item, "name", "metric", default="")
    source = item.get("source") or ""
    return {
        "source": f"{source}: {name}" if source and name else (source or name),
        "raw": pick(item, "raw", "line"),
        "location": item.get("location"),
        "value": item.get("value"),
        "threshold": item.get("threshold"),
        "comparison": item.get("comparison") or "",
        "unit": item.get("unit") or "",
        "detail": detail,
        "extra": extra,
    }


# How a change proposed empty reads, by its kind (a setting proposed empty stays as it is).
_TAKEN_OFF = {"flag": "(remove)", "env": "(unset)"}


def change_view(change: Mapping[str, Any]) -> dict[str, Any]:
    """One flag change as the templates show it, whichever spelling wrote it (from/to, why, risk)."""
    effect = pick(change, "predicted_effect", "effect", "prediction")
    effect_text, effect_figures = None, {}
    if isinstance(effect, Mapping):
        effect_text = effect.get("text") or None
        effect_figures = dict(effect.get("figures") or {}) if isinstance(effect.get("figures"), Mapping) else {}
        if not effect_text and not effect_figures:
            effect_figures = dict(effect)
    elif effect is not None:
        effect_text = str(effect)
    return {
        "flag": change.get("flag"),
        "current": change.get("current", change.get("from")),
        # a flag proposed empty is taken off the command, a variable unset (rules/model.py, ConfigChange.removes)
        "proposed": _TAKEN_OFF.get(change.get("kind", "flag"), "")
        if change.get("proposed") == ""
        else change.get("proposed", change.get("to")),
        "reason": pick(change, "reason", "why", default=""),
        "effect_text": effect_text,
        "effect_figures": effect_figures,
        "cost": pick(change, "cost", "risk", default=""),
        "safety": change.get("safety") or "",
    }
