"""OP-7.132: a source build whose PyTorch sees no CUDA runtime, on Linux.

Why a rule of its own: PyTorch's extension builder (torch/utils/cpp_extension.py) prints `No CUDA runtime is found,
using CUDA_HOME='/usr/local/cuda-11.8'` when it found a toolkit but `torch.cuda.is_available()` is false in the
process that builds. Two things make it so: a CPU-only torch (its `torch.version.cuda` is None), or no GPU visible
where the build runs (a `docker build`, a login node without GPUs, a driver that is not loaded). The first cannot
build vLLM's CUDA kernels at all; the second can, once it is told which GPUs to compile for, since it cannot ask the
device. vllm#341 (vLLM 0.1, a source install failing in build_ext) printed this line before its traceback. The same
line with a Windows path is OP-7.62's: vLLM on native Windows.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity


def _check_no_cuda_runtime(facts: Facts) -> list[Finding]:
    seen = facts.events_of(LogEventKind.BUILD_NO_CUDA_RUNTIME)
    if not seen:
        return []
    event = seen[0]
    return [
        RULE.finding(
            Severity.HIGH,
            f"the build's PyTorch sees no CUDA runtime (the toolkit at {event.message} was found): a CPU-only torch, "
            "or a build where no GPU is visible",
            summary="PyTorch's extension builder says so when torch.cuda.is_available() is false in the building "
            "process: a CPU-only torch cannot build vLLM's CUDA kernels; a build without a visible GPU can, once "
            "told which GPUs to compile for.",
            evidence=[c.log_evidence(event, name="CUDA_HOME the builder fell back to", value=event.message)],
            actions=[
                '`python -c "import torch; print(torch.version.cuda, torch.cuda.is_available())"` in the same '
                "environment: None first means a CPU-only torch; install the CUDA build vLLM pins (its release's "
                "requirements) before building.",
                "A CUDA torch that sees no GPU (a docker build, a login node): set TORCH_CUDA_ARCH_LIST to the compute "
                'capabilities to build for (`TORCH_CUDA_ARCH_LIST="8.0 9.0"`), or build where the GPUs and driver '
                "are visible.",
                "Or skip the build: `pip install vllm` takes the released wheel, which needs no toolkit.",
            ],
            confidence=0.75,
        )
    ]


RULE = Rule(
    code="OP-7.132",
    title="a source build whose PyTorch sees no CUDA runtime",
    category=Category.STARTUP,
    check=_check_no_cuda_runtime,
    needs=("events",),
    page=RulePage(
        checks="PyTorch's `No CUDA runtime is found, using CUDA_HOME='/…'` (a Linux path; a Windows one is OP-7.62's).",
        why="torch.cuda.is_available() was false in the building process: a CPU-only torch, or no visible GPU.",
        example="A source install of vLLM 0.1 failing in build_ext after this line (vllm#341).",
        fix="A CUDA build of torch; TORCH_CUDA_ARCH_LIST where no GPU is visible; or the released wheel.",
        limits="Which of the two it is takes torch.version.cuda, which the line does not hold.",
        references=["https://github.com/vllm-project/vllm/issues/341"],
    ),
)

RULES: list[Rule] = [RULE]
