"""OP-7.97: Triton's compiler gave up on one of the GPU kernels vLLM compiles when it first runs them.

Why a rule of its own: vLLM compiles many of its kernels with Triton at their first call (its own attention, MoE,
LoRA, sampling and FLA kernels, and Inductor's under torch.compile). When Triton's compiler fails, the failure is in
LLVM's or MLIR's words, and often aborts the process with no Python exception at all: `LLVM ERROR: Failed to
translate TritonGPU to LLVM IR.` on an MI250x (vllm#3878), `LLVM ERROR: Fatal pipeliner error` under a module dump
of `_lora_expand_kernel` on SM100 (vllm#30872), `LLVM ERROR: operation destroyed but still has uses` autotuning an
FLA kernel on an MI210 (vllm#44973), `RuntimeError: PassManager::run failed` on `_penalties_kernel` with Triton 3.7
(pytorch#180908). Nothing in vLLM's message catalog names them, and an on-call engineer reading "LLVM" does not know
it is the kernel compiler. Two readings tell more than "a compiler bug":

- LLVM could not select an instruction whose name holds `bf16` (`Cannot select: intrinsic
  %llvm.amdgcn.fdot2.bf16.bf16`): the GPU has no native bfloat16 for the kernel's dot product, though PyTorch may
  report bf16 as supported (RDNA2's gfx1032 in unsloth#5337, where the fix kept the dtype off bf16): serving in
  float16 avoids it.
- LLVM could not select a warp shuffle (`%llvm.nvvm.shfl.sync.*`): Triton compiled for a GPU it does not support,
  one older than Volta (a GTX 1070 in llvm-project#95646), or one newer than the installed Triton knows.

Otherwise the kernel, the GPU and the Triton version are the combination to change: Triton must be the release
torch requires, a newer vLLM brings kernels and a Triton that compile, and the feature that runs the kernel can be
left off while waiting.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Evidence, Finding, Rule, RulePage, Severity

_TRITON_VERSION = (
    'Check that triton is the release the installed torch requires (`python -c "import importlib.metadata as m; '
    "print([r for r in m.requires('torch') if r.startswith('triton')])\"` against `pip show triton`): a Triton "
    "installed apart from torch compiles kernels the pair was never tested on."
)
_REPORT = (
    "Upgrade vLLM (its releases carry kernel fixes and pin the Triton they compile with); if the failure stays, "
    "report it to vLLM with the kernel's name, the GPU and `pip show triton torch`, and leave off the feature that "
    "runs the kernel (LoRA, a speculative method, an attention backend) until it is fixed."
)


def _kernel(events: list[LogEvent]) -> str | None:
    """The kernel Triton was compiling: its dumped module's function, else the file of the MLIR diagnostic."""
    named = next((e.function for e in events if e.function), None)
    located = next((e.code_file for e in events if e.code_file), None)
    return named or (f"the kernel in {located}" if located else None)


def _check_triton_compile(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.TRITON_COMPILE_ABORT)
    failure = next((e for e in events if e.message), None)
    if failure is None or facts.events_of(LogEventKind.TRITON_MMA_LAYOUT):
        return []  # a module dump alone is no failure; OP-7.81 reads the pre-Ampere layout assertion
    kernel = _kernel(events)
    on = f" on {kernel}" if kernel else ""
    evidence = [c.log_evidence(failure, name="Triton's compiler", value=failure.message)]
    if "bf16" in (failure.component or ""):
        return [_bf16_finding(facts, failure, on, evidence)]
    title, actions = _reading(failure, on)
    return [
        RULE_TRITON_COMPILE.finding(
            Severity.CRITICAL,
            title,
            summary="vLLM compiles its Triton kernels at their first call (warm-up or the first request that needs "
            "one); Triton's compiler failed on this one, in LLVM's or MLIR's words, and an LLVM ERROR aborts the "
            "process without a Python exception. The launch flags are not the cause: the kernel, the GPU and the "
            "Triton version are.",
            evidence=evidence,
            actions=actions,
            confidence=0.6,
        )
    ]


