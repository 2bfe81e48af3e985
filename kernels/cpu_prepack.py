"""bfloat16 linear weights reordered once for oneDNN's blocked GEMM, on CPUs with bf16 arithmetic.

`F.linear` on a bf16 CPU tensor hands oneDNN the weight in PyTorch's row-major layout, and oneDNN
reorders it into the blocked layout its AMX / AVX512-BF16 kernels read on every call. PyTorch's
own compiler (inductor's CPU freezing pass) avoids that by reordering each weight once
(`torch.ops.mkldnn._reorder_linear_weight`) and calling `torch.ops.mkldnn._linear_pointwise` on
the result; vLLM 0.32's CPU backend builds one oneDNN matmul handler per layer at load
(`dispatch_cpu_unquantized_gemm`, vllm/model_executor/layers/utils.py). Done once here, the
engine's linear layers with more rows than the native GEMV takes (kernels.cpu_gemm,
MEMORY_BOUND_ROWS) run 1.0-1.3x faster at 16 rows and 1.3-1.65x at 64, bit-identical to `F.linear`
(BENCHMARKS.md, "Prepacked bf16 weights").

The cost is a second copy of every linear weight: the native GEMV reads the row-major one in
place, and a packed tensor is opaque. The engine packs only where the host has the memory to
spare, and keeps the copy outside its device budget (engine/core/llm_engine.py).
"""

from __future__ import annotations

import functools
import os

import torch

from kernels.cpu_gemm import has_bf16_arithmetic

PREPACK_ENV = "SERVOPS_CPU_PREPACK"  # 0 turns packing off (an A/B, or a host short of memory)
# the batch size oneDNN is told to expect: any row count then runs on the packed weight (checked
# bit-identical at 1-256 rows); 16-256 all gave the same speed, a hint of 1 was 1.3-2x slower
PACK_ROWS_HINT = 64


@functools.cache
def _ops_available() -> bool:
    ops = torch.ops.mkldnn
    return (
        torch.backends.mkldnn.is_available()
        and hasattr(ops, "_reorder_linear_weight")
        and hasattr(ops, "_linear_pointwise")
    )


def wanted(device: torch.device, dtype: torch.dtype) -> tuple[bool, str]:
    """Whether the engine should pack its linear weights, and why (or why not), for the start-up log."""
    if device.type != "cpu" or dtype != torch.bfloat16:
        return False, "only bfloat16 weights on a CPU are packed"
    if os.environ.get(PREPACK_ENV, "").strip() == "0":
        return False, f"{PREPACK_ENV}=0"
    if not has_bf16_arithmetic():
        return False, "this CPU has no bf16 arithmetic (AVX512-BF16 or AMX); the native kernel takes every row"
    if not _ops_available():
        return False, f"torch {torch.__version__} lacks oneDNN's linear-weight packing"
    return True, "oneDNN's bf16 GEMM on weights reordered once"


def pack(weight: torch.Tensor) -> torch.Tensor:
    """The weight [N, K] reordered for `linear` (an opaque oneDNN tensor of the same size)."""
    return torch.ops.mkldnn._reorder_linear_weight(weight.contiguous(), PACK_ROWS_HINT)


def linear(x: torch.Tensor, packed: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """`F.linear(x, weight, bias)` for x [M, K] bf16, given `pack(weight)`."""
    return torch.ops.mkldnn._linear_pointwise(x, packed, bias, "none", [], "")


def packed_bytes(weight: torch.Tensor) -> int:
    """Memory the packed copy of `weight` takes: its elements (the blocked layout pads a little
    to its tile sizes, which this leaves out)."""
    return weight.numel() * weight.element_size()
