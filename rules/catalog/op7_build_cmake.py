"""OP-7.130: building vLLM from source failed in CMake's configure step.

Why a rule of its own: pip builds vLLM from source when no wheel fits (`pip install -e .`, a git URL, a Python or
platform without a wheel), and vLLM's setup.py runs CMake on its CMakeLists.txt first. When CMake fails, setup.py
reports only its own call: `subprocess.CalledProcessError: Command '['cmake', '<source>', '-G', 'Ninja', …,
'-DVLLM_TARGET_DEVICE=cuda', …]' returned non-zero exit status 1.`, and CMake's reason is in the lines above it. For
the CUDA target that reason is most often the CUDA compiler: CMake finds no nvcc, or one of another release than
PyTorch's. In vllm#4011 a commenter's build went through once CUDACXX named the toolkit's nvcc (`CUDACXX=
/usr/local/cuda-12/bin/nvcc pip install -e .`). vLLM's CMakeLists.txt also asks for CMake 3.26 or later.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

CMAKE_FAILED = re.compile(
    r"Command '\['cmake', .*?'-DVLLM_TARGET_DEVICE=(?P<device>\w+)'.*?\]' returned non-zero exit status (?P<code>\d+)"
)


def _cmake_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    device = match["device"]
    compiler = (
        "CMake found no nvcc, or one of another CUDA release than PyTorch's: name the toolkit's (`CUDACXX=/usr/"
        "local/cuda-12/bin/nvcc CUDA_HOME=/usr/local/cuda-12 pip install -e .`, vllm#4011's fix), of the release "
        '`python -c "import torch; print(torch.version.cuda)"` prints.'
        if device == "cuda"
        else f"For the {device} target, CMake's lines above name the compiler, library or instruction set it lacks "
        "(vLLM's installation guide for that device lists what it needs)."
    )
    return RULE.finding(
        Severity.CRITICAL,
        f"building vLLM from source failed in CMake's configure step (target {device}): CMake's own error is in "
        "the lines above this one",
        summary="setup.py reports only that CMake exited non-zero; nothing was compiled yet, and the reason is "
        "what CMake printed before.",
        evidence=[c.log_evidence(event, name="CMake's exit status", value=match["code"])],
        actions=[
            compiler,
            "CMake itself must be 3.26 or later (`pip install -U cmake ninja`), with a C++ compiler on PATH.",
            "Or skip the build: `pip install vllm` takes the released wheel when one fits this Python and "
            "platform; pip builds from source only for a checkout, a git URL or an unsupported platform.",
        ],
        confidence=0.7,
    )


RULE = Rule(
    code="OP-7.130",
    title="vLLM's source build failed in CMake's configure step",
    category=Category.STARTUP,
    check=c.on_phrase(CMAKE_FAILED, _cmake_finding),
    needs=("events",),
    page=RulePage(
        checks="`CalledProcessError: Command '['cmake', …, '-DVLLM_TARGET_DEVICE=<device>', …]' returned non-zero "
        "exit status N`.",
        why="setup.py's CMake call failed before anything compiled; the cause is CMake's, printed above.",
        example="`pip install -e .` on a machine whose nvcc CMake could not find (vllm#4011: CUDACXX fixed it).",
        fix="CUDACXX/CUDA_HOME naming PyTorch's CUDA toolkit, CMake 3.26+, a C++ compiler; or the released wheel.",
        limits="The line alone does not say which of these failed; CMake's output does.",
        references=["https://github.com/vllm-project/vllm/issues/4011"],
    ),
)

RULES: list[Rule] = [RULE]
