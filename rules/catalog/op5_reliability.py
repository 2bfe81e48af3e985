"""OP-5 reliability: requests that never get an answer — aborted, failed or rejected as too long.

OP-5.8 watches the share of finished requests that were aborted or errored (clients timing
out); OP-5.12 counts requests rejected as longer than --max-model-len (docs/reference.md §2.8).
"""

from __future__ import annotations

import math
import re

from rules import signals
from rules.alerts import BY, MIN_REQUESTS_PER_S, Alert, rate
from rules.catalog import common as c
from rules.events import LogEventKind as K
from rules.facts import Facts
from rules.model import Category, ConfigChange, Evidence, Finding, Rule, RulePage, Severity
from rules.signals import fmt

ABORT_SHARE = 0.05
TOO_LONG_MANY = 5  # this many rejections make it medium severity
CACHE_UTILIZATION = 0.95  # OP-5.52 proposes this --gpu-memory-utilization when the launch uses less
MAX_MODEL_LEN_STEP = 1024  # a proposed --max-model-len is the longest rejected request rounded up to this


# --- OP-5.8 many requests aborted or failed ----------------------------------------------------


def _check_aborts(facts: Facts) -> list[Finding]:
    if facts.window is None:
        return []
    by_reason = facts.window.total.by_label("vllm:request_success_total")
    total = sum(by_reason.values())
    failed = by_reason.get("abort", 0.0) + by_reason.get("error", 0.0)
    if total <= 0 or failed / total <= ABORT_SHARE:
        return []
    share = failed / total
    return [
        RULE_ABORTS.finding(
            Severity.MEDIUM,
            f"{share:.0%} of finished requests aborted or failed > {ABORT_SHARE:.0%}",
            evidence=[
                Evidence(
                    source=signals.window_source(facts),
                    name="vllm:request_success_total{abort,error} share",
                    value=round(share, 3),
                    threshold=ABORT_SHARE,
                    comparison=">",
                )
            ],
            confidence=0.7,
            summary="Clients gave up (timeouts, disconnects) or requests errored.",
            actions=["Compare client timeouts with TTFT/e2e p99; check the server log for request errors."],
        )
    ]


# Aborted or failed requests above ABORT_SHARE of those finished, where requests finished at all. A
# share held for five minutes is a symptom users feel (high: it pages), where one triage window's
# share is a finding to read (medium).
FINISHED = "vllm:request_success_total"
ALERT_FAILING = Alert(
    name="VllmRequestsFailing",
    expr=(
        f'sum by ({BY}) (rate({FINISHED}{{finished_reason=~"abort|error"}}[5m])) / sum by ({BY}) '
        f"(rate({FINISHED}[5m])) > {ABORT_SHARE:g} and on ({BY}) ({rate(FINISHED, '5m')} >= {MIN_REQUESTS_PER_S:g})"
    ),
    for_="5m",
    severity=Severity.HIGH,
    description=f"{{{{ $labels.instance }}}} ({{{{ $labels.model_name }}}}): {{{{ $value | humanizePercentage }}}} "
    f"of finished requests aborted or failed (> {ABORT_SHARE:.0%}).",
)

RULE_ABORTS = Rule(
    code="OP-5.8",
    title="many requests aborted or failed",
    category=Category.RELIABILITY,
    check=_check_aborts,
    alerts=(ALERT_FAILING,),
    needs=("window",),
    page=RulePage(
        checks="Share of vllm:request_success_total with finished_reason abort or error (0.13+) over the window, "
        f"above {c.percent(ABORT_SHARE)}.",
        why="request_success_total counts aborts (client disconnects) too; a high share means clients time out.",
        example=f"12 % of finished requests aborted > {c.percent(ABORT_SHARE)}.",
        fix="Compare client timeouts with latency; fix the latency cause or raise timeouts.",
        limits="Aborts can be normal for interactive UIs (users pressing stop).",
        references=[c.METRICS_DOCS],
    ),
)


# --- OP-5.12 requests rejected as too long -----------------------------------------------------


