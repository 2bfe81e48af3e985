"""Triton paged decode attention agrees with its PyTorch twin (interpreted on CPU)."""

from __future__ import annotations

import pytest
import torch

from servops_kernels import torch_ref
from servops_kernels.paged_decode import choose_partition_size, paged_decode_attention
from tests.unit.servops_kernels.paged_inputs import DTYPES, REL_TOL, poisoned_like, random_paged_cache, relative_error

SCALE = 0.125


def _run_case(
    device,
    *,
    context_lens,
    group,
    num_kv_heads,
    head_dim,
    block_size,
    dtype,
    partition_size,
    index_dtype=torch.int32,
    seed=0,
    poison_unused=False,
):
    gen = torch.Generator().manual_seed(seed)
    cache = random_paged_cache(
        context_lens,
        num_kv_heads=num_kv_heads,
        head_dim=head_dim,
        block_size=block_size,
        dtype=dtype,
        device=device,
        index_dtype=index_dtype,
        generator=gen,
        poison_unused=poison_unused,
    )
    num_heads = group * num_kv_heads
    query = torch.randn(len(context_lens), num_heads, head_dim, generator=gen).to(dtype=dtype, device=device)
    args = (query, cache.k_cache, cache.v_cache, cache.block_tables, cache.context_lens, SCALE)
    expected = torch_ref.paged_decode_attention(*args)
    assert torch.isfinite(expected).all(), "the torch twin read a slot past a context"
    actual = paged_decode_attention(*args, partition_size=partition_size, out=poisoned_like(query))
    assert torch.isfinite(actual).all(), "kernel left output elements unwritten (NaN poison survived)"
    assert relative_error(actual, expected) <= REL_TOL[dtype]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("block_size", [16, 32])
@pytest.mark.parametrize("group", [1, 2, 4, 8])
def test_decode_matches_torch_for_gqa_ratio_and_block_size(device, group, block_size, dtype):
    # ragged: one token, a partly filled block, exactly one block, one past, several blocks
    contexts = [1, block_size - 3, block_size, block_size + 1, 3 * block_size + 5]
    _run_case(
        device,
        context_lens=contexts,
        group=group,
        num_kv_heads=2,
        head_dim=32,
        block_size=block_size,
        dtype=dtype,
        partition_size=0,
    )


@pytest.mark.parametrize(("group", "dtype"), [(1, torch.float16), (4, torch.float32)], ids=str)
def test_split_k_partitions_merge_to_the_unsplit_result(device, group, dtype):
    # partitions of 32 tokens: contexts cover one partial, exactly two, and five-and-a-bit
    contexts = [7, 64, 165]
    _run_case(
        device,
        context_lens=contexts,
        group=group,
        num_kv_heads=1,
        head_dim=32,
        block_size=16,
        dtype=dtype,
        partition_size=32,
        seed=1,
    )


def test_split_k_with_one_sequence_shorter_than_one_partition(device):
    # partitions past a short sequence's end must be skipped by both kernels
    _run_case(
        device,
        context_lens=[3, 100],
        group=2,
        num_kv_heads=1,
        head_dim=32,
        block_size=16,
        dtype=torch.float32,
        partition_size=64,
        seed=2,
    )


@pytest.mark.parametrize("head_dim", [24, 8])
def test_head_dim_that_is_not_a_power_of_two_or_below_sixteen(device, head_dim):
    _run_case(
        device,
        context_lens=[5, 40],
        group=4,
        num_kv_heads=1,
        head_dim=head_dim,
        block_size=16,
        dtype=torch.float16,
        partition_size=0,
        seed=3,
    )


def test_int64_block_tables_and_context_lens(device):
    _run_case(
        device,
        context_lens=[9, 33],
        group=2,
        num_kv_heads=2,
        head_dim=16,
        block_size=16,
        dtype=torch.float32,
        partition_size=0,
        index_dtype=torch.int64,
        seed=4,
    )


def test_strided_query_from_a_fused_qkv_projection(device):
    gen = torch.Generator().manual_seed(5)
    cache = random_paged_cache(
        [20, 50], num_kv_heads=2, head_dim=16, block_size=16, dtype=torch.float32, device=device, generator=gen
    )
    qkv = torch.randn(2, (4 + 2 + 2) * 16, generator=gen).to(device)
    query = qkv[:, : 4 * 16].view(2, 4, 16)  # row stride 128, not 64
    args = (query, cache.k_cache, cache.v_cache, cache.block_tables, cache.context_lens, SCALE)
    expected = torch_ref.paged_decode_attention(*args)
    actual = paged_decode_attention(*args, partition_size=0)
    assert relative_error(actual, expected) <= REL_TOL[torch.float32]


def test_rejects_heads_not_a_multiple_of_kv_heads(device):
    cache = random_paged_cache([4], num_kv_heads=2, head_dim=16, block_size=16, dtype=torch.float32, device=device)
    query = torch.randn(1, 3, 16, device=device)
    with pytest.raises(ValueError, match="num_heads=3"):
        paged_decode_attention(query, cache.k_cache, cache.v_cache, cache.block_tables, cache.context_lens, SCALE)


def test_no_split_when_sequences_fill_the_gpu_or_context_is_short_or_no_gpu():
    assert choose_partition_size(batch=64, num_kv_heads=8, max_context_len=32768, num_sms=132) == 0
    assert choose_partition_size(batch=1, num_kv_heads=8, max_context_len=256, num_sms=132) == 0
    assert choose_partition_size(batch=1, num_kv_heads=8, max_context_len=32768, num_sms=None) == 0


def test_split_aims_for_about_four_programs_per_sm_in_power_of_two_partitions():
    size = choose_partition_size(batch=1, num_kv_heads=8, max_context_len=32768, num_sms=132)
    programs = 8 * -(-32768 // size)
    assert size >= 256 and size & (size - 1) == 0
    assert 2 * 132 <= programs <= 8 * 132


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA: the split heuristic only splits on a GPU")
def test_long_context_decode_with_the_default_split_matches_torch(device):
    contexts = [8000, 3, 12345]  # few sequences, long contexts: the heuristic splits
    _run_case(
        device,
        context_lens=contexts,
        group=4,
        num_kv_heads=2,
        head_dim=128,
        block_size=16,
        dtype=torch.float16,
        partition_size=None,
        seed=6,
    )


@pytest.mark.parametrize("block_size", [1, 128])
def test_block_sizes_below_and_above_one_key_tile(device, block_size):
    # the engine accepts --block-size 1..128; a 64-token tile spans many blocks or part of one
    _run_case(
        device,
        context_lens=[1, 70, 130],
        group=2,
        num_kv_heads=1,
        head_dim=16,
        block_size=block_size,
        dtype=torch.float16,
        partition_size=0,
        seed=7,
    )


@pytest.mark.parametrize("partition_size", [0, 32])
def test_slots_past_each_context_are_never_read(device, partition_size):
    # every slot outside the contexts holds NaN: the partly filled last blocks and unused blocks
    _run_case(
        device,
        context_lens=[1, 21, 50],
        group=2,
        num_kv_heads=1,
        head_dim=16,
        block_size=16,
        dtype=torch.float16,
        partition_size=partition_size,
        seed=8,
        poison_unused=True,
    )
