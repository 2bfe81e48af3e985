"""OP-7.195: vLLM's paged-attention kernel has no variant for the KV-cache block size it was handed.

Why a rule of its own: the CUDA paged-attention kernels (csrc/attention/paged_attention_v1.cu and _v2.cu) are compiled
once per block size and pick one in a switch over 8, 16 and 32; any other size falls to the switch's default, a C++
check that stops the request with `RuntimeError: Unsupported block size: N`. That text is not one of vLLM's Python
messages, so its catalog cannot hold it, and it names no flag, though `--block-size` chose the size. In vllm PR #10938
(December 2024) a contributor met it after `--block-size 128`, which the flag's help then listed as valid on CUDA; the
PR corrected the help. 16 is the size every such kernel takes and was the CUDA default until vLLM 0.34
(rules/vllm_defaults.py).
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

# The kernels' dispatch (csrc/attention/paged_attention_v1.cu: `case 8`, `case 16`, `case 32`, then
# `TORCH_CHECK(false, "Unsupported block size: ", block_size)`)
KERNEL_BLOCK_SIZES = (8, 16, 32)
PROPOSED_BLOCK_SIZE = 16
UNSUPPORTED_BLOCK_SIZE = re.compile(r"\bUnsupported block size: (?P<size>\d+)\b")


def _block_size_finding(facts: Facts, event: LogEvent, found: re.Match[str]) -> Finding:
    size = found["size"]
    sizes = ", ".join(str(s) for s in KERNEL_BLOCK_SIZES[:-1]) + f" and {KERNEL_BLOCK_SIZES[-1]}"
    return RULE.finding(
        Severity.CRITICAL,
        f"vLLM's paged-attention kernel has no variant for a KV-cache block of {size} tokens: --block-size chose it",
        summary=f"The paged-attention kernels are compiled for blocks of {sizes} tokens and refuse any other size "
        f"when the model runs; the block size is --block-size's ({size} here). vLLM's Python checks let such a "
        "size through where the kernel cannot take it (vllm PR #10938: `--block-size 128` on CUDA).",
        evidence=[c.log_evidence(event, name="the kernel's check", value=found.group(0))],
        changes=[
            ConfigChange(
                flag="--block-size",
                current=size,
                proposed=str(PROPOSED_BLOCK_SIZE),
                reason=f"a size every paged-attention kernel of vLLM's is compiled for ({sizes})",
                cost="none to speak of: the KV cache is paged in smaller blocks",
            )
        ],
        confidence=0.8,
    )


RULE = Rule(
    code="OP-7.195",
    title="a KV-cache block size vLLM's paged-attention kernel has no variant for",
    category=Category.STARTUP,
    check=c.on_phrase(UNSUPPORTED_BLOCK_SIZE, _block_size_finding),
    needs=("events",),
    page=RulePage(
        checks="The paged-attention kernel's `Unsupported block size: N` (a C++ check, not in vLLM's message catalog).",
        why="The kernels exist for blocks of 8, 16 and 32 tokens; the size came from --block-size, which the line "
        "does not name.",
        example="`RuntimeError: Unsupported block size: 128` after `--block-size 128` on CUDA (vllm PR #10938, which "
        "corrected the flag's help).",
        fix="`--block-size 16` (or 8 or 32).",
        limits="The line does not say which kernel refused; another program's kernel with the same words would be "
        "read the same way.",
        references=["https://github.com/vllm-project/vllm/pull/10938"],
    ),
)

RULES: list[Rule] = [RULE]
