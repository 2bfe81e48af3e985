"""Render servops result documents into ONE self-contained HTML file.

Why one file with everything inline: an on-call report gets attached to tickets, mailed
and archived; it must open offline years later. So the CSS is inlined, the charts are SVG
drawn here (no script, no CDN), and nothing in the page refers to any URL.

`render_html(documents)` takes parsed JSON documents (dicts) of kind "triage", "ramp",
"advise", "demo", "tune" or "prediction", in any combination, and returns the HTML text. It
shows what the documents say; it computes no findings and makes no verdicts of its own.
What each kind shows is its view module's job (triage_view, ramp_view, advise_view,
demo_tune_view, prediction_view); this module is the page: the dispatch by kind, the Jinja2
environment and the number formats its templates use.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import jinja2
import markupsafe

from reports.advise_view import advise_view
from reports.demo_tune_view import demo_view, tune_view
from reports.errors import ReportInputError
from reports.fields import number
from reports.prediction_view import prediction_view
from reports.ramp_view import ramp_view
from reports.triage_view import triage_view

__all__ = ["KINDS", "ReportInputError", "render_html"]

KINDS = ("triage", "ramp", "advise", "demo", "tune", "prediction")
TEMPLATE_DIR = Path(__file__).with_name("templates")


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
