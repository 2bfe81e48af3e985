"""OP-1.4 … OP-1.6, OP-1.8: the server does not start because CUDA ran out of memory, by phase.

The collector classifies each CUDA out-of-memory error by what vLLM was doing (docs/reference.md
§2.6): loading weights, warming up the sampler, capturing CUDA graphs, or none it recognised.
Each phase has its own remedy: more GPUs or smaller weights, a smaller batch, no graphs, more
headroom outside the KV pool.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from rules.catalog import common as c
from rules.events import NVML_ASSERT_OOM, LogEventKind, OomPhase
from rules.facts import Facts
from rules.model import Category, ConfigChange, Evidence, Finding, Rule, RulePage, Severity
from rules.signals import fmt

GUESS_CONFIDENCE = 0.6  # OP-1.8 names its cause by elimination
# vLLM wraps the sampler warm-up's torch OutOfMemoryError in a RuntimeError that names the phase but not the
# sizes; the chained torch error is printed in the same traceback, at most this many lines before it.
CHAINED_CAUSE_LINES = 60
# PyTorch's own allocations above the share by more than this part of the GPU: not the KV pool's doing.
BEYOND_SHARE = 0.05
# A failed allocation at most this large on a full GPU looks like CUDA graph capture's small pieces.
SMALL_ALLOCATION_GIB = 64 / 1024


@dataclass(frozen=True)
class FailedAllocation:
    """What torch printed about the allocation that failed: the figures a remedy is sized from."""

    tried_gib: float
    free_gib: float
    total_gib: float


def _oom(facts: Facts, phases: tuple[OomPhase, ...]):
    for event in reversed(facts.events_of(LogEventKind.CUDA_OOM)):
        if (event.oom_phase or OomPhase.UNKNOWN) in phases and not _chained_cause(facts, event):
            return event
    return None


def _chained_cause(facts: Facts, event) -> bool:
    """Whether `event` is the torch error a later, phase-naming OOM wraps (one failure, reported by that one)."""
    return any(_wraps(later, event) for later in facts.events_of(LogEventKind.CUDA_OOM))


def _wraps(wrapper, cause) -> bool:
    return (
        wrapper.oom_phase == OomPhase.SAMPLER_WARMUP
        and wrapper.source_file == cause.source_file
        and wrapper.line_no is not None
        and cause.line_no is not None
        and 0 < wrapper.line_no - cause.line_no <= CHAINED_CAUSE_LINES
        and cause.tried_to_allocate_gib is not None
    )


def _failed_allocation(facts: Facts, event) -> FailedAllocation | None:
    """The event's own figures, else those of the torch error it wraps; the GPU's size from the facts if torch
    did not print it."""
    sized = event
    if event.tried_to_allocate_gib is None:
        causes = [e for e in facts.events_of(LogEventKind.CUDA_OOM) if _wraps(event, e)]
        sized = causes[-1] if causes else event
    total = sized.total_gib or c.total_gib(facts)
    if sized.tried_to_allocate_gib is None or sized.free_gib is None or not total:
        return None
    return FailedAllocation(tried_gib=sized.tried_to_allocate_gib, free_gib=sized.free_gib, total_gib=total)


def _util_for(facts: Facts, allocation: FailedAllocation | None, reason: str) -> ConfigChange:
    """--gpu-memory-utilization lowered by enough to hold the failed allocation again outside the KV pool.

    Why the whole allocation and not only what was missing: the free memory torch found may be fragments
    the allocator cannot use, and the next attempt may be as large. Rounded up to vLLM's 0.01 steps. Without
    the figures, the fixed UTIL_STEP, said as such."""
    util = c.gpu_memory_utilization(facts)
    if allocation is None:
        return c.util_change(
            facts,
            round(util - c.UTIL_STEP, 2),
            f"{reason} (a fixed step: the log gave no allocation size)",
            "a smaller KV cache",
        )
    step = _util_step(allocation)
    freed = step * allocation.total_gib
    return c.util_change(
        facts,
        round(util - step, 2),
        f"{reason}: frees {fmt(freed)} GiB of the {fmt(allocation.total_gib)} GiB GPU, room for the "
        f"{fmt(allocation.tried_gib, 3)} GiB allocation that failed",
        _pool_cost(facts, freed),
    )


def _util_step(allocation: FailedAllocation, also_gib: float = 0.0) -> float:
    """The failed allocation (and `also_gib` beside it) as a share of the GPU, rounded up to vLLM's 0.01
    utilisation steps."""
    return math.ceil(round((allocation.tried_gib + also_gib) / allocation.total_gib * 100, 6)) / 100


def _pool_cost(facts: Facts, freed_gib: float) -> str:
    pool = c.kv_pool(facts)
    if pool is None:
        return f"a KV pool {fmt(freed_gib)} GiB smaller per GPU"
    tokens, gib = pool
    lost = freed_gib / gib * tokens
    share = f"{lost / tokens:.1%}"
    return f"a KV pool {fmt(freed_gib)} GiB smaller per GPU: about {lost:,.0f} of its {tokens:,} tokens ({share})"


def _out_of_memory(event) -> str:
    """What ran out, in the words of the allocator that said so: torch_npu's on Ascend words it as torch's CUDA
    allocator does, with NPU for CUDA, ROCm's PyTorch with HIP, Intel's extension with XPU, and the same flags size
    vLLM's share there (vllm-ascend, vLLM's ROCm and XPU platforms)."""
    return f"{event.device} out of memory" if event.device in ("NPU", "HIP", "XPU") else "CUDA out of memory"


def _oom_numbers(event) -> str:
    """` (tried 2 GiB, 0.01 GiB free)` when torch's text gave the numbers, else nothing."""
    if event.tried_to_allocate_gib is None or event.free_gib is None:
        return ""
    return f" (tried {fmt(event.tried_to_allocate_gib, 3)} GiB > {fmt(event.free_gib, 3)} GiB free)"


