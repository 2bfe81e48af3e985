"""The human view of a `TriageResult`: what an on-call engineer reads in a terminal.

Ranked findings, each with its severity, title, evidence (value vs threshold, and where it
came from) and the `vllm serve` flag changes with their predicted effect; then the whole
proposed command, ready to paste. Plain text, no colour: it ends up in tickets.
"""

from __future__ import annotations

from advisor.triage.result import TriageResult
from rules.model import ConfigChange, Evidence, Finding

MAX_EVIDENCE = 4


def render_text(result: TriageResult) -> str:
    lines: list[str] = []
    sources = ", ".join(f"{source.kind} {source.location}".strip() for source in result.sources) or "none"
    lines.append(f"servops triage — based on: {sources}")
    figures = _key_figures(result)
    if figures:
        lines.append(f"now: {figures}")
    lines += [f"read from {s.location}: {s.note}" for s in result.sources if s.kind == "log" and s.note]
    if not result.findings:
        lines.append("")
        lines.append("No findings: nothing the collected facts support looks wrong.")
        if result.rules_skipped:
            shown = ", ".join(result.rules_skipped[:8]) + (" …" if len(result.rules_skipped) > 8 else "")
            lines.append(f"({len(result.rules_skipped)} rules skipped for lack of input: {shown})")
    for index, finding in enumerate(result.findings, start=1):
        lines.append("")
        lines.extend(_finding(index, finding))
    lines.extend(_replicas(result))
    if result.rejected_changes:
        lines.append("")
        lines.append("Rejected by the performance model (predicted not to help):")
        for item in result.rejected_changes:
            lines.append(
                f"  {item.rule}: {item.change.flag} {item.change.current or '(default)'} → "
                f"{item.change.proposed}: {item.reason}"
            )
            if item.command:
                lines.append(f"    reproduce: {item.command}")
    if result.proposed_command:
        lines.append("")
        lines.append("Current command:")
        lines.append(f"  {result.current_command}")
        lines.append("Proposed command:")
        lines.append(f"  {result.proposed_command}")
    for note in result.notes:
        lines.append(f"note: {note}")
    for error in result.rule_errors:
        lines.append(f"note: rule {error.rule} failed ({error.error}); other findings are unaffected")
    return "\n".join(lines) + "\n"


def _key_figures(result: TriageResult) -> str:
    """The handful of numbers on-call looks at first, from the window (else the snapshot)."""
    facts = result.facts
    if facts is None or (facts.window is None and facts.snapshot is None):
        return ""
    window = facts.window.total if facts.window is not None else None
    parts = []
    for label, name, spec in (
        ("running", "vllm:num_requests_running", ".0f"),
        ("waiting", "vllm:num_requests_waiting", ".0f"),
        ("KV usage", "vllm:kv_cache_usage_perc", ".2f"),
    ):
        value = facts.gauge(name)
        if value is not None:
            parts.append(f"{label} {format(value, spec)}")
    if window is not None:
        rate = window.rate("vllm:num_preemptions_total")
        if rate is not None:
            parts.append(f"preemptions {rate:.2f}/s")
        for label, name in (
            ("TTFT p99", "vllm:time_to_first_token_seconds"),
            ("ITL p99", "vllm:inter_token_latency_seconds"),
        ):
            value = window.quantile(name, "p99")
            if value is not None:
                parts.append(f"{label} {value:.3g} s")
        parts.append(f"over {facts.window.interval_s:g} s")
    elif facts.snapshot is not None:
        total = facts.snapshot.value("vllm:num_preemptions_total")
        if total is not None:
            parts.append(f"preemptions {total:.0f} since start")
    return ", ".join(parts)


def _replicas(result: TriageResult) -> list[str]:
    """One row per replica when Prometheus answered for several: where the trouble is."""
    window = result.facts.window if result.facts else None
    rows = [stats for stats in (window.per_instance if window else []) if _is_server(stats)]
    if window is None or len(rows) < 2:
        return []
    out = [
        "",
        f"Replicas ({window.interval_s:g} s window):",
        f"  {'instance':<28} {'running':>7} {'waiting':>7} {'KV use':>6} {'preempt/s':>9} {'TTFT p99':>9}",
    ]
    for stats in sorted(rows, key=lambda s: s.instance):
        ttft = stats.quantile("vllm:time_to_first_token_seconds", "p99")
        out.append(
            f"  {stats.instance[:28]:<28} {_cell(stats.gauge('vllm:num_requests_running'), 7, '.0f')} "
            f"{_cell(stats.gauge('vllm:num_requests_waiting'), 7, '.0f')} "
            f"{_cell(stats.gauge('vllm:kv_cache_usage_perc'), 6, '.2f')} "
            f"{_cell(stats.rate('vllm:num_preemptions_total'), 9, '.2f')} "
            f"{_cell(ttft, 8, '.2f')}{'s' if ttft is not None else ' '}"
        )
    return out


def _is_server(stats) -> bool:
    """A replica row, not the label-less leftovers (e.g. cache_config_info without `instance`)."""
    return any(stats.gauge(name) is not None for name in ("vllm:num_requests_running", "vllm:kv_cache_usage_perc"))


def _cell(value: float | None, width: int, spec: str) -> str:
    return f"{format(value, spec) if value is not None else '-':>{width}}"


def _finding(index: int, finding: Finding) -> list[str]:
    out = [f"{index}. [{finding.severity.value.upper()}] {finding.rule} {finding.title}"]
    if finding.summary:
        out.append(f"   {finding.summary}")
    for evidence in finding.evidence[:MAX_EVIDENCE]:
        out.append(f"   - {_evidence(evidence)}")
    if len(finding.evidence) > MAX_EVIDENCE:
        out.append(f"   - … {len(finding.evidence) - MAX_EVIDENCE} more in the JSON")
    for change in finding.changes:
        current = change.current if change.current is not None else "(default)"
        moved = (
            ("unset it" if change.kind == "env" else "remove it")
            if change.removes
            else f"{current} → {change.proposed}"
        )
        out.append(f"   change {change.flag}: {moved}  ({change.reason})")
        if change.cost:
            out.append(f"     cost: {change.cost} [{change.safety}]")
        out += _prediction(change)
    for change in finding.alternatives:
        out.append(f"   or {change.command_line()}  ({change.reason})")
        if change.cost:
            out.append(f"     cost: {change.cost} [{change.safety}]")
        out += _prediction(change) if change.predicted_effect and change.predicted_effect.figures else []
    for action in finding.actions:
        out.append(f"   action: {action}")
    for dropped in finding.superseded:
        out.append(f"   ({dropped.change.flag} {dropped.change.proposed} dropped: {dropped.note})")
    return out


def _prediction(change: ConfigChange) -> list[str]:
    """A change's predicted effect and the `servops predict` command that gives its figures again."""
    effect = change.predicted_effect
    lines = [f"     predicted: {effect.text}"] if effect and effect.text else []
    return lines + ([f"     reproduce: {effect.command}"] if effect and effect.command else [])


def _evidence(evidence: Evidence) -> str:
    text = evidence.description or evidence.name
    if evidence.value is not None:
        value = f"{evidence.value:.4g}" if isinstance(evidence.value, float) else str(evidence.value)
        text += f": {value}{(' ' + evidence.unit) if evidence.unit else ''}"
        if evidence.threshold is not None:
            text += f" {evidence.comparison or 'vs'} {evidence.threshold}"
    where = evidence.location or evidence.source
    return f"{text} [{where}]"
