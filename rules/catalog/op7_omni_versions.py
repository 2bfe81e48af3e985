"""OP-7.216: vLLM-Omni warns that it and vLLM are different major/minor releases.

Why a rule of its own: vLLM-Omni (vllm_omni) patches vLLM's classes when it is imported, so each of its releases
runs on the vLLM release of the same major/minor version only; against another one its patches import names that
moved, and the import or the engine fails further on with words that say nothing about versions. From its 0.19
development builds it checks the pairing itself and says so as a RuntimeWarning from vllm_omni/version.py (vLLM-Omni
PR #2691, whose author calls mismatched versions "a very common source of errors"); the lines after it name both
versions.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

# What a mismatch leads to: vLLM-Omni's patches reaching for a name that moved, as Python says it. Such an error after
# the warning is most likely its consequence, so the warning names its cause; any other error is read on its own.
_PATCH_FAILURES = frozenset({"ImportError", "ModuleNotFoundError", "AttributeError", "TypeError"})


def _patch_failed(facts: Facts) -> bool:
    kinds = (LogEventKind.UNPLACED_ERROR, LogEventKind.WORKER_EXCEPTION, LogEventKind.FATAL_ERROR)
    return any(e.exception in _PATCH_FAILURES for e in facts.events_of(*kinds))


def _mismatch_finding(facts: Facts, event: LogEvent, _found: re.Match[str]) -> Finding:
    plugin = event.message or "vLLM-Omni"
    failed = _patch_failed(facts)
    return RULE.finding(
        Severity.CRITICAL if failed else Severity.HIGH,
        f"{plugin} and vLLM are different major/minor releases: its patches of vLLM expect the vLLM of its own release",
        summary=f"{plugin} patches vLLM's classes when it is imported, so each release of it runs on the vLLM "
        "release with the same major/minor version; with another one the patches reach for names that moved, and "
        "the import or the engine fails later in words that do not mention versions (vLLM-Omni PR #2691).",
        evidence=[c.log_evidence(event, name="mismatched releases", value=plugin)],
        actions=[
            f"Install the vLLM release {plugin} was built for (the lines after the warning name both versions: the "
            f"same major.minor on both sides), or the {plugin} release made for the installed vLLM; in a container, "
            "use the image that ships the pair.",
            "An import, attribute or signature error after the warning is most likely this mismatch's consequence: "
            "fix the pairing first.",
        ],
        # above a later import error's reading (the warning names the cause that error only implies), and below any
        # rule that names another cause
        confidence=0.92 if failed else 0.6,
    )


RULE = Rule(
    code="OP-7.216",
    title="vLLM-Omni and vLLM of different major/minor releases",
    category=Category.STARTUP,
    check=c.on_kind(LogEventKind.PLUGIN_VERSION_MISMATCH, _mismatch_finding),
    needs=("events",),
    page=RulePage(
        checks="vLLM-Omni's `RuntimeWarning: vLLM and vLLM-Omni appear to have mismatched major/minor versions:`.",
        why="vLLM-Omni patches vLLM at import; each of its releases is written against one vLLM major/minor release.",
        example="`/…/vllm_omni/version.py:55: RuntimeWarning: vLLM and vLLM-Omni appear to have mismatched "
        "major/minor versions:` with vLLM-Omni 0.19.0rc2 over vLLM 0.18.0 (vLLM-Omni PR #2691).",
        fix="Install the vLLM and vLLM-Omni releases of the same major/minor version.",
        limits="Reads the warning only; a mismatch from before vLLM-Omni checked it (before its 0.19 builds) shows "
        "as the errors it causes.",
        references=["https://github.com/vllm-project/vllm-omni/pull/2691"],
    ),
)

RULES: list[Rule] = [RULE]
