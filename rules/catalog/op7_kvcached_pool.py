"""OP-7.217: kvcached's shared KV pool had fewer free pages than an allocation needed.

Why a rule of its own: kvcached (ovg-project/kvcached) lets several vLLM engines on one GPU share a physical KV pool
that grows and shrinks with their load. vLLM's scheduler asks the pool whether pages are free, then allocates them;
between the two another engine on the same pool may take them. kvcached logs the shortfall in its own words
(`[kvcached][WARNING] kv_cache_manager.py:174 available_size()=71 < need_size=76`), and in releases before its PR #301
the failed allocation reached vLLM's `assert` in the block pool's get_new_blocks and killed the engine core
(kvcached#262: six Qwen2.5-7B engines on one MI300X pool, under a staggered load; the PR states the race, and its
PRs #430 and #453 close later gaps of the same race).
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity


def _short_finding(facts: Facts, event: LogEvent, _found: re.Match[str]) -> Finding:
    died = bool(facts.events_of(LogEventKind.FATAL_ERROR, LogEventKind.ENGINE_DEAD))
    short = f"{event.num_gpu_blocks} free < {event.requested_tokens} needed"
    return RULE.finding(
        Severity.CRITICAL if died else Severity.MEDIUM,
        f"kvcached's shared KV pool ran short of pages ({short})"
        + (": the engines sharing it raced for its pages, and the engine core died of it" if died else ""),
        summary="kvcached lets several vLLM engines share one physical KV pool; vLLM's scheduler checks the pool's "
        "free pages, then allocates them, and another engine on the pool may take them in between. kvcached "
        "releases before its PR #301 let that failed allocation reach vLLM's assert in get_new_blocks, which kills "
        "the engine core (kvcached#262).",
        evidence=[c.log_evidence(event, name="kvcached pool pages", value=short)],
        actions=[
            "Upgrade kvcached to a release with its PRs #301, #430 and #453 (the allocation race between engines "
            "sharing a pool); restart the engines on it.",
            "Meanwhile put fewer engines on one pool, or give the pool more of the GPU, so a burst on one engine "
            "does not take the pages another's scheduler counted on.",
        ],
        confidence=0.8,
    )


RULE = Rule(
    code="OP-7.217",
    title="kvcached's shared KV pool short of pages (the allocation race between engines)",
    category=Category.MEMORY,
    check=c.on_kind(LogEventKind.KVCACHED_POOL_SHORT, _short_finding),
    needs=("events",),
    page=RulePage(
        checks="kvcached's `kv_cache_manager.py:N available_size()=F < need_size=N` warning; critical when the engine "
        "core died in the same text.",
        why="Engines sharing kvcached's pool race between the scheduler's check and the allocation; kvcached before "
        "its PR #301 let the loser's assert kill the engine core.",
        example="`[kvcached][WARNING] kv_cache_manager.py:174 available_size()=71 < need_size=76`, then `EngineCore "
        "encountered a fatal error.` (ovg-project/kvcached#262, vLLM 0.14.0 on MI300X).",
        fix="Upgrade kvcached (PRs #301, #430, #453).",
        limits="Reads kvcached's own warning; an engine death without it is HL-2's.",
        references=["https://github.com/ovg-project/kvcached/issues/262"],
    ),
)

RULES: list[Rule] = [RULE]
