"""OP-3.8: a Marlin kernel's tile does not divide the slice of a weight each tensor-parallel rank holds.

Why a rule of its own: quantized checkpoints (GPTQ, AWQ, and FP8 on GPUs without FP8 units, which vLLM runs through
Marlin) are multiplied by Marlin kernels that work in tiles of 64 or 128 along each dimension, and each rank holds
1/TP of a weight. When the slice is not a multiple of the tile, the kernel's own C++ check refuses it in words that
name no flag: `RuntimeError: size_n = 2736 is not divisible by tile_n_size = 64` (zai-org/GLM-4.5#94: GLM-4.5-Air-FP8
on eight RTX 3090s). vLLM's Python check of the same condition says "Consider reducing tensor_parallel_size" (its
catalog entries of `… per_partition = … is not divisible by min_thread_… = …`): a smaller TP makes each slice larger,
by the factor the slice lacks, and pipeline parallelism can use the GPUs it frees.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.catalog.vc_vllm_messages import slice_change
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

TILE_CHECK = re.compile(r"size_(?P<dim>[nk]) = (?P<size>\d+) is not divisible by tile_(?P=dim)_size = (?P<tile>\d+)")


def _check_kernel_tile(facts: Facts) -> list[Finding]:
    refused = c.first_match(facts, TILE_CHECK)
    if refused is None:
        return []
    event, found = refused
    size, tile = int(found["size"]), int(found["tile"])
    return [
        RULE.finding(
            Severity.CRITICAL,
            f"a Marlin kernel's tile ({tile}) does not divide each rank's slice of a weight ({size}): the "
            "tensor-parallel size splits the weight too finely",
            summary="Marlin (GPTQ, AWQ, and FP8 on GPUs without FP8 units) multiplies in tiles, and each "
            f"tensor-parallel rank holds 1/TP of every weight; a slice of {size} is not a multiple of {tile}, so "
            "the kernel refuses to load it. A smaller tensor-parallel size gives each rank a larger slice.",
            evidence=[c.log_evidence(event, name="the slice and the tile", value=found.group(0))],
            changes=[slice_change("--tensor-parallel-size", size, tile, facts)],
            actions=[
                "Use the GPUs the smaller size frees with --pipeline-parallel-size (TP × PP = the GPUs), or serve "
                "a checkpoint whose kernel runs natively on this GPU (FP8 needs compute capability 8.9 or newer).",
            ],
            confidence=0.8,
        )
    ]


RULE = Rule(
    code="OP-3.8",
    title="a Marlin kernel's tile does not divide each rank's slice",
    category=Category.PARALLELISM,
    check=_check_kernel_tile,
    needs=("events",),
    page=RulePage(
        checks="Marlin's C++ check `size_n = N is not divisible by tile_n_size = T` (or `size_k … tile_k_size`).",
        why="Each tensor-parallel rank's slice of a quantized weight must be a multiple of the kernel's tile.",
        example="`RuntimeError: size_n = 2736 is not divisible by tile_n_size = 64` (zai-org/GLM-4.5#94, "
        "GLM-4.5-Air-FP8 on eight RTX 3090s).",
        fix="A tensor-parallel size smaller by the factor the slice lacks; pipeline parallelism for the rest.",
        limits="The server's tensor-parallel size is not in the words; with --server-args it is computed.",
        references=["https://github.com/zai-org/GLM-4.5/issues/94"],
    ),
)

RULES: list[Rule] = [RULE]
