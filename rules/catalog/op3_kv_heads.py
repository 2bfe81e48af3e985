"""OP-3.9: the tensor-parallel size and the model's key-value heads do not divide one another.

Why a rule of its own: each tensor-parallel rank holds whole key-value heads, so the number of KV heads
(`num_key_value_heads`; ChatGLM's `multi_query_group_num`) must be a multiple of TP, or, when TP is larger, TP a
multiple of it (vLLM then replicates each head on TP ÷ heads ranks: QKVParallelLinear in
vllm/model_executor/layers/linear.py, 0.32). Unlike the attention heads, which vLLM checks with a message that
names both numbers, the KV heads are checked by bare `assert`s in models' own code (60 model files of the 0.32 wheel
hold `assert self.total_num_kv_heads % tp_size == 0`), so the text holds only the assertion's source line
(vllm#1581: ChatGLM3, two KV groups, on four GPUs; a maintainer explained that TP must divide the KV heads, and two
GPUs worked).
Grouped-query models have few KV heads (2 for ChatGLM, 4 or 8 for most others), so this fails for TP sizes that
divide the attention heads.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity


def _largest_divisor(kv_heads: int, gpus: int) -> int:
    """The largest TP size up to `gpus` that divides the KV heads: the size every form of the check accepts (a
    multiple of the heads passes only where the model's code replicates heads, which ChatGLM's of 2023 did not)."""
    return next(tp for tp in range(min(gpus, kv_heads), 0, -1) if kv_heads % tp == 0)


def _change(facts: Facts) -> ConfigChange:
    current = c.tensor_parallel_size(facts) if facts.config and facts.config.tensor_parallel_size else None
    kv_heads = facts.model.num_kv_heads if facts.model else None
    fits = _largest_divisor(kv_heads, current) if kv_heads and current else None
    return ConfigChange(
        flag="--tensor-parallel-size",
        current=str(current) if current else None,
        proposed=str(fits) if fits else "<a size that divides the model's KV heads>",
        reason="each rank holds whole key-value heads, so the size must divide them (a multiple of them passes only "
        "where the model's code copies each head to several ranks)"
        + (f"; this model has {kv_heads}" if kv_heads else ""),
        cost="fewer GPUs per replica: pipeline parallelism (--pipeline-parallel-size) can use the ones it frees",
    )


def _kv_heads_finding(facts: Facts, event: LogEvent, found: re.Match[str]) -> Finding:
    return RULE.finding(
        Severity.CRITICAL,
        "the tensor-parallel size does not divide the model's key-value heads",
        summary="vLLM splits attention by heads across tensor-parallel ranks, and each rank must hold whole "
        "key-value heads: with grouped-query attention a model has far fewer of them than attention heads (2 for "
        "ChatGLM, 4 or 8 for most), so a size that divides the attention heads can still fail here. The assertion "
        "is the check, without the numbers.",
        evidence=[c.log_evidence(event, name="the failed assertion", value=found.group(0))],
        changes=[_change(facts)],
        actions=[
            "Read the model's KV heads in its config.json (`num_key_value_heads`; `multi_query_group_num` for "
            "ChatGLM; `num_attention_heads` when neither is there) and choose a tensor-parallel size that divides "
            "them; serve the rest of the GPUs as more replicas, or with --pipeline-parallel-size (TP × PP = the "
            "GPUs).",
        ],
        confidence=0.85,
    )


RULE = Rule(
    code="OP-3.9",
    title="the tensor-parallel size does not divide the KV heads",
    category=Category.PARALLELISM,
    check=c.on_kind(LogEventKind.KV_HEADS_INDIVISIBLE, _kv_heads_finding),
    needs=("events",),
    page=RulePage(
        checks="The source line of vLLM's bare assertion on the key-value heads, `assert self.total_num_kv_heads % "
        "tp_size == 0` (or `tp_size % self.total_num_kv_heads == 0`), as a traceback prints it.",
        why="Each tensor-parallel rank holds whole key-value heads; grouped-query models have few (2 to 8).",
        example="`assert self.total_num_kv_heads % tp_size == 0` loading ChatGLM3 (two KV groups) on four GPUs "
        "(vllm#1581); two worked.",
        fix="A tensor-parallel size that divides the KV heads; pipeline parallelism or more replicas for the other "
        "GPUs.",
        limits="The assertion names no number; with --server-args and the model's config the size that fits is "
        "computed.",
        references=["https://github.com/vllm-project/vllm/issues/1581"],
    ),
)

RULES: list[Rule] = [RULE]
