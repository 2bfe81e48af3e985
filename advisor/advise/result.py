"""The `servops advise` result: the JSON document, and how its sections are built.

Apart from the command (argument handling) and advise_text (the terminal view), which both
read it: the document's keys are a contract for scripts and for `servops report` (issue #2),
so they are declared once here, with how a launch, a plan and a model become its sections.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from advisor import __version__
from advisor.advise.cpu_plan import CpuPlan
from advisor.advise.plan import Plan, Recommendation
from advisor.catalog.gpus import GpuSpec
from advisor.catalog.models import ModelSpec
from advisor.memory.budget import LaunchConfig, MemoryBreakdown
from advisor.memory.cpu_backend import CpuKvSizing, CpuKvSpace


class AdviseResult(BaseModel):
    """The JSON document `servops advise --json` writes (stable keys, issue #2)."""

    kind: str = "advise"
    servops_version: str = __version__
    created_at: str
    inputs: dict[str, Any]
    model: dict[str, Any]
    gpu: GpuSpec | None  # None on vLLM's CPU backend (vllm_cpu says what was sized)
    memory: dict[str, float | int]
    fits: bool
    failure: str | None
    max_model_len_that_fits: int
    launch: dict[str, Any]  # the launch as given, vLLM defaults resolved
    command: str
    recommendations: list[Recommendation]
    warnings: list[str]
    recommended: dict[str, Any]  # launch, data_parallel_size and memory of the recommendation
    vllm_cpu: CpuKvSizing | None = None  # vLLM's CPU backend: blocks, tokens, concurrency, verdict


def resolved_launch(config: LaunchConfig, memory: MemoryBreakdown) -> dict[str, Any]:
    """The launch with vLLM's defaults for its version filled in, as the memory math used them."""
    resolved = config.model_dump()
    resolved.update(
        {
            k: getattr(memory, k)
            for k in (
                "max_model_len",
                "block_size",
                "gpu_memory_utilization",
                "max_num_seqs",
                "max_num_batched_tokens",
                "vllm_version",
            )
        }
    )
    return resolved


def recommended_section(plan: Plan) -> dict[str, Any]:
    """The `recommended` section: the plan's launch, replicas and memory."""
    return {
        "launch": resolved_launch(plan.launch, plan.memory),
        "data_parallel_size": plan.data_parallel_size,
        "memory": plan.memory.memory_section(),
        "fits": plan.memory.fits,
        "failure": plan.memory.failure,
    }


def cpu_launch(config: LaunchConfig, sizing: CpuKvSizing, space: CpuKvSpace) -> dict[str, Any]:
    """The CPU launch with vLLM's defaults filled in and the KV space as vLLM takes it."""
    resolved = config.model_dump()
    resolved.update(
        max_model_len=sizing.max_model_len,
        block_size=sizing.block_size,
        vllm_version=sizing.vllm_version,
        env=space.env(),
        **space.model_dump(),
    )
    return resolved


def cpu_recommended_section(plan: CpuPlan) -> dict[str, Any]:
    """The `recommended` section on vLLM's CPU backend, with the recommendation's KV sizing."""
    return {
        "launch": cpu_launch(plan.launch, plan.sizing, plan.space),
        "data_parallel_size": 1,
        "memory": plan.sizing.memory_section(),
        "fits": plan.sizing.fits,
        "failure": plan.sizing.failure,
        "vllm_cpu": plan.sizing.model_dump(),
    }


def model_summary(model: ModelSpec) -> dict[str, Any]:
    """The `model` section: the name and the shapes the memory math read."""
    return model.model_dump(
        include={
            "name",
            "hf_id",
            "attention",
            "num_hidden_layers",
            "num_attention_heads",
            "num_key_value_heads",
            "head_dim",
            "max_position_embeddings",
            "sliding_window",
            "param_count",
            "native_quantization",
            "num_experts",
        }
    )