def _oom_evidence(event) -> list[Evidence]:
    return [c.log_evidence(event, _out_of_memory(event), event.tried_to_allocate_gib, event.free_gib, ">", "GiB")]


# --- OP-1.4 loading weights --------------------------------------------------------------------


def _check_oom_weight_load(facts: Facts) -> list[Finding]:
    event = _oom(facts, (OomPhase.WEIGHT_LOAD,))
    if event is None:
        return []
    changes, alternatives = _weight_changes(facts)
    return [
        RULE_OOM_WEIGHTS.finding(
            Severity.CRITICAL,
            f"{_out_of_memory(event)} while loading weights" + _oom_numbers(event),
            evidence=_oom_evidence(event),
            changes=changes,
            alternatives=alternatives,
            actions=["Use a larger GPU or a quantized checkpoint."],
            confidence=0.9,
            summary="The model's weights do not fit the GPU memory left to them.",
        )
    ]


def _weight_changes(facts: Facts) -> tuple[list[ConfigChange], list[ConfigChange]]:
    """(changes, alternatives) for weights that do not fit one GPU: twice the tensor parallelism where the
    GPUs allow (or their count is unknown), FP8 weights unless the model is already quantized."""
    tp = c.tensor_parallel_size(facts)
    changes, alternatives = [], []
    quant = ConfigChange(
        flag="--quantization",
        current=facts.config.quantization if facts.config else None,
        proposed="fp8",
        reason="FP8 weights take half the memory of BF16",
        cost="small accuracy risk; W8A8 needs Ada/Hopper (Ampere falls back to weight-only Marlin)",
        safety="unsafe",
    )
    if c.host_has_gpus(facts, tp * 2):
        changes.append(
            ConfigChange(
                flag="--tensor-parallel-size",
                current=str(tp),
                proposed=str(tp * 2),
                reason="weights do not fit one GPU; tensor parallelism (TP) splits them across GPUs",
                cost=f"{tp * 2} GPUs per replica",
            )
        )
        if not c.quantized(facts):
            alternatives.append(quant)
    elif not c.quantized(facts):
        changes.append(quant)
    return changes, alternatives


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
    allocation = _failed_allocation(facts, event)
    util = _util_for(facts, allocation, "leaves the sampler's warm-up batch room outside the KV pool")
    seqs = _seqs_that_fit(current, allocation)
    changes = [seqs, util] if _batch_cut_is_cheaper(facts, current, allocation) else [util, seqs]
    title = f"CUDA out of memory warming up the sampler with {current} dummy requests"
    if allocation is not None:
        title += f" (tried {fmt(allocation.tried_gib, 3)} GiB > {fmt(allocation.free_gib, 3)} GiB free)"
    return [
        RULE_OOM_SAMPLER.finding(
            Severity.CRITICAL,
            title,
            evidence=_oom_evidence(event),
            changes=changes[:1],
            alternatives=changes[1:],
            confidence=0.9,
            summary="The sampler's warm-up batch (max-num-seqs requests) does not fit.",
        )
    ]