def _check_too_long(facts: Facts) -> list[Finding]:
    events = facts.events_of(K.REQUEST_TOO_LONG)
    if not events:
        return []
    limit = max((e.max_model_len or 0) for e in events) or (facts.config.max_model_len if facts.config else None)
    longest = max((e.requested_tokens or e.prompt_tokens or 0) for e in events)
    longest_prompt = max((e.prompt_tokens or 0) for e in events)
    longer = _longer_context(facts, limit, longest, longest_prompt)
    # Proposed only where the memory figures say it fits; else an alternative whose cost says what it needs.
    changes = [longer] if longer is not None and longer.safety == "safe" else []
    alternatives = [longer] if longer is not None and longer.safety != "safe" else []
    actions = [
        "Truncate or summarise long inputs client-side, or raise --max-model-len where memory allows. A client that "
        "resends the whole conversation each turn (a chat UI, an agent, a multi-turn RL rollout) outgrows the context "
        "turn by turn: trim or summarise the history it sends, or end the episode at the limit."
    ]
    multimodal = any(_MULTIMODAL.search(e.message or "") for e in events)
    if multimodal:  # vLLM's own words: the prompt counts its images' tokens, which their resolution sets
        actions.insert(0, MULTIMODAL_ACTION)
    if limit and longest_prompt and longest_prompt < limit:  # the prompt fits: max_tokens takes the rest
        actions.insert(
            0,
            f"Lower the request's max_tokens in the client to at most {limit - longest_prompt:,}: its "
            f"{longest_prompt:,} prompt tokens leave that much of the {limit:,}-token context (or leave max_tokens "
            "out: vLLM then fills the context).",
        )
    return [
        RULE_TOO_LONG.finding(
            Severity.MEDIUM if len(events) >= TOO_LONG_MANY else Severity.LOW,
            f"{len(events)} request(s) longer than the context length"
            + (f", --max-model-len {limit}" if limit else "")
            + (f" (longest {fmt(longest)} tokens)" if longest else ""),
            evidence=[c.log_evidence(events[-1], "rejected request tokens", longest or None, limit, ">", "tokens")],
            changes=changes,
            alternatives=alternatives,
            confidence=0.7,
            summary="Clients send prompts (plus max_tokens) longer than the server accepts: they get HTTP 400."
            + (
                " The prompt's length counts its images' (or video frames') tokens too, as vLLM's message says."
                if multimodal
                else ""
            ),
            actions=actions,
        )
    ]


# vLLM's refusal of a prompt that counts multimodal tokens ("… number of text tokens plus multimodal tokens. For image
# inputs, the number of image tokens depends on the number of images …").
_MULTIMODAL = re.compile(r"multimodal tokens|image tokens", re.IGNORECASE)
MULTIMODAL_ACTION = (
    "Make the images cost fewer tokens: a vision model's processor turns each image into tokens by its resolution, "
    "so lower max_pixels (Qwen2-VL and Qwen2.5-VL; max_dynamic_patch for InternVL, num_crops for Phi-3-vision) with "
    "--mm-processor-kwargs on the server or in the client's or evaluation harness's model arguments, or send fewer "
    "images or video frames per request."
)


def _longer_context(facts: Facts, limit: int | None, longest: int, longest_prompt: int) -> ConfigChange | None:
    """--max-model-len raised to the longest request (rounded up to MAX_MODEL_LEN_STEP): when the memory
    figures say it fits, or when a prompt alone is over the limit (no client max_tokens can help it), with
    what it needs said in the cost."""
    fits = facts.memory.max_model_len_that_fits if facts.memory else None
    proposed = int(math.ceil(longest / MAX_MODEL_LEN_STEP) * MAX_MODEL_LEN_STEP) if longest else None
    if not limit or not proposed or proposed <= limit or (fits and proposed > fits):
        return None
    if fits:
        reason = f"the longest rejected request needs {longest:,} tokens; up to {fits:,} fit the KV cache"
        return ConfigChange(
            flag="--max-model-len",
            current=str(limit),
            proposed=str(proposed),
            reason=reason,
            cost="fewer long requests run at once",
        )
    if longest_prompt < limit:
        return None  # a shorter max_tokens lets these through; the memory for a longer context is unknown
    return ConfigChange(
        flag="--max-model-len",
        current=str(limit),
        proposed=str(proposed),
        reason=f"a prompt alone is {longest_prompt:,} tokens, "
        + (
            f"over the {limit:,}-token context"
            if longest_prompt > limit
            else "the whole context, with no room to answer"
        )
        + ": only a longer context lets it through",
        cost="KV memory for one such request (servops advise sizes it) and a model whose positions reach it: past "
        "its native context that takes --rope-scaling (or --hf-overrides), which can cost accuracy",
        safety="unsafe",
    )


