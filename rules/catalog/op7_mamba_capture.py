"""OP-7.180: CUDA graph capture of a hybrid (Mamba or GDN) model asked for a batch larger than its state cache.

Why a rule of its own: a hybrid model keeps one Mamba (or gated-delta-net) state per running request in a cache of
its own, and its causal-conv1d update kernel asserts that the batch fits it (`assert num_cache_lines >= batch`,
vllm/model_executor/layers/mamba/ops/causal_conv1d.py). vLLM captures CUDA graphs for decode batches up to its
largest capture size, and for FULL decode graphs some releases captured sizes above the number of state cache blocks:
vllm#34094 (Qwen3-Coder-Next with tensor parallelism on vLLM 0.15) failed at start in capture, and vllm PR #34571,
which names it, caps the capture sizes at the Mamba cache's blocks. The assertion reads like a kernel bug; it is a
capture size the model's state cache cannot hold.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

CACHE_LINES = re.compile(r"\bnum_cache_lines >= batch\b")
# vLLM 0.32's ceiling on its default largest capture size, and on data-center Blackwell (compute capability 10.x),
# vllm/config/vllm.py
DEFAULT_LARGEST_CAPTURE = 512
BLACKWELL_LARGEST_CAPTURE = 1024
_DATACENTER_BLACKWELL = ("B100", "B200", "B300", "GB200", "GB300")


def _check_capture(facts: Facts) -> list[Finding]:
    """The assertion's words: pasted alone (the AssertionError then holds them, or the catalog's wordless check of
    the kernel does), or as the failing source line of a traceback (the event's code, under an AssertionError without
    words)."""
    for event in facts.events_of(*c.UNPLACED, LogEventKind.VLLM_MESSAGE):
        found = CACHE_LINES.search(event.message or event.raw or "") or CACHE_LINES.search(event.code or "")
        if found is not None:
            return [_capture_finding(facts, event, found)]
    return []


def _capture_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    seqs = c.max_num_seqs(facts) or c.default_max_num_seqs(facts)
    gpu = (facts.hardware.gpu_name or "") if facts.hardware else ""
    ceiling = (
        BLACKWELL_LARGEST_CAPTURE if any(name in gpu for name in _DATACENTER_BLACKWELL) else DEFAULT_LARGEST_CAPTURE
    )
    default_largest = min(2 * seqs, ceiling)
    changes = (
        [
            ConfigChange(
                flag="--max-cudagraph-capture-size",
                current=None,
                proposed=str(seqs),
                reason=f"captured decode batches no larger than --max-num-seqs ({seqs}), where vLLM 0.32's default "
                f"largest size is twice that up to {ceiling} ({default_largest}; vllm/config/vllm.py)",
                cost="batches above the largest captured size run without a CUDA graph",
            )
        ]
        if seqs < default_largest
        else []
    )
    return RULE_MAMBA_CAPTURE.finding(
        Severity.CRITICAL,
        "a hybrid model's CUDA graph capture asked for a decode batch larger than its Mamba state cache holds",
        summary="The causal-conv1d kernel of a Mamba or gated-delta-net layer asserts that the batch fits the "
        "model's state cache. vLLM captured a FULL decode graph at a batch size above the cache's blocks, which "
        "releases before vllm PR #34571 did not cap (vllm#34094: Qwen3-Coder-Next on 0.15). Nothing is wrong with "
        "the weights or the GPU.",
        evidence=[c.log_evidence(event, name="the failed assertion", value=match.group(0))],
        changes=changes,
        actions=[
            "Upgrade vLLM to a release with PR #34571 (merged February 2026), which caps the capture sizes at the "
            "Mamba cache's blocks by itself.",
            "Until then keep --max-cudagraph-capture-size below the number of Mamba cache blocks the engine reports "
            "at start, or start with --enforce-eager to skip CUDA graphs altogether (slower decode).",
        ],
        confidence=0.8,
    )


RULE_MAMBA_CAPTURE = Rule(
    code="OP-7.180",
    title="a hybrid model's CUDA graph capture outgrew its Mamba state cache",
    category=Category.STARTUP,
    check=_check_capture,
    needs=("events",),
    page=RulePage(
        checks="The causal-conv1d kernel's `assert num_cache_lines >= batch` (an AssertionError, or the assert "
        "pasted alone).",
        why="The engine fails at start during CUDA graph capture of a hybrid model, in a kernel's assertion.",
        example="`assert num_cache_lines >= batch` serving Qwen3-Coder-Next with tensor parallelism on vLLM 0.15 "
        "(vllm#34094; fixed by vllm PR #34571, which caps the capture sizes).",
        fix="A vLLM with PR #34571; until then --max-cudagraph-capture-size at most --max-num-seqs, or "
        "--enforce-eager.",
        limits="The assertion names no sizes; the largest capture size and the Mamba cache's blocks are in the "
        "engine's start-up lines.",
        references=["https://github.com/vllm-project/vllm/issues/34094"],
    ),
)

RULES: list[Rule] = [RULE_MAMBA_CAPTURE]
