"""The native CPU layer ops agree with their PyTorch twins (bit for bit where PyTorch's rounding
can be reproduced), write only where told, and run only where they apply."""

from __future__ import annotations

import shutil

import pytest
import torch

from servops_kernels import attention, cpu_build, cpu_gemm, cpu_layer_ops, layer_ops

pytestmark = pytest.mark.skipif(
    not cpu_layer_ops.available(), reason=f"native CPU layer ops not built here: {cpu_layer_ops.unavailable_reason()}"
)

# RMSNorm sums its squares in another order and silu uses another exp: a few ulps
ULPS = 4 * torch.finfo(torch.float32).eps
HIDDEN, INTERMEDIATE = 576, 1536  # SmolLM2's


@pytest.fixture
def twins(monkeypatch):
    """Run a call on the PyTorch twins (the torch backend)."""

    def run(function, *args):
        with monkeypatch.context() as patch:
            patch.setenv(attention.BACKEND_ENV, "torch")
            return function(*args)

    return run


def _rows(rows: int, cols: int, *, strided: bool, scale: float = 3.0, seed: int = 0) -> torch.Tensor:
    """[rows, cols] float32; `strided`: a column slice of a wider tensor (rows not contiguous)."""
    wide = torch.randn(rows, cols + 24 if strided else cols, generator=torch.Generator().manual_seed(seed)) * scale
    return wide[:, 8 : 8 + cols] if strided else wide


def _close(actual: torch.Tensor, expected: torch.Tensor) -> bool:
    return bool(((actual - expected).abs() <= ULPS * expected.abs() + 1e-30).all())


@pytest.mark.parametrize("rows, cols", [(0, 576), (1, 576), (37, 576), (5, 100), (3, 7), (2048, 64), (4, 27)])
@pytest.mark.parametrize("strided", [False, True], ids=["contiguous", "strided"])
def test_rms_norm_matches_the_twin(rows, cols, strided, threads, twins):
    x, weight = _rows(rows, cols, strided=strided), torch.randn(cols)
    actual = layer_ops.rms_norm(x, weight, 1e-6)
    assert actual.shape == x.shape and torch.isfinite(actual).all()
    assert _close(actual, twins(layer_ops.rms_norm, x, weight, 1e-6))


@pytest.mark.parametrize("rows, cols", [(1, 576), (37, 576), (5, 100), (2048, 64), (4, 27)])
@pytest.mark.parametrize("strided", [False, True], ids=["contiguous", "strided"])
def test_fused_add_rms_norm_adds_in_place_bit_for_bit_and_normalises(rows, cols, strided, threads, twins):
    x, residual = _rows(rows, cols, strided=strided, seed=1), _rows(rows, cols, strided=strided, seed=2)
    weight = torch.randn(cols)
    expected, expected_residual = twins(layer_ops.fused_add_rms_norm, x.clone(), residual.clone(), weight, 1e-5)
    x_in, residual_in = x.clone(), residual.clone()
    actual, actual_residual = layer_ops.fused_add_rms_norm(x_in, residual_in, weight, 1e-5)
    assert actual.data_ptr() == x_in.data_ptr() and actual_residual.data_ptr() == residual_in.data_ptr()  # in place
    assert torch.equal(actual_residual, expected_residual)  # the residual add rounds as PyTorch's
    assert _close(actual, expected)


@pytest.mark.parametrize(
    "num_heads, num_kv_heads, head_dim", [(9, 3, 64), (4, 4, 8), (8, 2, 128), (2, 1, 6), (3, 1, 54)]
)
@pytest.mark.parametrize("rows", [1, 19, 300])
def test_rotary_embedding_is_bit_identical_and_leaves_values_alone(
    num_heads, num_kv_heads, head_dim, rows, threads, twins
):
    gen = torch.Generator().manual_seed(3)
    qkv = torch.randn(rows, (num_heads + 2 * num_kv_heads) * head_dim, generator=gen)
    cos, sin = torch.randn(rows, head_dim, generator=gen), torch.randn(rows, head_dim, generator=gen)
    expected = twins(layer_ops.rotary_embedding, qkv.clone(), cos, sin, num_heads, num_kv_heads, head_dim)
    fused = qkv.clone()
    actual = layer_ops.rotary_embedding(fused, cos, sin, num_heads, num_kv_heads, head_dim)
    for got, want in zip(actual, expected, strict=False):
        assert got.shape == want.shape and torch.equal(got, want)
    assert all(t.untyped_storage().data_ptr() == fused.untyped_storage().data_ptr() for t in actual)  # views, in place
    assert torch.equal(actual[2], qkv[:, (num_heads + num_kv_heads) * head_dim :].view_as(actual[2]))


