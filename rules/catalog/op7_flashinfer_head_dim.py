"""OP-7.179: FlashInfer's attention kernels refused the model's head dimension (or its KV page).

Why a rule of its own: FlashInfer compiles its attention kernels for a set of head dimensions, and its checks refuse
any other when vLLM's FLASHINFER backend first runs them, at engine start (the memory profile or CUDA graph capture),
in FlashInfer's words rather than vLLM's:
- its FA2 path: `Invalid head_dim: 512, must be divisible by 16 and in range [16, 256]` (flashinfer-ai/flashinfer#4546:
  Gemma 4's global-attention layers have head_dim 512; on an RTX 5090 its XQA kernel had no such variant until
  FlashInfer PR #4570 added one for SM12x);
- its TensorRT-LLM kernels (Blackwell's default decode path): `Expect (32 <= headDim <= 2048) && (numTokensPerPage <=
  128), got …` (vllm#25811: Qwen3-Next-80B on B200; the reporter found every other attention backend ran it). That
  check also refuses more than 128 tokens per KV page, which a hybrid model's attention block can exceed, since vLLM
  raises it to match the Mamba state page.
Another backend runs the same model: Triton's attention kernel takes any head size of at least 32 (vLLM 0.11's own
words for TRITON_ATTN), FlashAttention up to 256.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

# FlashInfer's words, which the log reader's wording reads too (advisor/collect/log_patterns/toolchain.py): its FA2
# path's check (the multiple and the range it takes) and its TensorRT-LLM kernels' (the head dimension's bounds and
# the page's limit)
FA2_REFUSAL = (
    r"Invalid head_dim: (?P<dim>\d+), must be divisible by (?P<multiple>\d+) and in range "
    r"\[(?P<low>\d+), (?P<high>\d+)\]"
)
TRTLLM_REFUSAL = (
    r"Expect \((?P<tlow>\d+) <= headDim <= (?P<thigh>\d+)\)(?: && \(numTokensPerPage <= (?P<page>\d+)\))?[^\n]*"
)
# its FA2 prefill's dispatch, when no KV tile for the head dimension fits the GPU's shared memory (no head dimension in
# the words: Gemma 4's 512 on an RTX 3090, vllm PR #49917; DeepSeek-V2-Lite's MLA prefill on an L40, sglang#4196)
TILE_REFUSAL = r"Unsupported max_mma_kv: (?P<mma>\d+)"
_REFUSAL = re.compile(f"{FA2_REFUSAL}|{TRTLLM_REFUSAL}|{TILE_REFUSAL}")


def _refused(found: re.Match[str] | None) -> str:
    """What FlashInfer refused, in its own bounds."""
    if found is None:
        return "head dimension"
    if found["mma"]:
        return "head dimension (no kernel tile for it fits this GPU's shared memory)"
    if found["dim"]:
        return (
            f"head dimension {found['dim']} (it takes multiples of {found['multiple']} from {found['low']} to "
            f"{found['high']})"
        )
    page = f" and at most {found['page']} tokens per KV page" if found["page"] else ""
    return f"head dimension or KV page size (it takes head dimensions of {found['tlow']} to {found['thigh']}{page})"


# A FlashInfer with a kernel for the head dimension: no help where the GPU's shared memory is the limit
_NEWER_KERNEL = (
    "Or upgrade FlashInfer to a release with a kernel for it (flashinfer-ai/flashinfer PR #4570 added head_dim 512 on "
    "SM12x GPUs for Gemma 4), keeping the FLASHINFER backend."
)


def _which_limit(found: re.Match[str] | None) -> str:
    """Which of FlashInfer's limits a model meets, by the check that refused it."""
    if found is not None and found["mma"]:
        return (
            "Its prefill kernel keeps a tile of keys and values in shared memory, and for a wide head dimension none "
            "fits the smaller shared memory of Ampere and Ada workstation GPUs (Gemma 4's 512 on an RTX 3090, vllm PR "
            "#49917, which makes vLLM refuse it at backend selection; an MLA prefill on an L40, sglang#4196)."
        )
    if found is not None and found["dim"]:
        return "Models with wide attention heads (Gemma 4's global layers: 512) meet it first."
    return (
        "A hybrid model's attention block, which vLLM raises to match its Mamba state page, can exceed the page limit "
        "of FlashInfer's TensorRT-LLM kernels."
    )


def _head_dim_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    found = _REFUSAL.search(event.message or "")
    return RULE_FLASHINFER_HEAD_DIM.finding(
        Severity.CRITICAL,
        f"FlashInfer's attention kernel refused this model's {_refused(found)}: choose another attention backend",
        summary="vLLM's FLASHINFER attention backend runs FlashInfer's kernels, which exist for a set of head "
        "dimensions and page sizes; this model's fall outside them, so the engine stops the first time the kernel "
        "runs. " + _which_limit(found),
        evidence=[c.log_evidence(event, name="FlashInfer's refusal", value=match.group(0))],
        changes=[
            ConfigChange(
                flag="--attention-backend",
                current="FLASHINFER",
                proposed="TRITON_ATTN",
                reason="Triton's attention kernel takes any head size of at least 32 (vLLM 0.11's words for it), and "
                "every backend but FlashInfer ran the model of vllm#25811",
                cost="on some GPUs Triton's attention decodes slower than FlashInfer's; compare with a load test",
            )
        ],
        actions=[
            f"Older releases choose the backend with {c.ATTENTION_BACKEND_ENV}=TRITON_ATTN instead of the flag; "
            "FLASH_ATTN also works where the head dimension is at most 256.",
            *([] if found is not None and found["mma"] else [_NEWER_KERNEL]),
        ],
        confidence=0.8,
    )


RULE_FLASHINFER_HEAD_DIM = Rule(
    code="OP-7.179",
    title="FlashInfer's attention kernels refused the model's head dimension",
    category=Category.STARTUP,
    check=c.on_kind(LogEventKind.ATTENTION_HEAD_DIM_REFUSED, _head_dim_finding),
    needs=("events",),
    page=RulePage(
        checks="FlashInfer's `Invalid head_dim: N, must be divisible by 16 and in range [16, 256]`, its prefill's "
        "`Unsupported max_mma_kv: 0`, and its TensorRT-LLM kernels' `Expect (32 <= headDim <= 2048) && "
        "(numTokensPerPage <= 128)`.",
        why="The engine stops at start with FlashInfer's words, which name neither vLLM's backend nor a flag.",
        example="`Invalid head_dim: 512, must be divisible by 16 and in range [16, 256]` starting Gemma 4 with "
        "FlashInfer on an RTX 5090 (flashinfer-ai/flashinfer#4546, fixed by its PR #4570).",
        fix="`--attention-backend TRITON_ATTN` (or FLASH_ATTN for head dims up to 256); or a FlashInfer release with "
        "a kernel for the head dimension.",
        limits="The TensorRT-LLM check prints its values run together, so which limit the model broke (head "
        "dimension or page size) is not read from it; its bounds are.",
        references=[
            "https://github.com/flashinfer-ai/flashinfer/issues/4546",
            "https://github.com/vllm-project/vllm/issues/25811",
            "https://github.com/vllm-project/vllm/pull/49917",
            "https://github.com/sgl-project/sglang/issues/4196",
        ],
    ),
)

RULES: list[Rule] = [RULE_FLASHINFER_HEAD_DIM]
