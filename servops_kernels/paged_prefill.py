"""Triton prefill attention over the paged KV cache (prefix-cache hits and chunked prefill).

A batch is varlen: sequence b owns query tokens `cu_seqlens_q[b]:cu_seqlens_q[b+1]`, and its
keys and values (the cached prefix *and* this chunk, already written) are reached through its
block-table row. Query token i of sequence b sits at position `context_lens[b] - q_len[b] + i`
and sees every key at or before it, so a chunk attends to the whole prefix plus, causally,
to itself: one kernel serves a fresh prompt (prefix empty), a prefix-cache hit and every
chunk of a chunked prefill.

One program owns `BLOCK_M` query tokens of one sequence for one query head (flash-attention
style, online softmax in base 2). The key loop is split in two: tiles that every row of the
query tile may see run without masks; only the tiles on the causal diagonal pay for the mask.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

INTERPRETED: bool = bool(triton.knobs.runtime.interpret)
LOG2E = 1.4426950408889634


@triton.jit
def _load_kv_tile(
    k_cache_ptr,
    v_cache_ptr,
    table_row,
    toks,
    tok_mask,
    kv_head,
    dims,
    dim_mask,
    stride_cb,
    stride_cs,
    stride_ch,
    BLOCK_SIZE: tl.constexpr,
):
    blocks = tl.load(table_row + toks // BLOCK_SIZE, mask=tok_mask, other=0).to(tl.int64)
    off = blocks[:, None] * stride_cb + (toks % BLOCK_SIZE)[:, None] * stride_cs + kv_head * stride_ch + dims[None, :]
    mask = tok_mask[:, None] & dim_mask[None, :]
    k = tl.load(k_cache_ptr + off, mask=mask, other=0.0)
    v = tl.load(v_cache_ptr + off, mask=mask, other=0.0)
    return k, v


@triton.jit
def _prefill_kernel(
    q_ptr,
    k_cache_ptr,
    v_cache_ptr,
    block_tables_ptr,
    cu_seqlens_ptr,
    context_lens_ptr,
    out_ptr,
    scale_log2,
    stride_qt,
    stride_qh,
    stride_ot,
    stride_oh,
    stride_cb,
    stride_cs,
    stride_ch,
    stride_bt,
    GROUP: tl.constexpr,
    HEAD_DIM: tl.constexpr,
    DIM_PAD: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    DOT_PRECISION: tl.constexpr,
):
    seq = tl.program_id(0)
    m0 = tl.program_id(1) * BLOCK_M
    head = tl.program_id(2)
    q_start = tl.load(cu_seqlens_ptr + seq)
    q_len = tl.load(cu_seqlens_ptr + seq + 1) - q_start
    if m0 < q_len:
        ctx = tl.load(context_lens_ptr + seq)
        kv_head = head // GROUP
        rows = m0 + tl.arange(0, BLOCK_M)
        row_mask = rows < q_len
        dims = tl.arange(0, DIM_PAD)
        dim_mask = dims < HEAD_DIM
        q_pos = ctx - q_len + rows  # padding rows (>= q_len) see all keys: finite, never stored
        q_off = (q_start + rows).to(tl.int64)[:, None] * stride_qt + head * stride_qh + dims[None, :]
        io_mask = row_mask[:, None] & dim_mask[None, :]
        q = tl.load(q_ptr + q_off, mask=io_mask, other=0.0)
        table_row = block_tables_ptr + seq.to(tl.int64) * stride_bt

        m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
        l_i = tl.zeros([BLOCK_M], tl.float32)
        acc = tl.zeros([BLOCK_M, DIM_PAD], tl.float32)
        first_pos = ctx - q_len + m0  # every row of this tile sees keys 0..first_pos
        full_end = ((first_pos + 1) // BLOCK_N) * BLOCK_N
        kv_end = tl.minimum(ctx, first_pos + BLOCK_M)
        for n0 in range(0, full_end, BLOCK_N):
            toks = n0 + tl.arange(0, BLOCK_N)
            k, v = _load_kv_tile(
                k_cache_ptr,
                v_cache_ptr,
                table_row,
                toks,
                toks < full_end,
                kv_head,
                dims,
                dim_mask,
                stride_cb,
                stride_cs,
                stride_ch,
                BLOCK_SIZE,
            )
            s = tl.dot(q, tl.trans(k), input_precision=DOT_PRECISION) * scale_log2
            m_new = tl.maximum(m_i, tl.max(s, axis=1))
            alpha = tl.exp2(m_i - m_new)
            p = tl.exp2(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, axis=1)
            acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=DOT_PRECISION)
            m_i = m_new
        for n0 in range(full_end, kv_end, BLOCK_N):
            toks = n0 + tl.arange(0, BLOCK_N)
            tok_mask = toks < kv_end
            k, v = _load_kv_tile(
                k_cache_ptr,
                v_cache_ptr,
                table_row,
                toks,
                tok_mask,
                kv_head,
                dims,
                dim_mask,
                stride_cb,
                stride_cs,
                stride_ch,
                BLOCK_SIZE,
            )
            s = tl.dot(q, tl.trans(k), input_precision=DOT_PRECISION) * scale_log2
            visible = tok_mask[None, :] & (toks[None, :] <= q_pos[:, None])
            s = tl.where(visible, s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, axis=1))
            alpha = tl.exp2(m_i - m_new)
            p = tl.exp2(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, axis=1)
            acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=DOT_PRECISION)
            m_i = m_new

        out = acc / l_i[:, None]
        o_off = (q_start + rows).to(tl.int64)[:, None] * stride_ot + head * stride_oh + dims[None, :]
        tl.store(out_ptr + o_off, out.to(out_ptr.dtype.element_ty), mask=io_mask)


def prefill_tiles(dtype: torch.dtype, max_query_len: int) -> tuple[int, int, int]:
    """(query rows, key tokens, warps) per program, sized to fit in registers.

    Checked with ptxas for sm_80 and sm_90 (tests/unit/servops_kernels/aot_compile_worker.py): 16-bit
    inputs take up to 64 query rows against 64-token key tiles, 8 warps at 64 rows (4 spill on
    sm_80). fp32 runs its dot on CUDA cores (`ieee`), whose operands take far more registers:
    at most 32 rows against 16-token tiles (64 x 64 spills kilobytes of stack, 32 x 32 spills
    on sm_90); fp32 on a GPU is the rare case. Query tiles shrink to the chunk (at least 16
    rows, tl.dot's minimum) so short chunks waste no rows.
    """
    if dtype == torch.float32:
        return max(16, min(32, triton.next_power_of_2(max_query_len))), 16, 4
    block_m = max(16, min(64, triton.next_power_of_2(max_query_len)))
    return block_m, 64, 8 if block_m == 64 else 4


def paged_prefill_attention(
    query: torch.Tensor,  # [total_q_tokens, num_heads, head_dim]
    k_cache: torch.Tensor,  # [num_blocks, block_size, num_kv_heads, head_dim]
    v_cache: torch.Tensor,
    block_tables: torch.Tensor,  # [B, max_blocks_per_seq] int32
    cu_seqlens_q: torch.Tensor,  # [B + 1] int32
    context_lens: torch.Tensor,  # [B] int32, cached tokens after this chunk is written
    scale: float,
    *,
    max_query_len: int | None = None,
    out: torch.Tensor | None = None,
) -> torch.Tensor:
    """Varlen causal attention of query chunks over their paged prefix and themselves.

    `max_query_len` saves a device-to-host sync when the caller already knows it; `out`
    (shaped like `query`) is written in place, which lets tests poison it first.
    """
    total_q, num_heads, head_dim = query.shape
    _, block_size, num_kv_heads, _ = k_cache.shape
    if num_heads % num_kv_heads:
        raise ValueError(f"num_heads={num_heads} is not a multiple of num_kv_heads={num_kv_heads}")
    out = torch.empty_like(query) if out is None else out
    batch = cu_seqlens_q.shape[0] - 1
    if total_q == 0 or batch == 0:
        return out
    if query.stride(-1) != 1:
        query = query.contiguous()
    if k_cache.stride() != v_cache.stride() or k_cache.stride(-1) != 1:
        raise ValueError("k_cache and v_cache must share one layout with a contiguous head_dim")
    if max_query_len is None:
        max_query_len = int((cu_seqlens_q[1:] - cu_seqlens_q[:-1]).max())
    block_m, block_n, num_warps = prefill_tiles(query.dtype, max_query_len)
    grid = (batch, triton.cdiv(max_query_len, block_m), num_heads)
    _prefill_kernel[grid](
        query,
        k_cache,
        v_cache,
        block_tables,
        cu_seqlens_q,
        context_lens,
        out,
        float(scale) * LOG2E,
        query.stride(0),
        query.stride(1),
        out.stride(0),
        out.stride(1),
        k_cache.stride(0),
        k_cache.stride(1),
        k_cache.stride(2),
        block_tables.stride(0),
        GROUP=num_heads // num_kv_heads,
        HEAD_DIM=head_dim,
        DIM_PAD=max(16, triton.next_power_of_2(head_dim)),
        BLOCK_SIZE=block_size,
        BLOCK_M=block_m,
        BLOCK_N=block_n,
        DOT_PRECISION="ieee" if query.dtype == torch.float32 else "tf32",
        num_warps=num_warps,
    )
    return out
