"""OP-7.185: LMCache's paged allocator refused a buffer size that is not a whole number of its chunks.

Why a rule of its own: LMCache's disaggregated-prefill backend (its PD backend under vLLM's LMCache connector) carves
its GPU transfer buffer into chunks of the model's KV bytes per chunk, and its paged memory allocator asserts that
the configured size divides evenly: `AssertionError: Buffer size 1073741824 must be a multiple of align bytes
29360128 in paged memory allocator.` The engine core fails at start. LMCache PR #2104, whose author met it with
`pd_buffer_size` set to 1 GiB, names the cause (the size not divisible by the per-chunk byte size) and makes the
allocator round it; before that release the size has to be a multiple itself, which the words give.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

NOT_ALIGNED = re.compile(
    r"Buffer size (?P<size>\d+) must be a multiple of align bytes (?P<align>\d+) in paged memory allocator"
)


def _buffer_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    size, align = int(match["size"]), int(match["align"])
    chunks = size // align
    fitted = max(chunks, 1) * align
    reason = (
        f"the largest multiple of the {align:,}-byte chunk that is not above the size given"
        if chunks
        else f"one {align:,}-byte chunk, the least the allocator takes (the size given is below it)"
    )
    return RULE_LMCACHE_BUFFER.finding(
        Severity.CRITICAL,
        f"LMCache's PD buffer of {size:,} bytes is not a whole number of its {align:,}-byte chunks: set "
        f"pd_buffer_size to {fitted:,}",
        summary="LMCache's disaggregated-prefill backend divides its GPU transfer buffer into chunks of the model's "
        "KV bytes per chunk (the align bytes), and its paged allocator refuses a size that does not divide evenly, "
        "so the engine core stops at start. The chunk's bytes follow from the model and LMCache's chunk size, so the "
        "buffer is what to change.",
        evidence=[c.log_evidence(event, name="LMCache's allocator", value=match.group(0))],
        changes=[
            ConfigChange(
                flag="pd_buffer_size",
                current=str(size),
                proposed=str(fitted),
                reason=reason,
                cost="a smaller buffer holds fewer chunks in flight between prefill and decode"
                if chunks
                else "a larger buffer takes more GPU memory from the KV cache",
                kind="setting",
            )
        ],
        actions=[
            "Set it in LMCache's configuration (the YAML file LMCACHE_CONFIG_FILE names, or LMCACHE_PD_BUFFER_SIZE) "
            "on the prefill and decode sides alike.",
            "Or upgrade LMCache to a release with its PR #2104, which rounds the buffer to the chunk by itself.",
        ],
        confidence=0.85,
    )


RULE_LMCACHE_BUFFER = Rule(
    code="OP-7.185",
    title="LMCache's PD buffer is not a whole number of its chunks",
    category=Category.STARTUP,
    check=c.on_phrase(NOT_ALIGNED, _buffer_finding),
    needs=("events",),
    page=RulePage(
        checks="LMCache's `AssertionError: Buffer size N must be a multiple of align bytes M in paged memory "
        "allocator.`",
        why="Disaggregated prefill with LMCache does not start, in an assertion of LMCache's allocator.",
        example="`AssertionError: Buffer size 1073741824 must be a multiple of align bytes 29360128 in paged memory "
        "allocator.` (LMCache PR #2104: pd_buffer_size not divisible by the per-chunk bytes).",
        fix="pd_buffer_size set to a multiple of the align bytes (the rule computes the largest one below the size "
        "given), or an LMCache release with PR #2104.",
        limits="The environment variable's name follows LMCache's LMCACHE_<KEY> convention for its config keys.",
        references=["https://github.com/LMCache/LMCache/pull/2104"],
    ),
)

RULES: list[Rule] = [RULE_LMCACHE_BUFFER]
