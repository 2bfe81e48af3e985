"""OP-7.130: building vLLM from source failed in CMake's configure step; OP-7.145: in its compile step.

Why a rule of its own: pip builds vLLM from source when no wheel fits (`pip install -e .`, a git URL, a Python or
platform without a wheel), and vLLM's setup.py runs CMake on its CMakeLists.txt first. When CMake fails, setup.py
reports only its own call: `subprocess.CalledProcessError: Command '['cmake', '<source>', '-G', 'Ninja', …,
'-DVLLM_TARGET_DEVICE=cuda', …]' returned non-zero exit status 1.`, and CMake's reason is in the lines above it. For
the CUDA target that reason is most often the CUDA compiler: CMake finds no nvcc, or one of another release than
PyTorch's. In vllm#4011 a commenter's build went through once CUDACXX named the toolkit's nvcc (`CUDACXX=
/usr/local/cuda-12/bin/nvcc pip install -e .`). vLLM's CMakeLists.txt also asks for CMake 3.26 or later.

OP-7.145: once configured, setup.py runs `cmake --build . -j=<jobs> --target=_C --target=_moe_C …`, and a failure there
is a compiler's: its first `error:` line above, or none at all when the kernel killed a compiler for memory. vLLM's
setup.py runs as many jobs as MAX_JOBS says (else one per CPU), and each nvcc job on its CUDA kernels can take several
GB, so a build with dozens of jobs (vllm#41373: 72 on a GH200 node) runs out of host memory; vLLM's installation
guide says to set MAX_JOBS to keep the machine from being overloaded.
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

CMAKE_BUILD_FAILED = re.compile(r"Command '\['cmake', '--build', '\.', '-j=?(?P<jobs>\d+)'(?P<targets>.*)")


def _compile_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    jobs = int(match["jobs"])
    targets = re.findall(r"--target=(\w+)", match["targets"])
    return RULE_BUILD.finding(
        Severity.CRITICAL,
        f"building vLLM from source failed compiling its kernels ({jobs} parallel jobs"
        + (f"; targets {', '.join(targets[:4])}" if targets else "")
        + "): a compiler's error, or the host's memory, is in the lines above",
        summary="CMake configured the build and a compiler then failed: setup.py reports only its `cmake --build` "
        "call. With no compiler error above it (or `Killed signal terminated program cc1plus`), the kernel killed "
        "a compiler for memory: every nvcc job on vLLM's CUDA kernels can take several GB.",
        evidence=[c.log_evidence(event, name="parallel compile jobs", value=jobs)],
        actions=[
            "Find the first `error:` above the call: that file and message are the cause (a missing header is "
            "OP-7.147's, a CUDA release the code does not support is the toolkit's).",
            f"No error, or a killed compiler: build with fewer jobs, `MAX_JOBS={max(1, min(8, jobs // 4))} pip install "
            "-e . --no-build-isolation` (vLLM's installation guide sets MAX_JOBS for this), and watch `free -g`.",
            "Or skip the build: the released wheel (`pip install vllm`) or image when one fits the platform.",
        ],
        confidence=0.6,
    )


RULE_BUILD = Rule(
    code="OP-7.145",
    title="vLLM's source build failed compiling (cmake --build)",
    category=Category.STARTUP,
    check=c.on_phrase(CMAKE_BUILD_FAILED, _compile_finding),
    needs=("events",),
    page=RulePage(
        checks="`CalledProcessError: Command '['cmake', '--build', '.', '-j=N', '--target=…', …]'`.",
        why="The compile step's failure is a compiler's error or the host out of memory; setup.py names neither.",
        example="`cmake --build . -j=72 --target=_moe_C …` failing on a GH200 node (vllm#41373).",
        fix="The first compiler error above; else MAX_JOBS lower; or a released wheel.",
        limits="The line alone cannot tell a compiler error from a killed compiler; the lines above can.",
        references=["https://github.com/vllm-project/vllm/issues/41373"],
    ),
)

RULES: list[Rule] = [RULE, RULE_BUILD]
