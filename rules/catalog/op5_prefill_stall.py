"""OP-5.23: decode crawled while a long prompt was prefilled in chunks beside it.

Why a rule of its own: with chunked prefill every engine step carries one token for each decoding request
and a chunk of up to --max-num-batched-tokens prompt tokens; while a long prompt is being prefilled each
step takes as long as its chunk, so every stream in flight slows to one token per chunk. The stats lines
show it without metrics: an interval where running requests generate almost nothing, beside an interval
that finished tens of thousands of prompt tokens. Users read it as the server stalling.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

# Tokens per second per running sequence below which decode crawls: a person reads faster, and no GPU
# decodes one sequence this slowly on its own (OP-5.17 names a GPU that does).
CRAWL_TPS = 2.0


def _check_prefill_stall(facts: Facts) -> list[Finding]:
    lines = c.stats_lines(facts)
    for index, line in enumerate(lines):
        running = line.running or 0
        per_sequence = (line.generation_throughput_tps or 0.0) / running if running else None
        if per_sequence is None or per_sequence >= CRAWL_TPS:
            continue
        prefill = c.long_prefill_beside(facts, lines, index)
        if prefill is not None:
            return [_stall_finding(facts, line, per_sequence, *prefill)]
    return []


def _stall_finding(facts: Facts, crawl: LogEvent, per_sequence: float, tokens: int, finished: LogEvent) -> Finding:
    budget = c.batched_tokens(facts)
    changes = []
    if budget > c.DEFAULT_MAX_NUM_BATCHED_TOKENS:
        changes.append(
            ConfigChange(
                flag="--max-num-batched-tokens",
                current=str(budget),
                proposed=str(c.DEFAULT_MAX_NUM_BATCHED_TOKENS),
                reason="smaller prefill chunks: a step that carries one takes less time, so streams in flight get "
                "their next token sooner (vLLM's optimization guide: smaller values give better inter-token latency)",
                cost="a long prompt takes more steps, so its own first token comes later",
            )
        )
    return RULE_PREFILL_STALL.finding(
        Severity.MEDIUM,
        f"decode crawled at {per_sequence:.2g} tokens/s per sequence while {tokens:,} prompt tokens were prefilled "
        "beside it: the steps went to the prefill",
        summary=f"With {crawl.running} requests running the server generated {crawl.generation_throughput_tps:g} "
        f"tokens/s, and the same or the next interval finished {tokens:,} prompt tokens, more than "
        f"{c.LONG_PREFILL_BUDGETS} steps' budget of {budget:,}. Chunked prefill splits a long prompt over steps of "
        "up to --max-num-batched-tokens tokens and puts one token of every decoding request in each of them, so "
        "while the prompt prefills, each stream gets one token per chunk's compute (V0 without chunked prefill "
        "runs whole prefills before any decode step: worse). It ends when the prefill does.",
        evidence=[
            c.log_evidence(crawl, name="generation throughput per running sequence", value=round(per_sequence, 3)),
            c.log_evidence(finished, name="prompt tokens finished", value=tokens),
        ],
        changes=changes,
        actions=[
            f"Lower --max-num-batched-tokens ({c.DEFAULT_MAX_NUM_BATCHED_TOKENS} is the inter-token-latency end of "
            "vLLM's optimization guide): "
            "smaller chunks interleave decode more often, at the long prompt's own time to first token.",
            "Send long-context requests to a replica of their own (or disaggregate prefill) so they do not share "
            "steps with interactive streams; a prefix cache hit skips their prefill altogether.",
        ],
        confidence=0.7,
    )


RULE_PREFILL_STALL = Rule(
    code="OP-5.23",
    title="decode crawls while a long prompt is prefilled in chunks",
    category=Category.LATENCY,
    check=_check_prefill_stall,
    needs=("events",),
    page=RulePage(
        checks=f"A stats line with requests running and under {CRAWL_TPS:g} generated tokens/s per running "
        f"sequence, where that interval or the next finished more than {c.LONG_PREFILL_BUDGETS} steps' budget "
        "(--max-num-batched-tokens, or vLLM's default) of prompt tokens.",
        why="Every chunked-prefill step carries a prefill chunk beside the decodes; while a long prompt prefills, "
        "each step takes its chunk's compute and each stream gets one token per step.",
        example="Running: 2 reqs at 0.9 tokens/s, then 7408.7 prompt tokens/s in the next interval: ~74k tokens "
        "of other clients' prompts prefilled in 8,192-token chunks of ~3.5 s (blazux/qwen3.8-Flash-DGX#9).",
        fix="Lower --max-num-batched-tokens; keep long-context traffic off the replicas that serve streams.",
        limits="V1 counts a prompt's tokens when its prefill finishes, so the prefill is seen in the interval after "
        "the crawl; a prefill cut by the paste's end is not seen. Slow decode without a long prefill beside it is "
        "OP-5.17's or OP-5.13's.",
        references=[c.OPTIMIZATION_DOCS, "https://github.com/blazux/qwen3.8-Flash-DGX/issues/9"],
    ),
)

RULES: list[Rule] = [RULE_PREFILL_STALL]
