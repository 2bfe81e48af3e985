"""OP-7.173: an assertion inside DeepGEMM's kernels, which vLLM runs for FP8 GEMMs, MoE and sparse-attention indexers.

Why a rule of its own: DeepGEMM (deepseek-ai/DeepGEMM) checks its inputs in C++ and raises `RuntimeError: Assertion
error (<its source file>:<line>): <condition>`; vLLM builds it in (the `.deps/deepgemm-src` path of vLLM's images)
and calls it for block-scaled FP8 linear layers and MoE and for DeepSeek-V3.2-style sparse-attention indexers,
whenever VLLM_USE_DEEP_GEMM is on (vllm/envs.py: on by default). The words name DeepGEMM's file, not the cause, and
the cause threads confirm is nearly always the GPU: DeepGEMM is written for Hopper (SM90) and datacenter Blackwell
(SM100), and an RTX PRO 6000 or another SM120 part meets `Unknown recipe` or `Unsupported architecture` during warm-up
(vllm#47169: Qwen3.6-27B-FP8 on vLLM 0.24.0, VLLM_USE_DEEP_GEMM=0 avoided it; deepseek-ai/DeepGEMM PR #324, a
comment: vLLM main routed SM120 FP8 through a DeepGEMM revision without SM120 support). On Hopper or SM100 the same
words are a shape or layout DeepGEMM did not expect (vllm#40987: DeepSeek-V4 with MTP and expert parallelism), a bug
to report, and the same switch is the way around it where the model has another kernel. Its JIT's own checks (its
csrc/jit/ folder: `compiler.hpp`, then `NVCC version should be >= 12.3` or `NVCC compilation failed`) are the toolkit
it compiles with, not the GPU: NVCC 12.1 on an RTX 5090 (vllm PR #49051), a DeepGEMM installed wrongly (vllm#24547).
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, ConfigChange, Evidence, Finding, Rule, RulePage, Severity

DEEP_GEMM_ENV = "VLLM_USE_DEEP_GEMM"
# DeepGEMM's files by their path: a folder named for it (vLLM's `.deps/deepgemm-src`), or its own source tree's
# relative paths as a wheel built from it prints them (`csrc/apis/../jit_kernels/impls/../../jit/compiler.hpp`,
# `.../jit/compiler.hpp`); another project's absolute path with a csrc/jit of its own (DeepEP's) is not DeepGEMM's
DEEPGEMM_ASSERT = re.compile(
    r"Assertion error \((?P<path>[^()]*deep_?gemm[^()]*|(?:\.\.\.|…)?/?csrc/[^()]*jit[^()]*|(?:\.\.\.|…)/jit[^()]*)\):"
    r"\s*(?P<what>\S.*)?",
    re.IGNORECASE,
)
# DeepGEMM's JIT, its csrc/jit/ folder: it compiles each kernel at first use with the CUDA toolkit's NVCC (12.3 or
# newer), found through CUDA_HOME, and loads what it built (compiler.hpp checks NVCC and the build, kernel_runtime.hpp
# the loading); its jit_kernels/ folder is the kernels' own shape checks
_JIT = re.compile(r"/jit/|NVCC", re.IGNORECASE)
# The conditions DeepGEMM checks when it picks a kernel for the GPU (its recipe, its scale-factor layout, the arch);
# any other is a shape or layout check on the call itself.
_GPU_CHECK = re.compile(r"recipe|architecture|\barch\b|SF transformation|\bsm_?\d+", re.IGNORECASE)


def _deepgemm_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    what = _unquoted((match["what"] or "").strip())
    source = match["path"].replace("\\", "/").rsplit("/", 1)[-1]
    evidence = c.log_evidence(event, name="DeepGEMM assertion", value=what or source)
    evidence.description = f"DeepGEMM's own check, in its {source}"
    gpu = bool(what) and _GPU_CHECK.search(what) is not None  # the GPU's words first, wherever the check is
    if not gpu and _JIT.search(f"{match['path']} {what}"):
        return _jit_finding(evidence, what or source)
    gpu = gpu or not what
    return RULE_DEEPGEMM.finding(
        Severity.CRITICAL,
        f"DeepGEMM's kernels refused the call ({what or source}): "
        + ("most often a GPU DeepGEMM was not written for" if gpu else "a shape or layout DeepGEMM did not expect"),
        summary="vLLM runs DeepGEMM for block-scaled FP8 layers and MoE and for sparse-attention indexers while "
        f"{DEEP_GEMM_ENV} is on (its default). DeepGEMM is written for Hopper (SM90) and datacenter Blackwell "
        "(SM100); on an SM120 or SM121 GPU (RTX PRO 6000, RTX 50 series, GB10) its warm-up meets `Unknown recipe` or "
        "`Unsupported architecture`. On Hopper or SM100 the same words are a shape or layout it did not expect.",
        evidence=[evidence],
        changes=[_switch_off("vLLM takes its other FP8 GEMM and MoE kernels (CUTLASS, Triton) instead of DeepGEMM's")],
        actions=[
            f"Set {DEEP_GEMM_ENV}=0 in the server's environment: vLLM then uses its other kernels for the model's FP8 "
            "layers (vllm#47169's reporter started Qwen3.6-27B-FP8 on an RTX PRO 6000 so).",
            "A model whose sparse-attention indexer has only DeepGEMM's kernel (DeepSeek-V3.2 and GLM-5 style) may "
            "have no other path on that GPU in this release: upgrade vLLM to one whose DeepGEMM supports the GPU, "
            "or serve on Hopper or SM100.",
            "On Hopper or SM100, report the assertion with the model and flags (DeepSeek-V4 with MTP and expert "
            "parallelism met `context_lens.is_contiguous()`, vllm#40987), and keep the switch above as the way "
            "around it meanwhile.",
        ],
        confidence=0.8,
    )


def _unquoted(what: str) -> str:
    """The condition without the Markdown backtick or quote a paste closed the line with; a quote the condition's
    own words opened (`false and "NVCC compilation failed"`) stays closed."""
    what = what.rstrip("`").rstrip()
    for quote in "'\"":
        if what.endswith(quote) and what.count(quote) % 2:
            what = what[:-1]
    return what


def _switch_off(reason: str) -> ConfigChange:
    return ConfigChange(flag=DEEP_GEMM_ENV, current=None, proposed="0", reason=reason, kind="env")


def _jit_finding(evidence: Evidence, what: str) -> Finding:
    """DeepGEMM's JIT could not build or load a kernel: the toolkit it compiles with, not the GPU or the call."""
    return RULE_DEEPGEMM.finding(
        Severity.CRITICAL,
        f"DeepGEMM could not build or load its kernel at run time ({what}): the NVCC it compiles with (12.3 or newer, "
        "under CUDA_HOME) or its own install is missing",
        summary="DeepGEMM compiles each kernel the first time vLLM calls it (FP8 layers, MoE, sparse indexers, "
        f"while {DEEP_GEMM_ENV} is on), with NVCC from the CUDA toolkit CUDA_HOME names. Its compiler checks that "
        "NVCC is there and 12.3 or newer, then that the build succeeded: a runtime image without the toolkit, an "
        "older NVCC first on PATH, or a DeepGEMM installed without its include files stops it (vllm PR #49051: NVCC "
        "12.1 on an RTX 5090; vllm#24547: a DeepGEMM installed wrongly, fine once reinstalled).",
        evidence=[evidence],
        changes=[_switch_off("vLLM takes its other FP8 GEMM and MoE kernels (CUTLASS, Triton), which need no NVCC")],
        actions=[
            "Give the server the CUDA toolkit DeepGEMM compiles with: NVCC 12.3 or newer, with CUDA_HOME naming it "
            "(`$CUDA_HOME/bin/nvcc --version`); the runtime CUDA wheels carry no NVCC.",
            "Reinstall DeepGEMM the way vLLM's release installs it (vLLM's tools/install_deepgemm.sh, or vLLM's "
            "image) if the toolkit is there: its JIT needs the package's own include files.",
            f"Or set {DEEP_GEMM_ENV}=0 in the server's environment and serve with vLLM's other kernels.",
        ],
        confidence=0.8,
    )


