"""Triton reshape_and_cache writes exactly the slots the PyTorch twin writes."""

from __future__ import annotations

import pytest
import torch

from servops_kernels import torch_ref
from servops_kernels.cache_write import reshape_and_cache

NUM_BLOCKS, BLOCK_SIZE, KV_HEADS, HEAD_DIM = 6, 16, 2, 24


def _poisoned_cache(dtype, device):
    return torch.full((NUM_BLOCKS, BLOCK_SIZE, KV_HEADS, HEAD_DIM), float("nan"), dtype=dtype, device=device)


def _slots_with_padding(num_tokens: int, gen: torch.Generator) -> torch.Tensor:
    slots = torch.randperm(NUM_BLOCKS * BLOCK_SIZE, generator=gen)[:num_tokens]
    slots[::4] = -1  # every fourth token is padding
    return slots


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
def test_writes_each_token_at_its_slot_and_skips_negative_slots(device, dtype):
    gen = torch.Generator().manual_seed(0)
    slots = _slots_with_padding(13, gen).to(device)
    key = torch.randn(13, KV_HEADS, HEAD_DIM, generator=gen).to(dtype=dtype, device=device)
    value = torch.randn(13, KV_HEADS, HEAD_DIM, generator=gen).to(dtype=dtype, device=device)
    expected_k, expected_v = _poisoned_cache(dtype, device), _poisoned_cache(dtype, device)
    torch_ref.reshape_and_cache(key, value, expected_k, expected_v, slots)
    k_cache, v_cache = _poisoned_cache(dtype, device), _poisoned_cache(dtype, device)
    reshape_and_cache(key, value, k_cache, v_cache, slots)
    # bit-exact, and every slot not written (padding or unused) still holds its NaN poison
    torch.testing.assert_close(k_cache, expected_k, rtol=0, atol=0, equal_nan=True)
    torch.testing.assert_close(v_cache, expected_v, rtol=0, atol=0, equal_nan=True)
    written = int((slots >= 0).sum()) * KV_HEADS * HEAD_DIM
    assert int(torch.isfinite(k_cache).sum()) == written


def test_strided_key_and_value_from_a_fused_qkv_projection(device):
    gen = torch.Generator().manual_seed(1)
    slots = torch.tensor([3, 40, -1, 17, 95], device=device)
    qkv = torch.randn(5, (4 + 2 * KV_HEADS) * HEAD_DIM, generator=gen).to(device)
    key = qkv[:, 4 * HEAD_DIM : (4 + KV_HEADS) * HEAD_DIM].view(5, KV_HEADS, HEAD_DIM)
    value = qkv[:, (4 + KV_HEADS) * HEAD_DIM :].view(5, KV_HEADS, HEAD_DIM)
    expected_k, expected_v = _poisoned_cache(torch.float32, device), _poisoned_cache(torch.float32, device)
    torch_ref.reshape_and_cache(key, value, expected_k, expected_v, slots)
    k_cache, v_cache = _poisoned_cache(torch.float32, device), _poisoned_cache(torch.float32, device)
    reshape_and_cache(key, value, k_cache, v_cache, slots)
    torch.testing.assert_close(k_cache, expected_k, rtol=0, atol=0, equal_nan=True)
    torch.testing.assert_close(v_cache, expected_v, rtol=0, atol=0, equal_nan=True)


def test_float32_keys_into_a_float16_cache_are_cast(device):
    gen = torch.Generator().manual_seed(2)
    slots = torch.tensor([0, 31, 64], device=device)
    key = torch.randn(3, KV_HEADS, HEAD_DIM, generator=gen).to(device)
    k_cache, v_cache = _poisoned_cache(torch.float16, device), _poisoned_cache(torch.float16, device)
    reshape_and_cache(key, -key, k_cache, v_cache, slots)
    flat_k = k_cache.view(-1, KV_HEADS, HEAD_DIM)
    assert torch.equal(flat_k[slots], key.to(torch.float16))
    assert torch.equal(v_cache.view(-1, KV_HEADS, HEAD_DIM)[slots], (-key).to(torch.float16))
