"""The native CPU decode and prefill kernels agree with the PyTorch twins, and run only where they apply."""

from __future__ import annotations

import os

import pytest
import torch

from servops_kernels import attention, cpu_attention, cpu_build, cpu_gemm, torch_ref
from tests.unit.servops_kernels.paged_inputs import REL_TOL, random_paged_cache, relative_error

pytestmark = pytest.mark.skipif(
    not cpu_attention.available(), reason=f"native CPU kernel not built here: {cpu_attention.unavailable_reason()}"
)

CPU = torch.device("cpu")
SCALE = 0.125


def _compare(
    context_lens, *, group, num_kv_heads, head_dim, block_size, dtype, seed=0, index_dtype=torch.int32, threads=None
):
    gen = torch.Generator().manual_seed(seed)
    cache = random_paged_cache(
        context_lens,
        num_kv_heads=num_kv_heads,
        head_dim=head_dim,
        block_size=block_size,
        dtype=dtype,
        device=CPU,
        index_dtype=index_dtype,
        generator=gen,
        poison_unused=True,
    )
    query = torch.randn(len(context_lens), group * num_kv_heads, head_dim, generator=gen).to(dtype)
    args = (query, cache.k_cache, cache.v_cache, cache.block_tables, cache.context_lens, SCALE)
    _check(cpu_attention.paged_decode_attention, torch_ref.paged_decode_attention, args, threads)


def _check(native, twin, args: tuple, threads: int | None) -> None:
    """Run the native kernel on `threads` threads and hold it to the twin on the same inputs."""
    query = args[0]
    assert cpu_attention.supports(query, args[1], args[2])
    expected = twin(*args)
    before = torch.get_num_threads()
    try:
        if threads:
            torch.set_num_threads(threads)
        actual = native(*args)
    finally:
        torch.set_num_threads(before)
    assert torch.isfinite(actual).all(), "the kernel read a never-written (NaN) slot or left output unwritten"
    assert actual.dtype == query.dtype and actual.shape == query.shape
    assert relative_error(actual, expected) <= REL_TOL[query.dtype]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("block_size", [1, 16, 32])
