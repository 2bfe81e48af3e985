"""OP-5.3: the KV cache is over-committed — requests are preempted and recomputed.

docs/reference.md §5: "preemptions > 0 → raise gpu_memory_utilization; lower max_num_seqs; more
TP or PP; scale out". V1 logs no per-preemption line (there §2.5): the rate comes from the counter over
a window, the stats line's `Preemptions:` (0.12+), the V0 warning or the since-start counter.
"""

from __future__ import annotations

import math

from rules import signals
from rules.alerts import Alert, rate
from rules.catalog import common as c
from rules.facts import Facts
from rules.model import Category, ConfigChange, Evidence, Finding, Rule, RulePage, Severity
from rules.signals import fmt

FIRST_STEP_SEQS_SHARE = 0.75  # without memory facts, cap --max-num-seqs at this share of the running count
MAX_TOKENS = "vllm:request_params_max_tokens"
MIB = 2**20
GIB = 2**30


# --- OP-5.3 preemptions ------------------------------------------------------------------------


def _measured_request_tokens(facts: Facts) -> float | None:
    """p95 prompt + p95 max_tokens of the requests vLLM finished in the window (its own histograms),
    capped at max-model-len: the KV one request may need, when the workload gives no lengths."""
    prompt = signals.quantile(facts, c.PROMPT_TOKENS, "p95")
    output = signals.quantile(facts, MAX_TOKENS, "p95")
    if prompt is None or output is None:
        return None
    limit = facts.config.max_model_len if facts.config else None
    return min(prompt.value + output.value, limit or math.inf)


def _larger_pool(facts: Facts, request_tokens: float | None) -> ConfigChange | None:
    """A KV space given in bytes (`--kv-cache-memory-bytes`, as vLLM's CPU backend takes it), grown to
    hold every request in flight at its p95 size; None when the space is not set that way or a figure
    is missing. Why in bytes: nothing else is carved out of that space, so its tokens scale with it
    (the pool's own bytes per token: the set bytes over the tokens the server reported)."""
    config, memory = facts.config, facts.memory
    if not (config and config.kv_cache_memory_bytes and config.is_explicit("kv_cache_memory_bytes")):
        return None
    if not (memory and memory.kv_cache_tokens and request_tokens):
        return None
    in_flight = _in_flight(facts)
    current = config.kv_cache_memory_bytes
    needed = math.ceil(request_tokens * in_flight * current / memory.kv_cache_tokens / MIB) * MIB
    if in_flight < 1 or needed <= current:
        return None
    return ConfigChange(
        flag="--kv-cache-memory-bytes",
        current=str(current),
        proposed=str(needed),
        reason=f"room for the {fmt(in_flight)} requests in flight at their p95 size ({fmt(request_tokens)} tokens "
        f"each): {needed / MIB:,.0f} MiB instead of {current / MIB:,.0f} MiB",
        cost=f"{(needed - current) / MIB:,.0f} MiB more memory for the KV cache (host RAM on vLLM's CPU backend)",
    )


def _in_flight(facts: Facts) -> float:
    run, queue = signals.running(facts), signals.waiting(facts)
    return (run.value if run else 0.0) + (queue.value if queue else 0.0)


