"""OP-1.16: nvidia-smi shows vLLM's engine holding most of a GPU, which people read as a leak.

Why a rule of its own: vLLM reserves its share of each GPU when the engine starts (--gpu-memory-utilization, 0.9 of
the GPU's total memory by default) for the weights, the activations it profiled and a KV cache sized to fill the
rest, and holds it for as long as it serves, busy or idle. nvidia-smi's process table then shows the engine's process
(titled `VLLM::EngineCore`, or `VLLM::Worker_TP0` … for each worker: vllm/utils/system_utils.py) with tens of GiB, and
a figure that rose after start (the PyTorch allocator keeping blocks for the largest batches it has run, buffers
libraries allocate on first use) looks like a leak. eugr/spark-vllm-docker#43: a user saw the engine grow from about
61 to 83.5 GB and called it a leak; the maintainer said it is not one, the growth stops and stays at that level. A
leak is growth that never levels off, which only readings over hours tell; the row alone says what vLLM holds.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity
from rules.signals import fmt

# vLLM titles its processes so (vllm/utils/system_utils.py): the engine core, and each worker of a parallel engine
VLLM_PROCESS_PREFIX = "VLLM::"
# What OP-1.3 and OP-1.8 read beside nvidia-smi's rows: there the rows are evidence of a failure, not a question
_FAILURES = (LogEventKind.FREE_MEMORY_BELOW_REQUESTED, LogEventKind.CUDA_OOM)


def _check_engine_memory(facts: Facts) -> list[Finding]:
    rows = [e for e in facts.events_of(LogEventKind.GPU_PROCESS) if (e.component or "").startswith(VLLM_PROCESS_PREFIX)]
    if not rows or any(facts.events_of(kind) for kind in _FAILURES):
        return []
    largest = max(rows, key=lambda e: e.memory_gib or 0.0)
    held = fmt(largest.memory_gib or 0.0)
    util = c.gpu_memory_utilization(facts)
    said = "here" if facts.config and facts.config.gpu_memory_utilization is not None else "vLLM's default"
    return [
        RULE_ENGINE_MEMORY.finding(
            Severity.INFO,
            f"nvidia-smi shows {largest.component} holding {held} GiB of GPU {largest.gpu_index}: vLLM's own "
            "reservation, which a single reading cannot tell from a leak",
            summary=f"vLLM reserves --gpu-memory-utilization ({fmt(util)}, {said}) of each GPU's total memory when the "
            "engine starts, for the weights, the activations it profiled and a KV cache sized to fill the rest, and "
            "holds it while it serves, idle or not. What its process gains after start (the PyTorch allocator keeping "
            "blocks for the largest batches it has run, buffers allocated on first use) levels off; a leak keeps "
            "rising.",
            evidence=[_row_evidence(row) for row in rows],
            actions=[
                "Read the engine's memory over hours, not once: `nvidia-smi --query-compute-apps=pid,process_name,"
                "used_memory --format=csv -l 300`. A figure that rises and then stays is vLLM's reservation; one that "
                "keeps rising with traffic is a leak worth a report, with those readings and the vLLM version.",
                "To have vLLM hold less of the GPU, lower --gpu-memory-utilization: its KV cache, and so the tokens "
                "it can keep in flight, shrink with it.",
            ],
            confidence=0.6,
        )
    ]


def _row_evidence(row: LogEvent):
    return c.log_evidence(row, name=f"{row.component} on GPU {row.gpu_index}", value=row.memory_gib, unit="GiB")


RULE_ENGINE_MEMORY = Rule(
    code="OP-1.16",
    title="vLLM's engine holds most of a GPU (nvidia-smi)",
    category=Category.MEMORY,
    check=_check_engine_memory,
    needs=("events",),
    page=RulePage(
        checks="nvidia-smi's process-table rows of processes vLLM titles `VLLM::…` (EngineCore, Worker_TP0 …), "
        "without a memory failure beside them.",
        why="vLLM reserves its share of the GPU at start and holds it; a large or grown figure is read as a leak.",
        example="`|    0   N/A  N/A          342697      C   VLLM::EngineCore                      83521MiB |` "
        "(eugr/spark-vllm-docker#43: not a leak, per the maintainer; the growth stops).",
        fix="Tell reservation from leak by readings over hours; lower --gpu-memory-utilization to hold less.",
        limits="One reading cannot show a leak; the GPU's total memory is not in the row.",
        references=["https://github.com/eugr/spark-vllm-docker/issues/43"],
    ),
)

RULES: list[Rule] = [RULE_ENGINE_MEMORY]
