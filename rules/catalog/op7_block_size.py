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
# The check's words ending the line: with more words after the size (`Unsupported block size: 64 for FP8 block
# quantization`) it is another check's
UNSUPPORTED_BLOCK_SIZE = re.compile(r"\bUnsupported block size: (?P<size>\d+)[\s.'\")\]]*$")


def _block_size_finding(facts: Facts, event: LogEvent, found: re.Match[str]) -> Finding:
    """Sure of --block-size when the server's configuration says it is that size; else the kernel's words alone, which
    other kernels' checks of their own (thread) block sizes share: the change is offered, not made."""
    size = int(found["size"])
    sizes = ", ".join(str(s) for s in KERNEL_BLOCK_SIZES[:-1]) + f" and {KERNEL_BLOCK_SIZES[-1]}"
    configured = facts.config is not None and facts.config.block_size == size
    proposed = PROPOSED_BLOCK_SIZE if size != PROPOSED_BLOCK_SIZE else KERNEL_BLOCK_SIZES[-1]
    change = ConfigChange(
        flag="--block-size",
        current=str(size),
        proposed=str(proposed),
        reason=f"a size every CUDA paged-attention kernel of vLLM's is compiled for ({sizes})",
        cost="none to speak of: the KV cache is paged in smaller blocks",
    )
    title = f"vLLM's paged-attention kernel has no variant for KV-cache blocks of {size} tokens: --block-size {size}"
    if not configured:
        title = f"a kernel refused a block size of {size}: if it is --block-size, vLLM's paged-attention kernels "
        title += f"take KV-cache blocks of {sizes} tokens"
    return RULE.finding(
        Severity.CRITICAL,
        title,
        summary=f"vLLM's CUDA paged-attention kernels are compiled for KV-cache blocks of {sizes} tokens and refuse "
        "any other size when the model runs, in these words; vLLM's Python checks let such a size through (vllm PR "
        "#10938: `--block-size 128` on CUDA). Other kernels check their own block sizes in the same words, so without "
        "the server's --block-size the line alone does not say which.",
        evidence=[c.log_evidence(event, name="the kernel's check", value=found.group(0).strip())],
        changes=[change] if configured else [],
        alternatives=[] if configured else [change],
        actions=[] if configured else ["Look at the traceback's frames: paged_attention (vLLM's _C ops) is this one."],
        confidence=0.8 if configured else 0.55,
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
        limits="The line does not say which kernel refused: other kernels check their own block sizes in the same "
        "words, so without the server's --block-size the change is offered, not made.",
        references=["https://github.com/vllm-project/vllm/pull/10938"],
    ),
)

RULES: list[Rule] = [RULE]