def _larger_share(facts: Facts, request_tokens: float | None) -> ConfigChange | None:
    """On a GPU whose size, KV pool and KV bytes per token are known: the --gpu-memory-utilization at
    which the pool holds every request in flight at its p95 size, at most SAFE_MAX; None without the
    figures or when the share would not grow. Why this arithmetic: vLLM gives the KV cache what is
    left of utilisation x device memory after weights, activations and graphs, and none of those
    moves with the share, so each point of the device added to the share is a point of KV
    (common.share_for_kv, the step OP-1.1 takes for a pool too small to start)."""
    memory, total = facts.memory, c.total_gib(facts)
    if c.on_cpu_backend(facts) or not (memory and memory.kv_bytes_per_token and memory.available_kv_gib):
        return None
    in_flight = _in_flight(facts)
    if not (total and request_tokens and in_flight >= 1):
        return None
    util = c.gpu_memory_utilization(facts)
    needed_gib = request_tokens * in_flight * memory.kv_bytes_per_token / GIB
    wanted = c.share_for_kv(util, needed_gib, memory.available_kv_gib, total)
    proposed = min(wanted, c.max_share(facts))
    if proposed <= util:
        return None
    pool_after = c.kv_gib_at_share(memory.available_kv_gib, total, util, proposed)
    held = int(pool_after * GIB / memory.kv_bytes_per_token / request_tokens)
    reason = (
        f"room for the {fmt(in_flight)} requests in flight at their p95 size ({fmt(request_tokens)} tokens "
        f"each): {fmt(needed_gib)} GiB of KV per GPU instead of {fmt(memory.available_kv_gib)} GiB"
    )
    if proposed < wanted:
        reason = (
            f"as much KV room as {c.util_text(proposed)} leaves ({fmt(pool_after)} GiB per GPU: {held} of the "
            f"{fmt(in_flight)} requests in flight at their p95 size, {fmt(request_tokens)} tokens each; all of "
            f"them would need {c.util_text(wanted)})"
        )
    return c.util_change(
        facts, proposed, reason, f"{fmt((proposed - util) * total)} GiB less headroom on each {fmt(total)} GiB GPU"
    )


def _check_preemptions(facts: Facts) -> list[Finding]:
    rate = signals.preemption_rate(facts)
    if rate is None or rate.value <= 0:
        return []
    kv, queue = signals.kv_usage(facts), signals.waiting(facts)
    evidence = [rate.evidence.model_copy(update={"threshold": 0, "comparison": ">"})]
    if kv is not None:
        evidence.append(c.over(kv, c.KV_HIGH, ""))
    request_tokens = c.workload_tokens_p95(facts)
    if request_tokens is None and (measured := _measured_request_tokens(facts)) is not None:
        request_tokens = measured
        evidence.append(
            Evidence(
                source=signals.window_source(facts),
                name="p95 prompt + p95 max_tokens per request",
                value=round(measured),
                unit="tokens",
                location=f"{facts.window.interval_s:.0f} s window",
            )
        )
    changes = [change for change in [_fewer_admitted(facts, request_tokens)] if change]
    alternatives, pool_evidence = _more_kv_room(facts, request_tokens)
    evidence.extend(pool_evidence)
    per_s = rate.evidence.unit == "/s"
    amount = f"{fmt(rate.value)} preemptions/s" if per_s else f"{fmt(rate.value)} preemptions"
    kv_text = f"KV usage {fmt(kv.value)} > {c.KV_HIGH} with " if kv is not None and kv.value > c.KV_HIGH else ""
    queued = queue is not None and queue.value >= 1
    if queued:
        evidence.append(queue.evidence.model_copy(update={"threshold": 0, "comparison": ">"}))
    return [
        RULE_PREEMPTION.finding(
            Severity.HIGH
            if (per_s and rate.value >= 1) or (kv is not None and kv.value > c.KV_HIGH) or queued
            else Severity.MEDIUM,
            f"{kv_text}{amount} > 0",
            evidence=evidence,
            changes=changes,
            alternatives=alternatives,
            confidence=0.85 if rate.strong else 0.5,
            actions=["Or add replicas / limit --max-model-len for rare very long requests."],
            summary="The KV cache ran out mid-generation: requests were evicted and will be recomputed.",
        )
    ]


def _fewer_admitted(facts: Facts, request_tokens: float | None) -> ConfigChange | None:
    """--max-num-seqs down to what the KV cache holds: its tokens over a request's when both are known,
    else a share of the requests that were running when eviction began."""
    run = signals.running(facts)
    fits = None
    if facts.memory and facts.memory.kv_cache_tokens and request_tokens:
        fits = int(facts.memory.kv_cache_tokens / request_tokens)
    elif run is not None and run.value >= 2:
        fits = int(run.value * FIRST_STEP_SEQS_SHARE)
    current = c.max_num_seqs(facts) or (c.default_max_num_seqs(facts) if fits else None)
    if not (fits and current and fits < current):
        return None
    return ConfigChange(
        flag="--max-num-seqs",
        current=str(current),
        proposed=str(max(1, fits)),
        reason="admit only as many requests as the KV cache holds, so none is evicted and recomputed",
        cost="lower peak concurrency; requests wait instead",
    )