def _bf16_finding(facts: Facts, failure: LogEvent, on: str, evidence: list[Evidence]) -> Finding:
    """A bfloat16 instruction LLVM could not select for the GPU: the one reading with a flag to change."""
    config = facts.config
    return RULE_TRITON_COMPILE.finding(
        Severity.CRITICAL,
        f"Triton cannot compile a bfloat16 instruction ({failure.component}) for this GPU{on}: the GPU has no "
        "native bfloat16 for it; serve in float16",
        summary="LLVM, under Triton, found no instruction of this GPU for the kernel's bfloat16 operation "
        "and aborted the process. PyTorch can report bfloat16 as supported on a GPU whose instruction set "
        "lacks it for dot products (RDNA2); the kernel compiles in float16.",
        evidence=evidence,
        changes=[
            c.float16_instead_of_bfloat16(
                config.dtype if config else None,
                "the kernel is compiled for float16, which the GPU's instructions cover",
            )
        ],
        actions=[_TRITON_VERSION],
        confidence=0.75,
    )


def _reading(failure: LogEvent, on: str) -> tuple[str, list[str]]:
    """The title and actions for the other failures: a warp shuffle, host memory, or the kernel and versions."""
    intrinsic = failure.component or ""
    if intrinsic.startswith("llvm.nvvm.shfl"):
        return (
            f"Triton cannot emit a warp shuffle ({intrinsic}) for this GPU{on}: a GPU older than Volta "
            "(compute capability below 7.0, which Triton does not support), or newer than the installed Triton knows",
            [
                "On a GPU older than Volta (Pascal: GTX 10xx, P100, P40) vLLM's Triton kernels cannot run: serve on "
                "compute capability 7.0 or newer. On a new GPU (Blackwell), install the vLLM, torch and Triton "
                "releases built for it.",
                _TRITON_VERSION,
            ],
        )
    if (failure.message or "").lower().startswith("out of memory"):
        return (
            f"Triton's compiler ran out of host memory{on}: LLVM could not allocate while compiling a kernel",
            [
                "Give the server's process more host memory (the container's memory limit, fewer processes compiling "
                "at once: each tensor-parallel worker compiles its own kernels), or start again once the compiled "
                "kernels are cached (~/.triton/cache) so fewer compile at once."
            ],
        )
    what = f"has no instruction {intrinsic} for this GPU" if intrinsic else f"failed ({failure.message})"
    return (
        f"Triton's compiler {what}{on}: a kernel this GPU, this Triton and this vLLM do not compile together",
        [_TRITON_VERSION, _REPORT],
    )


RULE_TRITON_COMPILE = Rule(
    code="OP-7.97",
    title="Triton's compiler failed on a vLLM kernel",
    category=Category.CONFIGURATION,
    check=_check_triton_compile,
    needs=("events",),
    page=RulePage(
        checks="`LLVM ERROR: …` (and the intrinsic of `Cannot select: intrinsic %llvm.…`), Triton's `PassManager::run "
        "failed`, an MLIR diagnostic on a Triton op (`…/kernel.py:73:16: error: 'tt.…' op …`), and the kernel named "
        "in the module Triton dumps (`tt.func public @_lora_expand_kernel(`).",
        why="Triton's compiler failures abort the process in LLVM's words, which name no flag and no package; they "
        "mean the kernel, the GPU and the Triton version do not compile together.",
        example="`LLVM ERROR: Cannot select: intrinsic %llvm.amdgcn.fdot2.bf16.bf16` on RDNA2 (no native bfloat16 "
        "dot: unsloth#5337 kept the dtype off bf16); `LLVM ERROR: Fatal pipeliner error` on `_lora_expand_kernel`, "
        "SM100 (vllm#30872).",
        fix="--dtype float16 for a bfloat16 instruction the GPU lacks; else the Triton torch requires, a newer vLLM, "
        "or the feature that runs the kernel left off.",
        limits="The words say which compiler failed, rarely why: outside the two readings the finding names the "
        "kernel and the versions to line up, not a flag.",
        references=[
            "https://github.com/vllm-project/vllm/issues/3878",
            "https://github.com/vllm-project/vllm/issues/30872",
            "https://github.com/vllm-project/vllm/issues/44973",
            "https://github.com/unslothai/unsloth/issues/5337",
            "https://github.com/llvm/llvm-project/issues/95646",
        ],
    ),
)

RULES: list[Rule] = [RULE_TRITON_COMPILE]
