"""OP-5.63: a kernel was JIT-compiled while the server served: the requests that met its shape waited for it.

Why a rule of its own: vLLM compiles its Triton (and CuTeDSL, TileLang) kernels for the shapes its warm-up runs, and
from 0.21 its JIT monitor (vllm/triton_utils/jit_monitor.py, the message catalog) warns when one compiles later:
`Triton kernel JIT compilation during inference: _zero_kv_blocks_kernel. This causes a latency spike; consider
extending warmup to cover this shape/config.` The compile runs inside a model step, so every request in that step
waits for it: a first-token or inter-token spike that a benchmark's tail shows and that no flag of the running server
removes. It happens once per shape per process, on the first requests after a start. vLLM PR #47546 met it for the
KV-block zeroing kernel with Qwen models (warm-up did not cover that kernel's shape) and widened warm-up in a later
release; when a compile inside a step outlasts the executor's deadline, the RPC timeout's rule (HL-3) names it.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity


def _jit_finding(facts: Facts, event: LogEvent, _match: object) -> Finding:
    runtime = event.message or "a JIT"
    kernel = f"{runtime} kernel {event.function}" if event.function else f"a {runtime} kernel"
    compiled = facts.events_of(LogEventKind.JIT_DURING_INFERENCE)
    kernels = sorted({e.function for e in compiled if e.function})
    return RULE_JIT_COMPILE.finding(
        Severity.MEDIUM,
        f"the {kernel} was compiled while serving, after warm-up: the requests in that step waited for the compile"
        + (f" ({len(kernels)} kernels: {', '.join(kernels[:4])})" if len(kernels) > 1 else ""),
        summary="vLLM's JIT monitor saw a kernel compiled for a shape its warm-up did not run. The compile (from "
        "under a second to minutes for a large fused kernel) happens inside a model step, so the first requests "
        "that reach the shape after a start see a latency spike; it happens once per shape per process, and no "
        "setting of the running server removes it.",
        evidence=[c.log_evidence(event, name="JIT compilation during inference", value=event.function or runtime)],
        actions=[
            "Judge latency after the first minutes of a restart, or send warm-up requests that cover the served "
            "shapes (prompt lengths, batch sizes, sampling options) before the server takes traffic.",
            "Upgrade vLLM: releases widen what warm-up compiles (vllm PR #47546 added the KV-block zeroing kernel "
            "for Qwen models).",
            "If the warnings go on for new shapes long after start, every new shape pays a compile: pin the shapes "
            "that vary (bounded --max-num-seqs and --max-num-batched-tokens, fixed capture sizes) and report the "
            "kernel to vLLM.",
        ],
        confidence=0.7,
    )


RULE_JIT_COMPILE = Rule(
    code="OP-5.63",
    title="a kernel was JIT-compiled while serving",
    category=Category.LATENCY,
    check=c.on_kind(LogEventKind.JIT_DURING_INFERENCE, _jit_finding),
    needs=("events",),
    page=RulePage(
        checks="vLLM's JIT monitor: `Triton kernel JIT compilation during inference: <kernel>` (and its CuTeDSL and "
        "TileLang words).",
        why="A compile inside a model step is a latency spike on the requests in that step, after every restart.",
        example="`WARNING … [jit_monitor.py:125] Triton kernel JIT compilation during inference: _zero_kv_blocks_kernel"
        "` (vllm PR #47546: warm-up did not cover the kernel for Qwen models).",
        fix="Warm-up requests before traffic; a release whose warm-up covers the kernel.",
        limits="The line does not say how long the compile took or how many requests waited.",
        references=["https://github.com/vllm-project/vllm/pull/47546"],
    ),
)

RULES: list[Rule] = [RULE_JIT_COMPILE]
