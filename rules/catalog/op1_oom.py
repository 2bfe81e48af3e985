"""OP-1.4 … OP-1.6, OP-1.8: the server does not start because CUDA ran out of memory, by phase.

The collector classifies each CUDA out-of-memory error by what vLLM was doing (docs/reference.md
§2.6): loading weights, warming up the sampler, capturing CUDA graphs, or none it recognised.
Each phase has its own remedy: more GPUs or smaller weights, a smaller batch, no graphs, more
headroom outside the KV pool.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind, OomPhase
from rules.facts import Facts
from rules.model import Category, ConfigChange, Evidence, Finding, Rule, RulePage, Severity
from rules.signals import fmt

GUESS_CONFIDENCE = 0.6  # OP-1.8 names its cause by elimination


def _oom(facts: Facts, phases: tuple[OomPhase, ...]):
    for event in reversed(facts.events_of(LogEventKind.CUDA_OOM)):
        if (event.oom_phase or OomPhase.UNKNOWN) in phases:
            return event
    return None


def _oom_numbers(event) -> str:
    """` (tried 2 GiB, 0.01 GiB free)` when torch's text gave the numbers, else nothing."""
    if event.tried_to_allocate_gib is None or event.free_gib is None:
        return ""
    return f" (tried {fmt(event.tried_to_allocate_gib, 3)} GiB > {fmt(event.free_gib, 3)} GiB free)"


def _oom_evidence(event) -> list[Evidence]:
    return [c.log_evidence(event, "CUDA out of memory", event.tried_to_allocate_gib, event.free_gib, ">", "GiB")]


# --- OP-1.4 loading weights --------------------------------------------------------------------


def _check_oom_weight_load(facts: Facts) -> list[Finding]:
    event = _oom(facts, (OomPhase.WEIGHT_LOAD,))
    if event is None:
        return []
    tp, count = c.tensor_parallel_size(facts), c.gpu_count(facts)
    changes, alternatives = [], []
    quant = ConfigChange(
        flag="--quantization",
        current=facts.config.quantization if facts.config else None,
        proposed="fp8",
        reason="FP8 weights take half the memory of BF16",
        cost="small accuracy risk; W8A8 needs Ada/Hopper (Ampere falls back to weight-only Marlin)",
        safety="unsafe",
    )
    if count is None or count >= tp * 2:
        changes.append(
            ConfigChange(
                flag="--tensor-parallel-size",
                current=str(tp),
                proposed=str(tp * 2),
                reason="weights do not fit one GPU; TP splits them across GPUs",
                cost=f"{tp * 2} GPUs per replica",
            )
        )
        if not (facts.model and facts.model.prequantized):
            alternatives.append(quant)
    elif not (facts.model and facts.model.prequantized):
        changes.append(quant)
    return [
        RULE_OOM_WEIGHTS.finding(
            Severity.CRITICAL,
            "CUDA out of memory while loading weights" + _oom_numbers(event),
            evidence=_oom_evidence(event),
            changes=changes,
            alternatives=alternatives,
            actions=["Use a larger GPU or a quantized checkpoint."],
            confidence=0.9,
            summary="The model's weights do not fit the GPU memory left to them.",
        )
    ]


RULE_OOM_WEIGHTS = Rule(
    code="OP-1.4",
    title="CUDA out of memory loading weights",
    category=Category.STARTUP,
    check=_check_oom_weight_load,
    needs=("events",),
    page=RulePage(
        checks="A CUDA OOM classified as weight load (`Failed to load model - not enough GPU memory` in 0.14+).",
        why="The weights alone do not fit the GPU.",
        example="A 70B BF16 model (131 GiB) on one 80 GiB GPU -> --tensor-parallel-size 2.",
        fix="Raise --tensor-parallel-size when GPUs are available (the next doubling here; with the model and GPU "
        "known, triage proposes the smallest size its memory model predicts to start); else --quantization fp8 "
        "(unsafe: accuracy).",
        limits="The phase comes from the collector's reading of the surrounding lines.",
        references=[c.CONSERVING_MEMORY_DOCS],
    ),
)


# --- OP-1.5 warming up the sampler -------------------------------------------------------------


