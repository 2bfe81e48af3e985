"""vLLM versions and the version-dependent defaults the memory math needs.

Why its own module: the KV budget, the defaults and the exact failure texts all changed
between vLLM 0.8 and 0.33 (docs/reference.md §4, §2.6), and triage reads servers of any of
those versions. Every branch below names the version range it comes from.
"""

from __future__ import annotations

import re

from advisor.catalog.gpus import GpuSpec
from advisor.errors import UserError
from rules import vllm_defaults
from rules.vllm_defaults import CPU_DEFAULTS_FROM, cpu_batch_defaults

Version = tuple[int, int, int]

NEWEST_VLLM = "0.33"
OLDEST_VLLM = "0.8"

# The first version whose behaviour each branch follows (docs/reference.md §4, §2.6). vLLM's defaults
# for flags left out (batch caps, block size, memory share, the CPU backend's and the bundled engine's)
# are one table in rules/vllm_defaults.py, which the functions below read (cpu_batch_defaults is this
# module's reader of the CPU backend's; its constants are imported from the table itself).
CUDAGRAPH_PROFILED_FROM: Version = vllm_defaults.UTILIZATION_0_92_FROM  # graphs estimated and subtracted; util 0.92
LOW_ACTIVATION_FROM: Version = (0, 19, 0)  # first version with the lower measured peaks
TOKENS_AS_CONCURRENCY_FROM: Version = (0, 21, 0)  # logged tokens = concurrency x max_model_len

_VERSION = re.compile(r"v?(\d+)\.(\d+)(?:\.(\d+))?(?:[.\w+-]*)")


def parse_version(text: str, newest: str = NEWEST_VLLM) -> Version:
    """'0.33', '0.8.5', 'v0.10.1.1', '0.15.2rc1' → (major, minor, patch); UserError otherwise, or outside
    OLDEST_VLLM–`newest` (the memory model's range by default; a reader of later releases passes its own)."""
    version = version_of(text)
    if version is None:
        raise UserError(f"--vllm-version {text!r}: not a version; write it like 0.33 or 0.10.1")
    if not parse_bounds()[0] <= version[:2] + (0,) <= parse_bounds(newest)[1]:
        why = ""
        if newest == NEWEST_VLLM and version >= vllm_defaults.EXTENSIBLE_KV_CACHE_FROM:
            why = (
                "; vLLM 0.34 sizes the KV cache from the memory it measures after warmup (its extensible KV cache), "
                "which this memory model does not cover yet: advise for 0.33 (the estimate-based sizing 0.34 "
                "falls back to where it turns that cache off)"
            )
        raise UserError(
            f"--vllm-version {text!r}: outside the V1 range this advisor models "
            f"({OLDEST_VLLM}–{newest}); pick a version in that range{why}"
        )
    return version


def version_of(text: str | None) -> Version | None:
    """Like parse_version, without the range check: for versions read from a server's own log
    or /version (the bundled engine reports servops' version), None when it is not one."""
    match = _VERSION.fullmatch((text or "").strip())
    return (int(match[1]), int(match[2]), int(match[3] or 0)) if match else None


def parse_bounds(newest: str = NEWEST_VLLM) -> tuple[Version, Version]:
    oldest_version = tuple(int(p) for p in OLDEST_VLLM.split(".")) + (0,)
    newest_version = tuple(int(p) for p in newest.split(".")) + (0,)
    return oldest_version, newest_version  # type: ignore[return-value]


def default_gpu_memory_utilization(version: Version) -> float:
    """0.9 up to 0.19, 0.92 from 0.20 (which started counting CUDA-graph memory): rules/vllm_defaults.py."""
    return vllm_defaults.gpu_memory_utilization(version)


def _device(gpu: GpuSpec) -> vllm_defaults.Device:
    """A GpuSpec's kind in the defaults table: arch "cpu" is the bundled engine's CPU "device" budget
    (advisor/catalog/gpus.py gpu_from_memory); every other spec is a GPU under vLLM's CUDA API server."""
    return "bundled" if gpu.arch == "cpu" else "cuda"


def default_max_num_seqs(version: Version, gpu: GpuSpec) -> int:
    """API-server default by version and device memory (rules/vllm_defaults.py, docs/reference.md §4.3)."""
    return vllm_defaults.max_num_seqs(version, _device(gpu), gpu.usable_gib, gpu.name)


def default_max_num_batched_tokens(version: Version, gpu: GpuSpec) -> int:
    """API-server default: 2048; 8192 on ≥70 GiB (non-A100 from 0.9); 16384 on ≥160 GiB (0.28+); the bundled
    engine's 2048 with chunked prefill (rules/vllm_defaults.py)."""
    return vllm_defaults.max_num_batched_tokens(version, _device(gpu), gpu.usable_gib, gpu.name)


def vllm_cpu_defaults(version: Version, world_size: int = 1) -> dict[str, int] | None:
    """What vLLM's API server runs with on its CPU backend when the flags are left out:
    {max_num_seqs, max_num_batched_tokens, block_size}. None before CPU_DEFAULTS_FROM: older
    releases were not read, so the collector assumes nothing for them."""
    if version < CPU_DEFAULTS_FROM:
        return None
    return cpu_batch_defaults(world_size)


def default_block_size(is_mla: bool, gpu: GpuSpec) -> int:
    """16 on CUDA and on the bundled engine; MLA on Hopper/Blackwell gets FlashMLA's 64 (rules/vllm_defaults.py)."""
    return vllm_defaults.block_size(_device(gpu), gpu.arch, is_mla)


def format_gib(value: float, version: Version) -> str:
    """GiB as vLLM prints it: '%.2f' up to 0.13, `round(x, 2)` from 0.14 ('24.0')."""
    return f"{value:.2f}" if version < (0, 14, 0) else str(round(value, 2))