def _more_kv_room(facts: Facts, request_tokens: float | None) -> tuple[list[ConfigChange], list[Evidence]]:
    """The alternatives that grow the KV cache: the explicit pool in bytes (with its evidence), else the
    share sized from the figures, else vLLM's default share as a first step; fp8 KV where it is not set."""
    alternatives, evidence = [], []
    larger = _larger_pool(facts, request_tokens)
    if larger is not None:
        alternatives.append(larger)
        evidence.append(
            Evidence(
                source="config",
                name="--kv-cache-memory-bytes",
                value=facts.config.kv_cache_memory_bytes,
                unit="bytes",
                description=f"{facts.memory.kv_cache_tokens:,} KV tokens",
            )
        )
    share = _larger_share(facts, request_tokens) if larger is None else None
    if share is not None:
        alternatives.append(share)
    elif larger is None and c.gpu_memory_utilization(facts) < c.DEFAULT_GPU_MEMORY_UTILIZATION:
        alternatives.append(  # no figures to size it: vLLM's default, a first step
            c.util_change(
                facts, c.DEFAULT_GPU_MEMORY_UTILIZATION, "more memory for KV blocks", "less headroom on the GPU"
            )
        )
    if not facts.config or facts.config.kv_cache_dtype in (None, "auto"):
        alternatives.append(
            ConfigChange(
                flag="--kv-cache-dtype",
                current="auto",
                proposed="fp8",
                reason="doubles KV tokens",
                cost="small accuracy risk",
                safety="unsafe",
            )
        )
    return alternatives, evidence


# Preemptions over five minutes: the counter vLLM exposes is `vllm:num_preemptions_total`
# (prometheus_client adds `_total`); the public packs' `vllm:num_preemptions` never existed.
ALERT_PREEMPTIONS = Alert(
    name="VllmPreemptions",
    expr=f"{rate('vllm:num_preemptions_total', '5m')} > 0",
    for_="5m",
    severity=Severity.MEDIUM,
    description=(
        '{{ $labels.instance }} ({{ $labels.model_name }}): {{ $value | printf "%.2f" }} preemptions/s: the KV '
        "cache runs out mid-generation and requests are recomputed."
    ),
)

RULE_PREEMPTION = Rule(
    code="OP-5.3",
    title="KV cache over-committed: preemptions",
    category=Category.KV_CACHE,
    check=_check_preemptions,
    alerts=(ALERT_PREEMPTIONS,),
    needs=("window", "snapshot", "events"),
    page=RulePage(
        checks="Preemptions: rate of vllm:num_preemptions_total, the stats line's `Preemptions: N` (0.12+), the V0 "
        "preemption warning, or (weak) a non-zero since-start counter; with KV usage beside it.",
        why="A preempted request loses its KV blocks and is recomputed from scratch: wasted GPU time and a TTFT/ITL "
        "spike for that request. V1 logs no per-preemption line.",
        example=f"KV usage 0.99 > {c.KV_HIGH:.2f} with 1.2 preemptions/s > 0 -> --max-num-seqs 96 (what the KV cache "
        "holds at p95 length).",
        fix="Lower --max-num-seqs to what fits; or give the KV cache more room for the requests in flight at "
        "their p95 size: --kv-cache-memory-bytes when the space is set in bytes, else --gpu-memory-utilization "
        "raised by (KV needed - KV available) / device size, at most "
        f"{c.SAFE_MAX_GPU_MEMORY_UTILIZATION:.2f}; --kv-cache-dtype fp8, TP/PP, replicas; limit --max-model-len for "
        "rare huge requests.",
        limits=f"Without memory facts the new cap is {c.percent(FIRST_STEP_SEQS_SHARE)} of the running count, a "
        "first step. Without the device size, the pool and its bytes per token (the startup log or --model and "
        f"--gpu), the utilisation offered is vLLM's default {c.DEFAULT_GPU_MEMORY_UTILIZATION:.2f}, a first step.",
        references=[c.OPTIMIZATION_DOCS],
    ),
)


RULES: list[Rule] = [RULE_PREEMPTION]
