"""Native CPU paged decode attention (csrc/paged_decode_cpu.cpp), called through ctypes.

Same signature and result as `kernels.torch_decode.paged_decode_attention`, reading keys and
values in place from the paged cache instead of gathering them first: on SmolLM2 shapes
(9 query / 3 KV heads, head_dim 64) at 240 sequences it measured 2.5–3× faster than the twin
(BENCHMARKS.md, "CPU decode kernel"). It covers what the engine uses on CPU: float32 or bfloat16 caches
laid out `[num_blocks, block_size, kv_heads, head_dim]`, head_dim a multiple of 8. Anything
else, or a machine where the library does not build, goes to the twin (`supports`).

ctypes releases the GIL for the call; the kernel parallelises over sequences with OpenMP,
as many threads as `torch.get_num_threads()`.
"""

from __future__ import annotations

import ctypes
import functools

import torch

from kernels.cpu_build import NativeBuildError, load

ABI_VERSION = 1
_FUNCTIONS = {torch.float32: "servops_paged_decode_f32", torch.bfloat16: "servops_paged_decode_bf16"}


@functools.cache
def _build() -> tuple[ctypes.CDLL | None, str]:
    try:
        lib = load("paged_decode_cpu.cpp")
    except NativeBuildError as exc:
        return None, str(exc)
    if lib.servops_paged_decode_abi() != ABI_VERSION:
        return None, f"the cached build has ABI {lib.servops_paged_decode_abi()}, expected {ABI_VERSION}"
    pointer, i32, i64 = ctypes.c_void_p, ctypes.c_int, ctypes.c_int64
    for name in _FUNCTIONS.values():
        function = getattr(lib, name)
        function.argtypes = [pointer] * 4 + [i64, pointer, pointer] + [i32] * 5 + [ctypes.c_float, i32]
        function.restype = None
    return lib, ""


def library() -> ctypes.CDLL | None:
    """The built kernel library, or None where it cannot be built (`unavailable_reason` says why)."""
    return _build()[0]


def available() -> bool:
    return library() is not None


def unavailable_reason() -> str:
    return _build()[1]


def supports_cache(k_cache: torch.Tensor, v_cache: torch.Tensor | None = None) -> bool:
    """Whether decode over this cache can take the native kernel (else the caller uses the twin):
    a contiguous float32/bfloat16 CPU cache with head_dim a multiple of 8, and a built library."""
    caches = (k_cache,) if v_cache is None else (k_cache, v_cache)
    return (
        all(c.device.type == "cpu" and c.dtype in _FUNCTIONS and c.is_contiguous() for c in caches)
        and k_cache.shape[-1] % 8 == 0
        and library() is not None
    )


def supports(query: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor) -> bool:
    """Whether this call can take the native kernel (else the caller uses the twin)."""
    return (
        query.dtype == k_cache.dtype == v_cache.dtype
        and query.shape[1] % k_cache.shape[2] == 0
        and supports_cache(k_cache, v_cache)
    )


def paged_decode_attention(
    query: torch.Tensor,  # [B, num_heads, head_dim]
    k_cache: torch.Tensor,  # [num_blocks, block_size, num_kv_heads, head_dim]
    v_cache: torch.Tensor,
    block_tables: torch.Tensor,  # [B, max_blocks_per_seq] int
    context_lens: torch.Tensor,  # [B] int: tokens in the cache, including this one
    scale: float,
) -> torch.Tensor:
    """Attention of one query token per sequence over its paged cache (check `supports` first)."""
    lib = library()
    assert lib is not None and supports(query, k_cache, v_cache), "call supports() first"
    query = query.contiguous()
    tables = block_tables.to(torch.int32).contiguous()
    lens = context_lens.to(torch.int32).contiguous()
    batch, num_heads, head_dim = query.shape
    _, block_size, num_kv_heads, _ = k_cache.shape
    out = torch.empty_like(query)
    if batch == 0:
        return out
    getattr(lib, _FUNCTIONS[query.dtype])(
        query.data_ptr(), k_cache.data_ptr(), v_cache.data_ptr(), tables.data_ptr(), tables.stride(0),
        lens.data_ptr(), out.data_ptr(), batch, num_heads, num_kv_heads, head_dim, block_size, float(scale),
        torch.get_num_threads(),
    )
    return out
