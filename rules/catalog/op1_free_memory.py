"""OP-1.3, OP-1.7: the server does not start because the free memory is not what vLLM expects.

Both failures come from memory that another process holds or releases (often a second vLLM
instance): at startup free memory is below the requested budget (OP-1.3, on a GPU or, on vLLM's
CPU backend, a NUMA node), or free memory changed while vLLM profiled its own use (OP-1.7).
Each reads the typed log event of vLLM's error text (docs/reference.md §2.6) and proposes flag
values from its numbers. The KV cache not fitting its budget is in op1_kv_fit.py.
"""

from __future__ import annotations

import math

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Evidence, Finding, Rule, RulePage, Severity
from rules.signals import fmt

# vLLM's CPU backend without an explicit KV size reserves --gpu-memory-utilization of the NUMA node;
# an explicit --kv-cache-memory-bytes skips that check (v1/worker/cpu_worker.py). Give KV this share
# of the memory that was free, leaving the rest to the host.
CPU_KV_SHARE_OF_FREE = 0.5
# The proposed utilisation stays this far below the share of memory that was free.
FREE_MEMORY_MARGIN = 0.01


# --- OP-1.3 free memory below the requested budget ------------------------------------------


def _check_free_memory(facts: Facts) -> list[Finding]:
    event = facts.last_event(LogEventKind.FREE_MEMORY_BELOW_REQUESTED)
    if event is None:
        return []
    util = event.gpu_memory_utilization or c.gpu_memory_utilization(facts)
    evidence = [c.log_evidence(event, "free memory at startup", event.free_gib, event.requested_gib, "<", "GiB")]
    util_change = None
    if event.free_gib and event.total_gib:
        proposed = math.floor(event.free_gib / event.total_gib * 100) / 100 - FREE_MEMORY_MARGIN
        util_change = c.util_change(
            facts,
            proposed,
            f"{fmt(event.free_gib)} of {fmt(event.total_gib)} GiB are free; the budget must fit in free memory",
            "a smaller KV cache (fewer concurrent tokens)",
        )
    title = (
        f"free memory {fmt(event.free_gib)} GiB < requested {fmt(event.requested_gib)} GiB "
        f"(gpu-memory-utilization {fmt(util)})"
    )
    if (event.device or "").upper() == "CPU" or c.on_cpu_backend(facts):
        return [_cpu_free_memory(facts, event, util, title, evidence, util_change)]
    holders = facts.events_of(LogEventKind.GPU_PROCESS)
    return [
        RULE_FREE_MEMORY.finding(
            Severity.CRITICAL,
            title,
            evidence=evidence
            + [c.log_evidence(e, "a process nvidia-smi lists", e.memory_gib, unit="GiB") for e in holders],
            changes=[util_change] if util_change else [],
            confidence=0.95,
            summary="Another process (often a second vLLM instance) holds memory on this GPU."
            + (f" nvidia-smi lists {_holders(holders)}." if holders else ""),
            actions=[_stop_action(holders)],
        )
    ]


def _holders(holders: list[LogEvent]) -> str:
    """nvidia-smi's process rows as a person reads them: the largest first."""
    ranked = sorted(holders, key=lambda e: -(e.memory_gib or 0))
    return ", ".join(f"PID {e.pid} ({e.component}, {fmt(e.memory_gib or 0)} GiB on GPU {e.gpu_index})" for e in ranked)


def _stop_action(holders: list[LogEvent]) -> str:
    if not holders:
        return "Find and stop other processes on the GPU (nvidia-smi), or give this instance its own GPU."
    return (
        f"Stop what holds the GPU, or give this instance its own: {_holders(holders)}. A name that starts with VLLM:: "
        "is a vLLM engine or worker (vLLM titles its processes VLLM::EngineCore, VLLM::Worker_TP0 …: "
        "vllm/utils/system_utils.py): a second instance, or one left from an earlier start; if nvidia-smi ran while "
        "this server was still up, one of them is the server itself."
    )


