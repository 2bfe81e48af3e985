"""Triton paged decode attention: one new query token per sequence over its paged KV.

Shape of the work. One program owns one (sequence, KV head, partition): it loads the query
rows of *every* query head that shares the KV head (grouped-query attention), so each key and
value is read from memory once per KV head rather than once per query head. The group is
padded to at least 16 rows and scored with `tl.dot`, even a group of one (plain multi-head
attention): decode moves ~2 bytes per 32 tensor-core FLOPs at 16 rows, far below what the
tensor cores could do per byte, so the padding is free, while a multiply-and-sum over a
[tile, head_dim] product needed ~150-180 registers on sm_90 against 93 (checked with ptxas).

Keys and values are gathered through the block table a tile of `KV_TILE` tokens at a time
(a tile may span several cache blocks; the last block may be partly filled), with an online
(streaming) softmax in base 2.

Split-K (flash-decoding). With few sequences and long contexts, one program per
(sequence, KV head) leaves most of the GPU idle. The context is then cut into partitions of
`partition_size` tokens; each partition writes its normalised partial output with its running
max and sum of exponentials, and a reduce kernel merges them with a log-sum-exp weighting.
"""

from __future__ import annotations

import functools
import math

import torch
import triton
import triton.language as tl

INTERPRETED: bool = bool(triton.knobs.runtime.interpret)
LOG2E = 1.4426950408889634
MIN_PARTITION_SIZE = 256  # tokens; below this the reduce costs more than the split gains
MIN_DOT_ROWS = 16  # tl.dot needs at least 16 rows
NO_SPLIT_PARTITION = 1 << 30  # "the whole context" without overflowing int32 offsets


@triton.jit
def _decode_partition_kernel(
    q_ptr,
    k_cache_ptr,
    v_cache_ptr,
    block_tables_ptr,
    context_lens_ptr,
    out_ptr,
    max_logits_ptr,
    exp_sums_ptr,
    scale_log2,
    stride_qb,
    stride_qh,
    stride_cb,
    stride_cs,
    stride_ch,
    stride_bt,
    stride_ob,
    stride_oh,
    stride_op,
    stride_mb,
    stride_mh,
    GROUP: tl.constexpr,
    GROUP_PAD: tl.constexpr,
    HEAD_DIM: tl.constexpr,
    DIM_PAD: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    KV_TILE: tl.constexpr,
    PARTITION_SIZE: tl.constexpr,
    SPLIT: tl.constexpr,
    DOT_PRECISION: tl.constexpr,
):
    seq = tl.program_id(0)
    kv_head = tl.program_id(1)
    part = tl.program_id(2)
    ctx = tl.load(context_lens_ptr + seq)
    start = part * PARTITION_SIZE
    if start < ctx:
        end = tl.minimum(start + PARTITION_SIZE, ctx)
        rows = tl.arange(0, GROUP_PAD)
        dims = tl.arange(0, DIM_PAD)
        row_mask = rows < GROUP
        dim_mask = dims < HEAD_DIM
        heads = kv_head * GROUP + rows
        q_off = seq.to(tl.int64) * stride_qb + heads[:, None] * stride_qh + dims[None, :]
        q = tl.load(q_ptr + q_off, mask=row_mask[:, None] & dim_mask[None, :], other=0.0)

        m_i = tl.full([GROUP_PAD], float("-inf"), tl.float32)
        l_i = tl.zeros([GROUP_PAD], tl.float32)
        acc = tl.zeros([GROUP_PAD, DIM_PAD], tl.float32)
        table_row = block_tables_ptr + seq.to(tl.int64) * stride_bt
        for tile_start in range(start, end, KV_TILE):
            toks = tile_start + tl.arange(0, KV_TILE)
            tok_mask = toks < end
            blocks = tl.load(table_row + toks // BLOCK_SIZE, mask=tok_mask, other=0).to(tl.int64)
            kv_off = (
                blocks[:, None] * stride_cb
                + (toks % BLOCK_SIZE)[:, None] * stride_cs
                + kv_head * stride_ch
                + dims[None, :]
            )
            kv_mask = tok_mask[:, None] & dim_mask[None, :]
            k = tl.load(k_cache_ptr + kv_off, mask=kv_mask, other=0.0)
            v = tl.load(v_cache_ptr + kv_off, mask=kv_mask, other=0.0)
            s = tl.dot(q, tl.trans(k), input_precision=DOT_PRECISION)
            s = tl.where(tok_mask[None, :], s * scale_log2, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, axis=1))
            alpha = tl.exp2(m_i - m_new)
            p = tl.exp2(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, axis=1)
            pv = tl.dot(p.to(v.dtype), v, input_precision=DOT_PRECISION)
            acc = acc * alpha[:, None] + pv
            m_i = m_new

        out = acc / l_i[:, None]
        o_off = seq.to(tl.int64) * stride_ob + heads[:, None] * stride_oh + part * stride_op + dims[None, :]
        tl.store(out_ptr + o_off, out.to(out_ptr.dtype.element_ty), mask=row_mask[:, None] & dim_mask[None, :])
        if SPLIT:
            m_off = seq * stride_mb + heads * stride_mh + part
            tl.store(max_logits_ptr + m_off, m_i, mask=row_mask)
            tl.store(exp_sums_ptr + m_off, l_i, mask=row_mask)


