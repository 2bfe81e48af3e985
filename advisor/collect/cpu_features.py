"""Whether this machine's CPU computes in bfloat16, as the bundled engine decides its dtype.

Why a copy of servops_kernels.cpu_gemm's check: advisor may not import servops_kernels (docs/design.md), yet
`servops advise --device cpu` must size the KV pool in the dtype the engine will pick on this
machine: bfloat16 where the CPU has AVX512-BF16 or AMX, float32 elsewhere. A test holds the two
flag sets equal (tests/unit/advisor/test_cpu_features.py).
"""

from __future__ import annotations

import functools
from pathlib import Path

# CPU flags under which the bundled engine (and vLLM's CPU backend) run bf16 in hardware.
BF16_ARITHMETIC_FLAGS = frozenset({"avx512_bf16", "amx_bf16"})


@functools.cache
def cpu_flags() -> frozenset[str]:
    """The first CPU's feature flags from /proc/cpuinfo (empty where it cannot be read)."""
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return frozenset()
    return frozenset(next((line.split(":", 1)[1].split() for line in lines if line.startswith("flags")), []))


def has_bf16_arithmetic() -> bool:
    """Whether the bundled engine's `--dtype auto` is bfloat16 on this machine's CPU."""
    return bool(BF16_ARITHMETIC_FLAGS & cpu_flags())
