"""OP-7.142: vLLM's punica LoRA kernels have no build for a layer's size on each GPU.

Why a rule of its own: vLLM's first multi-LoRA kernels (punica's BGMV, csrc/punica, vLLM 0.3 to 0.5) were compiled
for a fixed list of feature sizes (bgmv_config.h), and a layer whose input or output size on one GPU is not among
them stops with `RuntimeError: No suitable kernel. h_in=64 h_out=3424 dtype=Float out_dtype=BFloat16`. Tensor
parallelism divides the sizes, so the same model serves at one TP and not another: Qwen1.5-32B's 27,392-wide MLP at
TP 8 is 3,424 per GPU, which is not a multiple of 64, and punica cannot process it (vllm#3793 and #4708, vLLM's LoRA
maintainer). Sizes were added one by one (vllm PR #3350, #5441) until the Triton kernels of vllm PR #5036 (merged
August 2024) replaced punica.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

NO_KERNEL = re.compile(r"No suitable kernel\. h_in=(?P<h_in>\d+) h_out=(?P<h_out>\d+) dtype=(?P<dtype>\w+)")
_ALIGN = 64  # punica's kernels process a feature size that is a multiple of this (vLLM's maintainer, vllm#3793)
# The LoRA ranks vLLM takes (0.32's --max-lora-rank choices, advisor/catalog/vllm_interface.json): one side of each
# punica call is the rank (h_out when it shrinks a layer's input, h_in when it expands to its output), the other the
# layer's feature size
LORA_RANKS = frozenset({1, 8, 16, 32, 64, 128, 256, 320, 512})


def _feature_sizes(h_in: int, h_out: int) -> set[int]:
    """The layer's sides of a punica call: the rank side, the smaller one when it is a rank, is no layer's size."""
    rank = min(h_in, h_out)
    return {max(h_in, h_out)} if rank in LORA_RANKS and rank != max(h_in, h_out) else {h_in, h_out}


def _other_tp(size: int, tp: int) -> int | None:
    """The largest TP below `tp` at which the layer's whole size, split, is a multiple of 64 per GPU."""
    whole = size * tp
    return next((t for t in range(tp - 1, 0, -1) if whole % t == 0 and (whole // t) % _ALIGN == 0), None)


def _punica_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    sizes = _feature_sizes(int(match["h_in"]), int(match["h_out"]))
    odd = max((size for size in sizes if size % _ALIGN), default=None)
    tp = c.tensor_parallel_size(facts)
    other = _other_tp(odd, tp) if odd is not None and tp > 1 else None
    title = f"vLLM's punica LoRA kernel has no build for h_in={match['h_in']}, h_out={match['h_out']}" + (
        f": {odd} per GPU is not a multiple of {_ALIGN}" if odd is not None else ": a size its list lacks"
    )
    return RULE.finding(
        Severity.CRITICAL,
        title,
        summary="vLLM's punica kernels (LoRA before the Triton kernels of PR #5036) were compiled for a fixed list "
        "of feature sizes; tensor parallelism divides a layer's size, so a model can serve LoRA at one TP and "
        "not at another.",
        evidence=[c.log_evidence(event, name="the sizes punica has no kernel for", value=match.group(0))],
        actions=[
            "Upgrade vLLM: the Triton LoRA kernels (vllm PR #5036, merged August 2024) take any size.",
            (
                f"Or serve at --tensor-parallel-size {other}: the layer's {odd * tp} features are then "
                f"{odd * tp // other} per GPU, a multiple of {_ALIGN}."
                if other is not None
                else f"Or pick a --tensor-parallel-size at which each GPU's share of the layer is a multiple of "
                f"{_ALIGN} (Qwen1.5-32B's 27,392-wide MLP: TP 4 gives 6,848; TP 8 gives 3,424, refused)."
            ),
        ],
        confidence=0.85,
    )


RULE = Rule(
    code="OP-7.142",
    title="vLLM's punica LoRA kernel has no build for a layer's size",
    category=Category.CONFIGURATION,
    check=c.on_phrase(NO_KERNEL, _punica_finding),
    needs=("events",),
    page=RulePage(
        checks="punica's `RuntimeError: No suitable kernel. h_in=<n> h_out=<n> dtype=… out_dtype=…`.",
        why="LoRA stops at the first layer whose per-GPU size punica was not compiled for; TP decides the size.",
        example="Qwen1.5-32B with LoRA at TP 8 on vLLM 0.4.1: h_out=3424 (vllm#4708, #3793).",
        fix="A vLLM with the Triton LoRA kernels (PR #5036), or a TP at which each size is a multiple of 64.",
        limits="Sizes that are multiples of 64 and still missing (19,200 in vllm#3793) needed a build that lists "
        "them; only the upgrade covers those.",
        references=[
            "https://github.com/vllm-project/vllm/issues/3793",
            "https://github.com/vllm-project/vllm/issues/4708",
            "https://github.com/vllm-project/vllm/pull/5036",
        ],
    ),
)

RULES: list[Rule] = [RULE]