RULE_DEEPGEMM = Rule(
    code="OP-7.173",
    title="an assertion inside DeepGEMM's kernels",
    category=Category.STARTUP,
    check=c.on_phrase(DEEPGEMM_ASSERT, _deepgemm_finding),
    needs=("events",),
    page=RulePage(
        checks="`RuntimeError: Assertion error (<…deepgemm…/file.hpp>:<line>): <condition>` (`Unknown recipe`, "
        "`Unsupported architecture`, `Unknown SF transformation`, a failed shape check), and its JIT compiler's "
        "`…/jit/compiler.hpp` checks of NVCC.",
        why="DeepGEMM is written for SM90 and SM100; vLLM runs it by default for FP8 layers, MoE and sparse "
        "indexers, so a GPU outside those, or a shape it did not expect, stops the start or the engine.",
        example="`RuntimeError: Assertion error (…/deepgemm-src/…/layout.hpp:76): Unknown recipe` (vllm#47169: "
        f"Qwen3.6-27B-FP8 on RTX PRO 6000, SM120; {DEEP_GEMM_ENV}=0 avoided it).",
        fix=f"{DEEP_GEMM_ENV}=0; a vLLM whose DeepGEMM supports the GPU; on SM90 or SM100, a report with the model "
        "and flags; for the JIT's, NVCC 12.3 or newer under CUDA_HOME.",
        limits="The GPU is not in the line: the SM120 reading is the common one, not a certainty; a sparse "
        "indexer that has only DeepGEMM's kernel has no other path.",
        references=[
            "https://github.com/vllm-project/vllm/issues/47169",
            "https://github.com/deepseek-ai/DeepGEMM/pull/324",
            "https://github.com/vllm-project/vllm/issues/40987",
            "https://github.com/vllm-project/vllm/pull/49051",
            "https://github.com/vllm-project/vllm/issues/24547",
        ],
    ),
)

RULES: list[Rule] = [RULE_DEEPGEMM]
