"""OP-7.217: kvcached's shared KV pool had fewer free blocks than an allocation needed.

Why a rule of its own: kvcached (ovg-project/kvcached) lets several vLLM engines on one GPU share a physical KV pool
that grows and shrinks with their load. vLLM's scheduler asks the pool whether blocks are free, then allocates them;
between the two another engine on the same pool may take them. kvcached logs the shortfall in its own words
(`[kvcached][WARNING] kv_cache_manager.py:174 available_size()=71 < need_size=76`). In releases before its PR #301 the
failed allocation reached vLLM's `assert` in the block pool's get_new_blocks and killed the engine core (kvcached#262:
six Qwen2.5-7B engines on one MI300X pool under a staggered load; the PR states the race, and its PRs #430 and #453
close later gaps of it). From #301 on the shortfall is a transient "pool exhausted" the scheduler waits out, so the
warning alone is a note about a full pool; only an engine death whose root is that assert (or is not named) is read as
the race's.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

# The root exceptions an engine death of this race can have: the block pool's assert, or none the text names
_RACE_ROOTS = frozenset({None, "AssertionError"})
# Causes of an engine death the text may name apart from its traceback's root: then the death is theirs
_OTHER_CAUSES = (
    LogEventKind.CUDA_OOM,
    LogEventKind.CUDA_KERNEL_FAULT,
    LogEventKind.CUDA_RUNTIME_ERROR,
    LogEventKind.GPU_FAULT,
    LogEventKind.NCCL_ERROR,
    LogEventKind.NCCL_WATCHDOG_TIMEOUT,
)


def died_of_the_race(facts: Facts) -> bool:
    """kvcached's pool ran short and an engine death follows whose root is the race's (the block pool's assert, or
    none named) with no other cause in the text. HL-2 steps aside for OP-7.217 on exactly this, so the two rules
    never disagree about whose death it is."""
    if not facts.events_of(LogEventKind.KVCACHED_POOL_SHORT):
        return False
    deaths = facts.events_of(LogEventKind.FATAL_ERROR, LogEventKind.ENGINE_DEAD)
    named_elsewhere = facts.events_of(*_OTHER_CAUSES)
    return bool(deaths) and not named_elsewhere and all(e.exception in _RACE_ROOTS for e in deaths)


def _short_finding(facts: Facts, event: LogEvent, _found: re.Match[str]) -> Finding:
    short = f"{event.num_gpu_blocks} blocks free < {event.blocks_needed} needed"
    evidence = [c.log_evidence(event, name="kvcached pool blocks", value=short)]
    if not died_of_the_race(facts):
        return RULE.finding(
            Severity.LOW,
            f"kvcached's shared KV pool was full for an allocation ({short})",
            summary="kvcached lets several vLLM engines share one physical KV pool; this allocation found fewer "
            "free blocks than it asked for, so the request waits for blocks (or, on kvcached before its PR #301, "
            "the engine's assert could fail: kvcached#262). On its own it says the pool is at its limit.",
            evidence=evidence,
            actions=[
                "If it repeats, give the pool more of the GPU or put fewer engines on it; on a kvcached before PR "
                "#301 upgrade it, since there the same shortfall can kill an engine core.",
            ],
            confidence=0.7,
        )
    return RULE.finding(
        Severity.CRITICAL,
        f"kvcached's shared KV pool ran short ({short}) and the engine core died: the engines sharing it raced for "
        "its blocks",
        summary="kvcached lets several vLLM engines share one physical KV pool; vLLM's scheduler checks the pool's "
        "free blocks, then allocates them, and another engine on the pool may take them in between. kvcached "
        "releases before its PR #301 let that failed allocation reach vLLM's assert in get_new_blocks, which kills "
        "the engine core (kvcached#262).",
        evidence=evidence,
        actions=[
            "Upgrade kvcached to a release with its PRs #301, #430 and #453 (the allocation race between engines "
            "sharing a pool); restart the engines on it.",
            "Meanwhile put fewer engines on one pool, or give the pool more of the GPU, so a burst on one engine "
            "does not take the blocks another's scheduler counted on.",
        ],
        confidence=0.8,
    )


RULE = Rule(
    code="OP-7.217",
    title="kvcached's shared KV pool short of blocks (the allocation race between engines)",
    category=Category.MEMORY,
    check=c.on_kind(LogEventKind.KVCACHED_POOL_SHORT, _short_finding),
    needs=("events",),
    page=RulePage(
        checks="kvcached's `kv_cache_manager.py:N available_size()=F < need_size=N` warning: critical beside an engine "
        "death whose root is an AssertionError or not named, a low note alone.",
        why="Engines sharing kvcached's pool race between the scheduler's check and the allocation; kvcached before "
        "its PR #301 let the loser's assert kill the engine core.",
        example="`[kvcached][WARNING] kv_cache_manager.py:174 available_size()=71 < need_size=76`, then `EngineCore "
        "encountered a fatal error.` (ovg-project/kvcached#262, vLLM 0.14.0 on MI300X).",
        fix="Upgrade kvcached (PRs #301, #430, #453).",
        limits="Reads kvcached's own warning; an engine death with another root (an out of memory) is that root's.",
        references=["https://github.com/ovg-project/kvcached/issues/262"],
    ),
)

RULES: list[Rule] = [RULE]
