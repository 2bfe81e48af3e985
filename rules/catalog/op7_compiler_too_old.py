"""OP-7.102: the C++ compiler does not know the CPU instructions vLLM's CPU build asks for.

Why a rule of its own: vLLM has no prebuilt wheels for its CPU backend on most hosts, so it is compiled there, and its
build (cmake/cpu_extension.cmake) asks the compiler for the instruction sets it finds on the CPU: AVX-512 and its
BF16 extension on x86, `-march=armv8.2-a+dotprod+fp16` on Arm. An older GCC fails with its own words: an intrinsic it
does not declare (`‘_mm512_cvtpbh_ps’ was not declared in this scope`, vLLM PR #1028, the AVX512-BF16 conversion) or a
feature modifier it does not know (`invalid feature modifier in ‘-march=armv8.2-a+dotprod+fp16’`, vllm#17906).
vLLM's CPU installation guide asks for gcc/g++ 12.3.0 or newer.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity


def _check_compiler(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.COMPILER_TOO_OLD)
    if not events:
        return []
    event = events[0]
    what = event.message or "an instruction set"
    asked = what.startswith("gcc/g++")  # the build's own version check, before any instruction is compiled
    return [
        RULE_COMPILER.finding(
            Severity.CRITICAL,
            f"the C++ compiler is too old for vLLM's CPU build, which asks for {what}"
            if asked
            else f"the C++ compiler is too old for vLLM's CPU build: it does not know {what}",
            summary="vLLM's CPU backend is compiled on the host for the instruction sets its CPU has (AVX-512 and "
            "AVX512-BF16 on x86, dot-product and FP16 extensions on Arm); "
            + (
                "its CMake script checks the compiler's version before compiling anything (cmake/cpu_extension.cmake), "
                "and this one is older."
                if asked
                else "a compiler that predates them refuses the intrinsic or the -march flag, and the build stops."
            ),
            evidence=[c.log_evidence(event, name="the compiler's refusal", value=what)],
            actions=[
                f"Build with {what.replace('gcc/g++ >= ', 'gcc/g++ ') if asked else 'gcc/g++ 12.3'} or newer, as "
                "vLLM's CPU installation guide asks (`gcc --version`; on Ubuntu "
                "22.04 check the gcc-12 it installs, as its first ones were 12.1, or install gcc-13 from the "
                "ubuntu-toolchain-r PPA, which fixed a contributor's build; then `update-alternatives`, or CC and CXX "
                "for the build); vLLM's CPU Docker image comes with one.",
                "In a conda environment, check which compiler the build picks: the environment's own `gcc` (from a "
                "conda package) can be older than the system's.",
            ],
            confidence=0.8,
        )
    ]


RULE_COMPILER = Rule(
    code="OP-7.102",
    title="the C++ compiler is too old for vLLM's CPU build",
    category=Category.CONFIGURATION,
    check=_check_compiler,
    needs=("events",),
    page=RulePage(
        checks="GCC's `error: ‘_mm…’ was not declared in this scope`, `error: invalid feature modifier in "
        "‘-march=…’`, `error: unrecognized command-line option ‘-mavx…’`; the build's own `X86 backend requires "
        "gcc/g++ >= 12.3`.",
        why="vLLM's CPU build asks the compiler for the host CPU's instruction sets, which older compilers lack.",
        example="`cc1plus: error: invalid feature modifier in ‘-march=armv8.2-a+dotprod+fp16’` building the CPU "
        "backend on aarch64 (vllm#17906).",
        fix="gcc/g++ 12.3 or newer for the build (vLLM's CPU installation guide).",
        limits="Read from the compiler's words: the same words from another package's build mean that package's "
        "compiler needs.",
        references=[
            "https://docs.vllm.ai/en/v0.12.0/getting_started/installation/cpu/",
            "https://github.com/vllm-project/vllm/issues/17906",
            "https://dev.to/daniel_lm_bf221f14807a4fd/inside-vllms-cpu-backend-a-new-contributors-notes-4kin",
        ],
    ),
)

RULES: list[Rule] = [RULE_COMPILER]
