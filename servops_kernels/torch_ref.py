"""PyTorch twins of the paged-attention kernels: the CPU path and the test reference.

Cache layout (per layer), shared with the Triton kernels and the engine:
    k_cache, v_cache: [num_blocks, block_size, num_kv_heads, head_dim]
A token's slot is `block_id * block_size + offset`; `slot_mapping` gives one slot per new
token, and a negative slot means "padding, do not write".

Prefill: on a CPU the cost is dominated by memory traffic and Python overhead, so each
call gathers every sequence's blocks once into a padded dense tensor and runs one batched
scaled-dot-product attention with a mask, instead of looping over sequences or blocks.
Decode has its own module (`servops_kernels.torch_decode`): it is the CPU engine's hot path.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from servops_kernels.torch_decode import paged_decode_attention  # noqa: F401  (the decode twin lives there)


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
    cache: torch.Tensor,
    block_tables: torch.Tensor,
    max_context_len: int,
    context_lens: torch.Tensor | None = None,
) -> torch.Tensor:
    """[B, max_blocks] block table → dense [B, num_kv_heads, max_context_len, head_dim].

    With `context_lens`, positions past a sequence's context are zeroed in the (fresh) copy.
    Why: they come from slots never written (or from padding entries of the block table),
    which may hold NaN, and a masked-out position still enters SDPA's products (0 x NaN is
    NaN). The Triton kernels never load them; zeroing gives the twin the same contract:
    nothing past `context_lens` is ever read.
    """
    num_blocks, block_size, num_kv_heads, head_dim = cache.shape
    blocks_needed = (max_context_len + block_size - 1) // block_size
    table = block_tables[:, :blocks_needed].to(torch.long).clamp_min(0)
    dense = cache[table]  # [B, blocks, block_size, kvh, d], a copy
    batch = table.shape[0]
    dense = dense.reshape(batch, blocks_needed * block_size, num_kv_heads, head_dim)[:, :max_context_len]
    if context_lens is not None:
        beyond = torch.arange(max_context_len, device=cache.device)[None, :] >= context_lens[:, None]
        dense.masked_fill_(beyond[:, :, None, None], 0)
    return dense.transpose(1, 2)


def _grouped_sdpa(
    query_rows: torch.Tensor,  # [B, num_heads, rows, head_dim]
    keys: torch.Tensor,  # [B, num_kv_heads, L, head_dim]
    values: torch.Tensor,
    mask: torch.Tensor,  # [B, rows, L] bool
    scale: float,
) -> torch.Tensor:
    """SDPA with grouped-query heads folded into the query rows: [B, num_heads, rows, d].

    Why fold instead of repeating K/V per query head: the query heads sharing a KV head
    become extra rows of one matmul against that KV head, so keys and values are neither
    copied nor read more than once.
    """
    batch, num_heads, rows, head_dim = query_rows.shape
    num_kv_heads = keys.shape[1]
    group = num_heads // num_kv_heads
    q = query_rows.reshape(batch, num_kv_heads, group * rows, head_dim)
    folded_mask = mask[:, None, None].expand(batch, 1, group, rows, mask.shape[-1])
    folded_mask = folded_mask.reshape(batch, 1, group * rows, mask.shape[-1])
    out = F.scaled_dot_product_attention(q.to(keys.dtype), keys, values, attn_mask=folded_mask, scale=scale)
    return out.reshape(batch, num_heads, rows, head_dim)


def paged_prefill_attention(
    query: torch.Tensor,  # [total_q_tokens, num_heads, head_dim]
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    block_tables: torch.Tensor,  # [B, max_blocks_per_seq] int
    cu_seqlens_q: torch.Tensor,  # [B + 1] int: query-token offsets per sequence
    context_lens: torch.Tensor,  # [B] int: cached tokens after this chunk is written
    scale: float,
    *,
    max_query_len: int | None = None,
) -> torch.Tensor:
    """A chunk of query tokens per sequence over its cached prefix plus, causally, itself.

    Query token i of sequence b sits at absolute position
    `context_lens[b] - q_len[b] + i` and sees every key at or before that position. The
    chunk's own keys and values must already be in the cache (write, then attend).
    """
    total_q, num_heads, head_dim = query.shape
    batch = cu_seqlens_q.shape[0] - 1
    if total_q == 0 or batch == 0:
        return torch.empty_like(query)
    cu = cu_seqlens_q.to(torch.long)
    q_lens = cu[1:] - cu[:-1]
    lens = context_lens.to(torch.long)
    max_q = int(q_lens.max()) if max_query_len is None else max_query_len
    max_len = int(lens.max())
    keys = _gather_kv(k_cache, block_tables, max_len, lens)
    values = _gather_kv(v_cache, block_tables, max_len, lens)

    # pad the varlen batch to [B, max_q] with one gather; padding rows repeat a real token
    rows = torch.arange(max_q, device=query.device)
    real = rows[None, :] < q_lens[:, None]  # [B, max_q]
    token_index = (cu[:-1, None] + rows[None, :]).clamp(max=total_q - 1)
    padded_q = query[token_index]  # [B, max_q, h, d]
    # absolute position of each query row; padding rows land past the context and so see
    # every key (finite softmax); their output is dropped below
    q_pos = lens[:, None] - q_lens[:, None] + rows[None, :]
    k_pos = torch.arange(max_len, device=query.device)
    mask = (k_pos[None, None, :] <= q_pos[:, :, None]) & (k_pos[None, None, :] < lens[:, None, None])
    out = _grouped_sdpa(padded_q.transpose(1, 2), keys, values, mask, scale)  # [B, h, max_q, d]
    return out.transpose(1, 2)[real].to(query.dtype)
