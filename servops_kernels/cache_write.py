"""Triton KV-cache write (vLLM's `reshape_and_cache`): new keys/values into their slots.

One program per new token copies that token's keys and values (all KV heads at once) to
`slot = block_id * block_size + offset` in the paged cache. A negative slot is padding and
writes nothing. Addresses are computed in int64: a large cache
(blocks x block_size x heads x head_dim) passes 2**31 elements long before it fills a GPU.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

INTERPRETED: bool = bool(triton.knobs.runtime.interpret)


@triton.jit
def _reshape_and_cache_kernel(
    key_ptr,
    value_ptr,
    k_cache_ptr,
    v_cache_ptr,
    slot_ptr,
    stride_kt,
    stride_kh,
    stride_vt,
    stride_vh,
    stride_cb,
    stride_cs,
    stride_ch,
    BLOCK_SIZE: tl.constexpr,
    NUM_KV_HEADS: tl.constexpr,
    HEAD_DIM: tl.constexpr,
    HEADS_PAD: tl.constexpr,
    DIM_PAD: tl.constexpr,
):
    token = tl.program_id(0)
    slot = tl.load(slot_ptr + token).to(tl.int64)
    if slot >= 0:
        block = slot // BLOCK_SIZE
        offset = slot % BLOCK_SIZE
        heads = tl.arange(0, HEADS_PAD)[:, None]
        dims = tl.arange(0, DIM_PAD)[None, :]
        mask = (heads < NUM_KV_HEADS) & (dims < HEAD_DIM)
        src_k = token.to(tl.int64) * stride_kt + heads * stride_kh + dims
        src_v = token.to(tl.int64) * stride_vt + heads * stride_vh + dims
        dst = block * stride_cb + offset * stride_cs + heads * stride_ch + dims
        k = tl.load(key_ptr + src_k, mask=mask)
        v = tl.load(value_ptr + src_v, mask=mask)
        tl.store(k_cache_ptr + dst, k.to(k_cache_ptr.dtype.element_ty), mask=mask)
        tl.store(v_cache_ptr + dst, v.to(v_cache_ptr.dtype.element_ty), mask=mask)


def reshape_and_cache(
    key: torch.Tensor,  # [num_tokens, num_kv_heads, head_dim]
    value: torch.Tensor,  # [num_tokens, num_kv_heads, head_dim]
    k_cache: torch.Tensor,  # [num_blocks, block_size, num_kv_heads, head_dim]
    v_cache: torch.Tensor,
    slot_mapping: torch.Tensor,  # [num_tokens] int; negative = padding
) -> None:
    """Write `key`/`value` rows into the caches at `slot_mapping` (negative slots skipped)."""
    num_tokens, num_kv_heads, head_dim = key.shape
    if num_tokens == 0:
        return
    _, block_size, _, _ = k_cache.shape
    # the kernel walks head_dim with unit stride; views from a fused qkv projection keep it
    key = key if key.stride(-1) == 1 else key.contiguous()
    value = value if value.stride(-1) == 1 else value.contiguous()
    if k_cache.stride() != v_cache.stride() or k_cache.stride(-1) != 1:
        raise ValueError("k_cache and v_cache must share one layout with a contiguous head_dim")
    _reshape_and_cache_kernel[(num_tokens,)](
        key,
        value,
        k_cache,
        v_cache,
        slot_mapping,
        key.stride(0),
        key.stride(1),
        value.stride(0),
        value.stride(1),
        k_cache.stride(0),
        k_cache.stride(1),
        k_cache.stride(2),
        BLOCK_SIZE=block_size,
        NUM_KV_HEADS=num_kv_heads,
        HEAD_DIM=head_dim,
        HEADS_PAD=triton.next_power_of_2(num_kv_heads),
        DIM_PAD=triton.next_power_of_2(head_dim),
    )
