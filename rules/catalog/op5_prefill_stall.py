"""OP-5.23: decode crawled while a long prompt was prefilled in chunks beside it.

Why a rule of its own: with chunked prefill every engine step carries one token for each decoding request
and a chunk of up to --max-num-batched-tokens prompt tokens; while a long prompt is being prefilled each
step takes as long as its chunk, so every stream in flight slows to one token per chunk. The stats lines
show it without metrics: an interval where running requests generate almost nothing, beside an interval
that finished tens of thousands of prompt tokens. Users read it as the server stalling.

A server started with --enable-logging-iteration-details (0.32) logs each step's make-up and time, which
measures the stall instead of inferring it: the steps that carried a prompt chunk beside decoding requests
against those that only decoded. Those lines also give this server's own cost of a prompt token, so the
budget proposed is sized from it and the step time it predicts is stated with its spread.
"""

from __future__ import annotations

import statistics

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

# Tokens per second per running sequence below which decode crawls: a person reads faster, and no GPU
# decodes one sequence this slowly on its own (OP-5.17 names a GPU that does).
CRAWL_TPS = 2.0


# The step lines' stall: a step carrying a prompt chunk beside decodes took this many times a decode-only step,
# and at least this long (every stream in flight waited that long for its next token: a half-second pause in a
# stream is what users see).
STALL_RATIO = 5.0
STALL_MS = 500.0
MIN_DECODE_STEPS = 10  # decode-only steps needed for their median time
# A chunk this small is mostly the step's fixed cost: its time says little about a prompt token's.
MIN_COSTED_CHUNK = 64


def _check_prefill_stall(facts: Facts) -> list[Finding]:
    steps = _decoding_steps(facts)
    if steps:  # measured per step: no need to infer the stall from the intervals' rates
        return _measured_stall(facts, steps)
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


def _decoding_steps(facts: Facts) -> list[LogEvent]:
    """The logged steps in which some request decoded (a data-parallel engine's dummy step served nobody)."""
    return [
        e
        for e in facts.events_of(LogEventKind.ITERATION_LINE)
        if not e.dummy and (e.generation_requests or 0) > 0 and e.step_ms is not None
    ]


def _measured_stall(facts: Facts, steps: list[LogEvent]) -> list[Finding]:
    decode = [e for e in steps if not e.context_tokens]
    mixed = [e for e in steps if e.context_tokens]
    if len(decode) < MIN_DECODE_STEPS or not mixed:
        return []
    base = statistics.median(e.step_ms for e in decode)
    worst = max(mixed, key=lambda e: e.step_ms)
    if worst.step_ms < max(STALL_MS, STALL_RATIO * base):
        return []
    typical = min(decode, key=lambda e: abs(e.step_ms - base))  # the decode-only step the evidence quotes
    return [_measured_finding(facts, base, typical, len(decode), mixed, worst)]


def prompt_token_costs(base_ms: float, mixed: list[LogEvent]) -> list[float]:
    """This server's time per prompt token (ms) over a decode-only step, one per step that carried a chunk of at
    least MIN_COSTED_CHUNK tokens (its excess over `base_ms` per token of its chunk), sorted."""
    return sorted(
        (e.step_ms - base_ms) / e.context_tokens for e in mixed if (e.context_tokens or 0) >= MIN_COSTED_CHUNK
    )


def chunk_steps_ms(base_ms: float, costs: list[float], chunk: int, prompt: int | None) -> tuple[float, float, float]:
    """The steps that prefill in chunks of `chunk` tokens beside the decodes: (mean, least, most) in ms.

    The mean is the median measured cost split evenly: a prompt's compute is the same whatever its chunks (each step
    also pays a decode step). The chunks differ as far as attention dominates, since a token attends to every one
    before it: the costs measured at several positions of a chunked prompt span that, and a `prompt` seen whole in
    one step spans from equal chunks (no attention) to the first at chunk/prompt and the last at 2 - chunk/prompt
    times the mean chunk's compute (attention alone)."""
    compute = chunk * statistics.median(costs)
    least, most = base_ms + chunk * costs[0], base_ms + chunk * costs[-1]
    if prompt:
        share = min(1.0, chunk / prompt)
        least, most = min(least, base_ms + compute * share), max(most, base_ms + compute * (2 - share))
    return base_ms + compute, least, most


