"""`servops alerts lint`: rules files and dashboards that query vLLM, checked against what vLLM exposes.

Why: the public vLLM alert packs carry mistakes no tool caught: a preemption alert on
`vllm:num_preemptions`, a series no vLLM ever exposed (the counter is `vllm:num_preemptions_total`),
so the alert can never fire; thresholds between a histogram's buckets, where `histogram_quantile`
only interpolates; no runbook to follow. promtool checks syntax; this checks meaning, from the
table of vLLM's families per version (advisor/catalog/vllm_metrics.py). Only expressions that
query `vllm:` series are judged: servops knows nothing about the others.

What it reports, one line per problem with its fix: a series no vLLM exposes (and the `_total` it
lacks, or the histogram series it should name), a series renamed or removed (by version with
`--vllm-version`), `rate()`/`irate()`/`increase()` over a gauge, `histogram_quantile` over anything
but `_bucket`, a quantile compared with a value between two bucket bounds, an alert with no `for:`,
and an alert with no `runbook_url` or one pointing at a local file or heading that does not exist
(links over http are not fetched: the check must work offline).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from advisor.catalog.vllm_metrics import BY_NAME, NEWEST, MetricFamily, family_of, version_text
from advisor.catalog.vllm_versions import Version
from advisor.errors import UserError
from advisor.oncall.alert_pack import heading_anchor

_SERIES = re.compile(r"(?<![\w:])(vllm:[A-Za-z0-9_:]+)")
_RATE = re.compile(r"\b(rate|irate|increase)\s*\(\s*(vllm:[A-Za-z0-9_:]+)")
_QUANTILE = re.compile(r"histogram_quantile\s*\(")
_COMPARISON = re.compile(r"^\s*(>=|<=|>|<)\s*([0-9]*\.?[0-9]+(?:[eE][+-]?\d+)?)")
_NO_WAIT = {"", "0", "0s", "0m"}


@dataclass(frozen=True)
class Problem:
    """One finding of the lint: the file, the alert or panel, what is wrong and the fix."""

    file: str
    where: str
    message: str

    def line(self) -> str:
        return f"{self.file}: {self.where}: {self.message}"


@dataclass(frozen=True)
class Checked:
    """What one file held: the expressions judged (alerts, recording rules, panels) and the problems."""

    queries: int
    problems: list[Problem]


def lint_file(path: Path, version: Version | None = None) -> Checked:
    """Every vLLM query of a rules file, a PrometheusRule or a Grafana dashboard JSON, checked."""
    document = _read(path)
    problems: list[Problem] = []
    queries = 0
    for where, expr, rule in _queries(document, path):
        if not _SERIES.search(expr):
            continue
        queries += 1
        problems += [Problem(str(path), where, message) for message in expression_problems(expr, version)]
        if rule is not None and "alert" in rule:
            problems += [Problem(str(path), where, message) for message in _alert_problems(rule, path)]
    return Checked(queries=queries, problems=problems)


def expression_problems(expr: str, version: Version | None = None) -> list[str]:
    """What is wrong with one PromQL expression's use of vLLM's series."""
    problems = []
    names = list(dict.fromkeys(_SERIES.findall(expr)))
    for name in names:
        problems += _series_problems(name, names, version)
    for match in _RATE.finditer(expr):
        family, _ = family_of(match[2])
        if family is not None and family.kind == "gauge":
            problems.append(
                f"{match[1]}({match[2]}[…]): {match[2]} is a gauge, not a counter, so {match[1]}() of it is "
                f"meaningless; compare the gauge itself, or avg_over_time({match[2]}[5m])"
            )
    problems += _quantile_problems(expr)
    return problems


def _series_problems(name: str, names: list[str], version: Version | None) -> list[str]:
    family, suffix = family_of(name)
    if family is None:
        if f"{name}_total" in BY_NAME:
            return [
                f"{name} does not exist: vLLM's counters are exposed with _total (prometheus_client appends it), "
                f"so this never matches; query {name}_total"
            ]
        newest = version_text(NEWEST)
        return [f"{name} is not a series any vLLM 0.8–{newest} exposes; check it against docs/reference.md §1.3"]
    if family.kind == "histogram" and not suffix:
        return [f"{name} is a histogram: its series are {name}_bucket, {name}_sum and {name}_count; query one of them"]
    if version is not None and not family.in_version(version):
        return [f"{name} is not exposed by vLLM {version_text(version)} ({_span(family)}){_instead(family)}"]
    if version is None and family.until < NEWEST and not _replacement_queried(family, names):
        return [f"{name} is gone from vLLM after {version_text(family.until)}{_instead(family, both=True)}"]
    return []


def _quantile_problems(expr: str) -> list[str]:
    problems = []
    for match in _QUANTILE.finditer(expr):
        inner, end = _parenthesised(expr, match.end() - 1)
        series = _SERIES.findall(inner)
        if not series:
            continue
        family, suffix = family_of(series[0])
        if suffix != "_bucket":
            problems.append(
                f"histogram_quantile over {series[0]}: it needs the _bucket series with `le` kept in the "
                "aggregation (sum by (le, …) (rate(…_bucket[5m])))"
            )
            continue
        compared = _COMPARISON.match(expr[end:])
        if compared and family is not None and family.buckets:
            problems += _between_buckets(float(compared[2]), family)
    return problems


def _between_buckets(value: float, family: MetricFamily) -> list[str]:
    if any(abs(value - bound) < 1e-9 for bound in family.buckets):
        return []
    below = max((b for b in family.buckets if b < value), default=None)
    above = min((b for b in family.buckets if b > value), default=None)
    if below is None or above is None:
        return []
    return [
        f"threshold {value:g} s falls between {family.name}'s bucket bounds {below:g} and {above:g}: "
        f"histogram_quantile only interpolates inside a bucket, so the alert fires on an estimate; "
        f"compare with {below:g} or {above:g}"
    ]


def _alert_problems(rule: dict[str, Any], path: Path) -> list[str]:
    problems = []
    if str(rule.get("for", "")).strip() in _NO_WAIT:
        problems.append("no `for:`: one evaluation of a noisy expression pages; add for: 5m (or at least 2m)")
    annotations = rule.get("annotations") or {}
    runbook = str(annotations.get("runbook_url") or "").strip()
    if not runbook:
        problems.append(
            "no runbook_url annotation: on-call gets no page to follow; add one (servops's rule pages are in "
            "docs/rule-pages.md)"
        )
    elif dead := _dead_link(runbook, path):
        problems.append(f"runbook_url {runbook}: {dead}")
    return problems


def _dead_link(url: str, rules_file: Path) -> str | None:
    """Why a local runbook link is dead (a file or heading that is not there); None when it is there or
    when it is a web address (not fetched: the lint works offline)."""
    if re.match(r"^[a-z][a-z0-9+.-]*://", url) and not url.startswith("file://"):
        return None
    target, _, anchor = url.removeprefix("file://").partition("#")
    page = (rules_file.parent / target) if not Path(target).is_absolute() else Path(target)
    if not page.is_file():
        return f"no file {page}; point it at the runbook's page"
    if anchor and page.suffix == ".md":
        lines = page.read_text(errors="replace").splitlines()
        anchors = {heading_anchor(line.lstrip("#").strip()) for line in lines}
        if anchor not in anchors:
            return f"{page} has no heading #{anchor}; point it at an existing heading"
    return None


def _span(family: MetricFamily) -> str:
    until = "" if family.until >= NEWEST else version_text(family.until)
    return f"it exists in {version_text(family.since)}–{until or '0.33'}"


def _instead(family: MetricFamily, both: bool = False) -> str:
    if family.successor is None:
        return "; it has no successor in V1"
    if both:
        return f"; query `{family.successor} or {family.name}` to cover old and new servers"
    return f"; query {family.successor}"


def _replacement_queried(family: MetricFamily, names: list[str]) -> bool:
    return family.successor is not None and any(family_of(n)[0] == BY_NAME.get(family.successor) for n in names)


def _parenthesised(text: str, open_at: int) -> tuple[str, int]:
    """The text inside the parenthesis opening at `open_at`, and the index after its closing one."""
    depth = 0
    for index in range(open_at, len(text)):
        depth += {"(": 1, ")": -1}.get(text[index], 0)
        if depth == 0:
            return text[open_at + 1 : index], index + 1
    return text[open_at + 1 :], len(text)


def _read(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"{path}: no such file; pass a Prometheus rules file or a Grafana dashboard JSON") from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or "not text"
        raise UserError(f"{path}: cannot read it ({reason}); pass a rules file or a dashboard JSON") from None
    try:
        documents = [json.loads(text)] if path.suffix == ".json" else list(yaml.safe_load_all(text))
    except (ValueError, yaml.YAMLError) as exc:
        kind = "JSON" if path.suffix == ".json" else "YAML"
        raise UserError(f"{path}: not valid {kind} ({' '.join(str(exc).split())[:120]}); fix it") from None
    return documents


def _queries(documents: Any, path: Path) -> Iterator[tuple[str, str, dict | None]]:
    """(where, expression, the rule or None) for every alert, recording rule and dashboard target."""
    found = False
    for document in documents if isinstance(documents, list) else [documents]:
        if not isinstance(document, dict):
            continue
        groups = document.get("groups") or (document.get("spec") or {}).get("groups")
        if isinstance(groups, list):
            found = True
            yield from _rule_queries(groups)
        dashboard = document.get("dashboard", document)
        if isinstance(dashboard, dict) and isinstance(dashboard.get("panels"), list):
            found = True
            yield from _panel_queries(dashboard["panels"])
    if not found:
        raise UserError(
            f"{path}: not a Prometheus rules file (groups:), a PrometheusRule (spec.groups) or a Grafana "
            "dashboard (panels); pass one of those"
        )


def _rule_queries(groups: list) -> Iterator[tuple[str, str, dict | None]]:
    for group in groups:
        for rule in (group or {}).get("rules") or []:
            if isinstance(rule, dict) and isinstance(rule.get("expr"), str):
                name = rule.get("alert") or rule.get("record") or "?"
                yield f"{group.get('name', '?')}/{name}", rule["expr"], rule


def _panel_queries(panels: list) -> Iterator[tuple[str, str, dict | None]]:
    for panel in panels:
        if not isinstance(panel, dict):
            continue
        for target in panel.get("targets") or []:
            if isinstance(target, dict) and isinstance(target.get("expr"), str):
                yield f"panel {panel.get('title', '?')!r}", target["expr"], None
        yield from _panel_queries(panel.get("panels") or [])
