"""OP-7.137: uvloop, the event loop vLLM's server and CLI run on, is missing: a Windows host or an install without
its dependencies.

Why a rule of its own: vLLM imports uvloop directly (vllm/v1/utils.py and its API server's entry point, read in the
0.32 wheel), but does not list it among its own requirements: it arrives through `fastapi[standard]`, whose
`uvicorn[standard]` installs uvloop on every platform but Windows (uvicorn's requirement marker skips it, and
uvloop publishes no Windows build). So `No module named 'uvloop'` says the install is not the one vLLM's
requirements make: a Windows Python (both reports in the vllm-windows fork's tracker, SystemPanic/vllm-windows#45
and #65, where a new import of uvloop broke even `vllm --version` until the fork avoided it), or a Linux install made
without dependencies (`pip install --no-deps`, a hand-assembled image). The line alone does not say which, so the
finding names both; a Windows path in the same paste is OP-7.62's.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import MISSING_MODULE, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity


def _check_uvloop(facts: Facts) -> list[Finding]:
    event = next(
        (
            e
            for e in facts.events_of(LogEventKind.UNPLACED_ERROR)
            if (found := MISSING_MODULE.search(e.message or "")) and found["module"].split(".")[0] == "uvloop"
        ),
        None,
    )
    if event is None:
        return []
    return [
        RULE.finding(
            Severity.CRITICAL,
            "uvloop, which vLLM imports, is missing: vLLM's requirements install it on Linux and macOS but never on "
            "Windows, so this is a Windows host or an install made without dependencies",
            summary="vLLM imports uvloop for its server's event loop; it comes with fastapi[standard] → "
            "uvicorn[standard], whose marker skips uvloop on Windows, where it has no build. vLLM supports Linux "
            "only; on a Linux host a missing uvloop means vLLM's dependencies were not installed.",
            evidence=[c.log_evidence(event, name="missing module", value="uvloop")],
            actions=[
                "On Windows: run vLLM under WSL 2 or in its Linux container image; a native Windows fork "
                "(vllm-windows) must avoid the import itself, so report it to the fork with its release "
                "(SystemPanic/vllm-windows#45 was fixed there).",
                "On Linux or macOS: install vLLM with its dependencies (`pip install vllm`, not `--no-deps`), or "
                "`pip install uvloop` into the server's environment, and check the rest with `pip check`.",
            ],
            confidence=0.8,
        )
    ]


RULE = Rule(
    code="OP-7.137",
    title="uvloop missing: a Windows host or vLLM installed without its dependencies",
    category=Category.STARTUP,
    check=_check_uvloop,
    needs=("events",),
    page=RulePage(
        checks="Python's `No module named 'uvloop'`.",
        why="vLLM imports uvloop, which its requirements install (through fastapi[standard] and uvicorn[standard]) "
        "everywhere but Windows; without it nothing of vLLM's server starts.",
        example="`ModuleNotFoundError: No module named 'uvloop'` from `vllm --version` on the vllm-windows fork "
        "(SystemPanic/vllm-windows#45, #65).",
        fix="WSL 2 or vLLM's container on Windows; on Linux, vLLM installed with its dependencies.",
        limits="The line does not say which host; a Windows path in the same paste makes it OP-7.62's.",
        references=[
            "https://github.com/SystemPanic/vllm-windows/issues/45",
            "https://github.com/SystemPanic/vllm-windows/issues/65",
        ],
    ),
)

RULES: list[Rule] = [RULE]
