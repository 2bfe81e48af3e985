"""bfloat16 linear weights reordered once for oneDNN's blocked GEMM, on CPUs with bf16 arithmetic.

`F.linear` on a bf16 CPU tensor hands oneDNN the weight in PyTorch's row-major layout, and oneDNN
reorders it into the blocked layout its AMX / AVX512-BF16 kernels read on every call. PyTorch's
own compiler (inductor's CPU freezing pass) avoids that by reordering each weight once
(`torch.ops.mkldnn._reorder_linear_weight`) and calling `torch.ops.mkldnn._linear_pointwise` on
the result; vLLM 0.32's CPU backend builds one oneDNN matmul handler per layer at load
(`dispatch_cpu_unquantized_gemm`, vllm/model_executor/layers/utils.py). Done once here, the
engine's linear layers with more rows than the native GEMV takes (servops_kernels.cpu_gemm,
MEMORY_BOUND_ROWS) run 1.0-1.3x faster at 16 rows and 1.3-1.65x at 64, bit-identical to `F.linear`
(BENCHMARKS.md, "Prepacked bf16 weights").

oneDNN builds (JIT-compiles) a GEMM for every row count it is given and keeps a limited cache of them
(1,024 by default). A served step's row count is its scheduled tokens, which differ from step to step
whenever a prompt is prefilled: on a 16-stream long-prompt load a profile of the server put 6 % of the
engine thread in building GEMMs, each new count costing 1.3-4 ms per weight shape against 0.4-1.4 ms
for the product itself. So above EXACT_ROWS the rows are padded to a bucket (`bucket_rows`), which
bounds the distinct counts to about 130 per shape and costs a few padding rows. The engine pads a
step once, in its model runner (engine/model/runner.py), so the layers' GEMMs get bucketed counts
as they are; `linear` pads what still comes unbucketed (the LM head's sampled rows), at the price of a
copy per call, which under a 64-stream load took as much engine time as the building it saved
(BENCHMARKS.md, "Row buckets for the packed GEMM").

On a CPU without bf16 arithmetic (AVX2 only) the copy is a float32 one instead, reordered once for
oneDNN's float32 GEMM (which works there; only the bf16 reorder needs AVX-512 or AVX-NE-CONVERT). The
native kernel widens bf16 in registers, which reads half the bytes and wins while a step is a pass
over the weights (up to `cpu_gemm.WIDENED_ROWS_MAX` rows); above that oneDNN on the reordered float32
copy is the faster one. SmolLM2's 30 layers and LM head, 30 weights streamed, two threads, an
AVX2-only AMD EPYC (BENCHMARKS.md, "float32 GEMMs on weights reordered once"): a pass took 61 / 83 /
145 ms on the copy at 16 / 32 / 64 rows against the native kernel's 60 / 99 / 161, and the copy's
GEMMs ran at 95-128 GFLOP/s at 32-64 rows where `F.linear` on a plain float32 copy (which repacks
the weight on every call) ran at 69-102. So above a decode batch of 16 sequences the
products run float32 on the copy, with one rounding to bf16 at the end: a bf16 engine on such a CPU
keeps float32's GEMMs where they are faster and bf16's where reading the weights is the cost. Where
even the float32 reorder fails, the copy is a plain float32 tensor for `F.linear`.

The cost is a second copy of every linear weight: the native GEMV reads the row-major one in
place, and a packed tensor is opaque. The engine packs only where the host has the memory to
spare, and keeps the copy outside its device budget (engine/core/llm_engine.py).
"""

from __future__ import annotations

import functools
import os

import torch
import torch.nn.functional as F

from servops_kernels.cpu_gemm import WIDENED_ROWS_MAX, cpu_flags, has_bf16_arithmetic

PREPACK_ENV = "SERVOPS_CPU_PREPACK"  # 0 turns packing off (an A/B, or a host short of memory)
# the batch size oneDNN is told to expect: any row count then runs on the packed weight (checked
# bit-identical at 1-256 rows); 16-256 all gave the same speed, a hint of 1 was 1.3-2x slower
PACK_ROWS_HINT = 64
# Row counts up to this go to oneDNN as they are: decode batches, which recur step after step, so each
# count's GEMM is built once. Above, counts are padded to a multiple of BUCKET_ROWS (BUCKET_ROWS_LONG
# above LONG_ROWS): at most 12 + (max_num_batched_tokens - 256) / 32 buckets, a few % of rows wasted.
EXACT_ROWS = 64
BUCKET_ROWS = 16
LONG_ROWS = 256
BUCKET_ROWS_LONG = 32
# What oneDNN's bf16 weight reorder needs of the CPU (it raises otherwise, PyTorch 2.13's
# `mkldnn_reorder_linear_weight`): AVX-NE-CONVERT, or AVX-512 with its BW, VL and DQ subsets.
REORDER_FLAG_SETS = (frozenset({"avx_ne_convert"}), frozenset({"avx512bw", "avx512vl", "avx512dq"}))