def sized_budget(facts: Facts, base_ms: float, per_token_ms: float, decoding: int) -> int:
    """The largest power of two of tokens whose step (its `decoding` tokens and a prompt chunk filling the rest)
    meets the inter-token target on average at this server's cost per prompt token; never under --max-num-seqs,
    which vLLM refuses (vllm/config/scheduler.py)."""
    target_ms = c.itl_slo(facts) * 1000
    fitting = max(1.0, (target_ms - base_ms) / per_token_ms + decoding)
    seqs = c.max_num_seqs(facts) or c.default_max_num_seqs(facts)
    return max(seqs, 1 << int(fitting).bit_length() - 1)


def _smaller_chunks(facts: Facts, base: float, typical: LogEvent, mixed: list[LogEvent], worst: LogEvent):
    """The budget change sized from the step lines, with its predicted chunk steps; None when they cannot size one
    below both the budget and the stalled step (a smaller budget would not have cut that chunk)."""
    costs = prompt_token_costs(base, mixed)
    budget = c.batched_tokens(facts)
    decoding = typical.generation_tokens or 0
    if not costs:
        return None
    per_token = statistics.median(costs)
    proposed = sized_budget(facts, base, per_token, decoding)
    if proposed >= min(budget, worst.context_tokens + decoding):
        return None
    chunk = proposed - decoding
    # a step under the budget held its prompts whole (or a prompt's last chunk): its size bounds the spread
    whole = worst.context_tokens if worst.context_tokens + (worst.generation_tokens or 0) < budget else None
    mean, least, most = chunk_steps_ms(base, costs, chunk, whole)
    sizing = (
        f" At {proposed:,} a step carries at most {chunk:,} prompt tokens beside {decoding} decoding; this server's "
        f"cost of a prompt token ({per_token:.3g} ms, the median of {len(costs)} chunk steps) "
        f"predicts {mean:,.0f} ms a step on average while a long prompt prefills, from {least:,.0f} to {most:,.0f} ms "
        "(later chunks attend to more of the prompt)."
    )
    target_ms = c.itl_slo(facts) * 1000
    if mean > target_ms:
        sizing += (
            f" That stays above the {target_ms:g} ms inter-token target: vLLM takes no budget under --max-num-seqs "
            f"({proposed:,} here), so on this hardware keep long prompts off the replicas that serve streams."
        )
    return sizing, ConfigChange(
        flag="--max-num-batched-tokens",
        current=str(budget),
        proposed=str(proposed),
        reason=f"smaller prefill chunks: a step carrying one took up to {worst.step_ms:,.0f} ms here.{sizing}",
        cost="a long prompt takes more steps (each also pays the decode step's time), so its own first token comes "
        "somewhat later",
    )


