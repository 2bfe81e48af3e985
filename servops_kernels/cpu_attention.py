"""Native CPU paged attention (csrc/paged_attention_cpu.cpp), called through ctypes.

Same signatures and results as the PyTorch twins (`servops_kernels.torch_decode.paged_decode_attention`,
`servops_kernels.torch_ref.paged_prefill_attention`), reading keys and values in place from the paged
cache instead of gathering them into dense copies first. On SmolLM2's shapes (9 query / 3 KV
heads, head_dim 64) decode of 240 sequences measured 2.6x faster than the twin, and the prefill
of a step's prompt chunks several times faster than one SDPA call per chunk (BENCHMARKS.md,
"CPU attention kernels"). They cover what the engine uses on a CPU: float32 or bfloat16, caches
laid out `[num_blocks, block_size, kv_heads, head_dim]` and contiguous, head_dim a multiple of 8.
Anything else, or a machine where the library does not build, goes to the twins (`supports`).

ctypes releases the GIL for the call; the kernels parallelise with OpenMP (decode over
sequences, prefill over 16-token query tiles x KV heads), as many threads as
`torch.get_num_threads()`.
"""

from __future__ import annotations

import ctypes

import torch

from servops_kernels.cpu_build import NativeLibrary

ABI_VERSION = 2
_SUFFIX = {torch.float32: "f32", torch.bfloat16: "bf16"}


_POINTER, _I32, _I64, _F32 = ctypes.c_void_p, ctypes.c_int, ctypes.c_int64, ctypes.c_float
_NATIVE = NativeLibrary(
    "paged_attention_cpu.cpp",
    "servops_paged_attention_abi",
    ABI_VERSION,
    {
        **{
            f"servops_paged_decode_{suffix}": [_POINTER] * 4 + [_I64, _POINTER, _POINTER] + [_I32] * 5 + [_F32, _I32]
            for suffix in _SUFFIX.values()
        },
        **{
            f"servops_paged_prefill_{suffix}": [
                _POINTER,
                _I64,
                _POINTER,
                _POINTER,
                _POINTER,
                _I64,
                _POINTER,
                _POINTER,
                _POINTER,
            ]
            + [_I32] * 5
            + [_F32, _I32]
            for suffix in _SUFFIX.values()
        },
    },
)
library, available, unavailable_reason = _NATIVE.library, _NATIVE.available, _NATIVE.unavailable_reason
available_or_warn = _NATIVE.available_or_warn


# servops_paged_prefill_bf16_units(head_dim): which units a bf16 prefill runs on
_BF16_PREFILL_UNITS = {2: "amx", 1: "avx512-bf16", 0: "avx2"}


def bf16_prefill_units(head_dim: int) -> str | None:
    """Where a bf16 prefill of this head_dim runs on this CPU: "amx" (the tile unit), "avx512-bf16"
    (vdpbf16ps) or "avx2" (8-lane float); None where the library is not built. The library answers
    with the same checks its dispatch makes: head_dim (a multiple of 32, at most 128), what it was
    compiled for (`-march=native`), and for the tiles the kernel's permission to use them."""
    lib = library()
    return None if lib is None else _BF16_PREFILL_UNITS[lib.servops_paged_prefill_bf16_units(head_dim)]


def prefill_on_amx(dtype: torch.dtype, head_dim: int) -> bool:
    """Whether a prefill of this dtype and head_dim runs on the AMX tiles here."""
    return dtype == torch.bfloat16 and bf16_prefill_units(head_dim) == "amx"


def supports_layout(dtype: torch.dtype, head_dim: int) -> bool:
    """Whether a CPU cache of this dtype and head_dim can take the native kernels (library built)."""
    return dtype in _SUFFIX and head_dim % 8 == 0 and available()


def supports_cache(k_cache: torch.Tensor, v_cache: torch.Tensor | None = None) -> bool:
    """Whether attention over this cache can take the native kernels (else the caller uses the twins)."""
    caches = (k_cache,) if v_cache is None else (k_cache, v_cache)
    return all(
        c.device.type == "cpu" and c.dtype == k_cache.dtype and c.is_contiguous() for c in caches
    ) and supports_layout(k_cache.dtype, k_cache.shape[-1])


def supports(query: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor) -> bool:
    """Whether this call (decode or prefill) can take the native kernels."""
    return (
        query.dtype == k_cache.dtype
        and query.shape[-1] == k_cache.shape[-1]
        and query.shape[1] % k_cache.shape[2] == 0
        and query.stride(-1) == 1
        and query.stride(-2) == query.shape[-1]
        and supports_cache(k_cache, v_cache)
    )


def _indices(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.to(torch.int32).contiguous()


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
    tables, lens = _indices(block_tables), _indices(context_lens)
    batch, num_heads, head_dim = query.shape
    _, block_size, num_kv_heads, _ = k_cache.shape
    out = torch.empty_like(query)
    if batch == 0:
        return out
    getattr(lib, f"servops_paged_decode_{_SUFFIX[query.dtype]}")(
        query.data_ptr(),
        k_cache.data_ptr(),
        v_cache.data_ptr(),
        tables.data_ptr(),
        tables.stride(0),
        lens.data_ptr(),
        out.data_ptr(),
        batch,
        num_heads,
        num_kv_heads,
        head_dim,
        block_size,
        float(scale),
        torch.get_num_threads(),
    )
    return out


def paged_prefill_attention(
    query: torch.Tensor,  # [T, num_heads, head_dim]: every sequence's chunk, back to back
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    block_tables: torch.Tensor,  # [B, max_blocks_per_seq] int
    cu_seqlens_q: torch.Tensor,  # [B + 1] int: chunk b is query[cu[b]:cu[b+1]]
    context_lens: torch.Tensor,  # [B] int: cached tokens including the chunk just written
    scale: float,
) -> torch.Tensor:
    """Each chunk's queries over its paged prefix and, causally, itself (check `supports` first).

    The query may be a strided view (rows of a fused qkv projection): only heads and head_dim
    need to be contiguous within a token.
    """
    lib = library()
    assert lib is not None and supports(query, k_cache, v_cache), "call supports() first"
    tables, cu, lens = _indices(block_tables), _indices(cu_seqlens_q), _indices(context_lens)
    num_tokens, num_heads, head_dim = query.shape
    _, block_size, num_kv_heads, _ = k_cache.shape
    out = torch.empty(num_tokens, num_heads, head_dim, dtype=query.dtype)
    if num_tokens == 0 or len(lens) == 0:
        return out
    if bool((cu[1:] - cu[:-1] > lens).any()):  # the kernel would index before the first key
        raise ValueError("a prefill chunk is longer than its context (context_lens counts the chunk itself)")
    getattr(lib, f"servops_paged_prefill_{_SUFFIX[query.dtype]}")(
        query.data_ptr(),
        query.stride(0),
        k_cache.data_ptr(),
        v_cache.data_ptr(),
        tables.data_ptr(),
        tables.stride(0),
        cu.data_ptr(),
        lens.data_ptr(),
        out.data_ptr(),
        len(lens),
        num_heads,
        num_kv_heads,
        head_dim,
        block_size,
        float(scale),
        torch.get_num_threads(),
    )
    return out
