"""OP-7.156: oneCCL's library could not be loaded, so vLLM's XPU workers have no collectives.

Why a rule of its own: on Intel GPUs oneCCL's library (`libccl.so.1`) is loaded when vLLM's worker builds its
communicator, and a process that cannot find the library stops with `oneCCL could not be initialized!
Could not load any plugin.` and `Cannot open plugin library: libccl.so.1: cannot open shared object file`. oneAPI's
libraries are found through LD_LIBRARY_PATH, which oneAPI's `setvars.sh` sets; an image that sourced it only in a
build step runs without it (vllm#54766: libccl.so.1 was in /opt/venv/lib, LD_LIBRARY_PATH empty at run time; the
commenter set LD_LIBRARY_PATH=/opt/venv/lib and TP=2 ran). OP-7.103 and OP-7.66 are oneCCL loaded but failing to
start its worker thread or to open the GPUs.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity


def _library_finding(facts: Facts, event: LogEvent, found: re.Match[str]) -> Finding:
    return RULE.finding(
        Severity.CRITICAL,
        "oneCCL's library (libccl.so.1) could not be loaded: the process's library path does not reach oneAPI's "
        "libraries",
        summary="Tensor parallelism on Intel GPUs runs its collectives through oneCCL, loaded when the worker "
        "builds its communicator. The dynamic loader found no libccl.so.1 on the process's library path: "
        "oneAPI's libraries are found through LD_LIBRARY_PATH, which `setvars.sh` sets, and a container that "
        "sourced it only while it was built starts without it.",
        evidence=[c.log_evidence(event, name="oneCCL not loaded", value=found.group(0))],
        changes=[
            ConfigChange(
                flag="LD_LIBRARY_PATH",
                current=None,
                proposed="<the directory holding libccl.so.1>:$LD_LIBRARY_PATH",
                reason="the dynamic loader looks there for oneCCL's library and its plugins",
                kind="env",
            )
        ],
        actions=[
            "Find the library: `find / -name 'libccl.so*' 2>/dev/null` (a pip-installed oneCCL puts it in the "
            "environment's lib directory, oneAPI's installer under /opt/intel/oneapi/ccl/latest/lib); set "
            "LD_LIBRARY_PATH to that directory in the container's environment, or source oneAPI's setvars.sh in the "
            "entrypoint that starts vLLM rather than only in a build step.",
        ],
        confidence=0.85,
    )


RULE = Rule(
    code="OP-7.156",
    title="oneCCL's library could not be loaded",
    category=Category.STARTUP,
    check=c.on_kind(LogEventKind.ONECCL_LIBRARY_MISSING, _library_finding),
    needs=("events",),
    page=RulePage(
        checks="`oneCCL could not be initialized! Could not load any plugin.` and `Cannot open plugin library: "
        "libccl.so.1: cannot open shared object file`.",
        why="oneAPI's libraries are found through LD_LIBRARY_PATH, which setvars.sh sets; without it the XPU "
        "workers cannot build their collectives.",
        example="vllm#54766: an image that sourced setvars.sh only in its build step; LD_LIBRARY_PATH=/opt/venv/lib "
        "fixed it.",
        fix="LD_LIBRARY_PATH naming the directory of libccl.so.1 where vLLM runs, or setvars.sh sourced at start.",
        limits="The words do not say where the library is installed.",
        references=["https://github.com/vllm-project/vllm/issues/54766"],
    ),
)

RULES: list[Rule] = [RULE]