RULE_TOO_LONG = Rule(
    code="OP-5.12",
    title="requests rejected as too long",
    category=Category.RELIABILITY,
    check=_check_too_long,
    needs=("events",),
    page=RulePage(
        checks="Log lines of the request-too-long 400 errors (every version's wording, docs/reference.md §2.8): how "
        f"many ({TOO_LONG_MANY}+ is medium severity), and the longest prompt (+ max_tokens) against "
        "--max-model-len.",
        why="These requests fail outright; either clients need to shorten them or the limit is set below what the "
        "memory would allow.",
        example="5 requests rejected: maximum context length 8,192, longest 11,300 tokens; 26,048 fit -> 12288.",
        fix=f"Raise --max-model-len to the longest request rounded up to {MAX_MODEL_LEN_STEP:,} when the memory "
        "figures say it fits (as an alternative, marked unsafe, when a prompt alone is over the limit and the memory "
        "is unknown: the memory and the model's positions must reach it); when the prompt fits, lower max_tokens "
        "in the client; else truncate client-side. When vLLM's refusal says the prompt counts multimodal tokens, "
        "the images' resolution first (max_pixels through --mm-processor-kwargs or the client's arguments).",
        limits="Only sees rejections that reached the server log; from 0.32 an over-long max_tokens is clamped "
        "silently, not rejected.",
        references=[],
    ),
)


# --- OP-5.15 prompts over V0's scheduler limit -------------------------------------------------------


def _check_prompt_limit(facts: Facts) -> list[Finding]:
    events = [e for e in facts.events_of(K.PROMPT_OVER_LIMIT) if e.prompt_limit]
    if not events:
        return []
    limit = min(e.prompt_limit for e in events)
    longest = max(e.prompt_tokens or 0 for e in events)
    context = facts.config.max_model_len if facts.config else None
    changes, why = [], "vLLM V0's limit is --max-model-len, or the token budget when chunked prefill is off"
    if context and limit < context:  # the budget: every prompt must be prefilled in one step
        why = f"below --max-model-len {context}, so the limit is the per-step token budget"
        proposed = min(context, max(limit * 2, 2 ** math.ceil(math.log2(longest)))) if longest else context
        changes.append(
            ConfigChange(
                flag="--max-num-batched-tokens",
                current=str(limit),
                proposed=str(proposed),
                reason=f"without chunked prefill a prompt is prefilled in one step, so no prompt longer than the "
                f"{limit}-token budget is admitted; the longest refused had {longest:,} tokens",
                cost="longer steps while a long prompt is prefilled (other streams' inter-token latency) and more "
                "activation memory at start-up",
            )
        )
    return [
        RULE_PROMPT_LIMIT.finding(
            Severity.MEDIUM if len(events) >= TOO_LONG_MANY else Severity.LOW,
            f"{len(events)} prompt(s) too long for the scheduler's limit of {limit} tokens ({why})",
            evidence=[c.log_evidence(events[-1], "refused prompt tokens", longest or None, limit, ">", "tokens")],
            changes=changes,
            confidence=0.8,
            summary="vLLM V0's scheduler drops a prompt longer than its limit with a warning: the request ends "
            "without output.",
            actions=[
                *(
                    []
                    if changes
                    else [
                        f"If --max-model-len is {limit} (set by you, or by a framework that launches vLLM with a "
                        "default of its own: Xinference passed 4096, xorbitsai/inference PR #2385), raise it toward "
                        "the model's context length; if it is larger, the limit is --max-num-batched-tokens: raise "
                        "that."
                    ]
                ),
                "Or enable chunked prefill (--enable-chunked-prefill), where the model supports it: the limit "
                "is then --max-model-len.",
            ],
        )
    ]