@pytest.mark.parametrize("group", [1, 3, 4, 8])
def test_matches_the_twin_for_gqa_ratio_block_size_and_dtype(group, block_size, dtype):
    # ragged: one token, under a tile of 8, a partly filled block, exactly one block, one past, many
    contexts = [1, 7, block_size + 3, 2 * block_size, 2 * block_size + 1, 9 * block_size + 5]
    _compare(contexts, group=group, num_kv_heads=2, head_dim=32, block_size=block_size, dtype=dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("group", [1, 2, 3, 4, 8])
@pytest.mark.parametrize("head_dim", [64, 128])
def test_decode_on_16_lanes_takes_gqa_heads_in_tiles(head_dim, group, dtype):
    """head_dim a multiple of 64 takes the 16-lane path on AVX-512 CPUs, the query heads of one KV head
    in tiles of up to three (group 4 is 3 + 1, group 8 is 3 + 3 + 2); elsewhere the 8-lane path: both
    held to the twin, over contexts that end mid-tile, on a tile, and past several blocks."""
    _compare([1, 8, 13, 64, 131], group=group, num_kv_heads=3, head_dim=head_dim, block_size=16, dtype=dtype, seed=2)


@pytest.mark.parametrize("head_dim", [8, 64, 128])
def test_head_dims(head_dim):
    _compare([5, 40, 300], group=3, num_kv_heads=3, head_dim=head_dim, block_size=16, dtype=torch.float32, seed=1)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_same_result_on_any_thread_count(threads):
    _compare(
        [33, 1, 200, 17, 64],
        group=2,
        num_kv_heads=2,
        head_dim=16,
        block_size=16,
        dtype=torch.float32,
        seed=2,
        threads=threads,
    )


def test_int64_tables_and_lengths_and_a_strided_query():
    gen = torch.Generator().manual_seed(3)
    cache = random_paged_cache(
        [20, 50],
        num_kv_heads=2,
        head_dim=16,
        block_size=16,
        dtype=torch.float32,
        device=CPU,
        index_dtype=torch.int64,
        generator=gen,
    )
    qkv = torch.randn(2, (4 + 2 + 2) * 16, generator=gen)
    query = qkv[:, : 4 * 16].view(2, 4, 16)  # as the fused qkv projection leaves it: row stride 128
    args = (query, cache.k_cache, cache.v_cache, cache.block_tables, cache.context_lens, SCALE)
    assert (
        relative_error(cpu_attention.paged_decode_attention(*args), torch_ref.paged_decode_attention(*args))
        <= REL_TOL[torch.float32]
    )


def test_empty_batch():
    cache = random_paged_cache([4], num_kv_heads=1, head_dim=16, block_size=16, dtype=torch.float32, device=CPU)
    out = cpu_attention.paged_decode_attention(
        torch.empty(0, 2, 16), cache.k_cache, cache.v_cache, cache.block_tables[:0], cache.context_lens[:0], SCALE
    )
    assert out.shape == (0, 2, 16)


def test_what_the_kernels_do_not_cover_goes_to_the_twins(monkeypatch):
    monkeypatch.setenv(attention.BACKEND_ENV, "cpu")
    gen = torch.Generator().manual_seed(4)
    for dtype, head_dim in ((torch.float16, 16), (torch.float32, 12)):  # dtype, head_dim not a multiple of 8
        cache = random_paged_cache(
            [9, 30], num_kv_heads=1, head_dim=head_dim, block_size=16, dtype=dtype, device=CPU, generator=gen
        )
        query = torch.randn(2, 2, head_dim, generator=gen).to(dtype)
        assert not cpu_attention.supports(query, cache.k_cache, cache.v_cache)
        assert attention.plan_decode(cache.block_tables, cache.context_lens, cache.k_cache) is not None
        args = (query, cache.k_cache, cache.v_cache, cache.block_tables, cache.context_lens, SCALE)
        assert torch.equal(attention.paged_decode_attention(*args), torch_ref.paged_decode_attention(*args))
        cu_seqlens = torch.tensor([0, 1, 2], dtype=torch.int32)
        args = (query, cache.k_cache, cache.v_cache, cache.block_tables, cu_seqlens, cache.context_lens, SCALE)
        assert torch.equal(attention.paged_prefill_attention(*args), torch_ref.paged_prefill_attention(*args))


def test_the_cpu_backend_needs_no_gather_plan(monkeypatch):
    monkeypatch.setenv(attention.BACKEND_ENV, "cpu")
    cache = random_paged_cache([9], num_kv_heads=1, head_dim=16, block_size=16, dtype=torch.float32, device=CPU)
    assert attention.plan_decode(cache.block_tables, cache.context_lens, cache.k_cache) is None


def test_a_build_is_cached_per_source_and_reused(tmp_path, monkeypatch):
    monkeypatch.setenv(cpu_build.CACHE_ENV, str(tmp_path))
    cpu_build.load("paged_attention_cpu.cpp")
    built = list(tmp_path.glob("paged_attention_cpu-*.so"))
    assert len(built) == 1 and not list(tmp_path.glob("*.partial"))
    stamp = os.stat(built[0]).st_mtime_ns
    cpu_build.load("paged_attention_cpu.cpp")
    assert os.stat(built[0]).st_mtime_ns == stamp


def test_a_source_that_does_not_compile_is_one_clear_error(tmp_path, monkeypatch):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "broken.cpp").write_text("int f( {\n")
    monkeypatch.setattr(cpu_build, "SOURCES", tmp_path / "src")
    monkeypatch.setenv(cpu_build.CACHE_ENV, str(tmp_path / "cache"))
    with pytest.raises(cpu_build.NativeBuildError) as err:
        cpu_build.load("broken.cpp")
    message = str(err.value)
    assert "broken.cpp" in message and "error" in message and "\n" not in message
    assert not list((tmp_path / "cache").glob("*"))  # no half-written library left behind


def _compare_prefill(chunks, *, group, num_kv_heads, head_dim, block_size, dtype, seed=0, threads=None, strided=False):
    """chunks: (query tokens this step, cached tokens after writing them) per sequence."""
    gen = torch.Generator().manual_seed(seed)
    q_lens = [q for q, _ in chunks]
    cache = random_paged_cache(
        [ctx for _, ctx in chunks],
        num_kv_heads=num_kv_heads,
        head_dim=head_dim,
        block_size=block_size,
        dtype=dtype,
        device=CPU,
        generator=gen,
        poison_unused=True,
    )
    cu_seqlens = torch.tensor([0] + q_lens).cumsum(0).to(torch.int32)
    num_heads, tokens = group * num_kv_heads, sum(q_lens)
    if strided:  # as the fused qkv projection leaves it
        qkv = torch.randn(tokens, (num_heads + 2 * num_kv_heads) * head_dim, generator=gen).to(dtype)
        query = qkv[:, : num_heads * head_dim].view(tokens, num_heads, head_dim)
    else:
        query = torch.randn(tokens, num_heads, head_dim, generator=gen).to(dtype)
    args = (query, cache.k_cache, cache.v_cache, cache.block_tables, cu_seqlens, cache.context_lens, SCALE)
    _check(cpu_attention.paged_prefill_attention, torch_ref.paged_prefill_attention, args, threads)


