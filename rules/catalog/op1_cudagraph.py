"""OP-1.10: what vLLM's CUDA-graph memory notices say about the KV budget.

Since 0.20 vLLM subtracts an estimate of the CUDA-graph pool from the KV budget before it
captures the graphs (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS, on by default from 0.21) and,
after capture, prints the actual pool beside the estimate. Three notices matter to an operator:
the estimate falling short of the pool (the KV cache was sized on memory the graphs then took:
OOM risk under load), the estimate far above the pool (KV memory left idle), and the profiling
turned off (the budget ignores graph memory altogether). vLLM's own notice that
--gpu-memory-utilization now "is equivalent to" a lower value without profiling explains, after
an upgrade, why the same flag holds fewer KV tokens. Wording: docs/reference.md §2.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity
from rules.signals import fmt

# The pool and its estimate differ enough to move the KV budget when both bounds are passed.
MISS_GIB = 0.5
MISS_SHARE = 0.25
ESTIMATE_ENV = "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS"


def _check(facts: Facts) -> list[Finding]:
    findings: list[Finding] = []
    pools = facts.events_of(LogEventKind.CUDA_GRAPH_MEMORY)  # the pool line states both; the others one or none
    pool = next(
        (e for e in reversed(pools) if e.cudagraph_gib is not None and e.cudagraph_estimated_gib is not None), None
    )
    if pool is not None:
        findings += _estimate_missed(facts, pool)
    profiling = facts.last_event(LogEventKind.CUDAGRAPH_PROFILING)
    if profiling is not None and profiling.cudagraph_profiling is False:
        findings.append(
            RULE_CUDAGRAPH.finding(
                Severity.LOW,
                f"CUDA graph memory profiling is off ({ESTIMATE_ENV}=0): the KV budget ignores graph memory",
                evidence=[c.log_evidence(profiling, "CUDA graph memory profiling", "disabled")],
                confidence=0.7,
                summary="The KV cache is sized as if the CUDA graphs took no memory; capture or a load peak can then "
                "run out of memory.",
                actions=[
                    f"Unset {ESTIMATE_ENV} (the default since vLLM 0.21), or keep --gpu-memory-utilization low "
                    "enough to leave the graph pool's size free."
                ],
            )
        )
    elif profiling is not None and profiling.equivalent_utilization is not None and not findings:
        util, same = profiling.gpu_memory_utilization, profiling.equivalent_utilization
        findings.append(
            RULE_CUDAGRAPH.finding(
                Severity.INFO,
                f"--gpu-memory-utilization {fmt(util, 4)} acts as {fmt(same, 4)} did before CUDA graph "
                "memory profiling",
                evidence=[c.log_evidence(profiling, "equivalent --gpu-memory-utilization", same, util, "<")],
                confidence=0.9,
                summary="After an upgrade past vLLM 0.21 the same flag holds fewer KV tokens: graph memory is now "
                "taken from the KV budget up front instead of from the headroom.",
            )
        )
    return findings


def _estimate_missed(facts: Facts, pool) -> list[Finding]:
    actual, estimated = pool.cudagraph_gib, pool.cudagraph_estimated_gib
    miss = actual - estimated
    if abs(miss) < MISS_GIB or abs(miss) < MISS_SHARE * max(actual, estimated):
        return []
    evidence = [c.log_evidence(pool, "CUDA graph pool (actual)", actual, estimated, ">" if miss > 0 else "<", "GiB")]
    if miss > 0:
        changes = _give_back(facts, miss)
        return [
            RULE_CUDAGRAPH.finding(
                Severity.MEDIUM,
                f"CUDA graph pool {fmt(actual)} GiB exceeds its estimate {fmt(estimated)} GiB by "
                f"{fmt(miss)} GiB: the KV budget counted memory the graphs took",
                evidence=evidence,
                changes=changes,
                confidence=0.7,
                summary="The KV cache was sized before capture on the smaller estimate; the difference "
                "is missing from the headroom, so a load peak can run out of memory.",
                actions=[
                    "Fewer capture sizes (--max-cudagraph-capture-size / a shorter cudagraph_capture_sizes list) "
                    "also shrink the pool."
                ],
            )
        ]
    return [
        RULE_CUDAGRAPH.finding(
            Severity.LOW,
            f"CUDA graph estimate {fmt(estimated)} GiB exceeds the pool {fmt(actual)} GiB by "
            f"{fmt(-miss)} GiB of KV memory left unused",
            evidence=evidence,
            confidence=0.6,
            summary="The profiler reserved more for the graphs than they took; that memory sits idle instead of "
            "holding KV blocks.",
            actions=[
                "Raise --gpu-memory-utilization by the difference over the GPU's memory if the headroom allows "
                "(servops advise shows the budget)."
            ],
        )
    ]


def _give_back(facts: Facts, miss_gib: float) -> list[ConfigChange]:
    """--gpu-memory-utilization lowered by the graphs' excess over the GPU's memory, so the headroom the KV
    budget assumed is there again; nothing when the GPU's memory is not known."""
    total = c.total_gib(facts)
    if not total:
        return []
    util = c.gpu_memory_utilization(facts)
    return [
        ConfigChange(
            flag="--gpu-memory-utilization",
            current=f"{util:g}",
            proposed=f"{round(util - miss_gib / total, 2):g}",
            reason=f"gives back the {miss_gib:.2f} GiB the graphs took beyond their estimate",
            cost=f"about {miss_gib:.2f} GiB less KV cache",
        )
    ]


RULE_CUDAGRAPH = Rule(
    code="OP-1.10",
    title="CUDA-graph memory against the KV budget",
    category=Category.MEMORY,
    check=_check,
    needs=("events",),
    page=RulePage(
        checks=f"vLLM's `CUDA graph pool memory: A GiB (actual), E GiB (estimated)` (0.20+): a miss of at least "
        f"{MISS_GIB:g} GiB and {MISS_SHARE:.0%}; `CUDA graph memory profiling is disabled "
        f"({ESTIMATE_ENV}=0)`; `… is enabled … --gpu-memory-utilization=U is equivalent to "
        "--gpu-memory-utilization=V without CUDA graph memory profiling`.",
        why="The KV cache is sized before the graphs are captured. An estimate short of the pool over-commits "
        "memory (OOM under load); an estimate far above it wastes KV space; profiling off ignores the pool.",
        example="pool 2.41 GiB actual, 0.92 GiB estimated on a 79 GiB H100 at util 0.92 -> 0.9.",
        fix="Lower --gpu-memory-utilization by the miss, or capture fewer sizes; raise it by an over-estimate; "
        f"leave {ESTIMATE_ENV} at its default.",
        limits="Only vLLM 0.20+ prints the estimate; an older log shows the pool alone (OP-1 startup memory).",
        references=["https://docs.vllm.ai/en/latest/configuration/conserving_memory.html"],
    ),
)

RULES: list[Rule] = [RULE_CUDAGRAPH]