@pytest.mark.parametrize("rows, half", [(0, 1536), (1, 1536), (33, 1536), (7, 13), (5, 27)])
def test_silu_and_mul_matches_the_twin(rows, half, threads, twins):
    gate_up = _rows(rows, 2 * half, strided=False, scale=6.0, seed=4)
    gate_up[:, :3] = torch.tensor([-100.0, 100.0, 0.0])[: min(3, half)] if rows else gate_up[:, :3]  # both tails, zero
    actual = layer_ops.silu_and_mul(gate_up)
    expected = twins(layer_ops.silu_and_mul, gate_up)
    assert actual.shape == (rows, half) and torch.isfinite(actual).all()
    assert bool(((actual - expected).abs() <= ULPS * expected.abs() + 1e-30).all())


# ---- bfloat16: SmolLM2's shapes (hidden 576, 9/3 heads of 64, MLP 1,536) at the engine's row counts.
# The native ops widen to float32 and round to bf16 wherever the twin materialises a bf16 tensor.
# Exact: the residual add (one float32 add of two bf16 values, rounded) and the rotary embedding
# (each product of two bf16 values is exact in float32, then rounded; the sum rounded): the same
# roundings of the same float32 values. Not exact: RMSNorm's float32 inverse RMS (another summation
# order) and silu's float32 exp are a few float32 ulps off the twin's, so their bf16 rounding
# lands one bf16 step away when the float32 value lies that close to a rounding boundary; the
# following weight (or `up`) product of that bf16 value can then land up to two steps away.
BF16_ROWS = [1, 7, 64]


def _bf16(rows: int, cols: int, *, strided: bool, scale: float = 3.0, seed: int = 0) -> torch.Tensor:
    """[rows, cols] bfloat16; `strided`: a column slice of a wider tensor, as `_rows`."""
    wide = _rows(rows, cols + 24 if strided else cols, strided=False, scale=scale, seed=seed).bfloat16()
    return wide[:, 8 : 8 + cols] if strided else wide


def _bf16_steps(actual: torch.Tensor, expected: torch.Tensor) -> torch.Tensor:
    """How many bf16 rounding steps apart (distance between the bit patterns in value order)."""

    def ordinal(t: torch.Tensor) -> torch.Tensor:
        bits = t.contiguous().view(torch.int16).to(torch.int32)
        return torch.where(bits < 0, -(bits & 0x7FFF), bits)

    assert actual.dtype == expected.dtype == torch.bfloat16
    return (ordinal(actual) - ordinal(expected)).abs()


def _within_steps(actual: torch.Tensor, expected: torch.Tensor, steps: int) -> None:
    apart = _bf16_steps(actual, expected)
    assert apart.numel() == 0 or int(apart.max()) <= steps
    assert int((apart > 0).sum()) <= 0.01 * apart.numel()  # boundary cases only: a misplaced rounding shows everywhere


@pytest.mark.parametrize("rows", BF16_ROWS)
@pytest.mark.parametrize("strided", [False, True], ids=["contiguous", "strided"])
def test_bfloat16_rms_norm_is_the_twins_within_a_rounding_step(rows, strided, threads, twins):
    x = _bf16(rows, HIDDEN, strided=strided, seed=rows)
    unit, weight = torch.ones(HIDDEN, dtype=torch.bfloat16), _bf16(1, HIDDEN, strided=False, seed=99)[0]
    assert layer_ops._native(x, weight)
    # unit weight: the normalised value itself, one bf16 rounding of a float32 value a few ulps off
    _within_steps(layer_ops.rms_norm(x, unit, 1e-5), twins(layer_ops.rms_norm, x, unit, 1e-5), 1)
    actual = layer_ops.rms_norm(x, weight, 1e-5)
    assert actual.dtype == torch.bfloat16 and actual.shape == x.shape
    _within_steps(actual, twins(layer_ops.rms_norm, x, weight, 1e-5), 2)