def _measured_finding(
    facts: Facts, base: float, typical: LogEvent, decode_steps: int, mixed: list[LogEvent], worst: LogEvent
) -> Finding:
    slow = [e for e in mixed if e.step_ms >= STALL_RATIO * base]
    sized = _smaller_chunks(facts, base, typical, mixed, worst)
    sizing, changes = (sized[0], [sized[1]]) if sized else ("", [])
    budget = c.batched_tokens(facts)
    return RULE_PREFILL_STALL.finding(
        Severity.MEDIUM,
        f"streams waited {worst.step_ms:,.0f} ms for a token while {worst.context_tokens:,} prompt tokens shared "
        f"their step (decode-only steps: {base:,.0f} ms)",
        summary=f"Of the {len(mixed) + decode_steps} logged steps in which requests decoded, {len(mixed)} also "
        f"carried a prompt chunk and {len(slow)} of them took over {STALL_RATIO:g}x the {base:,.0f} ms median of a "
        f"decode-only step; the slowest, {worst.step_ms:,.0f} ms with {worst.context_tokens:,} prompt tokens beside "
        f"{worst.generation_requests} decoding request(s), is how long each of those streams waited for its next "
        "token. A step computes its whole chunk before any request gets a token, so the chunk's size sets the "
        f"pause (--max-num-batched-tokens is {budget:,}).{sizing}",
        evidence=[
            c.log_evidence(worst, name="step time with a prompt chunk", value=worst.step_ms, unit="ms"),
            c.log_evidence(typical, name="decode-only step time (median)", value=round(base, 2), unit="ms"),
        ],
        changes=changes,
        actions=[
            f"Lower --max-num-batched-tokens so a chunk step stays near the {c.itl_slo(facts) * 1000:g} ms "
            "inter-token target; the prompt's own first token then takes more, shorter steps.",
            "Send long-context requests to a replica of their own (or disaggregate prefill) so they do not share "
            "steps with interactive streams; a prefix cache hit skips their prefill altogether.",
        ],
        confidence=0.85,
    )


RULE_PREFILL_STALL = Rule(
    code="OP-5.23",
    title="decode crawls while a long prompt is prefilled in chunks",
    category=Category.LATENCY,
    check=_check_prefill_stall,
    needs=("events",),
    page=RulePage(
        checks=f"With each step logged (--enable-logging-iteration-details, 0.32): a step that carried a prompt "
        f"chunk beside decoding requests and took over {STALL_RATIO:g}x the median decode-only step and at least "
        f"{STALL_MS:g} ms ({MIN_DECODE_STEPS} decode-only steps at least). Without them: a stats line with requests "
        f"running and under {CRAWL_TPS:g} generated tokens/s per running "
        f"sequence, where that interval or the next finished more than {c.LONG_PREFILL_BUDGETS} steps' budget "
        "(--max-num-batched-tokens, or vLLM's default) of prompt tokens.",
        why="Every chunked-prefill step carries a prefill chunk beside the decodes; while a long prompt prefills, "
        "each step takes its chunk's compute and each stream gets one token per step.",
        example="Running: 2 reqs at 0.9 tokens/s, then 7408.7 prompt tokens/s in the next interval: ~74k tokens "
        "of other clients' prompts prefilled in 8,192-token chunks of ~3.5 s (blazux/qwen3.8-Flash-DGX#9). With the "
        "steps logged, real vLLM 0.32 on a CPU: decode-only steps of 28 ms, and a 2,806-token prompt prefilled in one "
        "7.1 s step beside four streams at --max-num-batched-tokens 4096 (tests/fixtures/vllm_cpu).",
        fix="Lower --max-num-batched-tokens (from the step lines: the largest power of two of prompt tokens whose step "
        "meets the inter-token target at this server's measured cost per prompt token, never under --max-num-seqs, "
        "with the predicted step time and its spread); keep long-context traffic off the replicas that serve streams.",
        limits="V1 counts a prompt's tokens when its prefill finishes, so the prefill is seen in the interval after "
        "the crawl; a prefill cut by the paste's end is not seen. Slow decode without a long prefill beside it is "
        "OP-5.17's or OP-5.13's. From step lines, a prompt's length is seen only when one step held it whole: the "
        "spread of chunks of a longer one comes from the costs measured along it. A step's time includes whatever "
        "else it did (a spec-decode draft, an encoder input): a mean cost over many chunk steps is steadier than one.",
        references=[c.OPTIMIZATION_DOCS, "https://github.com/blazux/qwen3.8-Flash-DGX/issues/9"],
    ),
)

RULES: list[Rule] = [RULE_PREFILL_STALL]
