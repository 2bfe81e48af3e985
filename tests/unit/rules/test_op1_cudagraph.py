"""OP-1.10: vLLM's CUDA-graph memory notices, read from its own log wording through the collector."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog.op1_cudagraph import RULE_CUDAGRAPH
from rules.facts import Facts, MemoryFacts
from rules.model import Severity
from tests.unit.rules.factories import config

PREFIX = "(EngineCore_DP0 pid=4242) INFO 11-20 10:00:0{} [gpu_worker.py:412] "
ENABLED = (
    "CUDA graph memory profiling is enabled (default since v0.21.0). The current "
    "--gpu-memory-utilization=0.9200 is equivalent to --gpu-memory-utilization=0.8936 without CUDA graph "
    "memory profiling. To keep the same KV cache size, set it to 0.9464."
)
DISABLED = (
    "CUDA graph memory profiling is disabled (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0). The KV cache "
    "budget does not include CUDA graph memory."
)


def _pool(actual: float, estimated: float) -> str:
    difference = actual - estimated
    return (
        f"CUDA graph pool memory: {actual:.2f} GiB (actual), {estimated:.2f} GiB (estimated), difference: "
        f"{difference:.2f} GiB ({100 * difference / estimated:.1f}%)."
    )


def _facts(*messages: str) -> Facts:
    lines = [PREFIX.format(i) + message for i, message in enumerate(messages)]
    return Facts(
        events=parse_lines(lines).events,
        config=config(gpu_memory_utilization=0.92),
        memory=MemoryFacts(total_gib=79.18, source="startup_log"),
    )


def test_a_pool_larger_than_its_estimate_gives_the_miss_back_from_the_utilization():
    [finding] = RULE_CUDAGRAPH.evaluate(_facts(ENABLED, _pool(2.41, 0.92)))
    assert finding.severity == Severity.MEDIUM and "exceeds its estimate" in finding.title
    [change] = finding.changes
    assert change.flag == "--gpu-memory-utilization" and change.proposed == f"{round(0.92 - 1.49 / 79.18, 2):g}"
    assert finding.evidence[0].raw.startswith("(EngineCore_DP0")


def test_an_estimate_far_above_the_pool_is_kv_memory_left_idle():
    [finding] = RULE_CUDAGRAPH.evaluate(_facts(_pool(0.40, 1.60)))
    assert finding.severity == Severity.LOW and "left unused" in finding.title and finding.changes == []


def test_a_close_estimate_leaves_only_the_utilization_note():
    [finding] = RULE_CUDAGRAPH.evaluate(_facts(ENABLED, _pool(1.02, 0.92)))
    assert finding.severity == Severity.INFO and "acts as 0.8936" in finding.title


def test_profiling_turned_off_is_named():
    [finding] = RULE_CUDAGRAPH.evaluate(_facts(DISABLED))
    assert finding.severity == Severity.LOW and "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0" in finding.title


def test_no_notice_no_finding():
    assert RULE_CUDAGRAPH.evaluate(_facts("Model loading took 14.99 GiB and 4.5 seconds")) == []