@pytest.mark.parametrize("rows", BF16_ROWS)
def test_bfloat16_fused_add_rms_norm_adds_bit_for_bit_in_place(rows, threads, twins):
    x, residual = _bf16(rows, HIDDEN, strided=False, seed=1), _bf16(rows, HIDDEN, strided=False, seed=2)
    weight = _bf16(1, HIDDEN, strided=False, seed=3)[0]
    expected, expected_residual = twins(layer_ops.fused_add_rms_norm, x.clone(), residual.clone(), weight, 1e-5)
    x_in, residual_in = x.clone(), residual.clone()
    actual, actual_residual = layer_ops.fused_add_rms_norm(x_in, residual_in, weight, 1e-5)
    assert actual.data_ptr() == x_in.data_ptr() and actual_residual.data_ptr() == residual_in.data_ptr()
    assert torch.equal(actual_residual, expected_residual)
    _within_steps(actual, expected, 2)


@pytest.mark.parametrize("num_heads, num_kv_heads, head_dim", [(9, 3, 64), (2, 1, 6), (3, 1, 54)])
@pytest.mark.parametrize("rows", BF16_ROWS)
def test_bfloat16_rotary_embedding_is_bit_identical(num_heads, num_kv_heads, head_dim, rows, threads, twins):
    gen = torch.Generator().manual_seed(rows)
    qkv = torch.randn(rows, (num_heads + 2 * num_kv_heads) * head_dim, generator=gen).bfloat16()
    # as the engine's runner: float32 tables cast to bf16, gathered at the tokens' positions
    angles = torch.arange(256, dtype=torch.float32)[:, None] * torch.rand(head_dim, generator=gen)[None, :]
    positions = torch.randint(0, 256, (rows,), generator=gen)
    cos, sin = angles.cos().bfloat16()[positions], angles.sin().bfloat16()[positions]
    expected = twins(layer_ops.rotary_embedding, qkv.clone(), cos, sin, num_heads, num_kv_heads, head_dim)
    fused = qkv.clone()
    actual = layer_ops.rotary_embedding(fused, cos, sin, num_heads, num_kv_heads, head_dim)
    assert all(t.untyped_storage().data_ptr() == fused.untyped_storage().data_ptr() for t in actual)  # in place
    for got, want in zip(actual, expected, strict=True):
        assert got.dtype == torch.bfloat16 and torch.equal(got, want)


