"""PyTorch twins of the paged-attention kernels: the CPU path and the test reference.

Cache layout (per layer), shared with the Triton kernels and the engine:
    k_cache, v_cache: [num_blocks, block_size, num_kv_heads, head_dim]
A token's slot is `block_id * block_size + offset`; `slot_mapping` gives one slot per new
token, and a negative slot means "padding, do not write".

Why gather-then-SDPA: on a CPU the cost is dominated by memory traffic and Python
overhead, so each call gathers every sequence's blocks once into a padded dense tensor
and runs one batched scaled-dot-product attention with a mask, instead of looping over
sequences or blocks.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def reshape_and_cache(
    key: torch.Tensor,  # [num_tokens, num_kv_heads, head_dim]
    value: torch.Tensor,  # [num_tokens, num_kv_heads, head_dim]
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    slot_mapping: torch.Tensor,  # [num_tokens] int
) -> None:
    """Write new keys and values into their cache slots (vLLM's `reshape_and_cache`)."""
    num_blocks, block_size, num_kv_heads, head_dim = k_cache.shape
    slots = slot_mapping.to(torch.long)
    valid = slots >= 0
    if not bool(valid.all()):
        slots, key, value = slots[valid], key[valid], value[valid]
    k_cache.view(num_blocks * block_size, num_kv_heads, head_dim).index_copy_(0, slots, key.to(k_cache.dtype))
    v_cache.view(num_blocks * block_size, num_kv_heads, head_dim).index_copy_(0, slots, value.to(v_cache.dtype))


def _gather_kv(
    cache: torch.Tensor, block_tables: torch.Tensor, max_context_len: int
) -> torch.Tensor:
    """[B, max_blocks] block table → dense [B, num_kv_heads, max_context_len, head_dim]."""
    num_blocks, block_size, num_kv_heads, head_dim = cache.shape
    blocks_needed = (max_context_len + block_size - 1) // block_size
    table = block_tables[:, :blocks_needed].to(torch.long).clamp_min(0)
    dense = cache[table]  # [B, blocks, block_size, kvh, d]
    batch = table.shape[0]
    dense = dense.reshape(batch, blocks_needed * block_size, num_kv_heads, head_dim)
    return dense[:, :max_context_len].transpose(1, 2)


def _expand_kv_heads(kv: torch.Tensor, num_heads: int) -> torch.Tensor:
    group = num_heads // kv.shape[1]
    return kv if group == 1 else kv.repeat_interleave(group, dim=1)


def paged_decode_attention(
    query: torch.Tensor,  # [B, num_heads, head_dim], one new token per sequence
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    block_tables: torch.Tensor,  # [B, max_blocks_per_seq] int
    context_lens: torch.Tensor,  # [B] int: tokens in the cache, including this one
    scale: float,
) -> torch.Tensor:
    """Attention of one query token per sequence over all of its cached tokens."""
    batch, num_heads, head_dim = query.shape
    lens = context_lens.to(torch.long)
    max_len = int(lens.max())
    keys = _expand_kv_heads(_gather_kv(k_cache, block_tables, max_len), num_heads)
    values = _expand_kv_heads(_gather_kv(v_cache, block_tables, max_len), num_heads)
    positions = torch.arange(max_len, device=query.device)
    mask = (positions[None, :] < lens[:, None])[:, None, None, :]  # [B,1,1,L]
    out = F.scaled_dot_product_attention(
        query.unsqueeze(2).to(keys.dtype), keys, values, attn_mask=mask, scale=scale
    )
    return out.squeeze(2).to(query.dtype)


def paged_prefill_attention(
    query: torch.Tensor,  # [total_q_tokens, num_heads, head_dim]
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    block_tables: torch.Tensor,  # [B, max_blocks_per_seq] int
    cu_seqlens_q: torch.Tensor,  # [B + 1] int: query-token offsets per sequence
    context_lens: torch.Tensor,  # [B] int: cached tokens after this chunk is written
    scale: float,
) -> torch.Tensor:
    """A chunk of query tokens per sequence over its cached prefix plus, causally, itself.

    Query token i of sequence b sits at absolute position
    `context_lens[b] - q_len[b] + i` and sees every key at or before that position. The
    chunk's own keys and values must already be in the cache (write, then attend).
    """
    total_q, num_heads, head_dim = query.shape
    cu = cu_seqlens_q.to(torch.long).tolist()
    lens = context_lens.to(torch.long)
    batch = len(cu) - 1
    q_lens = [cu[b + 1] - cu[b] for b in range(batch)]
    max_q = max(q_lens)
    max_len = int(lens.max())
    keys = _expand_kv_heads(_gather_kv(k_cache, block_tables, max_len), num_heads)
    values = _expand_kv_heads(_gather_kv(v_cache, block_tables, max_len), num_heads)

    padded_q = query.new_zeros(batch, max_q, num_heads, head_dim)
    for b in range(batch):
        padded_q[b, : q_lens[b]] = query[cu[b] : cu[b + 1]]
    q_len_t = torch.tensor(q_lens, device=query.device)
    # absolute position of each padded query row; padding rows get position -1 (see nothing
    # but key 0, to keep softmax finite; their output is dropped below)
    rows = torch.arange(max_q, device=query.device)
    q_pos = lens[:, None] - q_len_t[:, None] + rows[None, :]
    q_pos = torch.where(rows[None, :] < q_len_t[:, None], q_pos, torch.zeros_like(q_pos))
    k_pos = torch.arange(max_len, device=query.device)
    mask = (k_pos[None, None, :] <= q_pos[:, :, None]) & (k_pos[None, None, :] < lens[:, None, None])
    out = F.scaled_dot_product_attention(
        padded_q.transpose(1, 2).to(keys.dtype), keys, values, attn_mask=mask[:, None], scale=scale
    ).transpose(1, 2)
    return torch.cat([out[b, : q_lens[b]] for b in range(batch)]).to(query.dtype)