@triton.jit
def _decode_reduce_kernel(
    out_ptr,
    partial_ptr,
    max_logits_ptr,
    exp_sums_ptr,
    context_lens_ptr,
    stride_ob,
    stride_oh,
    stride_pb,
    stride_ph,
    stride_pp,
    stride_mb,
    stride_mh,
    HEAD_DIM: tl.constexpr,
    DIM_PAD: tl.constexpr,
    PARTITION_SIZE: tl.constexpr,
    PARTS_TILE: tl.constexpr,
):
    """Merge partition outputs: out = sum_p w_p o_p / sum_p w_p, w_p = l_p 2^(m_p - M)."""
    seq = tl.program_id(0)
    head = tl.program_id(1)
    ctx = tl.load(context_lens_ptr + seq)
    num_parts = tl.cdiv(ctx, PARTITION_SIZE)
    dims = tl.arange(0, DIM_PAD)
    dim_mask = dims < HEAD_DIM
    m_run = tl.full([1], float("-inf"), tl.float32)
    w_run = tl.zeros([1], tl.float32)
    acc = tl.zeros([DIM_PAD], tl.float32)
    ml_row = seq * stride_mb + head * stride_mh
    for p0 in range(0, num_parts, PARTS_TILE):
        parts = p0 + tl.arange(0, PARTS_TILE)
        pmask = parts < num_parts
        m = tl.load(max_logits_ptr + ml_row + parts, mask=pmask, other=float("-inf"))
        sums = tl.load(exp_sums_ptr + ml_row + parts, mask=pmask, other=0.0)
        m_new = tl.maximum(m_run, tl.max(m, axis=0))
        w = tl.where(pmask, sums * tl.exp2(m - m_new), 0.0)
        p_off = seq.to(tl.int64) * stride_pb + head * stride_ph + parts[:, None] * stride_pp + dims[None, :]
        o = tl.load(partial_ptr + p_off, mask=pmask[:, None] & dim_mask[None, :], other=0.0)
        rescale = tl.exp2(m_run - m_new)
        acc = acc * rescale + tl.sum(w[:, None] * o, axis=0)
        w_run = w_run * rescale + tl.sum(w, axis=0)
        m_run = m_new
    out = acc / w_run
    tl.store(
        out_ptr + seq.to(tl.int64) * stride_ob + head * stride_oh + dims,
        out.to(out_ptr.dtype.element_ty),
        mask=dim_mask,
    )


def decode_kv_tile(dtype: torch.dtype) -> int:
    """Key tokens per loop step: 64 for 16-bit inputs; fp32 (dot on CUDA cores, `ieee`) spills
    registers above 16 on sm_90 in the split variant (checked with ptxas, see
    tests/unit/servops_kernels/aot_compile_worker.py)."""
    return 16 if dtype == torch.float32 else 64


def choose_partition_size(batch: int, num_kv_heads: int, max_context_len: int, num_sms: int | None) -> int:
    """Tokens per split-K partition, or 0 for no split (`num_sms=None`: not a GPU, never split).

    Split only when (sequences x KV heads) programs cannot fill the GPU (fewer than two per
    SM) and the context is long; aim for about four programs per SM. Sizes are powers of two
    so the number of compiled kernel variants stays small.
    """
    if not num_sms or max_context_len <= MIN_PARTITION_SIZE:
        return 0
    programs = batch * num_kv_heads
    if programs >= 2 * num_sms:
        return 0
    wanted_parts = math.ceil(4 * num_sms / programs)
    size = max(MIN_PARTITION_SIZE, triton.next_power_of_2(math.ceil(max_context_len / wanted_parts)))
    return 0 if size >= max_context_len else size


@functools.cache
def _num_sms(device: torch.device) -> int | None:
    if device.type != "cuda":
        return None
    return torch.cuda.get_device_properties(device).multi_processor_count