@functools.cache
def _ops_available() -> bool:
    ops = torch.ops.mkldnn
    return (
        torch.backends.mkldnn.is_available()
        and hasattr(ops, "_reorder_linear_weight")
        and hasattr(ops, "_linear_pointwise")
    )


def unpackable_reason() -> str | None:
    """None where oneDNN can reorder a bf16 weight on this host, else why not. Why its own check:
    an AVX2-only CPU has the ops yet fails the reorder at run time, so a caller that packs on
    purpose (a test, an A/B) must ask first rather than meet the RuntimeError."""
    if not _ops_available():
        return f"torch {torch.__version__} lacks oneDNN's linear-weight packing"
    flags = cpu_flags()
    if not any(needed <= flags for needed in REORDER_FLAG_SETS):
        return "this CPU lacks what oneDNN's bf16 weight reorder needs (AVX-NE-CONVERT, or AVX-512 BW/VL/DQ)"
    return None


def wanted(device: torch.device, dtype: torch.dtype) -> tuple[bool, str]:
    """Whether the engine should pack its linear weights, and why (or why not), for the start-up log."""
    if device.type != "cpu" or dtype != torch.bfloat16:
        return False, "only bfloat16 weights on a CPU are packed"
    if os.environ.get(PREPACK_ENV, "").strip() == "0":
        return False, f"{PREPACK_ENV}=0"
    if not has_bf16_arithmetic():
        return True, (
            f"float32 GEMMs above {WIDENED_ROWS_MAX} rows (this CPU has no bf16 arithmetic: the native kernel "
            "takes fewer rows)"
        )
    reason = unpackable_reason()
    if reason is not None:
        return False, reason
    return True, "oneDNN's bf16 GEMM on weights reordered once"


def reorders() -> bool:
    """Whether `pack` makes oneDNN's blocked bf16 layout here (else a float32 copy, see the module)."""
    return has_bf16_arithmetic() and unpackable_reason() is None


@functools.cache
def reorders_float32() -> bool:
    """Whether oneDNN reorders a float32 weight here: tried once on a small one, since only running it
    tells (the ops exist on every x86 build; what a CPU lacks shows as a RuntimeError)."""
    if not _ops_available():
        return False
    try:
        torch.ops.mkldnn._reorder_linear_weight(torch.zeros(16, 16), PACK_ROWS_HINT)
    except RuntimeError:
        return False
    return True


def pack(weight: torch.Tensor) -> torch.Tensor:
    """The weight [N, K] for `linear`: reordered for oneDNN (an opaque tensor of the same size) where
    the CPU has bf16 arithmetic, else a float32 copy, reordered for oneDNN where it can be."""
    if reorders():
        return torch.ops.mkldnn._reorder_linear_weight(weight.contiguous(), PACK_ROWS_HINT)
    copy = weight.to(torch.float32).contiguous()
    return torch.ops.mkldnn._reorder_linear_weight(copy, PACK_ROWS_HINT) if reorders_float32() else copy


def bucket_rows(rows: int) -> int:
    """The row count oneDNN is given for `rows` rows (see EXACT_ROWS)."""
    if rows <= EXACT_ROWS:
        return rows
    step = BUCKET_ROWS if rows <= LONG_ROWS else BUCKET_ROWS_LONG
    return -(-rows // step) * step


def linear(x: torch.Tensor, packed: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """`F.linear(x, weight, bias)` for x [M, K] bf16, given `pack(weight)`. A float32 copy computes in
    float32 and rounds once to bf16. On oneDNN's layout, M above EXACT_ROWS is computed padded to
    `bucket_rows(M)` with zero rows, and the first M rows returned (a contiguous view: each output row
    depends on its own input row only)."""
    if packed.dtype == torch.float32 and x.dtype != torch.float32:  # the float32 copy: one rounding at the end
        wide_bias = None if bias is None else bias.float()
        if not packed.is_mkldnn:
            return F.linear(x.float(), packed, wide_bias).to(x.dtype)
        return _onednn_linear(x.float(), packed, wide_bias).to(x.dtype)
    return _onednn_linear(x, packed, bias)


def _onednn_linear(x: torch.Tensor, packed: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    rows = x.shape[0]
    padded = bucket_rows(rows)
    if padded != rows:
        grown = x.new_zeros(padded, x.shape[1])
        grown[:rows] = x
        return torch.ops.mkldnn._linear_pointwise(grown, packed, bias, "none", [], "")[:rows]
    return torch.ops.mkldnn._linear_pointwise(x, packed, bias, "none", [], "")


def packed_bytes(weight: torch.Tensor) -> int:
    """Memory the packed copy of `weight` takes: its elements at 4 bytes for a float32 copy, else at
    the weight's own size (the blocked layout pads a little to its tile sizes, which this leaves out)."""
    return weight.numel() * (weight.element_size() if reorders() else 4)
