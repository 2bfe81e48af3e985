"""Render servops result documents into ONE self-contained HTML file.

Why one file with everything inline: an on-call report gets attached to tickets, mailed
and archived; it must open offline years later. So the CSS is inlined, the charts are SVG
drawn here (no script, no CDN), and nothing in the page refers to any URL.

`render_html(documents)` takes parsed JSON documents (dicts) of kind "triage", "ramp",
"advise", "demo", "tune" or "prediction", in any combination, and returns the HTML text. It
shows what the documents say; it computes no findings and makes no verdicts of its own.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import jinja2
import markupsafe

from reports.command_diff import apply_changes, command_diff
from reports.errors import ReportInputError
from reports.fields import number, pick
from reports.prediction_view import candidates_view, prediction_check, prediction_view
from reports.ramp_view import overlay_charts, ramp_view

__all__ = ["KINDS", "ReportInputError", "render_html"]

KINDS = ("triage", "ramp", "advise", "demo", "tune", "prediction")
TEMPLATE_DIR = Path(__file__).with_name("templates")

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


def render_html(documents: Sequence[Mapping[str, Any]], title: str | None = None) -> str:
    """The HTML text of one report showing every document in order."""
    if not documents:
        raise ReportInputError("no result documents given; pass at least one servops JSON result")
    sections = [_section(i, doc) for i, doc in enumerate(documents)]
    env = _environment()
    return env.get_template("report.html.j2").render(
        title=title or _default_title(sections),
        sections=sections,
        generated_at=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    )


def _section(index: int, doc: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(doc, Mapping):
        raise ReportInputError(f"document {index + 1} is not a JSON object; pass servops result files")
    kind = doc.get("kind")
    if kind not in KINDS:
        raise ReportInputError(
            f"document {index + 1} has kind {kind!r}; servops report renders {', '.join(KINDS)} results"
        )
    builder = {
        "triage": triage_view,
        "ramp": ramp_view,
        "advise": advise_view,
        "demo": demo_view,
        "tune": tune_view,
        "prediction": prediction_view,
    }[kind]
    return {
        "kind": kind,
        "anchor": f"{kind}-{index + 1}",
        "meta": _meta(doc),
        "view": builder(doc),
        "source": doc.get("_source_file"),
    }


def _meta(doc: Mapping[str, Any]) -> dict[str, Any]:
    return {"servops_version": doc.get("servops_version"), "created_at": doc.get("created_at")}


def triage_view(doc: Mapping[str, Any]) -> dict[str, Any]:
    """Findings ranked (as triage ranked them), each with badges, evidence, changes, page."""
    pages = doc.get("rule_pages") if isinstance(doc.get("rule_pages"), Mapping) else {}
    findings = [f for f in (doc.get("findings") or []) if isinstance(f, Mapping)]
    views = []
    for position, finding in enumerate(findings):
        severity = str(finding.get("severity") or "info").lower()
        rule = str(pick(finding, "rule", "rule_id", "code", default="?"))
        views.append(
            {
                "position": position,
                "rank": pick(finding, "rank", default=position + 1),
                "rule": rule,
                "severity": severity,
                "severity_class": _SEVERITY_CLASS.get(severity, "info"),
                "category": finding.get("category") or "",
                "title": pick(finding, "title", "summary", default=rule),
                "summary": finding.get("summary") if finding.get("title") else None,
                "evidence": [_evidence(e) for e in (finding.get("evidence") or [])],
                "changes": [_change(c) for c in (finding.get("changes") or []) if isinstance(c, Mapping)],
                "alternatives": [_change(c) for c in (finding.get("alternatives") or []) if isinstance(c, Mapping)],
                "actions": [a for a in (finding.get("actions") or []) if a],
                "superseded": [s for s in (finding.get("superseded") or []) if isinstance(s, Mapping)],
                "confidence": number(finding.get("confidence")),
                "page": pick(finding, "page", "rule_page", default=None) or pages.get(rule),
            }
        )
    if not any("rank" in f for f in findings):  # unranked input: most severe first, stable
        views.sort(key=lambda v: (_SEVERITY_ORDER.get(v["severity_class"], 9), v["position"]))
    all_changes = [c for f in findings for c in (f.get("changes") or []) if isinstance(c, Mapping)]
    current = pick(doc, "current_command", "command")
    proposed = doc.get("proposed_command")
    if proposed and not current and all_changes:
        current = apply_changes(str(proposed), all_changes, "current")
    diff = command_diff(current, proposed) if (current and proposed) else []
    counts: dict[str, int] = {}
    for view in views:
        counts[view["severity_class"]] = counts.get(view["severity_class"], 0) + 1
    return {
        "findings": views,
        "counts": counts,
        "current_command": current,
        "proposed_command": proposed,
        "diff": diff,
        "target": pick(doc, "target", "base_url", "endpoint", "metrics_url") or _inputs_target(doc),
        "sources": [_source(s) for s in (doc.get("sources") or [])],
        "warnings": [*(doc.get("warnings") or []), *(doc.get("notes") or [])],
        "resolutions": [r for r in (doc.get("resolutions") or []) if isinstance(r, Mapping)],
        "rejected": [
            {"rule": r.get("rule") or "?", "change": _change(r["change"]), "reason": r.get("reason") or ""}
            for r in (doc.get("rejected_changes") or [])
            if isinstance(r, Mapping) and isinstance(r.get("change"), Mapping)
        ],
        "rule_errors": list(doc.get("rule_errors") or []),
        "rules_run": len(doc.get("rules_run") or []),
        "severity_classes": SEVERITY_CLASSES,
    }


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


def advise_view(doc: Mapping[str, Any]) -> dict[str, Any]:
    """Memory breakdown, fit verdict (as advise stated it), command and recommendations."""
    recommended = doc.get("recommended") if isinstance(doc.get("recommended"), Mapping) else {}
    return {
        "fits": doc.get("fits"),
        "failure": doc.get("failure"),
        "memory": _memory_view(doc.get("memory")),
        "recommended_memory": _memory_view(recommended.get("memory")) if recommended.get("memory") else None,
        "max_model_len_that_fits": doc.get("max_model_len_that_fits"),
        "command": doc.get("command"),
        "recommendations": [r for r in (doc.get("recommendations") or []) if isinstance(r, Mapping)],
        "warnings": doc.get("warnings") or [],
        "model": _name_of(doc.get("model")),
        "gpu": _name_of(doc.get("gpu")),
    }


_MEMORY_ORDER = (
    "total_gib",
    "requested_gib",
    "weights_gib",
    "activation_gib",
    "non_torch_gib",
    "cudagraph_gib",
    "kv_pool_gib",
    "kv_bytes_per_token",
    "kv_cache_tokens",
    "num_blocks",
    "max_concurrency",
)


def _memory_view(memory: Any) -> dict[str, Any]:
    """Table rows and a stacked bar (parts of the requested memory) for one memory breakdown."""
    memory = memory if isinstance(memory, Mapping) else {}
    rows = [(k, memory[k]) for k in _MEMORY_ORDER if k in memory]
    rows += [(k, v) for k, v in memory.items() if k not in _MEMORY_ORDER and not isinstance(v, (dict, list))]
    parts = [
        (k, number(memory.get(k)))
        for k in ("weights_gib", "activation_gib", "non_torch_gib", "cudagraph_gib", "kv_pool_gib")
    ]
    parts = [(k, v) for k, v in parts if v and v > 0]
    total = number(memory.get("requested_gib")) or sum(v for _, v in parts) or 1.0
    bar = [
        {"name": k.removesuffix("_gib").replace("_", " "), "gib": v, "percent": max(0.5, 100.0 * v / total)}
        for k, v in parts
    ]
    return {"rows": rows, "bar": bar}


def _name_of(value: Any) -> Any:
    """A catalog entry shown by its name (advise writes the whole model/GPU record)."""
    if isinstance(value, Mapping):
        return pick(value, "name", "hf_id", default=None) or value
    return value


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
        "changes": [_change(c) for c in items if isinstance(c, Mapping)],
    }


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


def _change(change: Mapping[str, Any]) -> dict[str, Any]:
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
        "proposed": change.get("proposed", change.get("to")),
        "reason": pick(change, "reason", "why", default=""),
        "effect_text": effect_text,
        "effect_figures": effect_figures,
        "cost": pick(change, "cost", "risk", default=""),
        "safety": change.get("safety") or "",
    }


def _default_title(sections: Sequence[Mapping[str, Any]]) -> str:
    kinds = [s["kind"] for s in sections]
    return "servops report — " + " + ".join(dict.fromkeys(kinds))


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATE_DIR)),
        autoescape=jinja2.select_autoescape(default=True, default_for_string=True),
        undefined=jinja2.ChainableUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["num"] = format_number
    env.filters["ms"] = format_ms
    env.filters["value"] = format_value
    env.filters["pct"] = format_percent
    # Our own stylesheet and our own matplotlib SVG are trusted markup; input text never is.
    env.globals["css_text"] = markupsafe.Markup((TEMPLATE_DIR / "report.css").read_text(encoding="utf-8"))
    env.filters["svg"] = markupsafe.Markup
    return env


def format_number(value: Any, digits: int = 3) -> str:
    """Numbers to `digits` significant figures; missing → an en dash."""
    if isinstance(value, jinja2.Undefined):
        return "–"
    num = number(value)
    if num is None:
        return "–" if value is None else str(value)
    if num == int(num) and abs(num) < 1e12:
        return f"{int(num):,}"
    if abs(num) >= 10**digits:  # no exponent for everyday magnitudes: 5,620 not 5.62e+03
        return f"{num:,.0f}"
    return f"{num:.{digits}g}"


def format_ms(seconds: Any) -> str:
    """Seconds shown as milliseconds (the unit on-call engineers read latencies in)."""
    num = None if isinstance(seconds, jinja2.Undefined) else number(seconds)
    return "–" if num is None else format_number(num * 1000.0)


def format_percent(fraction: Any, signed: bool = True) -> str:
    """A fraction as a percentage: 0.123 → "+12%" (signed, for errors) or "12%"; missing → an en dash."""
    num = None if isinstance(fraction, jinja2.Undefined) else number(fraction)
    if num is None:
        return "–"
    percent = num * 100.0
    digits = 1 if abs(percent) < 10 else 0
    return f"{percent:+.{digits}f}%" if signed else f"{percent:.{digits}f}%"


def format_value(value: Any) -> str:
    """Any JSON value as short text: numbers formatted, lists joined, dicts as k=v."""
    if isinstance(value, jinja2.Undefined):
        return "–"
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={format_value(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(format_value(v) for v in value)
    if isinstance(value, bool) or value is None:
        return str(value).lower() if value is not None else "–"
    if number(value) is not None and not isinstance(value, str):
        return format_number(value)
    return str(value)
