"""OP-7.27: a package read the GPU toolkit's directory (ROCM_HOME, CUDA_HOME) and found none.

Why a rule of its own: PyTorch's extension loader finds the toolkit once, at import (torch/utils/cpp_extension.py,
torch 2.13): ROCm's from ROCM_HOME or ROCM_PATH, else TheRock's `_rocm_sdk_core`, else `hipcc` on the PATH, else
/opt/rocm; CUDA's from CUDA_HOME or CUDA_PATH, else `nvcc` on the PATH, else /usr/local/cuda. When none is there
the name holds None, and a kernel package that builds a path or reads a version from it fails in Python's words
(`AttributeError: 'NoneType' object has no attribute 'split'`), naming neither the variable nor the toolkit. The
traceback's source lines show the call that passed it. Hygon's DCU toolkit (DTK) is a ROCm: its 26.04 release
moved the toolkit under /opt/dtk/.hyhal, so a runner image given the old ROCM_PATH found nothing (gpustack/
gpustack#5305, the workaround in #5334: ROCM_PATH=/opt/dtk/.hyhal).
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

# The toolkit each name stands for, the variable to set, and the program in the directory it must name.
TOOLKITS: dict[str, tuple[str, str, str, str]] = {
    "ROCM_HOME": ("ROCm (AMD; Hygon's DTK)", "ROCM_PATH", "bin/hipcc", "ROCM_HOME or ROCM_PATH"),
    "CUDA_HOME": ("CUDA", "CUDA_HOME", "bin/nvcc", "CUDA_HOME or CUDA_PATH"),
}
_NAMED = re.compile(r"\b(" + "|".join(TOOLKITS) + r")\b")


def _check_toolkit_home(facts: Facts) -> list[Finding]:
    for event in facts.events_of(LogEventKind.UNPLACED_ERROR):
        if "NoneType" not in (event.message or ""):
            continue
        passing = next((call for call in reversed(event.calls) if _NAMED.search(call)), None)
        if passing is not None:
            return [_toolkit_finding(event, passing, _NAMED.search(passing)[1])]
    return []


def _toolkit_finding(event: LogEvent, call: str, name: str) -> Finding:
    toolkit, variable, program, read_from = TOOLKITS[name]
    package = c.installed_package(event.code_file) or "a package"
    evidence = c.log_evidence(event, name="root_exception", value=event.message)
    evidence.description = f"raised after `{call.strip()}`: {name} was None"
    return RULE_TOOLKIT_HOME.finding(
        Severity.CRITICAL,
        f"{name} is None: {package} looked for the {toolkit} toolkit's directory and none was found "
        f"(`{call.strip()[:100]}`)",
        summary=f"{event.message}, raised where {package} used {name}. PyTorch's extension loader finds {name} at "
        f"import from {read_from}, else the toolkit's compiler on the PATH, else its default directory; None means "
        "none of them named an installed toolkit, so the process (the container) has none, or not where it looks.",
        evidence=[evidence],
        changes=[
            ConfigChange(
                flag=variable,
                proposed=f"<the {toolkit} toolkit's directory in the server's environment: the one holding {program}>",
                reason=f"PyTorch's {name} is read from it, so the package that needs the toolkit finds it",
                kind="env",
            )
        ],
        actions=[
            f"Check the toolkit inside the container: `ls <dir>/{program}` for the directory {variable} names. A "
            "platform that passes the host's variables into its runner (GPUStack's mirrored deployment) passes the "
            "host's path too; a toolkit release that moved its files (Hygon DTK 26.04: /opt/dtk/.hyhal) needs the "
            "new one, or an image built for that toolkit.",
        ],
        confidence=0.8,
    )


RULE_TOOLKIT_HOME = Rule(
    code="OP-7.27",
    title="a package found no GPU toolkit directory (ROCM_HOME or CUDA_HOME is None)",
    category=Category.STARTUP,
    check=_check_toolkit_home,
    needs=("events",),
    page=RulePage(
        checks="An error about `NoneType` whose traceback's source lines pass ROCM_HOME or CUDA_HOME (`dtk_version = "
        "get_dtk_version(ROCM_HOME)`).",
        why="PyTorch finds the toolkit once at import; None there means no variable, no compiler on the PATH and no "
        "default directory named one, and the kernel package using it fails in Python's words.",
        example="`lightop/__init__.py`: `get_dtk_version(ROCM_HOME)` -> `AttributeError: 'NoneType' object has no "
        "attribute 'split'` on a Hygon DCU with DTK 26.04 (gpustack/gpustack#5305; ROCM_PATH=/opt/dtk/.hyhal).",
        fix="ROCM_PATH (ROCm, DTK) or CUDA_HOME at the toolkit's directory in the server's environment, or an image "
        "that has the toolkit.",
        limits="Needs the source line that passed the name; which directory is right is the host's.",
        references=["https://github.com/gpustack/gpustack/issues/5305"],
    ),
)

RULES: list[Rule] = [RULE_TOOLKIT_HOME]
