"""OP-7.186: Triton may not run the ptxas it ships: the file lost its execute permission.

Why a rule of its own: Triton compiles vLLM's kernels (at start, in CUDA graph capture, at the first request of a new
shape) through the ptxas binary its wheel bundles under triton/backends/nvidia/bin/. Where that file is not
executable, the compile stops with Python's `PermissionError: [Errno 13] Permission denied: '…/triton/backends/nvidia/
bin/ptxas'`: a virtual environment copied or mounted without its modes, or a volume mounted noexec. Triton reads
TRITON_PTXAS_PATH to use another ptxas, which is the workaround haydeniw/dynamo#15 used for it (set in one deployment's
environment, it failed again where the variable was not passed to the generated worker pods).
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

PTXAS_DENIED = re.compile(
    r"Permission denied: '(?P<path>[^']*/triton/backends/nvidia/bin/(?P<tool>ptxas|cuobjdump|nvdisasm))'"
)


def _ptxas_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    path, tool = match["path"], match["tool"]
    return RULE_PTXAS_PERMISSION.finding(
        Severity.CRITICAL,
        f"Triton may not run the {tool} it ships ({path}): the file is not executable here",
        summary=f"Triton compiles vLLM's kernels with the {tool} its wheel bundles; the process may not execute that "
        "file, so every kernel compile fails (at start, in CUDA graph capture, or at a request's first new shape). "
        "The environment was copied or mounted without its file modes, or from a volume mounted noexec.",
        evidence=[c.log_evidence(event, name=f"Triton's {tool}", value=path)],
        changes=[
            ConfigChange(
                flag="TRITON_PTXAS_PATH",
                current=None,
                proposed="/usr/local/cuda/bin/ptxas",
                reason="Triton then runs the CUDA toolkit's ptxas instead of its own (haydeniw/dynamo#15's "
                "workaround); set it in every process that compiles, workers included",
                kind="env",
            )
        ]
        if tool == "ptxas"
        else [],
        actions=[
            f"Or give the file back its execute bit (`chmod +x {path}`) in the image, or mount the environment "
            "without noexec; `ls -l` shows the mode.",
            "In Kubernetes, set the variable on the pods that run vLLM's workers, not only on the one that launched "
            "them (haydeniw/dynamo#15: it was not passed to the generated worker pods).",
        ],
        confidence=0.8,
    )


RULE_PTXAS_PERMISSION = Rule(
    code="OP-7.186",
    title="Triton may not run the ptxas it ships",
    category=Category.STARTUP,
    check=c.on_phrase(PTXAS_DENIED, _ptxas_finding),
    needs=("events",),
    page=RulePage(
        checks="`PermissionError: [Errno 13] Permission denied: '…/triton/backends/nvidia/bin/ptxas'` (or its "
        "cuobjdump and nvdisasm).",
        why="Every Triton kernel compile fails, in Python's words about a file, not in Triton's or vLLM's.",
        example="`PermissionError: [Errno 13] Permission denied: '/opt/dynamo/venv/lib/python3.12/site-packages/"
        "triton/backends/nvidia/bin/ptxas'` in a Dynamo worker pod during CUDA graph capture (haydeniw/dynamo#15).",
        fix="TRITON_PTXAS_PATH at the CUDA toolkit's ptxas in every process that compiles, or the file made "
        "executable.",
        limits="Proposes the toolkit's usual path; where no toolkit is installed, only the file's mode can be fixed.",
        references=["https://github.com/haydeniw/dynamo/issues/15"],
    ),
)

RULES: list[Rule] = [RULE_PTXAS_PERMISSION]
