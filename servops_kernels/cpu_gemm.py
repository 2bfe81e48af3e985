"""Native bfloat16 linear layer for CPUs without bfloat16 arithmetic (csrc/gemm_bf16_cpu.cpp).

`linear(x, weight, bias)` is `F.linear` for bf16 CPU tensors, with float32 products and sums
and one rounding to bf16, as PyTorch's. Why: on an AVX2 CPU (no AVX512-BF16, no AMX) PyTorch's
bf16 GEMM is a software path, measured at about a sixth of its float32 speed; the native
kernel widens bf16 in registers and runs at float32 FMA speed on half the weight bytes
(BENCHMARKS.md, "bfloat16 GEMM"). Where the CPU has native bf16 (`needed()` is False) the same
kernel, built for it, runs its dot products on the bf16 units (vdpbf16ps) and takes only the
matrix-vector shapes of a decode step with a few sequences (`preferred`); PyTorch's oneDNN GEMM
is the faster one for more rows.
"""

from __future__ import annotations

import ctypes
import functools
from pathlib import Path

import torch

from servops_kernels.cpu_build import NativeLibrary

ABI_VERSION = 1
# CPU flags under which PyTorch's bf16 GEMM runs on hardware, not in software
NATIVE_BF16_FLAGS = frozenset({"avx512_bf16", "amx_bf16"})

_POINTER, _I32, _I64 = ctypes.c_void_p, ctypes.c_int, ctypes.c_int64
_NATIVE = NativeLibrary(
    "gemm_bf16_cpu.cpp",
    "servops_gemm_abi",
    ABI_VERSION,
    {
        "servops_linear_bf16": [_POINTER, _I64, _POINTER, _POINTER, _POINTER, _I64, _I32, _I32, _I32, _I32],
    },
)
library, available, unavailable_reason = _NATIVE.library, _NATIVE.available, _NATIVE.unavailable_reason
available_or_warn = _NATIVE.available_or_warn


# Rows up to which the native kernel beats oneDNN even on a CPU with bf16 arithmetic: with a few
# rows a linear layer is a matrix-vector product bound by reading the weights, which the native
# kernel does in place on the bf16 units (vdpbf16ps) while oneDNN reorders the weight first.
# Measured on SmolLM2's layers, one thread (BENCHMARKS.md, "bf16 GEMV on the bf16 units"): native
# 1.6-2.7x oneDNN at 1-4 rows, 0.9-1.3x at 8, 0.6-0.75x at 16.
MEMORY_BOUND_ROWS = 4
# On a CPU without bf16 arithmetic, the rows up to which the widening kernel beats oneDNN's float32
# GEMM on a float32 copy of the weight reordered once (servops_kernels.cpu_prepack). SmolLM2's 30 layers and
# its LM head, 30 weights streamed, two threads, an AVX2-only AMD EPYC (BENCHMARKS.md, "float32 GEMMs
# on weights reordered once"): a whole pass took 31 / 41 / 60 / 99 / 161 ms natively at 8 / 12 / 16 /
# 32 / 64 rows against 42 / 48 / 61 / 83 / 145 ms on the copy. (Against `F.linear` on a plain float32
# copy, which repacks the weight on every call, the crossover had been 64 rows.)
WIDENED_ROWS_MAX = 16


@functools.cache
def cpu_flags() -> frozenset[str]:
    """The first CPU's feature flags from /proc/cpuinfo (empty where it cannot be read)."""
    try:
        return frozenset(
            next(
                (
                    line.split(":", 1)[1].split()
                    for line in Path("/proc/cpuinfo").read_text().splitlines()
                    if line.startswith("flags")
                ),
                [],
            )
        )
    except OSError:
        return frozenset()


def eight_lanes() -> bool:
    """Whether the native kernels here are the 8-lane build (`-march=native` on a CPU without AVX-512)."""
    return "avx512f" not in cpu_flags()


def has_bf16_arithmetic() -> bool:
    """Whether this CPU computes in bf16 in hardware (AVX512-BF16 or AMX), as vLLM's CPU backend checks
    before it picks bf16."""
    return bool(NATIVE_BF16_FLAGS & cpu_flags())


def needed() -> bool:
    """Whether this CPU lacks bf16 arithmetic, so PyTorch's bf16 GEMM is the slow software path."""
    return bool(cpu_flags()) and not has_bf16_arithmetic()


def preferred(rows: int, copy: bool = False) -> bool:
    """Whether a bf16 linear layer over `rows` input rows should run the native kernel on this CPU:
    for memory-bound row counts everywhere; without bf16 arithmetic also above them, up to
    WIDENED_ROWS_MAX where a float32 `copy` of the weight exists (servops_kernels.cpu_prepack), else always."""
    if rows <= MEMORY_BOUND_ROWS:
        return True
    return needed() and (not copy or rows <= WIDENED_ROWS_MAX)


def supports(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None) -> bool:
    """bf16 CPU tensors: x [M, K] with rows contiguous, weight [N, K] contiguous, bias [N]."""
    return (
        x.dtype == weight.dtype == torch.bfloat16
        and x.device.type == weight.device.type == "cpu"
        and x.dim() == 2
        and weight.dim() == 2
        and (x.stride(1) == 1 or x.shape[1] <= 1)
        and weight.is_contiguous()
        and (bias is None or (bias.dtype == torch.bfloat16 and bias.device.type == "cpu" and bias.dim() == 1))
        and available()
    )


def linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """x [M, K] @ weight[N, K]^T + bias -> new bf16 [M, N] (check `supports` first)."""
    if x.shape[1] != weight.shape[1] or (bias is not None and bias.numel() != weight.shape[0]):
        raise ValueError(
            f"linear: x {tuple(x.shape)}, weight {tuple(weight.shape)}"
            f"{'' if bias is None else f', bias {tuple(bias.shape)}'} do not match"
        )
    out = torch.empty(x.shape[0], weight.shape[0], dtype=torch.bfloat16)
    if x.shape[0] and weight.shape[0]:
        bias = None if bias is None else bias.contiguous()
        library().servops_linear_bf16(
            x.data_ptr(),
            x.stride(0),
            weight.data_ptr(),
            None if bias is None else bias.data_ptr(),
            out.data_ptr(),
            out.stride(0),
            x.shape[0],
            weight.shape[0],
            x.shape[1],
            torch.get_num_threads(),
        )
    return out
