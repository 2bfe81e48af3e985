"""OP-1.15: --num-gpu-blocks-override replaced the KV cache's size the memory profile found.

Why a rule of its own: `--num-gpu-blocks-override` (CacheConfig.num_gpu_blocks_override) is a testing knob: vLLM
profiles memory, computes how many KV blocks fit, then takes the override instead and says so at INFO (`Overriding
num_gpu_blocks=125643 with num_gpu_blocks_override=1`; V0's engine/llm_engine.py, V1's v1/core/kv_cache_utils.py).
Below the profile's count the cache holds fewer tokens than the GPU has room for; at one block (16 tokens), as a
maintainer showed on an H100 (vllm#27181), no request longer than the block can ever be scheduled, and vLLM 0.11
started anyway because its max-model-len check did not count the override. vLLM 0.32 checks max-model-len against
the overridden capacity (kv_cache_utils.py), so there it fails at start instead. Above the profile's count the cache
asks for memory the profile did not leave: it may not be allocated at all, or run the GPU out of memory later. The
line is easy to miss among INFO lines, and a flag copied from a test script into production is exactly how it gets
there.
"""

from __future__ import annotations

from rules import vllm_defaults
from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Evidence, Finding, Rule, RulePage, Severity

FLAG = "--num-gpu-blocks-override"
# Below this many tokens the cache holds not even one ordinary chat exchange (a prompt and its answer), whatever
# --max-model-len says: the server is unusable rather than merely smaller.
UNUSABLE_CACHE_TOKENS = 2048


def _check_blocks_override(facts: Facts) -> list[Finding]:
    event = facts.last_event(LogEventKind.KV_BLOCKS_OVERRIDDEN)
    if event is None or event.num_gpu_blocks is None or event.num_gpu_blocks_override is None:
        return []
    profiled, override = event.num_gpu_blocks, event.num_gpu_blocks_override
    if override == profiled:
        return []
    config = facts.config
    block = (config.block_size if config else None) or vllm_defaults.block_size(version=c.vllm_release(facts))
    change = ConfigChange(
        flag=FLAG,
        current=str(override),
        proposed="",
        reason="let the memory profile size the KV cache: the override is for tests",
    )
    evidence = c.log_evidence(event, name="num_gpu_blocks_override", value=override)
    evidence.description = f"the KV blocks the override set, where the memory profile found room for {profiled:,}"
    if override > profiled:
        return [_above_profile(profiled, override, evidence, change)]
    tokens = override * block
    max_len = config.max_model_len if config else None
    too_short = max_len is not None and tokens < max_len
    return [
        RULE_BLOCKS_OVERRIDE.finding(
            Severity.CRITICAL if too_short or tokens < UNUSABLE_CACHE_TOKENS else Severity.MEDIUM,
            f"{FLAG} holds the KV cache to {override:,} block(s), about {tokens:,} tokens at block size {block}, "
            f"of the {profiled:,} blocks the GPU has room for",
            summary=f"vLLM sized the KV cache from its memory profile ({profiled:,} blocks) and then took the override "
            "instead. A request whose prompt and output need more blocks than the cache holds can never be scheduled; "
            + (
                f"--max-model-len {max_len:,} is above what the cache holds, so such requests exist. "
                if too_short
                else ""
            )
            + "vLLM 0.32 refuses to start when the overridden cache holds less than --max-model-len; vLLM 0.11 "
            "started anyway, and longer requests waited for ever (vllm#27181).",
            evidence=[evidence],
            changes=[change],
            actions=[
                f"Take {FLAG} off the command (a test's knob, often copied from a benchmark script): the profile then "
                "sizes the cache from --gpu-memory-utilization.",
                "To serve with a smaller KV cache on purpose, lower --gpu-memory-utilization or set "
                "--kv-cache-memory-bytes instead, and keep --max-model-len within what it holds.",
            ],
            confidence=0.85,
        )
    ]


def _above_profile(profiled: int, override: int, evidence: Evidence, change: ConfigChange) -> Finding:
    """More blocks than the profile left memory for: the allocation, or a later step, runs the GPU out of memory."""
    return RULE_BLOCKS_OVERRIDE.finding(
        Severity.HIGH,
        f"{FLAG} asks for {override:,} KV blocks, more than the {profiled:,} the memory profile left room for",
        summary="The memory profile measured what the weights, activations and CUDA graphs need and left room for "
        f"{profiled:,} blocks; the override takes {override - profiled:,} more from memory it counted as spoken for, "
        "so allocating the cache, capturing CUDA graphs or a large batch can run the GPU out of memory.",
        evidence=[evidence],
        changes=[change],
        actions=[
            f"Take {FLAG} off the command, or keep it at or below {profiled:,}; to give the KV cache more room, raise "
            "--gpu-memory-utilization instead, which the profile accounts for.",
        ],
        confidence=0.75,
    )


RULE_BLOCKS_OVERRIDE = Rule(
    code="OP-1.15",
    title=f"{FLAG} replaced the KV cache size the memory profile found",
    category=Category.KV_CACHE,
    check=_check_blocks_override,
    needs=("events",),
    page=RulePage(
        checks="vLLM's `Overriding num_gpu_blocks=P with num_gpu_blocks_override=O` (INFO; V0 and V1).",
        why="The override is a testing knob: below the profile's count the cache holds fewer tokens than the GPU "
        "has room for, and requests longer than it holds are never scheduled; above it the cache takes memory the "
        "profile left for activations and CUDA graphs.",
        example="`Overriding num_gpu_blocks=125643 with num_gpu_blocks_override=1` (vllm#27181: a 16-token KV cache "
        "on an H100; vLLM 0.11 started anyway).",
        fix=f"Take {FLAG} off the command; size the cache with --gpu-memory-utilization or --kv-cache-memory-bytes.",
        limits="The tokens are the blocks times the block size: --block-size when the launch gives it, else vLLM's "
        "default on CUDA for the release (16 before 0.34); an MLA model's or the CPU backend's larger blocks are "
        "not read from the line.",
        references=["https://github.com/vllm-project/vllm/issues/27181"],
    ),
)

RULES: list[Rule] = [RULE_BLOCKS_OVERRIDE]
