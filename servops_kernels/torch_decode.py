"""PyTorch twin of paged decode attention: the engine's CPU decode path and the Triton reference.

Decode attention on a CPU is memory-bound: every step reads each sequence's whole context,
and in a large batch that is more time than all the linear layers. So:

- Sequences go in chunks of similar length (`DECODE_CHUNK_BYTES` of keys per chunk), so a
  chunk's gathered keys and values stay in the last-level cache between the gather and
  the matmuls that read them, and little is read for padding.
- Per chunk, keys and values are gathered once, token by token, with one `index_select`
  each into `[b, L, kv_heads, head_dim]` (positions past a context repeat its last token,
  so no unwritten slot is ever read) and never copied again: per KV head, the grouped
  query heads form one small batched matmul against a strided view of that head's columns.
  (A `[b, kv_heads, L, d]` matmul needs a transposed contiguous copy first, which measured
  half the call's time.)
- The chunking, the gather indices and the length masks depend only on the block tables
  and lengths, which every layer shares, so a `DecodePlan` is built once per step and
  handed to all layers (`plan_decode`); without one, each call builds its own.
"""

from __future__ import annotations

import dataclasses

import torch

# keys gathered per chunk, at most (values as many again): measured best of 1–16 MiB for
# SmolLM2 at 96–256 sequences on a 32 MiB-L3 CPU
DECODE_CHUNK_BYTES = 4 * 1024 * 1024


@dataclasses.dataclass
class DecodeChunk:
    rows: torch.Tensor  # [b] long: the chunk's rows of the decode batch
    slots: torch.Tensor  # [b * length] long: cache slot of each (sequence, position)
    mask: torch.Tensor  # [b, 1, length] float32: 0 where a position is in context, -inf past it
    length: int  # the chunk's longest context


@dataclasses.dataclass
class DecodePlan:
    """How one step's decode batch is chunked and gathered; shared by every layer."""

    chunks: list[DecodeChunk]


def plan_decode(block_tables: torch.Tensor, context_lens: torch.Tensor, k_cache: torch.Tensor) -> DecodePlan:
    """Chunk the batch by sorted context length and precompute each chunk's gather
    (`k_cache` gives the block size and one token's bytes of keys per layer)."""
    _, block_size, num_kv_heads, head_dim = k_cache.shape
    token_bytes = num_kv_heads * head_dim * k_cache.element_size()
    lens = context_lens.to(torch.long)
    order = torch.argsort(lens)
    sorted_lens = lens[order].tolist()
    tables = block_tables.to(torch.long)
    chunks, start, batch = [], 0, len(sorted_lens)
    while start < batch:
        end = start + 1
        while end < batch and (end + 1 - start) * sorted_lens[end] * token_bytes <= DECODE_CHUNK_BYTES:
            end += 1
        rows, length = order[start:end], max(1, sorted_lens[end - 1])
        chunk_lens = lens[rows]
        positions = torch.arange(length, device=lens.device)
        readable = torch.minimum(positions[None, :], (chunk_lens - 1).clamp_min(0)[:, None])  # [b, L]
        blocks = tables[rows].gather(1, readable // block_size)
        mask = torch.zeros(len(rows), 1, length, device=lens.device)
        mask.masked_fill_((positions[None, :] >= chunk_lens[:, None])[:, None, :], float("-inf"))
        chunks.append(DecodeChunk(rows, (blocks * block_size + readable % block_size).reshape(-1), mask, length))
        start = end
    return DecodePlan(chunks)


def paged_decode_attention(
    query: torch.Tensor,  # [B, num_heads, head_dim], one new token per sequence
    k_cache: torch.Tensor,  # [num_blocks, block_size, num_kv_heads, head_dim]
    v_cache: torch.Tensor,
    block_tables: torch.Tensor,  # [B, max_blocks_per_seq] int
    context_lens: torch.Tensor,  # [B] int: tokens in the cache, including this one
    scale: float,
    *,
    max_context_len: int | None = None,
    plan: DecodePlan | None = None,
) -> torch.Tensor:
    """Attention of one query token per sequence over all of its cached tokens.

    `max_context_len` is accepted for the common signature and not needed here (the plan
    reads the lengths on the host). `plan`, from `plan_decode` on the same tables and
    lengths, saves rebuilding the gather per layer.
    """
    batch = query.shape[0]
    if batch == 0:
        return torch.empty_like(query)
    if plan is None:
        plan = plan_decode(block_tables, context_lens, k_cache)
    out = torch.empty_like(query)
    for chunk in plan.chunks:
        out.index_copy_(0, chunk.rows, _attend(query[chunk.rows], k_cache, v_cache, chunk, scale))
    return out


def _attend(
    query: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, chunk: DecodeChunk, scale: float
) -> torch.Tensor:
    batch, num_heads, head_dim = query.shape
    num_blocks, block_size, num_kv_heads, _ = k_cache.shape
    group, length = num_heads // num_kv_heads, chunk.length
    flat_shape = (num_blocks * block_size, num_kv_heads, head_dim)
    keys = k_cache.view(flat_shape).index_select(0, chunk.slots).view(batch, length, num_kv_heads, head_dim)
    values = v_cache.view(flat_shape).index_select(0, chunk.slots).view(batch, length, num_kv_heads, head_dim)
    grouped_q = query.view(batch, num_kv_heads, group, head_dim).to(keys.dtype)
    mask = chunk.mask.to(keys.dtype)
    scores = torch.empty(num_kv_heads, batch, group, length, dtype=keys.dtype, device=query.device)
    for h in range(num_kv_heads):  # mask + scale * [b, group, d] @ [b, d, L]; keys read in place
        torch.baddbmm(mask, grouped_q[:, h], keys[:, :, h].transpose(1, 2), alpha=scale, out=scores[h])
    probs = torch.softmax(scores, dim=-1, dtype=torch.float32).to(values.dtype)
    out = torch.empty(num_kv_heads, batch, group, head_dim, dtype=values.dtype, device=query.device)
    for h in range(num_kv_heads):  # [b, group, L] @ [b, L, d]
        torch.bmm(probs[h], values[:, :, h], out=out[h])
    return out.permute(1, 0, 2, 3).reshape(batch, num_heads, head_dim).to(query.dtype)
