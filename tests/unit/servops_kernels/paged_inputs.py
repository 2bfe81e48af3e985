"""Random paged-attention inputs and the per-dtype error thresholds the kernel tests share.

Every case draws fresh random keys, values and queries, and scatters each sequence's blocks
over a shuffled pool (never contiguous, never in order) so that a kernel that ignores the
block table cannot pass by accident.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

# max |triton - torch| / max |torch| allowed. fp32 accumulates the same way as the twin up to
# summation order; fp16/bf16 round the softmax weights before the P@V product (as flash
# attention does), so their bound is a few units of the format's epsilon (fp16 9.8e-4,
# bf16 7.8e-3).
REL_TOL = {torch.float32: 1e-5, torch.float16: 5e-3, torch.bfloat16: 3e-2}


def relative_error(actual: torch.Tensor, expected: torch.Tensor) -> float:
    """max abs difference over max abs reference value (NaN if either holds a NaN)."""
    diff = (actual.float() - expected.float()).abs().max()
    return float(diff / expected.float().abs().max().clamp_min(1e-6))


@dataclass
class PagedCache:
    k_cache: torch.Tensor  # [num_blocks, block_size, num_kv_heads, head_dim]
    v_cache: torch.Tensor
    block_tables: torch.Tensor  # [B, max_blocks] int32, shuffled block ids
    context_lens: torch.Tensor  # [B] int32


def random_paged_cache(
    context_lens: list[int],
    *,
    num_kv_heads: int,
    head_dim: int,
    block_size: int,
    dtype: torch.dtype,
    device: torch.device,
    index_dtype: torch.dtype = torch.int32,
    generator: torch.Generator | None = None,
    poison_unused: bool = False,
) -> PagedCache:
    """A cache holding random K/V with each sequence's blocks scattered over the pool.

    `poison_unused` fills every slot outside the sequences' contexts with NaN (as memory that
    was never written may hold), so an attention that reads past a context fails.
    """
    blocks_per_seq = [-(-n // block_size) for n in context_lens]
    max_blocks = max(blocks_per_seq) + 1  # a spare column: the kernels must not read past a row's blocks
    num_blocks = sum(blocks_per_seq) + 3
    shape = (num_blocks, block_size, num_kv_heads, head_dim)
    k_cache = torch.randn(shape, generator=generator).to(dtype=dtype, device=device)
    v_cache = torch.randn(shape, generator=generator).to(dtype=dtype, device=device)
    order = torch.randperm(num_blocks, generator=generator)
    table = torch.full((len(context_lens), max_blocks), -1, dtype=torch.long)
    used = 0
    for row, count in enumerate(blocks_per_seq):
        table[row, :count] = order[used : used + count]
        used += count
    if poison_unused:
        used = torch.zeros(num_blocks * block_size, dtype=torch.bool)
        for row, length in enumerate(context_lens):
            positions = torch.arange(length)
            used[table[row, positions // block_size] * block_size + positions % block_size] = True
        unused = (~used).view(num_blocks, block_size).to(device)
        k_cache[unused] = float("nan")
        v_cache[unused] = float("nan")
    return PagedCache(
        k_cache=k_cache,
        v_cache=v_cache,
        block_tables=table.to(dtype=index_dtype, device=device),
        context_lens=torch.tensor(context_lens, dtype=index_dtype, device=device),
    )


def poisoned_like(tensor: torch.Tensor) -> torch.Tensor:
    """An output buffer full of NaN: any element a kernel forgets to write fails the test."""
    return torch.full_like(tensor, float("nan"))


# fp32 and fp16 everywhere; bf16 only compiled on CUDA (the interpreter has no bfloat16)
DTYPES = [torch.float32, torch.float16] + ([torch.bfloat16] if torch.cuda.is_available() else [])
