"""OP-7.201: the KV-cache manager's block size is one the model's attention backend does not take.

Why a rule of its own: vLLM V1 picks the KV cache's block size (16 by default on CUDA) before it knows every attention
backend the model runs, then checks that each backend's kernels take it, and refuses with `ValueError: No common block
size for 16` (vllm/v1/worker/gpu_model_runner.py in 0.11 to 0.16, vllm/v1/worker/utils.py from 0.17), which users
quote with the two lists it compared: `between kv_manager=[16] and backend=[64]`. The words name no flag, though
`--block-size` chooses the manager's size. In vllm#48286 (vLLM 0.24 to 0.26) DeepSeek-V3.2-style sparse-attention
models with TRITON_MLA_SPARSE met it because their indexer backend takes blocks of 64 only; the reporter started them
with `--block-size 64`.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.catalog.vc_vllm_messages import OWN_WORDS_CONFIDENCE
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

NO_COMMON_BLOCK_SIZE = re.compile(
    r"No common block size for (?P<size>\d+)(?:\s*\(?\s*between kv_manager=\[(?P<manager>[^\]]*)\] and "
    r"backend=\[(?P<backend>[^\]]*)\])?"
)
_SIZE = re.compile(r"(?<![\w.])(\d+)(?![\w.])")  # a size in the backend's list, plain or a MultipleOf(64)'s


def _common_block_finding(facts: Facts, event: LogEvent, found: re.Match[str]) -> Finding:
    size = found["size"]
    taken = _SIZE.findall(found["backend"] or "")
    proposed = taken[0] if taken else "<a block size the model's attention backend takes>"
    listed = f" (the backend takes [{found['backend']}])" if found["backend"] is not None else ""
    return RULE.finding(
        Severity.CRITICAL,
        f"the KV cache's block size {size} is not one the model's attention backend takes{listed}: --block-size",
        summary="vLLM sizes the KV cache's blocks before it checks each attention backend the model runs, and one of "
        f"them has no kernel for blocks of {size} tokens. Sparse-attention indexers (DeepSeek-V3.2 and GLM-DSA "
        "style) take 64 only, and vLLM's default is 16 (vllm#48286). The words name no flag; --block-size sets the "
        "manager's size.",
        evidence=[c.log_evidence(event, name="block sizes compared", value=found.group(0))],
        changes=[
            ConfigChange(
                flag="--block-size",
                current=size,
                proposed=proposed,
                reason="a size the backend's kernels take, so the manager and every backend agree (vllm#48286's "
                "reporter started the model with --block-size 64)",
                cost="larger blocks waste more of each sequence's last block and cache prefixes at a coarser grain",
            )
        ],
        actions=[
            "Where the message lists no backend sizes, the model's attention backend decides "
            "them: a sparse-attention indexer takes 64; another backend chosen with --attention-backend may take "
            "the default.",
        ],
        # with the backend's sizes read from vLLM's own words, as sure as VC-1's reading of them, and ahead of it for
        # naming the flag and the value; without them, after it
        confidence=OWN_WORDS_CONFIDENCE if taken else 0.7,
    )


RULE = Rule(
    code="OP-7.201",
    title="a KV-cache block size the model's attention backend does not take",
    category=Category.STARTUP,
    check=c.on_phrase(NO_COMMON_BLOCK_SIZE, _common_block_finding, kinds=c.RELAYED_TOO),
    needs=("events",),
    page=RulePage(
        checks="vLLM's `No common block size for N` (vllm/v1/worker/gpu_model_runner.py, later utils.py), and the "
        "`between kv_manager=[…] and backend=[…]` lists where the paste has them.",
        why="The KV cache manager's block size (16 by default) is not among the sizes one attention backend's kernels "
        "take; the words name no flag.",
        example="`ValueError: No common block size for 16 between kv_manager=[16] and backend=[64]` for a "
        "DeepSeek-V3.2-style sparse-attention model (vllm#48286: `--block-size 64` avoided it).",
        fix="`--block-size` to a size the backend lists (64 for sparse-attention indexers).",
        limits="Without the lists the value is named from the model's backend, not read, and VC-1's reading of "
        "vLLM's words stays first.",
        references=["https://github.com/vllm-project/vllm/issues/48286"],
    ),
)

RULES: list[Rule] = [RULE]