def _ragged_chunks(block_size: int) -> list[tuple[int, int]]:
    # a one-token prompt; a fresh prompt; a prefix hit straddling a block boundary; a chunk over
    # a partly filled block; a long cached prefix under a short chunk
    return [
        (1, 1),
        (block_size + 5, block_size + 5),
        (7, block_size + 11),
        (3, 2 * block_size + 2),
        (4, 6 * block_size + 2),
    ]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("block_size", [1, 16, 32])
@pytest.mark.parametrize("group", [1, 3, 4, 8])
def test_prefill_matches_the_twin_for_gqa_ratio_block_size_and_dtype(group, block_size, dtype):
    _compare_prefill(
        _ragged_chunks(block_size), group=group, num_kv_heads=2, head_dim=32, block_size=block_size, dtype=dtype
    )


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_prefill_chunks_longer_than_one_query_tile(dtype):
    # 70 rows = four full 16-row tiles and a partial one (two 32-row tiles and a partial one on the
    # bf16 units); 33 rows over a 60-token prefix; a 700-token prompt over 44 keys tiles of 16
    _compare_prefill(
        [(70, 70), (33, 93), (16, 16), (700, 700)],
        group=3,
        num_kv_heads=3,
        head_dim=64,
        block_size=16,
        dtype=dtype,
        seed=1,
    )


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("head_dim", [8, 96, 128])
def test_prefill_head_dims(head_dim, dtype):
    # bf16 at 96 and 128 runs the bf16-unit path where the CPU has it (6 and 8 accumulators a vector), 8 the AVX2 one
    _compare_prefill(
        [(9, 30), (12, 12), (47, 47)], group=2, num_kv_heads=2, head_dim=head_dim, block_size=16, dtype=dtype, seed=2
    )


# float32 over the AVX2 path; bf16 at head_dim 64 over the bf16-unit path where the CPU has it
THREAD_CASES = {
    "float32": dict(chunks=[(20, 50), (5, 5), (40, 40)], num_kv_heads=1, head_dim=16, dtype=torch.float32, seed=3),
    "bfloat16": dict(chunks=[(40, 40), (5, 77), (1, 1)], num_kv_heads=3, head_dim=64, dtype=torch.bfloat16, seed=5),
}


@pytest.mark.parametrize("case", THREAD_CASES)
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_prefill_same_result_on_any_thread_count_with_a_strided_query(threads, case):
    spec = THREAD_CASES[case]
    _compare_prefill(
        spec["chunks"],
        group=3,
        num_kv_heads=spec["num_kv_heads"],
        head_dim=spec["head_dim"],
        block_size=16,
        dtype=spec["dtype"],
        seed=spec["seed"],
        threads=threads,
        strided=True,
    )


def test_one_token_prefill_chunks_equal_decode():
    gen = torch.Generator().manual_seed(4)
    cache = random_paged_cache(
        [17, 1, 40], num_kv_heads=2, head_dim=16, block_size=16, dtype=torch.float32, device=CPU, generator=gen
    )
    query = torch.randn(3, 4, 16, generator=gen)
    cu_seqlens = torch.arange(4, dtype=torch.int32)
    prefill = cpu_attention.paged_prefill_attention(
        query, cache.k_cache, cache.v_cache, cache.block_tables, cu_seqlens, cache.context_lens, SCALE
    )
    decode = cpu_attention.paged_decode_attention(
        query, cache.k_cache, cache.v_cache, cache.block_tables, cache.context_lens, SCALE
    )
    assert relative_error(prefill, decode) <= REL_TOL[torch.float32]


def test_prefill_of_no_tokens():
    cache = random_paged_cache([4], num_kv_heads=1, head_dim=16, block_size=16, dtype=torch.float32, device=CPU)
    out = cpu_attention.paged_prefill_attention(
        torch.empty(0, 2, 16),
        cache.k_cache,
        cache.v_cache,
        cache.block_tables[:0],
        torch.zeros(1, dtype=torch.int32),
        cache.context_lens[:0],
        SCALE,
    )
    assert out.shape == (0, 2, 16)


