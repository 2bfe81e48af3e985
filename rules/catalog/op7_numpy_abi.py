"""OP-7.171: NumPy 2 imported a compiled module built against NumPy 1.

Why a rule of its own: NumPy 2.0 (June 2024) changed its C ABI, so an extension compiled against NumPy 1.x cannot run
under 2.x, and NumPy says so before anything else fails: `A module that was compiled using NumPy 1.x cannot be run in
NumPy 2.0.0 as it may crash.` Which module is in the lines after it (the traceback of its import), not in vLLM: vLLM
imports torch, opencv and others that each carry compiled code. vLLM's own requirements, read from its wheels'
METADATA on PyPI (2026-12-06): 0.5.1 to 0.8.2 require `numpy<2.0.0`; 0.4 to 0.5.0 and 0.8.3 on take any NumPy. So on
0.5.1 to 0.8.2 a NumPy 2 was brought by another package or an install with `--no-deps`; on 0.5.0 (vllm#5594, the week
NumPy 2.0 came out) nothing held it back; on later releases another package's binaries are the old ones (vllm#34041:
vLLM 0.15.0 with packages that still require numpy<2 beside opencv's, which wants 2).
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity


def _numpy_abi_finding(facts: Facts, event: LogEvent, match: object) -> Finding:
    numpy = f"NumPy {event.message}" if event.message else "NumPy 2"
    return RULE.finding(
        Severity.CRITICAL,
        f"a compiled module built against NumPy 1.x was imported under {numpy}: its binary cannot run there",
        summary="NumPy 2 changed its C interface, so extensions compiled against NumPy 1 must be rebuilt for it; NumPy "
        "refuses them on import. The module is named in the traceback after this line. vLLM 0.5.1 to 0.8.2 require "
        "numpy<2 (read from their wheels' metadata): there, another package or a `--no-deps` install brought NumPy 2.",
        evidence=[c.log_evidence(event, name="NumPy the module was not built for", value=numpy)],
        actions=[
            "`pip install 'numpy<2'` in the server's environment, the quickest way back (NumPy's own advice), unless "
            "another package there requires NumPy 2 (`pip check` lists the conflicts).",
            "Or upgrade the module the traceback names to a release built for NumPy 2 (and vLLM to 0.8.3 or later, "
            "whose requirements allow NumPy 2), so the environment can keep NumPy 2.",
        ],
        confidence=0.85,
    )


RULE = Rule(
    code="OP-7.171",
    title="a compiled module built for NumPy 1 imported under NumPy 2",
    category=Category.STARTUP,
    check=c.on_kind(LogEventKind.NUMPY_ABI_MISMATCH, _numpy_abi_finding),
    needs=("events",),
    page=RulePage(
        checks="NumPy's `A module that was compiled using NumPy 1.x cannot be run in NumPy 2.x.y as it may crash.`",
        why="NumPy 2's C ABI differs from NumPy 1's; a binary built for 1.x fails on import, whatever vLLM's flags.",
        example="`A module that was compiled using NumPy 1.x cannot be run in` importing vLLM 0.5.0 the week NumPy 2.0 "
        "came out (vllm#5594).",
        fix="`pip install 'numpy<2'`, or the module (and vLLM) at releases built for NumPy 2.",
        limits="The module is named after this line; without it, the finding cannot say which package to upgrade.",
        references=[
            "https://github.com/vllm-project/vllm/issues/5594",
            "https://github.com/vllm-project/vllm/issues/34041",
        ],
    ),
)

RULES: list[Rule] = [RULE]
