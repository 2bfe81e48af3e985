"""The native CPU paged attention kernels vs their PyTorch twins, at SmolLM2's attention shapes.

9 query / 3 KV heads, head_dim 64, block 16, float32, blocks scattered over a shuffled pool
(tests/unit/servops_kernels/paged_inputs.py, as the kernel tests build them); one engine step = the call
repeated for the model's 30 layers. Pairs, as benchmarks/cpu_attention_ab.py measures them at
full size (BENCHMARKS.md, "CPU attention kernels"), here small enough for seconds:
- decode of 32 sequences of 40-380 tokens; baseline: the decode twin with its gather plan built
  once per step (what the engine does on the torch backend);
- prefill of 103 new tokens over 921 cached (a prefix-cache hit); baseline: the paged-prefill twin.
Both sides must agree within the kernel tests' float32 bound. Skipped, with the reason, where the
native library does not build (no C++ compiler).
"""

from __future__ import annotations

import functools
import random

import pytest
import torch

from servops_kernels import cpu_attention, torch_decode, torch_ref
from tests.benchmarks.sides import record_side
from tests.unit.servops_kernels.paged_inputs import REL_TOL, random_paged_cache, relative_error

pytestmark = pytest.mark.skipif(
    not cpu_attention.available(), reason=f"native CPU kernel not built here: {cpu_attention.unavailable_reason()}"
)

HEADS, KV_HEADS, HEAD_DIM, BLOCK, LAYERS = 9, 3, 64, 16, 30
SCALE = HEAD_DIM**-0.5


@functools.cache
def _decode_args() -> tuple:
    contexts = [random.Random(0).randint(40, 380) for _ in range(32)]
    gen = torch.Generator().manual_seed(0)
    cache = random_paged_cache(
        contexts,
        num_kv_heads=KV_HEADS,
        head_dim=HEAD_DIM,
        block_size=BLOCK,
        dtype=torch.float32,
        device=torch.device("cpu"),
        generator=gen,
    )
    query = torch.randn(len(contexts), HEADS, HEAD_DIM, generator=gen)
    return query, cache.k_cache, cache.v_cache, cache.block_tables, cache.context_lens, SCALE


@functools.cache
def _cached_prefill_args() -> tuple:
    gen = torch.Generator().manual_seed(2)
    cache = random_paged_cache(
        [1024],
        num_kv_heads=KV_HEADS,
        head_dim=HEAD_DIM,
        block_size=BLOCK,
        dtype=torch.float32,
        device=torch.device("cpu"),
        generator=gen,
    )
    query = torch.randn(103, HEADS, HEAD_DIM, generator=gen)
    cu_seqlens_q = torch.tensor([0, 103], dtype=torch.int32)
    return query, cache.k_cache, cache.v_cache, cache.block_tables, cu_seqlens_q, cache.context_lens, SCALE


def _decode_step(side: str, args: tuple) -> torch.Tensor:
    if side == "twin":
        plan = torch_decode.plan_decode(args[3], args[4], args[1])
        for _ in range(LAYERS):
            out = torch_decode.paged_decode_attention(*args, plan=plan)
    else:
        for _ in range(LAYERS):
            out = cpu_attention.paged_decode_attention(*args)
    return out


def _prefill_step(side: str, args: tuple) -> torch.Tensor:
    attend = torch_ref.paged_prefill_attention if side == "twin" else cpu_attention.paged_prefill_attention
    for _ in range(LAYERS):
        out = attend(*args)
    return out


@pytest.mark.benchmark(group="cpu-decode-attention", warmup=True, warmup_iterations=2)
@pytest.mark.parametrize("side", ["baseline-twin", "servops-native"])
def test_cpu_decode_attention(benchmark, side):
    name = record_side(benchmark, side)
    args = _decode_args()
    out = benchmark(_decode_step, name, args)
    other = _decode_step("native" if name == "twin" else "twin", args)
    assert relative_error(out, other) <= REL_TOL[torch.float32]


@pytest.mark.benchmark(group="cpu-cached-prefill-attention", warmup=True, warmup_iterations=2)
@pytest.mark.parametrize("side", ["baseline-twin", "servops-native"])
def test_cpu_cached_prefill_attention(benchmark, side):
    name = record_side(benchmark, side)
    args = _cached_prefill_args()
    out = benchmark(_prefill_step, name, args)
    other = _prefill_step("native" if name == "twin" else "twin", args)
    assert relative_error(out, other) <= REL_TOL[torch.float32]
