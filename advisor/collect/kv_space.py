"""The two ways a vLLM CPU server is told its KV space, read exactly as vLLM reads them.

Why a module of its own: the log collector, the CPU memory model, the server launcher and the
performance model's pool all read VLLM_CPU_KVCACHE_SPACE and --kv-cache-memory-bytes; one reader here,
below all of them, means each value means one thing everywhere.
"""

from __future__ import annotations

import re

from advisor.units import GIB

# vLLM's CPU backend sizes its KV cache from CPU_KV_SPACE_ENV, in whole GiB (a fraction is a
# startup error). Without it (or --kv-cache-memory-bytes) it claims --gpu-memory-utilization
# (0.92) of the NUMA node's memory and refuses to start when less than that is free (from 0.14;
# before, a fixed 4 GiB: rules/vllm_defaults.py).
from rules.vllm_defaults import CPU_KV_SPACE_ENV

__all__ = ["CPU_KV_SPACE_ENV", "parse_cpu_kvcache_space", "parse_kv_cache_memory_bytes"]
# utils/argparse_utils.py, human_readable_int: the suffixes --kv-cache-memory-bytes takes.
DECIMAL_SUFFIX = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
BINARY_SUFFIX = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def parse_cpu_kvcache_space(text: str) -> int:
    """VLLM_CPU_KVCACHE_SPACE as vLLM reads it: `int(value)`; a fraction stops vLLM at startup."""
    try:
        value = int(text)
    except ValueError:
        raise ValueError(_fraction_message(text)) from None
    if value < 0:
        raise ValueError(f"{text!r} must be 0 or more GiB")
    return value


def _fraction_message(text: str) -> str:
    try:
        as_bytes = f"; for a fraction use --kv-cache-memory-bytes {int(float(text) * GIB)}"
    except (ValueError, OverflowError):
        as_bytes = ""
    return (
        f"{text!r} is not a whole number of GiB: vLLM reads {CPU_KV_SPACE_ENV} with int() and stops at "
        f"startup (invalid literal for int() with base 10: {text!r}){as_bytes}"
    )


def parse_kv_cache_memory_bytes(text: str) -> int:
    """--kv-cache-memory-bytes as vLLM parses it (human_readable_int): 50000000, 50m, 45M, 1G, 25.6k."""
    value = text.strip()
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([kKmMgGtT])", value)
    try:
        if match and match[2] in DECIMAL_SUFFIX:
            result = int(float(match[1]) * DECIMAL_SUFFIX[match[2]])
        elif match:
            result = int(match[1]) * BINARY_SUFFIX[match[2]]
        else:
            result = int(value)
    except ValueError:
        raise ValueError(
            f"{text!r} is not a byte count (e.g. 50000000, 50m, 45M, 1G; no decimals with K/M/G/T)"
        ) from None
    if result < 0:
        raise ValueError(f"{text!r} must be 0 or more bytes")
    return result
