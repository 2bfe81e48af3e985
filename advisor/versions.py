"""vLLM versions and the version-dependent defaults the memory math needs.

Why its own module: the KV budget, the defaults and the exact failure texts all changed
between vLLM 0.8 and 0.33 (vllm-formats.md §4, §3.6), and triage reads servers of any of
those versions. Every branch below names the version range it comes from.
"""

from __future__ import annotations

import re

from advisor.errors import UserError
from advisor.hardware import GpuSpec, is_a100

Version = tuple[int, int, int]

NEWEST_VLLM = "0.33"
OLDEST_VLLM = "0.8"

# The first version whose behaviour each branch follows (vllm-formats.md §4, §3.6).
CUDAGRAPH_PROFILED_FROM: Version = (0, 20, 0)  # graphs estimated and subtracted; util 0.92
LOW_ACTIVATION_FROM: Version = (0, 19, 0)  # first version with the lower measured peaks
FREE_MEMORY_CHECK_FROM: Version = (0, 9, 1)  # "Free memory on device ..." startup check
TOKENS_AS_CONCURRENCY_FROM: Version = (0, 21, 0)  # logged tokens = concurrency x max_model_len
LARGE_GPU_TIER_FROM: Version = (0, 28, 0)  # >=160 GiB tier for batch defaults


def parse_version(text: str) -> Version:
    """'0.33', '0.8.5', 'v0.10.1.1', '0.15.2rc1' → (major, minor, patch); UserError otherwise."""
    match = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.(\d+))?(?:[.\w+-]*)", text.strip())
    if not match:
        raise UserError(f"--vllm-version {text!r}: not a version; write it like 0.33 or 0.10.1")
    version = (int(match[1]), int(match[2]), int(match[3] or 0))
    if not parse_bounds()[0] <= version[:2] + (0,) <= parse_bounds()[1]:
        raise UserError(
            f"--vllm-version {text!r}: outside the V1 range this advisor models "
            f"({OLDEST_VLLM}–{NEWEST_VLLM}); pick a version in that range"
        )
    return version


def parse_bounds() -> tuple[Version, Version]:
    oldest = tuple(int(p) for p in OLDEST_VLLM.split(".")) + (0,)
    newest = tuple(int(p) for p in NEWEST_VLLM.split(".")) + (0,)
    return oldest, newest  # type: ignore[return-value]


def default_gpu_memory_utilization(version: Version) -> float:
    """0.9 up to 0.19, 0.92 from 0.20 (which started counting CUDA-graph memory)."""
    return 0.92 if version >= CUDAGRAPH_PROFILED_FROM else 0.9


def default_max_num_seqs(version: Version, gpu: GpuSpec) -> int:
    """API-server default by device memory (vllm-formats.md §4.2, `arg_utils.py`)."""
    memory_gib = gpu.usable_gib
    if gpu.arch == "cpu":
        return 256  # the bundled engine's default (engine/config.py), whatever its budget
    if version < (0, 8, 5):
        return 1024
    if version < (0, 9, 0):
        return 1024 if memory_gib >= 70 else 256
    if version >= LARGE_GPU_TIER_FROM and memory_gib >= 160:
        return 1024
    return 1024 if memory_gib >= 70 and not is_a100(gpu) else 256


def default_max_num_batched_tokens(version: Version, gpu: GpuSpec) -> int:
    """API-server default: 2048; 8192 on ≥70 GiB (non-A100 from 0.9); 16384 on ≥160 GiB (0.28+)."""
    memory_gib = gpu.usable_gib
    if gpu.arch == "cpu":
        return 2048  # the bundled engine's default with chunked prefill
    if version >= LARGE_GPU_TIER_FROM and memory_gib >= 160:
        return 16384
    if memory_gib >= 70 and (version < (0, 9, 0) or not is_a100(gpu)):
        return 8192
    return 2048


def default_block_size(is_mla: bool, gpu: GpuSpec) -> int:
    """16 on CUDA; MLA on Hopper/Blackwell gets FlashMLA's 64 (vllm-formats.md §4.2)."""
    return 64 if is_mla and gpu.arch in {"hopper", "blackwell"} else 16


def format_gib(value: float, version: Version) -> str:
    """GiB as vLLM prints it: '%.2f' up to 0.13, `round(x, 2)` from 0.14 ('24.0')."""
    return f"{value:.2f}" if version < (0, 14, 0) else str(round(value, 2))
