"""OP-7.174: FlashInfer found no GPU architecture to compile its kernels for (`FlashInfer requires GPUs with sm75 or
higher`).

Why a rule of its own: vLLM on CUDA samples top-k/top-p with FlashInfer by default (VLLM_USE_FLASHINFER_SAMPLER,
vllm/envs.py), and FlashInfer compiles its kernels at first use for the architectures it detects. Its words have
two causes. On a GPU older than Turing (V100's SM70, P100's SM60) they are true: FlashInfer has no kernels for it.
On a new GPU they are not: FlashInfer asks the local CUDA toolkit which architectures it can target, an SM120 part
(RTX 50 series, RTX PRO 6000) needs CUDA 12.9 or newer, and with an older toolkit the detection fails quietly and
leaves no target at all, so every kernel says sm75 (vllm PR #48956, fixing vllm#42393 on an RTX 5090, even with
`--attention-backend flash_attn`; the fix falls back to PyTorch's sampling). Either way the sampler is the part
that asked, and turning it off, or giving FlashInfer a toolkit that knows the GPU, gets past it.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.catalog.op7_toolchain import SAMPLER_ENV
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

NO_TARGET_ARCH = re.compile(r"FlashInfer requires GPUs with sm75 or higher")


def _no_arch_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    return RULE_FLASHINFER_ARCH.finding(
        Severity.CRITICAL,
        "FlashInfer found no GPU architecture to build its kernels for: a GPU older than SM75, or a new GPU (SM120) "
        "with a CUDA toolkit older than 12.9",
        summary="vLLM samples with FlashInfer by default, and FlashInfer compiles its kernels for the architectures "
        "it detects. On a V100 or older GPU the words are true; on an RTX 50 series or RTX PRO 6000 (SM120) a CUDA "
        "toolkit older than 12.9 makes the detection fail silently, and every kernel reports sm75 (vllm PR #48956).",
        evidence=[c.log_evidence(event, name="FlashInfer's refusal", value=match.group(0))],
        changes=[
            ConfigChange(
                flag=SAMPLER_ENV,
                current=None,
                proposed="0",
                reason="vLLM samples with PyTorch's own ops instead of FlashInfer's kernels, which need no compile",
                kind="env",
            )
        ],
        actions=[
            "On an SM120 GPU, point CUDA_HOME at a CUDA toolkit 12.9 or newer (`nvcc --version`), or upgrade vLLM to "
            "a release with vllm PR #48956, which falls back to PyTorch's sampling when FlashInfer cannot target "
            "the GPU.",
            "On a GPU older than SM75, keep FlashInfer out entirely: no FlashInfer attention backend either "
            f"(`--attention-backend`, or {c.ATTENTION_BACKEND_ENV} in releases that read it).",
        ],
        confidence=0.85,
    )


RULE_FLASHINFER_ARCH = Rule(
    code="OP-7.174",
    title="FlashInfer found no GPU architecture to compile for",
    category=Category.STARTUP,
    check=c.on_phrase(NO_TARGET_ARCH, _no_arch_finding),
    needs=("events",),
    page=RulePage(
        checks="FlashInfer's `FlashInfer requires GPUs with sm75 or higher`.",
        why="vLLM's default sampler compiles FlashInfer kernels at start; with no target architecture the engine "
        "stops there.",
        example="`RuntimeError: FlashInfer requires GPUs with sm75 or higher` on an RTX 5090 with a CUDA toolkit "
        "older than 12.9 (vllm PR #48956, fixing vllm#42393).",
        fix=f"{SAMPLER_ENV}=0; on SM120, a CUDA toolkit 12.9 or newer, or a vLLM with PR #48956.",
        limits="The line does not name the GPU: both causes are given, the GPU's age decides.",
        references=[
            "https://github.com/vllm-project/vllm/pull/48956",
            "https://github.com/vllm-project/vllm/issues/42393",
        ],
    ),
)

RULES: list[Rule] = [RULE_FLASHINFER_ARCH]
