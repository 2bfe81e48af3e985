"""OP-7.29: a package one of vLLM's extras installs is missing: the feature that imports it fails at first use.

Why a rule of its own: vLLM keeps the libraries of some features out of its own requirements and lists them under
extras of its package (`pip install 'vllm[video]'` installed decord, `vllm[audio]` librosa and soundfile, in the
releases whose METADATA says so). It imports them lazily (a placeholder module whose first attribute access
imports the real one), so the server starts without them and the first request that needs one fails:
`ModuleNotFoundError: No module named 'decord'` inside an HTTP 500 for a video request (QwenLM/Qwen3-VL#806). Python's
words, no vLLM message; the catalog's `extras` table (every release's METADATA, scripts/extract_vllm_messages.py)
says which extra installs the package and in which releases.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import MISSING_MODULE, LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity


def _check_missing_extra(facts: Facts) -> list[Finding]:
    event = next((e for e in facts.events_of(LogEventKind.UNPLACED_ERROR) if e.vllm_extra), None)
    return [_finding(event)] if event is not None else []


def _finding(event: LogEvent) -> Finding:
    named = MISSING_MODULE.search(event.message or "")
    package = named["module"] if named else "the package"
    extra, releases = event.vllm_extra, event.extra_releases or "some releases"
    evidence = c.log_evidence(event, name="missing module", value=package)
    evidence.description = f"Python could not import {package}, which vLLM's {extra} extra installs"
    return RULE_MISSING_EXTRA.finding(
        Severity.HIGH if event.phase == "serving" else Severity.CRITICAL,
        f"{package} is not installed: vLLM imports it only for the feature that needs it (its {extra} extra "
        "installs it)",
        summary=f"vLLM {releases} list {package} under the {extra} extra of its package, not among its requirements, "
        "and import it when a request or a setting first uses that feature: the server started without it and fails "
        "there.",
        evidence=[evidence],
        actions=[
            f"Install it in the server's environment (its image): `pip install 'vllm[{extra}]'` (vLLM {releases} "
            f"install {package} with that extra), or `pip install {package}`; then restart the server.",
            f"Or stop sending the input that needs it (the {extra} part of the requests) until it is installed.",
        ],
        confidence=0.85,
    )


RULE_MISSING_EXTRA = Rule(
    code="OP-7.29",
    title="a package one of vLLM's extras installs is missing",
    category=Category.STARTUP,
    check=_check_missing_extra,
    needs=("events",),
    page=RulePage(
        checks="Python's `No module named 'X'` where X is a package one of vLLM's extras installs in some release "
        "(the catalog's `extras` table, read from every release's METADATA).",
        why="vLLM imports the libraries of its optional features lazily; without them the server starts, and the "
        "first request or setting that uses the feature fails.",
        example="`ModuleNotFoundError: No module named 'decord'` in a video request's HTTP 500 (QwenLM/Qwen3-VL#806; "
        "vLLM 0.7's video extra installs decord).",
        fix="`pip install 'vllm[<extra>]'` (or the package itself) in the server's environment, then restart.",
        limits="Knows the packages of vLLM's extras only; another missing package is VC-2's.",
        references=["https://github.com/QwenLM/Qwen3-VL/issues/806"],
    ),
)

RULES: list[Rule] = [RULE_MISSING_EXTRA]