RULE_PROMPT_LIMIT = Rule(
    code="OP-5.15",
    title="prompts over the V0 scheduler's limit",
    category=Category.RELIABILITY,
    check=_check_prompt_limit,
    needs=("events",),
    page=RulePage(
        checks="V0's warning `Input prompt (N tokens) is too long and exceeds limit of L`, against --max-model-len.",
        why="Without chunked prefill V0 admits no prompt longer than the per-step token budget "
        "(--max-num-batched-tokens) or --max-model-len, whichever is smaller, and drops it with a warning.",
        example="Input prompt (2501 tokens) is too long and exceeds limit of 2048, with --max-model-len 128000 -> "
        "--max-num-batched-tokens 4096.",
        fix="Raise --max-num-batched-tokens to the longest prompt (rounded up to a power of two, at most "
        "--max-model-len), or enable chunked prefill; without the launch flags, --max-model-len first when it is the "
        "limit (a launcher's own default: xorbitsai/inference PR #2385).",
        limits="Proposes the budget only when the launch flags show --max-model-len above the limit.",
        references=["docs/vllm-messages.md"],
    ),
)


# --- OP-5.52 a prompt larger than the whole KV cache (V0) ----------------------------------------------


def _check_prompt_over_cache(facts: Facts) -> list[Finding]:
    events = [e for e in facts.events_of(K.PROMPT_OVER_LIMIT) if not e.prompt_limit]
    if not events:
        return []
    longest = max(e.prompt_tokens or 0 for e in events)
    config = facts.config
    changes = []
    if config and config.gpu_memory_utilization and config.gpu_memory_utilization < CACHE_UTILIZATION:
        changes.append(
            ConfigChange(
                flag="--gpu-memory-utilization",
                current=str(config.gpu_memory_utilization),
                proposed=str(CACHE_UTILIZATION),
                reason="every GiB the limit adds goes to the KV cache, which holds fewer tokens than one prompt",
                cost="less headroom for other processes on the GPU",
            )
        )
    return [
        RULE_PROMPT_OVER_CACHE.finding(
            Severity.MEDIUM if len(events) >= TOO_LONG_MANY else Severity.LOW,
            f"{len(events)} prompt(s) need more KV cache blocks than the whole cache has (the longest "
            f"{longest:,} tokens): the cache is smaller than --max-model-len promises",
            evidence=[c.log_evidence(events[-1], "refused prompt tokens", longest or None)],
            changes=changes,
            confidence=0.75,
            summary="vLLM V0's block manager drops a prompt whose blocks exceed the cache's capacity with a "
            "warning, so the request ends without output; V0 did not check at start-up that --max-model-len fits "
            "the cache, as later releases do.",
            actions=[
                "Give the KV cache more memory: fewer CUDA graphs (--enforce-eager), a lower --max-num-seqs (less "
                "memory taken at profiling), an fp8 KV cache (--kv-cache-dtype fp8), or more GPUs "
                "(--tensor-parallel-size).",
                f"Or lower --max-model-len below {longest:,} tokens, so that the limit the clients see is one the "
                "cache can hold and over-long prompts are refused with an error instead of dropped.",
            ],
        )
    ]


RULE_PROMPT_OVER_CACHE = Rule(
    code="OP-5.52",
    title="a prompt larger than the whole KV cache (V0)",
    category=Category.RELIABILITY,
    check=_check_prompt_over_cache,
    needs=("events",),
    page=RulePage(
        checks="V0's warning `Input prompt (N tokens) is too long and exceeds the capacity of block_manager`.",
        why="V0's block manager refuses (never schedules) a prompt needing more blocks than the GPU cache holds, "
        "minus its watermark; the request is dropped with a warning and no error reaches the client.",
        example="Input prompt (1217 tokens) is too long and exceeds the capacity of block_manager (vllm#2198).",
        fix=f"Raise --gpu-memory-utilization (to {CACHE_UTILIZATION} when it is lower), free memory for the "
        "cache (--enforce-eager, a lower --max-num-seqs, --kv-cache-dtype fp8, more GPUs), or lower "
        "--max-model-len to what the cache holds.",
        limits="The warning does not say how many tokens the cache holds, so no --max-model-len is computed.",
        references=["docs/vllm-messages.md"],
    ),
)

RULES: list[Rule] = [RULE_ABORTS, RULE_TOO_LONG, RULE_PROMPT_LIMIT, RULE_PROMPT_OVER_CACHE]