def _check_oom_sampler(facts: Facts) -> list[Finding]:
    event = _oom(facts, (OomPhase.SAMPLER_WARMUP,))
    if event is None:
        return []
    current = event.num_dummy_requests or c.max_num_seqs(facts) or c.default_max_num_seqs(facts)
    util = c.gpu_memory_utilization(facts)
    change = ConfigChange(
        flag="--max-num-seqs",
        current=str(current),
        proposed=str(max(1, current // 2)),
        reason=f"the sampler warm-up with {current} dummy requests ran out of memory",
        cost="fewer requests batched at once (lower peak throughput)",
    )
    alternative = c.util_change(
        facts,
        round(util - c.UTIL_STEP, 2),
        "leaves more memory outside the KV pool for the sampler",
        "a smaller KV cache",
    )
    return [
        RULE_OOM_SAMPLER.finding(
            Severity.CRITICAL,
            f"CUDA out of memory warming up the sampler with {current} dummy requests",
            evidence=_oom_evidence(event),
            changes=[change],
            alternatives=[alternative],
            confidence=0.9,
            summary="The sampler's warm-up batch (max-num-seqs requests) does not fit.",
        )
    ]


RULE_OOM_SAMPLER = Rule(
    code="OP-1.5",
    title="CUDA out of memory warming up the sampler",
    category=Category.STARTUP,
    check=_check_oom_sampler,
    needs=("events",),
    page=RulePage(
        checks="`CUDA out of memory occurred when warming up sampler with N dummy requests`.",
        why="The warm-up runs max-num-seqs requests at once; their logits do not fit beside the KV cache.",
        example="warming up sampler with 1024 dummy requests -> --max-num-seqs 512.",
        fix=f"Halve --max-num-seqs, or lower --gpu-memory-utilization by {c.UTIL_STEP:g}.",
        limits="Large vocabularies make this worse; the halving is a first step, not a computed optimum.",
        references=[c.CONSERVING_MEMORY_DOCS],
    ),
)


# --- OP-1.6 capturing CUDA graphs --------------------------------------------------------------


def _check_oom_cudagraph(facts: Facts) -> list[Finding]:
    event = _oom(facts, (OomPhase.CUDAGRAPH_CAPTURE,))
    if event is None:
        return []
    seqs = c.max_num_seqs(facts) or c.default_max_num_seqs(facts)
    change = ConfigChange(
        flag="--enforce-eager",
        current="false",
        proposed="true",
        reason="skips CUDA-graph capture and its memory pool (0.5–1.9 GiB)",
        cost="slower decode at small batch sizes (no CUDA graphs)",
    )
    alternative = ConfigChange(
        flag="--max-num-seqs",
        current=str(seqs),
        proposed=str(max(1, seqs // 2)),
        reason="capture sizes go up to max-num-seqs; fewer, smaller graphs",
        cost="fewer requests batched at once",
    )
    return [
        RULE_OOM_CUDAGRAPH.finding(
            Severity.CRITICAL,
            "CUDA out of memory during CUDA-graph capture",
            evidence=_oom_evidence(event),
            changes=[change],
            alternatives=[alternative],
            confidence=0.9,
            summary="The CUDA-graph pool did not fit next to the KV cache.",
            actions=["Or lower --gpu-memory-utilization by 0.02–0.05 to leave room for the graph pool."],
        )
    ]


RULE_OOM_CUDAGRAPH = Rule(
    code="OP-1.6",
    title="CUDA out of memory during CUDA-graph capture",
    category=Category.STARTUP,
    check=_check_oom_cudagraph,
    needs=("events",),
    page=RulePage(
        checks="A CUDA OOM raised inside CUDA-graph capture (`Capturing CUDA graphs` / capture_model).",
        why="The graph pool (0.5–1.9 GiB) is allocated after the KV cache; if nothing is left, capture fails.",
        example="OOM under the `Capturing CUDA graphs (mixed prefill-decode, PIECEWISE)` bar -> --enforce-eager.",
        fix="--enforce-eager (slower decode), or halve --max-num-seqs (capture sizes go up to it), or lower "
        "--gpu-memory-utilization.",
        limits="0.20+ estimates graph memory during profiling, so this is rarer there.",
        references=[c.CONSERVING_MEMORY_DOCS],
    ),
)


# --- OP-1.8 outside a known phase --------------------------------------------------------------


def _check_oom_other(facts: Facts) -> list[Finding]:
    event = _oom(facts, (OomPhase.RUNTIME, OomPhase.UNKNOWN))
    if event is None:
        return []
    util = c.gpu_memory_utilization(facts)
    change = c.util_change(
        facts,
        round(util - c.UTIL_STEP, 2),
        "leaves headroom for activation spikes the profile missed",
        "a smaller KV cache",
    )
    tokens = facts.config.max_num_batched_tokens if facts.config else None
    alternatives = []
    if tokens and tokens > c.DEFAULT_MAX_NUM_BATCHED_TOKENS:
        alternatives.append(
            ConfigChange(
                flag="--max-num-batched-tokens",
                current=str(tokens),
                proposed=str(c.DEFAULT_MAX_NUM_BATCHED_TOKENS),
                reason="smaller steps need smaller activations",
                cost="longer TTFT for long prompts",
            )
        )
    return [
        RULE_OOM_OTHER.finding(
            Severity.CRITICAL if event.oom_phase == OomPhase.UNKNOWN else Severity.HIGH,
            f"CUDA out of memory ({(event.oom_phase or OomPhase.UNKNOWN).value})" + _oom_numbers(event),
            evidence=_oom_evidence(event),
            changes=[change],
            alternatives=alternatives,
            confidence=GUESS_CONFIDENCE,
            summary="Memory use grew beyond what the startup profile measured.",
        )
    ]


RULE_OOM_OTHER = Rule(
    code="OP-1.8",
    title="CUDA out of memory outside a known phase",
    category=Category.STARTUP,
    check=_check_oom_other,
    needs=("events",),
    page=RulePage(
        checks="A CUDA OOM the collector could not attribute to weight load, sampler warm-up or graph capture.",
        why="Activation peaks larger than profiled (long prompts, large batches) exhaust memory left outside the "
        "KV pool.",
        example="Tried to allocate 2.00 GiB, 448 KiB free, util 0.95 -> --gpu-memory-utilization 0.90.",
        fix=f"Lower --gpu-memory-utilization by {c.UTIL_STEP:g}; or lower --max-num-batched-tokens.",
        limits=f"A guess by elimination: confidence {GUESS_CONFIDENCE:g}.",
        references=[c.CONSERVING_MEMORY_DOCS],
    ),
)

RULES: list[Rule] = [RULE_OOM_WEIGHTS, RULE_OOM_SAMPLER, RULE_OOM_CUDAGRAPH, RULE_OOM_OTHER]
