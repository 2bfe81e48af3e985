"""OP-7.155: FlashInfer's workspace buffer too small for a batch.

Why a rule of its own: FlashInfer's attention kernels plan their temporaries inside one workspace buffer vLLM
allocates up front (VLLM_FLASHINFER_WORKSPACE_BUFFER_SIZE, 394 MiB by default in vllm/envs.py of 0.32), and its
allocator stops a plan that does not fit with `Error in function 'aligned_alloc' at …/flashinfer/allocator.h` and
`Buffer overflow when allocating memory for <name> …`. The largest batch is planned when CUDA graphs are captured
for it, so the failure comes at start-up with a large --max-num-seqs (vllm#40023: Qwen3.5-397B in NVFP4 with the
FlashInfer backend on B300, from --max-num-seqs 528 on).
"""

from __future__ import annotations

import re

from rules import vllm_defaults
from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

WORKSPACE_OVERFLOW = re.compile(
    r"Error in function 'aligned_alloc' at \S*flashinfer/allocator\.h"
    r"|Buffer overflow when allocating memory for \w+"
)
_NAMED = re.compile(r"Buffer overflow when allocating memory for (?P<what>\w+)")
ENV = "VLLM_FLASHINFER_WORKSPACE_BUFFER_SIZE"


def _workspace_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    larger = 2 * vllm_defaults.FLASHINFER_WORKSPACE_MIB * 1024 * 1024
    seqs = facts.config.max_num_seqs if facts.config else None
    named = _NAMED.search(event.message or event.raw or "")
    return RULE.finding(
        Severity.CRITICAL,
        "FlashInfer's workspace buffer is too small for the batch it was asked to plan"
        + (f" ({named['what']})" if named else "")
        + ": the largest batches (CUDA-graph capture at start-up) do not fit",
        summary=f"vLLM gives FlashInfer one workspace buffer ({ENV}, {vllm_defaults.FLASHINFER_WORKSPACE_MIB} MiB by "
        "default in 0.32) to plan each batch's temporaries in; a batch larger than it plans for (a high "
        "--max-num-seqs, long prefills, many attention heads per GPU) overflows it, first when CUDA graphs are "
        "captured for the largest batch size.",
        evidence=[c.log_evidence(event, name="FlashInfer's allocator", value=match.group(0))],
        changes=[
            ConfigChange(
                flag=ENV,
                current=str(vllm_defaults.FLASHINFER_WORKSPACE_MIB * 1024 * 1024),
                proposed=str(larger),
                reason="twice the default buffer, in bytes: the plan of the largest batch fits",
            )
        ],
        actions=[
            "Or lower the largest batch: --max-num-seqs below the size that fails"
            + (f" (now {seqs})" if seqs else "")
            + " (vllm#40023 failed from 528 on), or cap the captured sizes (--max-cudagraph-capture-size).",
        ],
        confidence=0.75,
    )


RULE = Rule(
    code="OP-7.155",
    title="FlashInfer's workspace buffer too small for the batch",
    category=Category.CONFIGURATION,
    check=c.on_phrase(WORKSPACE_OVERFLOW, _workspace_finding),
    needs=("events",),
    page=RulePage(
        checks="FlashInfer's `Error in function 'aligned_alloc' at …/flashinfer/allocator.h` or `Buffer overflow when "
        "allocating memory for <name>`.",
        why="The workspace buffer vLLM gives FlashInfer is sized once; the largest batch's plan must fit in it.",
        example="Qwen3.5-397B NVFP4 with FlashInfer on B300 failing at CUDA-graph capture from --max-num-seqs 528 "
        "(vllm#40023).",
        fix=f"A larger {ENV}, or a smaller largest batch.",
        limits="The size that fits is not in the message; doubling is a first step, not a computed value.",
        references=["https://github.com/vllm-project/vllm/issues/40023"],
    ),
)

RULES: list[Rule] = [RULE]