def _cpu_free_memory(
    facts: Facts, event, util: float, title: str, evidence: list[Evidence], util_change: ConfigChange | None
) -> Finding:
    """On the CPU backend the fraction is of the NUMA node's RAM; an explicit KV size avoids the check."""
    changes = []
    if event.free_gib:
        kv_gib = int(event.free_gib * CPU_KV_SHARE_OF_FREE)
        size = f"{kv_gib}G" if kv_gib >= 1 else f"{int(event.free_gib * CPU_KV_SHARE_OF_FREE * 1024)}M"
        current = facts.config.kv_cache_memory_bytes if facts.config else None
        changes.append(
            ConfigChange(
                flag="--kv-cache-memory-bytes",
                current=str(current) if current else None,
                proposed=size,
                reason=f"an explicit KV space skips the utilization check: {size} is about half of the "
                f"{fmt(event.free_gib)} GiB free, instead of {fmt(util)} of the node",
                cost="a fixed KV cache: fewer concurrent tokens than a node-sized one",
            )
        )
    if util_change is not None:
        util_change = util_change.model_copy(
            update={
                "reason": f"on the CPU backend it is the share of the node's memory vLLM reserves; "
                f"{fmt(event.free_gib)} of {fmt(event.total_gib)} GiB are free",
                "cost": "reserves most of the node: other processes may push free memory below it again",
            }
        )
    return RULE_FREE_MEMORY.finding(
        Severity.CRITICAL,
        f"CPU backend: {title}",
        evidence=evidence,
        changes=changes,
        alternatives=[util_change] if util_change else [],
        confidence=0.95,
        summary="vLLM's CPU backend reserves --gpu-memory-utilization of the NUMA node's memory when no KV size "
        "is given (VLLM_CPU_KVCACHE_SPACE unset); less than that was free.",
        actions=[
            "Or set VLLM_CPU_KVCACHE_SPACE (whole GiB) in the server's environment: it sets the same KV size.",
            "Check what else holds the node's memory (free -g, ps aux --sort=-rss).",
        ],
    )


RULE_FREE_MEMORY = Rule(
    code="OP-1.3",
    title="free GPU memory below the requested budget",
    category=Category.STARTUP,
    check=_check_free_memory,
    needs=("events",),
    page=RulePage(
        checks="`Free memory on device (F/T GiB) on startup is less than desired GPU memory utilization (U, R "
        "GiB)`; on vLLM's CPU backend (0.32) `Available memory on node N (F/T GiB) on startup is less than "
        "desired CPU memory utilization (U, R GiB)`.",
        why="The budget is a fraction of total memory and must be free at startup; another process holds the rest. "
        "On the CPU backend the fraction is of the NUMA node's RAM, taken when no KV size is given.",
        example="Free 31.44/47.38 GiB, util 0.95 (45.01 GiB) -> --gpu-memory-utilization 0.65. CPU: 10.65/12.34 GiB "
        "free, 0.92 (11.35 GiB) -> --kv-cache-memory-bytes 5G (or --gpu-memory-utilization 0.85).",
        fix="Free the GPU (with nvidia-smi's process table pasted beside the error, the processes holding it are "
        "named, the largest first, vLLM's own VLLM::… titles told apart), or set --gpu-memory-utilization to (free / "
        f"total) − {FREE_MEMORY_MARGIN:g}. CPU backend: "
        "an explicit --kv-cache-memory-bytes (half the free memory) or VLLM_CPU_KVCACHE_SPACE skips the check.",
        limits="A lower budget shrinks the KV cache; two instances on one GPU each need their own share. Half the "
        "free memory is a first step, not sized for the workload.",
        references=[c.CONSERVING_MEMORY_DOCS],
    ),
)


# --- OP-1.7 memory profiling error, OP-1.9 unexplained startup failure ----------------------


def _check_profiling(facts: Facts) -> list[Finding]:
    event = facts.last_event(LogEventKind.MEMORY_PROFILING_ERROR)
    if event is None:
        return []
    evidence = [
        c.log_evidence(
            event, "free memory grew during profiling", event.current_free_gib, event.initial_free_gib, ">", "GiB"
        )
    ]
    return [
        RULE_PROFILING.finding(
            Severity.CRITICAL,
            f"free memory changed during profiling ({fmt(event.initial_free_gib)} -> "
            f"{fmt(event.current_free_gib)} GiB)",
            evidence=evidence,
            confidence=0.9,
            summary="Another process released GPU memory while vLLM measured its own use.",
            actions=["Run vLLM in its own container/GPU, or set --kv-cache-memory-bytes (0.10.2+) to skip profiling."],
        )
    ]


RULE_PROFILING = Rule(
    code="OP-1.7",
    title="GPU memory changed during profiling",
    category=Category.STARTUP,
    check=_check_profiling,
    needs=("events",),
    page=RulePage(
        checks="`Error in memory profiling. Initial free memory X GiB, current free memory Y GiB`.",
        why="vLLM sizes the KV cache from a measurement that another process disturbed.",
        example="Initial free memory 40.1 GiB, current free memory 44.3 GiB.",
        fix="Isolate vLLM on its GPU; or pass --kv-cache-memory-bytes to skip profiling (0.10.2+).",
        limits="No flag fixes a neighbour that allocates and frees memory.",
        references=[c.CONSERVING_MEMORY_DOCS],
    ),
)


RULES: list[Rule] = [RULE_FREE_MEMORY, RULE_PROFILING]