def test_the_cpu_backend_sends_only_long_fresh_chunks_to_dense_sdpa(monkeypatch):
    monkeypatch.setenv(attention.BACKEND_ENV, "cpu")
    # the 8-lane build (no AVX-512) and the AMX tiles beat SDPA on long prompts too: every chunk native
    eight = "avx512f" not in cpu_gemm.cpu_flags()
    assert cpu_gemm.eight_lanes() is eight
    threshold = None if eight else attention.CPU_DENSE_PREFILL_MIN_TOKENS
    assert attention.dense_prefill_min_tokens("cpu", torch.float32, 64) == threshold
    on_amx = cpu_attention.bf16_prefill_units(64) == "amx"
    assert attention.dense_prefill_min_tokens("cpu", torch.bfloat16, 64) == (None if on_amx else threshold)
    # head_dim 256 is past the bf16 prefill's AMX and vdpbf16ps paths (128): the threshold of the others
    assert attention.dense_prefill_min_tokens("cpu", torch.bfloat16, 256) == threshold
    monkeypatch.setattr(cpu_gemm, "eight_lanes", lambda: False)
    assert attention.dense_prefill_min_tokens("cpu", torch.float32, 64) == attention.CPU_DENSE_PREFILL_MIN_TOKENS
    assert attention.dense_prefill_min_tokens("cpu", torch.float16, 64) == 1  # the twin: every fresh chunk dense
    monkeypatch.setenv(attention.BACKEND_ENV, "torch")
    assert attention.dense_prefill_min_tokens("cpu", torch.float32, 64) == 1


def test_a_chunk_longer_than_its_context_is_refused_not_read_out_of_bounds():
    cache = random_paged_cache([4], num_kv_heads=1, head_dim=16, block_size=16, dtype=torch.float32, device=CPU)
    with pytest.raises(ValueError, match="longer than its context"):
        cpu_attention.paged_prefill_attention(
            torch.randn(7, 2, 16),
            cache.k_cache,
            cache.v_cache,
            cache.block_tables,
            torch.tensor([0, 7], dtype=torch.int32),
            cache.context_lens,
            SCALE,
        )


def _best_bf16_units(flags: frozenset[str]) -> str:
    if {"amx_bf16", "amx_tile"} <= flags:
        return "amx"
    return "avx512-bf16" if {"avx512_bf16", "avx512bw"} <= flags else "avx2"


def test_the_bf16_prefill_runs_on_the_best_units_this_cpu_lists():
    """An AMX CPU whose build quietly fell back to vdpbf16ps (compiler, permission) would fail here."""
    best = _best_bf16_units(cpu_gemm.cpu_flags())
    assert cpu_attention.bf16_prefill_units(64) == best
    assert cpu_attention.bf16_prefill_units(128) == best
    assert cpu_attention.bf16_prefill_units(8) == "avx2"  # not whole bf16 pairs per 16 lanes
    assert cpu_attention.bf16_prefill_units(256) == "avx2"  # past the bf16 paths' accumulators
    assert cpu_attention.prefill_on_amx(torch.bfloat16, 64) == (best == "amx")
    assert not cpu_attention.prefill_on_amx(torch.float32, 64)


@pytest.mark.skipif(
    not {"amx_bf16", "amx_tile"} <= cpu_gemm.cpu_flags(), reason="this CPU has no AMX: the tile path is not built"
)
@pytest.mark.parametrize("head_dim", [32, 64, 96, 128])
def test_bf16_prefill_on_the_tiles_and_on_vdpbf16ps_both_match_the_twin(tmp_path, monkeypatch, head_dim):
    """The tile path takes every bf16 prefill on an AMX CPU, so the vdpbf16ps path (what AVX512-BF16
    CPUs without AMX run) is held to the twin here by a build without AMX."""
    monkeypatch.setenv(cpu_build.CACHE_ENV, str(tmp_path / "cache"))
    without_amx = cpu_attention._NATIVE.build(("-mno-amx-tile", "-mno-amx-bf16", "-mno-amx-int8"))
    assert without_amx.servops_paged_prefill_bf16_units(64) == 1
    chunks = [(70, 70), (33, 93), (1, 1), (300, 300)]  # ragged tiles, a prefix, one token, many key steps
    spec = dict(group=3, num_kv_heads=2, head_dim=head_dim, block_size=16, dtype=torch.bfloat16, seed=11)
    _compare_prefill(chunks, **spec)  # the default build: the tiles
    monkeypatch.setattr(cpu_attention, "library", lambda: without_amx)
    _compare_prefill(chunks, **spec, threads=2)