@pytest.mark.parametrize(
    "rows, half", [(0, INTERMEDIATE), *((rows, INTERMEDIATE) for rows in BF16_ROWS), (7, 13), (5, 27)]
)
def test_bfloat16_silu_and_mul_is_the_twins_within_a_rounding_step(rows, half, threads, twins):
    gate_up = _bf16(rows, 2 * half, strided=False, scale=6.0, seed=4)
    if rows:
        gate_up[:, :3] = torch.tensor([-100.0, 100.0, 0.0], dtype=torch.bfloat16)[: min(3, half)]
    actual = layer_ops.silu_and_mul(gate_up)
    expected = twins(layer_ops.silu_and_mul, gate_up)
    assert actual.shape == (rows, half) and actual.dtype == torch.bfloat16 and torch.isfinite(actual).all()
    # past exp's clamp (gate below -87) the twin's silu is 0 and the native one ~1e-36: both negligible
    tail = (actual.float().abs() < 1e-30) & (expected.float().abs() < 1e-30)
    _within_steps(torch.where(tail, expected, actual), expected, 2)
    unit = torch.cat([gate_up[:, :half], torch.ones_like(gate_up[:, :half])], dim=1)  # silu alone: one rounding
    silu, silu_twin = layer_ops.silu_and_mul(unit), twins(layer_ops.silu_and_mul, unit)
    tail = (silu.float().abs() < 1e-30) & (silu_twin.float().abs() < 1e-30)
    _within_steps(torch.where(tail, silu_twin, silu), silu_twin, 1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_kv_write_puts_each_row_in_its_slot_and_nothing_elsewhere(dtype, threads, twins):
    num_kv_heads, head_dim, tokens = 3, 64, 40
    qkv = torch.randn(tokens, (9 + 2 * num_kv_heads) * head_dim).to(dtype)
    key = qkv[:, 9 * head_dim : 12 * head_dim].view(tokens, num_kv_heads, head_dim)  # strided rows, as the model's
    value = qkv[:, 12 * head_dim :].view(tokens, num_kv_heads, head_dim)
    slots = torch.randperm(8 * 16, generator=torch.Generator().manual_seed(5))[:tokens]
    slots[[0, 17]] = -1  # padding: not written
    caches = [torch.full((8, 16, num_kv_heads, head_dim), float("nan"), dtype=dtype) for _ in range(4)]
    assert cpu_layer_ops.supports_cache_write(key, value, caches[0], caches[1])
    attention.reshape_and_cache(key, value, caches[0], caches[1], slots)
    twins(attention.reshape_and_cache, key, value, caches[2], caches[3], slots)
    for native, twin in ((caches[0], caches[2]), (caches[1], caches[3])):
        assert torch.equal(native.nan_to_num(7.0), twin.nan_to_num(7.0))
    assert int(torch.isfinite(caches[0]).all(-1).all(-1).sum()) == tokens - 2


def test_kv_write_refuses_a_slot_past_the_cache():
    cache = torch.empty(2, 16, 1, 8)
    rows = torch.randn(3, 1, 8)
    with pytest.raises(ValueError, match="past the cache"):
        cpu_layer_ops.reshape_and_cache(rows, rows, cache, cache.clone(), torch.tensor([0, 5, 32]))


def test_mismatched_shapes_are_refused_before_the_kernel_runs():
    x = torch.randn(4, 64)
    with pytest.raises(ValueError, match="rms_norm"):
        cpu_layer_ops.rms_norm(x, torch.randn(32), 1e-6)
    with pytest.raises(ValueError, match="fused_add_rms_norm"):
        cpu_layer_ops.fused_add_rms_norm(x, torch.randn(3, 64), torch.randn(64), 1e-6)
    with pytest.raises(ValueError, match="rotary_embedding"):  # fewer cos rows than tokens
        cpu_layer_ops.rotary_embedding(torch.randn(4, 3 * 16), 2, 16, torch.randn(3, 16), torch.randn(3, 16))
    with pytest.raises(ValueError, match="silu_and_mul"):
        cpu_layer_ops.silu_and_mul(torch.randn(4, 7))
    with pytest.raises(ValueError, match="rms_norm"):  # the kernel would read float32 as bf16
        cpu_layer_ops.rms_norm(x.bfloat16(), torch.randn(64), 1e-6)


def test_mixed_or_other_dtypes_and_the_torch_backend_take_the_twins(monkeypatch):
    x, weight = torch.randn(4, 64).bfloat16(), torch.randn(64).bfloat16()
    assert layer_ops._native(x, weight) and layer_ops._native(x.float(), weight.float())
    assert not layer_ops._native(x, weight.float())  # one dtype for all
    assert not layer_ops._native(x.half(), weight.half())
    monkeypatch.setenv(attention.BACKEND_ENV, "torch")
    assert not layer_ops._native(x, weight)
    assert not layer_ops._native(x.float(), weight.float())


def test_lm_head_slices_give_the_same_logits_as_one_gemm():
    from engine.model import llama

    config = type(
        "Config",
        (),
        dict(
            vocab_size=2 * llama.LM_HEAD_SLICE + 37,
            hidden_size=64,
            num_attention_heads=4,
            num_key_value_heads=2,
            intermediate_size=128,
            num_hidden_layers=1,
            rms_norm_eps=1e-6,
            tie_word_embeddings=True,
        ),
    )()
    model = llama.LlamaForCausalLM(config)
    hidden = torch.randn(13, 64)
    with torch.inference_mode():  # as the model runner calls it
        expected = torch.nn.functional.linear(hidden, model.embed_tokens.weight)
        assert torch.equal(model.compute_logits(hidden), expected)


def test_an_edited_shared_header_rebuilds_the_library(tmp_path, monkeypatch):
    sources = tmp_path / "csrc"
    shutil.copytree(cpu_build.SOURCES, sources)
    monkeypatch.setattr(cpu_build, "SOURCES", sources)
    monkeypatch.setenv(cpu_build.CACHE_ENV, str(tmp_path / "cache"))
    cpu_build.load("layer_ops_cpu.cpp", cpu_layer_ops.EXTRA_FLAGS)
    header = sources / "simd_common.h"
    header.write_text(header.read_text() + "\n// edited\n")
    cpu_build.load("layer_ops_cpu.cpp", cpu_layer_ops.EXTRA_FLAGS)
    assert len(list((tmp_path / "cache").glob("layer_ops_cpu-*.so"))) == 2


@pytest.mark.skipif(cpu_gemm.eight_lanes(), reason="this CPU has no AVX-512: the kernels run 8 lanes only")
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_16_and_8_lanes_give_the_same_bits(tmp_path, monkeypatch, dtype):
    """Built without AVX-512 (8 lanes only), every op returns what the 16-lane build does, bit for bit."""
    monkeypatch.setenv(cpu_build.CACHE_ENV, str(tmp_path / "cache"))
    narrow = cpu_layer_ops._NATIVE.build(("-mno-avx512f",))
    suffix = "f32" if dtype == torch.float32 else "bf16"
    rows, cols, heads, head_dim = 5, 3 * 27, 3, 54  # 27 = 16 + 8 + 3: every width and the scalar tail
    base = _rows(rows, 2 * cols, strided=False, seed=7).to(dtype)
    weight = torch.randn(cols).to(dtype)
    cos, sin = torch.randn(rows, head_dim).to(dtype), torch.randn(rows, head_dim).to(dtype)
    results = []
    for library in (cpu_layer_ops.library(), narrow):
        x, residual = base[:, :cols].clone(), base[:, cols:].clone()
        normed = torch.empty_like(x)
        getattr(library, f"servops_rms_norm_{suffix}")(
            x.data_ptr(), cols, normed.data_ptr(), cols, weight.data_ptr(), rows, cols, 1e-5, 1
        )
        getattr(library, f"servops_fused_add_rms_norm_{suffix}")(
            x.data_ptr(), cols, residual.data_ptr(), cols, weight.data_ptr(), rows, cols, 1e-5, 1
        )
        rotated = base[:, : heads * head_dim].clone()
        getattr(library, f"servops_rotary_embedding_{suffix}")(
            rotated.data_ptr(), heads * head_dim, heads, head_dim, cos.data_ptr(), sin.data_ptr(), head_dim, rows, 1
        )
        gated = torch.empty(rows, cols, dtype=dtype)
        getattr(library, f"servops_silu_and_mul_{suffix}")(
            base.data_ptr(), 2 * cols, gated.data_ptr(), cols, rows, cols, 1
        )
        results.append((normed, x, residual, rotated, gated))
    for wide, narrow_result in zip(*results, strict=True):
        assert torch.equal(
            wide.view(torch.int16 if dtype == torch.bfloat16 else torch.int32),
            narrow_result.view(torch.int16 if dtype == torch.bfloat16 else torch.int32),
        )


@pytest.mark.parametrize("rows, cols", [(1, 1), (3, 7), (64, 49152), (5, 1001)])
@pytest.mark.parametrize("strided", [False, True])
def test_argmax_gives_torchs_first_largest_index_on_every_row(rows, cols, strided, twins):
    logits = _rows(rows, cols, strided=strided, seed=rows * cols)
    assert torch.equal(cpu_layer_ops.argmax(logits), logits.argmax(dim=-1))
    assert torch.equal(layer_ops.argmax(logits), twins(layer_ops.argmax, logits))


def test_argmax_ties_infinities_and_nans_follow_torch():
    logits = torch.full((6, 37), -float("inf"))
    logits[1, [4, 20, 33]] = 2.5  # a tie: the first one
    logits[2, [0, 36]] = float("inf")
    logits[3, [10, 30]] = float("nan")  # a NaN counts as the largest: the first NaN
    logits[3, 5] = float("inf")
    logits[4] = torch.linspace(-1, 1, 37)
    logits[4, 36] = float("nan")  # a NaN in the scalar tail, past the 8-wide blocks
    logits[5, 3], logits[5, 9] = -0.0, 0.0  # signed zeros are equal: the first
    logits[5, 10:] = -1.0
    expected = logits.argmax(dim=-1)
    assert expected.tolist() == [0, 4, 0, 10, 36, 3]
    assert torch.equal(cpu_layer_ops.argmax(logits), expected)


def test_argmax_runs_natively_only_on_float32_rows(monkeypatch):
    called: list[torch.dtype] = []
    real = cpu_layer_ops.argmax
    monkeypatch.setattr(cpu_layer_ops, "argmax", lambda logits: called.append(logits.dtype) or real(logits))
    bf16 = torch.randn(4, 50).to(torch.bfloat16)
    assert torch.equal(layer_ops.argmax(bf16), bf16.argmax(dim=-1))
    assert torch.equal(layer_ops.argmax(torch.zeros(0, 50)), torch.zeros(0, dtype=torch.int64))
    floats = torch.randn(4, 50)
    assert torch.equal(layer_ops.argmax(floats), floats.argmax(dim=-1))
    assert called == [torch.float32, torch.float32]