def _seqs_that_fit(current: int, allocation: FailedAllocation | None) -> ConfigChange:
    """The largest warm-up batch whose allocation fits the memory torch found free.

    Why proportional: the warm-up's tensors are one row of vocabulary-sized logits per dummy request, so
    the failed allocation scales with their number (and the sampler's earlier tensors shrink with it,
    which only adds room). Without torch's figures, a halving, said as such."""
    proposed = _seqs_kept(current, allocation)
    if proposed is None:
        proposed, why = max(1, current // 2), "halved: the log gave no allocation size"
    else:
        why = (
            f"{current} x {fmt(allocation.free_gib, 3)} / {fmt(allocation.tried_gib, 3)} GiB: the largest batch "
            "whose warm-up allocation fits the free memory"
        )
    return ConfigChange(
        flag="--max-num-seqs",
        current=str(current),
        proposed=str(proposed),
        reason=f"the sampler warm-up with {current} dummy requests ran out of memory; {why}",
        cost=f"at most {proposed} requests batched at once ({1 - proposed / current:.0%} fewer)",
    )


def _seqs_kept(current: int, allocation: FailedAllocation | None) -> int | None:
    if allocation is None or allocation.tried_gib <= 0:
        return None
    return max(1, min(current - 1, math.floor(current * allocation.free_gib / allocation.tried_gib)))


def _batch_cut_is_cheaper(facts: Facts, current: int, allocation: FailedAllocation | None) -> bool:
    """Lead with the remedy that gives up the smaller share of capacity: the batch slots cut, or the KV pool's
    tokens the lower utilisation frees. Without the figures to compare, the batch cut leads (vLLM's own advice
    names it first)."""
    pool, kept = c.kv_pool(facts), _seqs_kept(current, allocation)
    if allocation is None or pool is None or kept is None:
        return True
    return 1 - kept / current < _util_step(allocation) * allocation.total_gib / pool[1]


RULE_OOM_SAMPLER = Rule(
    code="OP-1.5",
    title="CUDA out of memory warming up the sampler",
    category=Category.STARTUP,
    check=_check_oom_sampler,
    needs=("events",),
    page=RulePage(
        checks="`CUDA out of memory occurred when warming up sampler with N dummy requests`.",
        why="The warm-up runs max-num-seqs requests at once; their logits do not fit beside the KV cache.",
        example="warming up sampler with 1024 dummy requests, tried 0.58 GiB with 0.21 GiB free on a 79.19 GiB GPU "
        "-> --gpu-memory-utilization 0.95 -> 0.94 (0.79 GiB, 1.9 % of the KV pool), or --max-num-seqs 370.",
        fix="Lower --gpu-memory-utilization by the failed allocation's share of the GPU (rounded up to 0.01), or "
        "cap --max-num-seqs at the largest batch whose warm-up allocation fits the free memory (the allocation "
        "scales with the batch). The one that gives up the smaller share of capacity (KV tokens or batch slots) "
        "leads. torch's figures come from the chained `Tried to allocate … of which … is free` error; without "
        f"them, halve --max-num-seqs or lower the utilisation by {c.UTIL_STEP:g}.",
        limits="Assumes the warm-up's allocation is proportional to the batch (one vocabulary row per request); "
        "a second, larger allocation after the one that failed would need another step.",
        references=[c.CONSERVING_MEMORY_DOCS],
    ),
)


# --- OP-1.6 capturing CUDA graphs --------------------------------------------------------------


def _check_oom_cudagraph(facts: Facts) -> list[Finding]:
    event = _oom(facts, (OomPhase.CUDAGRAPH_CAPTURE,))
    if event is None:
        return []
    seqs = c.max_num_seqs(facts) or c.default_max_num_seqs(facts)
    change = c.eager_mode(
        "skips CUDA-graph capture and its memory pool (0.5–1.9 GiB)",
        cost="slower decode at small batch sizes (no CUDA graphs)",
    )
    alternative = c.halved_max_num_seqs(
        seqs, "capture sizes go up to max-num-seqs; fewer, smaller graphs", cost="fewer requests batched at once"
    )
    return [
        RULE_OOM_CUDAGRAPH.finding(
            Severity.CRITICAL,
            f"{_out_of_memory(event)} during CUDA-graph capture",
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


# Why an OOM read from PyTorch's NVML assertion is one (pytorch#112377: the allocator builds its OOM message with NVML)
_NVML_WORDED = (
    " The text has no `CUDA out of memory`: PyTorch's allocator failed an allocation and, asking NVML for the GPU's "
    "memory to word the error, asserted instead (`NVML_SUCCESS == r INTERNAL ASSERT FAILED at "
    "CUDACachingAllocator.cpp`), as on MIG slices, Jetson and some containers where NVML cannot answer."
)
# How OP-1.8's title says where the allocation failed (the phases with rules of their own never reach it).
_PHASE_SAID = {OomPhase.RUNTIME: "while serving", OomPhase.UNKNOWN: "in no phase the text names"}


def _check_oom_other(facts: Facts) -> list[Finding]:
    event = _oom(facts, (OomPhase.RUNTIME, OomPhase.UNKNOWN))
    if event is None:
        return []
    beyond = _beyond_the_share(facts, event) or _beside_another_process(facts, event)
    if beyond is not None:
        return [beyond]
    change = _util_for(
        facts, _failed_allocation(facts, event), "leaves headroom for activation spikes the profile missed"
    )
    tokens = facts.config.max_num_batched_tokens if facts.config else None
    alternatives = [eager] if (eager := _without_graphs(facts, event)) else []
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
            f"{_out_of_memory(event)} {_PHASE_SAID[event.oom_phase or OomPhase.UNKNOWN]}" + _oom_numbers(event),
            evidence=_oom_evidence(event),
            changes=[change],
            alternatives=alternatives,
            confidence=GUESS_CONFIDENCE,
            summary="Memory use grew beyond what the startup profile measured."
            + (_NVML_WORDED if event.message == NVML_ASSERT_OOM else ""),
        )
    ]


def _without_graphs(facts: Facts, event) -> ConfigChange | None:
    """--enforce-eager when a small allocation failed on a full GPU in no phase the log named. Why: vLLM
    takes its share for the KV cache before it captures CUDA graphs, and capture allocates in small pieces
    outside what the profile measured (before 0.9, and wherever the estimate falls short), so a few MiB
    failing with the GPU all but full is capture's signature; eager mode needs no graph memory (vllm#15598:
    the start succeeded with --enforce-eager)."""
    if event.oom_phase not in (None, OomPhase.UNKNOWN) or (facts.config and facts.config.enforce_eager):
        return None
    if event.tried_to_allocate_gib is None or event.tried_to_allocate_gib > SMALL_ALLOCATION_GIB:
        return None
    return c.eager_mode(
        f"a {fmt(event.tried_to_allocate_gib * 1024)} MiB allocation failed on a full GPU: what allocates "
        "in small pieces after the KV cache has taken its share is CUDA graph capture, which eager mode skips",
        cost="slower decode steps without CUDA graphs",
    )


def _beyond_the_share(facts: Facts, event) -> Finding | None:
    """An OOM whose own text shows PyTorch alone holding more than the share vLLM was given, with no other
    process on the GPU: the memory the share does not cap (the weights, which load before it applies) outgrew
    the GPU, so a smaller KV pool cannot help. E.g. a 72B model on one 80 GB GPU: 78.33 GiB allocated by
    PyTorch against 0.9 x 79.33 = 71.4 GiB (QwenLM/Qwen3 issue 67: tensor parallelism was the fix)."""
    total = event.total_gib or c.total_gib(facts)
    if not event.torch_allocated_gib or event.other_processes or not total:
        return None
    share = c.gpu_memory_utilization(facts) * total
    if event.torch_allocated_gib <= share + BEYOND_SHARE * total:
        return None
    changes, alternatives = _weight_changes(facts)
    if not changes:
        return None
    return RULE_OOM_OTHER.finding(
        Severity.CRITICAL,
        f"{_out_of_memory(event)}: PyTorch holds {fmt(event.torch_allocated_gib)} GiB of the {fmt(total)} GiB GPU, "
        f"beyond the {fmt(share)} GiB share vLLM was given",
        evidence=[
            *_oom_evidence(event),
            c.log_evidence(event, "allocated by PyTorch", event.torch_allocated_gib, round(share, 2), ">", "GiB"),
        ],
        changes=changes,
        alternatives=alternatives,
        actions=["Use a larger GPU or a quantized checkpoint."],
        confidence=0.8,
        summary="No other process holds the GPU, and the KV cache is sized to fit the share: what outgrew it is "
        "memory the share does not cap, the model's weights. A smaller share cannot help; more GPUs or smaller "
        "weights can.",
    )


def _beside_another_process(facts: Facts, event) -> Finding | None:
    """An OOM whose text names another process on the GPU, with what it holds. vLLM sizes its share as a part
    of the whole GPU, as if the rest were free; the memory it allocates after sizing the KV cache (CUDA graph
    capture, then the sampler warm-up that preallocates the logits buffers: `compile_or_warm_up_model` in
    vllm/v1/worker/gpu_worker.py) then meets the other process's memory. A colocated trainer or a second
    server must be left room: lower the share by what the other processes hold and the failed allocation
    (NovaSky-AI/SkyRL PR 2051: a colocated FSDP worker's 796 MiB, OOM at the sampler warm-up on an L4)."""
    allocation = _failed_allocation(facts, event)
    others = event.other_processes_gib
    if not others or allocation is None:
        return None
    util = c.gpu_memory_utilization(facts)
    step = _util_step(allocation, also_gib=others)
    freed = step * allocation.total_gib
    change = c.util_change(
        facts,
        round(util - step, 2),
        f"leaves the other processes' {fmt(others)} GiB and the {fmt(allocation.tried_gib, 3)} GiB allocation that "
        f"failed outside vLLM's share: frees {fmt(freed)} GiB of the {fmt(allocation.total_gib)} GiB GPU",
        _pool_cost(facts, freed),
    )
    mine = f"; vLLM's process holds {fmt(event.this_process_gib)} GiB" if event.this_process_gib else ""
    return RULE_OOM_OTHER.finding(
        Severity.CRITICAL,
        f"{_out_of_memory(event)} beside another process: it holds {fmt(others)} GiB of the "
        f"{fmt(allocation.total_gib)} GiB GPU{mine}",
        evidence=[*_oom_evidence(event), c.log_evidence(event, "held by other processes", others, unit="GiB")],
        changes=[change],
        actions=["Or move the other process (a colocated trainer, a second server) to another GPU."],
        confidence=0.75,
        summary="vLLM takes its share (--gpu-memory-utilization) of the whole GPU as if the rest were free. With "
        "another process on the same GPU, what vLLM allocates after sizing the KV cache (CUDA graph capture, then "
        "the sampler warm-up's logits buffers) finds no memory left: the out-of-memory error lands in those "
        "warm-up steps, not where the memory went.",
    )


RULE_OOM_OTHER = Rule(
    code="OP-1.8",
    title="CUDA out of memory outside a known phase",
    category=Category.STARTUP,
    check=_check_oom_other,
    needs=("events",),
    page=RulePage(
        checks="A CUDA OOM the collector could not attribute to weight load, sampler warm-up or graph capture; torch "
        "before 2.1's wording (`(GPU 0; … total capacity; … already allocated; … free; …)`) and torch_npu's `NPU out "
        "of memory` in the same words (Ascend, titled as the NPU's), ROCm's `HIP out of memory` and Intel's `XPU out "
        "of memory` (no free figure) are read with their numbers.",
        why="Activation peaks larger than profiled (long prompts, large batches) exhaust memory left outside the "
        "KV pool.",
        example="Tried to allocate 2.00 GiB, 448 KiB free, 79.19 GiB GPU, util 0.95 -> --gpu-memory-utilization 0.92 "
        "(2.38 GiB freed).",
        fix="When torch's text shows PyTorch alone holding more than the share (by over "
        f"{BEYOND_SHARE:.0%} of the GPU, no other process named): the weights outgrew it, so twice the tensor "
        "parallelism or FP8 weights, as OP-1.4. Else lower --gpu-memory-utilization by the failed allocation's "
        "share of the GPU, rounded up to 0.01: the "
        "whole allocation, since the free memory torch found may be unusable fragments (without torch's figures, "
        f"by {c.UTIL_STEP:g}); or lower --max-num-batched-tokens. A failed allocation of at most "
        f"{SMALL_ALLOCATION_GIB * 1024:g} MiB on a full GPU also offers --enforce-eager: CUDA graph capture "
        "allocates in small pieces after the KV cache took its share. When torch names other processes on the "
        "GPU with what they hold: lower the share by that and the failed allocation, or move them.",
        limits=f"A guess by elimination: confidence {GUESS_CONFIDENCE:g}. One failed allocation sizes the step; a "
        "larger one later would need another.",
        references=[c.CONSERVING_MEMORY_DOCS],
    ),
)

RULES: list[Rule] = [RULE_OOM_WEIGHTS, RULE_OOM_SAMPLER, RULE_OOM_CUDAGRAPH, RULE_OOM_OTHER]
