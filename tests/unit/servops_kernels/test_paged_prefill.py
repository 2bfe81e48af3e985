"""Triton prefill over paged KV agrees with its PyTorch twin (interpreted on CPU)."""

from __future__ import annotations

import pytest
import torch

from servops_kernels import torch_ref
from servops_kernels.paged_prefill import paged_prefill_attention
from tests.unit.servops_kernels.paged_inputs import DTYPES, REL_TOL, poisoned_like, random_paged_cache, relative_error

SCALE = 0.125


def _run_case(device, *, chunks, group, num_kv_heads, head_dim, block_size, dtype, seed=0, poison_unused=False):
    """chunks: (query tokens this step, cached tokens after writing them) per sequence."""
    gen = torch.Generator().manual_seed(seed)
    q_lens = [q for q, _ in chunks]
    cache = random_paged_cache(
        [ctx for _, ctx in chunks],
        num_kv_heads=num_kv_heads,
        head_dim=head_dim,
        block_size=block_size,
        dtype=dtype,
        device=device,
        generator=gen,
        poison_unused=poison_unused,
    )
    cu_seqlens = torch.tensor([0] + q_lens, dtype=torch.int32).cumsum(0).to(torch.int32).to(device)
    query = torch.randn(sum(q_lens), group * num_kv_heads, head_dim, generator=gen).to(dtype=dtype, device=device)
    args = (query, cache.k_cache, cache.v_cache, cache.block_tables, cu_seqlens, cache.context_lens, SCALE)
    expected = torch_ref.paged_prefill_attention(*args)
    assert torch.isfinite(expected).all(), "the torch twin read a slot past a context"
    actual = paged_prefill_attention(*args, out=poisoned_like(query))
    assert torch.isfinite(actual).all(), "kernel left output elements unwritten (NaN poison survived)"
    assert relative_error(actual, expected) <= REL_TOL[dtype]


def _ragged_chunks(block_size: int) -> list[tuple[int, int]]:
    return [
        (1, 1),  # a one-token prompt
        (5, 5),  # a fresh prompt inside one block
        (7, 40),  # a prefix-cache hit: the chunk straddles a block boundary
        (block_size + 3, block_size + 3),  # a fresh prompt over a partly filled second block
        (10, 100),  # a long cached prefix: whole key tiles need no causal mask
    ]


# every GQA ratio in both dtypes; each (ratio, block size) pair appears once, each dtype sees both sizes
PREFILL_CASES = [
    (group, 16 if (group in (1, 4)) == (dtype == torch.float32) else 32, dtype)
    for dtype in (torch.float32, torch.float16)
    for group in (1, 2, 4, 8)
] + [(4, 16, dtype) for dtype in DTYPES if dtype not in (torch.float32, torch.float16)]


@pytest.mark.parametrize(("group", "block_size", "dtype"), PREFILL_CASES, ids=str)
def test_prefill_matches_torch_for_gqa_ratio_and_block_size(device, group, block_size, dtype):
    _run_case(
        device,
        chunks=_ragged_chunks(block_size),
        group=group,
        num_kv_heads=1,
        head_dim=32,
        block_size=block_size,
        dtype=dtype,
    )


def test_chunk_longer_than_one_query_tile(device):
    # 70 query tokens need two 64-row tiles; the second tile starts past the first's diagonal
    _run_case(
        device,
        chunks=[(70, 90), (3, 3)],
        group=2,
        num_kv_heads=1,
        head_dim=32,
        block_size=16,
        dtype=torch.float32,
        seed=1,
    )


def test_head_dim_that_is_not_a_power_of_two(device):
    _run_case(
        device,
        chunks=[(6, 20), (4, 4)],
        group=2,
        num_kv_heads=2,
        head_dim=24,
        block_size=16,
        dtype=torch.float16,
        seed=2,
    )


def test_one_token_chunks_equal_decode(device):
    # a batch of one-token chunks is a decode step: both kernels must agree with the twin
    gen = torch.Generator().manual_seed(3)
    cache = random_paged_cache(
        [9, 30], num_kv_heads=2, head_dim=16, block_size=16, dtype=torch.float32, device=device, generator=gen
    )
    query = torch.randn(2, 4, 16, generator=gen).to(device)
    cu_seqlens = torch.tensor([0, 1, 2], dtype=torch.int32, device=device)
    prefill = paged_prefill_attention(
        query, cache.k_cache, cache.v_cache, cache.block_tables, cu_seqlens, cache.context_lens, SCALE
    )
    decode = torch_ref.paged_decode_attention(
        query, cache.k_cache, cache.v_cache, cache.block_tables, cache.context_lens, SCALE
    )
    assert relative_error(prefill, decode) <= REL_TOL[torch.float32]


@pytest.mark.parametrize("block_size", [1, 128])
def test_block_sizes_below_and_above_one_key_tile(device, block_size):
    _run_case(
        device,
        chunks=[(9, 70), (3, 3)],
        group=2,
        num_kv_heads=1,
        head_dim=16,
        block_size=block_size,
        dtype=torch.float16,
        seed=4,
    )


def test_slots_past_each_context_are_never_read(device):
    # every slot outside the contexts holds NaN: the partly filled last blocks and unused blocks
    _run_case(
        device,
        chunks=[(5, 21), (1, 1), (12, 12)],
        group=2,
        num_kv_heads=1,
        head_dim=16,
        block_size=16,
        dtype=torch.float16,
        seed=5,
        poison_unused=True,
    )