def paged_decode_attention(
    query: torch.Tensor,  # [B, num_heads, head_dim]
    k_cache: torch.Tensor,  # [num_blocks, block_size, num_kv_heads, head_dim]
    v_cache: torch.Tensor,
    block_tables: torch.Tensor,  # [B, max_blocks_per_seq] int32
    context_lens: torch.Tensor,  # [B] int32, including the token just written
    scale: float,
    *,
    max_context_len: int | None = None,
    partition_size: int | None = None,
    out: torch.Tensor | None = None,
) -> torch.Tensor:
    """Decode attention over the paged cache; `partition_size=0` forbids split-K, None picks.

    `max_context_len` saves a device-to-host sync when the caller already knows it; `out`
    (shaped like `query`) is written in place, which lets tests poison it first.
    """
    batch, num_heads, head_dim = query.shape
    _, block_size, num_kv_heads, _ = k_cache.shape
    if num_heads % num_kv_heads:
        raise ValueError(f"num_heads={num_heads} is not a multiple of num_kv_heads={num_kv_heads}")
    out = torch.empty_like(query) if out is None else out
    if batch == 0:
        return out
    if query.stride(-1) != 1:
        query = query.contiguous()
    if k_cache.stride() != v_cache.stride() or k_cache.stride(-1) != 1:
        raise ValueError("k_cache and v_cache must share one layout with a contiguous head_dim")
    if max_context_len is None:
        max_context_len = int(context_lens.max())
    if partition_size is None:
        partition_size = choose_partition_size(batch, num_kv_heads, max_context_len, _num_sms(query.device))
    group = num_heads // num_kv_heads
    group_pad = max(MIN_DOT_ROWS, triton.next_power_of_2(group))
    dim_pad = max(MIN_DOT_ROWS, triton.next_power_of_2(head_dim))  # tl.dot needs K >= 16
    precision = "ieee" if query.dtype == torch.float32 else "tf32"
    scale_log2 = float(scale) * LOG2E
    num_parts = math.ceil(max_context_len / partition_size) if partition_size else 1
    kv_tile = decode_kv_tile(query.dtype)
    split = num_parts > 1
    if split:
        if partition_size & (partition_size - 1) or partition_size < 16:
            raise ValueError(f"partition_size={partition_size} must be a power of two >= 16")
        kv_tile = min(kv_tile, partition_size)
        part_size = partition_size
        partial = torch.empty(batch, num_heads, num_parts, head_dim, dtype=torch.float32, device=query.device)
        max_logits = torch.empty(batch, num_heads, num_parts, dtype=torch.float32, device=query.device)
        exp_sums = torch.empty_like(max_logits)
        if INTERPRETED:  # the interpreter is the test vehicle: a partition never written fails loudly
            for workspace in (partial, max_logits, exp_sums):
                workspace.fill_(float("nan"))
        target, t_strides = partial, (partial.stride(0), partial.stride(1), partial.stride(2))
        m_strides = (max_logits.stride(0), max_logits.stride(1))
    else:
        part_size = NO_SPLIT_PARTITION  # one partition covers any context: one compiled variant
        max_logits = exp_sums = out  # unused placeholders
        target, t_strides = out, (out.stride(0), out.stride(1), 0)
        m_strides = (0, 0)
    _decode_partition_kernel[(batch, num_kv_heads, num_parts)](
        query,
        k_cache,
        v_cache,
        block_tables,
        context_lens,
        target,
        max_logits,
        exp_sums,
        scale_log2,
        query.stride(0),
        query.stride(1),
        k_cache.stride(0),
        k_cache.stride(1),
        k_cache.stride(2),
        block_tables.stride(0),
        *t_strides,
        *m_strides,
        GROUP=group,
        GROUP_PAD=group_pad,
        HEAD_DIM=head_dim,
        DIM_PAD=dim_pad,
        BLOCK_SIZE=block_size,
        KV_TILE=kv_tile,
        PARTITION_SIZE=part_size,
        SPLIT=split,
        DOT_PRECISION=precision,
    )
    if split:
        _decode_reduce_kernel[(batch, num_heads)](
            out,
            partial,
            max_logits,
            exp_sums,
            context_lens,
            out.stride(0),
            out.stride(1),
            *t_strides,
            *m_strides,
            HEAD_DIM=head_dim,
            DIM_PAD=dim_pad,
            PARTITION_SIZE=partition_size,
            PARTS_TILE=min(32, triton.next_power_of_2(num_parts)),
        )
    return out
