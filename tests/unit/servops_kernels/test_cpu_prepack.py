"""Linear weights packed once for oneDNN (servops_kernels.cpu_prepack): the same products as `F.linear`, and
the rows the engine sends them."""

import pytest
import torch
import torch.nn.functional as F

from servops_kernels import cpu_gemm, cpu_prepack, layer_ops

needs_packing = pytest.mark.skipif(
    cpu_prepack.unpackable_reason() is not None, reason=f"no packing here: {cpu_prepack.unpackable_reason()}"
)


def _record_packed_rows(monkeypatch) -> list[int]:
    """The row counts `cpu_prepack.linear` is called with from here on (it still computes)."""
    taken: list[int] = []
    real = cpu_prepack.linear

    def recording(x, packed, bias=None):
        taken.append(x.shape[0])
        return real(x, packed, bias)

    monkeypatch.setattr(cpu_prepack, "linear", recording)
    return taken


@needs_packing
@pytest.mark.parametrize("rows", [1, 5, 16, 64, 130])
@pytest.mark.parametrize("with_bias", [False, True])
def test_a_packed_weight_gives_f_linears_products_bit_for_bit(rows, with_bias):
    generator = torch.Generator().manual_seed(rows)
    weight = torch.randn(96, 80, generator=generator).to(torch.bfloat16)
    bias = torch.randn(96, generator=generator).to(torch.bfloat16) if with_bias else None
    x = torch.randn(rows, 80, generator=generator).to(torch.bfloat16)
    packed = cpu_prepack.pack(weight)
    assert cpu_prepack.packed_bytes(weight) == 96 * 80 * 2
    assert torch.equal(cpu_prepack.linear(x, packed, bias), F.linear(x, weight, bias))


@needs_packing
def test_the_engine_sends_the_packed_weight_the_rows_the_native_kernel_does_not_take(monkeypatch):
    taken = _record_packed_rows(monkeypatch)
    weight = torch.randn(64, 64).to(torch.bfloat16)
    packed = cpu_prepack.pack(weight)
    few, many = cpu_gemm.MEMORY_BOUND_ROWS, cpu_gemm.MEMORY_BOUND_ROWS + 1
    for rows in (few, many):
        x = torch.randn(rows, 64).to(torch.bfloat16)
        out = layer_ops.linear(x, weight, None, packed)
        torch.testing.assert_close(out.float(), F.linear(x, weight).float(), rtol=2e-2, atol=2e-2)
    native_takes_few = layer_ops.native_linear(torch.zeros(few, 64, dtype=torch.bfloat16), weight)
    assert taken == ([many] if native_takes_few else [few, many])
    # float32 weights are never packed: F.linear, whatever `packed` says
    assert torch.equal(layer_ops.linear(torch.ones(8, 64), weight.float()), F.linear(torch.ones(8, 64), weight.float()))


def test_packing_is_wanted_for_bf16_on_a_cpu(monkeypatch):
    monkeypatch.delenv(cpu_prepack.PREPACK_ENV, raising=False)
    cpu = torch.device("cpu")
    assert cpu_prepack.wanted(cpu, torch.float32) == (False, "only bfloat16 weights on a CPU are packed")
    assert cpu_prepack.wanted(torch.device("cuda"), torch.bfloat16)[0] is False
    monkeypatch.setattr(cpu_prepack, "has_bf16_arithmetic", lambda: False)
    want, why = cpu_prepack.wanted(cpu, torch.bfloat16)
    assert want and "float32 GEMMs above" in why and "no bf16 arithmetic" in why
    monkeypatch.setattr(cpu_prepack, "has_bf16_arithmetic", lambda: True)
    monkeypatch.setattr(cpu_prepack, "unpackable_reason", lambda: None)
    assert cpu_prepack.wanted(cpu, torch.bfloat16) == (True, "oneDNN's bf16 GEMM on weights reordered once")
    monkeypatch.setenv(cpu_prepack.PREPACK_ENV, "0")
    assert cpu_prepack.wanted(cpu, torch.bfloat16) == (False, f"{cpu_prepack.PREPACK_ENV}=0")


@pytest.mark.skipif(not cpu_prepack._ops_available(), reason=f"torch {torch.__version__} has no oneDNN packing ops")
def test_packing_is_possible_exactly_where_the_cpu_flags_say():
    """The flag table matches what oneDNN does on this CPU: a reorder succeeds where it says so and
    raises where it says not (an AVX2-only CPU), so no caller meets that RuntimeError unwarned."""
    flags = cpu_gemm.cpu_flags()
    meets = any(needed <= flags for needed in cpu_prepack.REORDER_FLAG_SETS)
    weight = torch.randn(32, 32).to(torch.bfloat16)
    if meets:
        assert cpu_prepack.unpackable_reason() is None
        assert torch.equal(
            cpu_prepack.linear(torch.ones(2, 32, dtype=torch.bfloat16), cpu_prepack.pack(weight)),
            F.linear(torch.ones(2, 32, dtype=torch.bfloat16), weight),
        )
    else:
        assert "AVX-512" in cpu_prepack.unpackable_reason()
        assert not cpu_prepack.reorders()  # the copy made here is a float32 one
        with pytest.raises(RuntimeError):
            torch.ops.mkldnn._reorder_linear_weight(weight, cpu_prepack.PACK_ROWS_HINT)


def test_row_counts_above_the_exact_ones_fall_into_few_buckets():
    exact = list(range(1, cpu_prepack.EXACT_ROWS + 1))
    assert [cpu_prepack.bucket_rows(r) for r in exact] == exact  # decode batches recur: built once each
    assert cpu_prepack.bucket_rows(cpu_prepack.EXACT_ROWS + 1) == cpu_prepack.EXACT_ROWS + cpu_prepack.BUCKET_ROWS
    assert cpu_prepack.bucket_rows(cpu_prepack.LONG_ROWS) == cpu_prepack.LONG_ROWS
    assert cpu_prepack.bucket_rows(cpu_prepack.LONG_ROWS + 1) == cpu_prepack.LONG_ROWS + cpu_prepack.BUCKET_ROWS_LONG
    counts = {cpu_prepack.bucket_rows(r) for r in range(1, 2049)}
    assert len(counts) == 64 + 12 + (2048 - 256) // 32  # 132 GEMMs per weight shape, under oneDNN's 1,024
    assert all(cpu_prepack.bucket_rows(r) >= r for r in range(1, 2049))


@needs_packing
@pytest.mark.parametrize("rows", [65, 100, 257, 300])
def test_padded_rows_give_the_same_products_and_shape(rows):
    generator = torch.Generator().manual_seed(rows)
    weight = torch.randn(96, 80, generator=generator).to(torch.bfloat16)
    bias = torch.randn(96, generator=generator).to(torch.bfloat16)
    x = torch.randn(rows, 80, generator=generator).to(torch.bfloat16)
    out = cpu_prepack.linear(x, cpu_prepack.pack(weight), bias)
    assert out.shape == (rows, 96) and out.is_contiguous()
    assert torch.equal(out, F.linear(x, weight, bias))


@pytest.mark.parametrize("with_bias", [False, True])
def test_without_bf16_arithmetic_the_copy_is_float32_and_rounds_once(monkeypatch, with_bias):
    monkeypatch.setattr(cpu_prepack, "has_bf16_arithmetic", lambda: False)
    generator = torch.Generator().manual_seed(3)
    weight = torch.randn(96, 80, generator=generator).to(torch.bfloat16)
    bias = torch.randn(96, generator=generator).to(torch.bfloat16) if with_bias else None
    packed = cpu_prepack.pack(weight)
    assert packed.dtype == torch.float32 and packed.is_mkldnn == cpu_prepack.reorders_float32()
    if not packed.is_mkldnn:
        assert torch.equal(packed, weight.float())
    assert cpu_prepack.packed_bytes(weight) == 96 * 80 * 4
    for rows in (9, 64, 65, 200, 300):  # exact counts, and padded to a bucket on oneDNN's layout
        x = torch.randn(rows, 80, generator=generator).to(torch.bfloat16)
        expected = F.linear(x.float(), weight.float(), None if bias is None else bias.float()).to(torch.bfloat16)
        out = cpu_prepack.linear(x, packed, bias)
        assert out.shape == (rows, 96) and out.dtype == torch.bfloat16 and out.is_contiguous()
        # float32 sums in oneDNN's order, then one rounding: at most one bf16 step from F.linear's
        gap = (out.float() - expected.float()).abs()
        assert bool((gap <= expected.float().abs() * 2**-7 + 1e-30).all())
        assert float((gap == 0).float().mean()) > 0.95


def test_the_float32_reorder_is_used_wherever_onednn_takes_it():
    """On an x86 build oneDNN reorders float32 weights whatever the CPU's bf16 support: the AVX2-only
    engine's prompt-sized GEMMs depend on it (servops_kernels/cpu_prepack.py)."""
    if not cpu_prepack._ops_available():
        pytest.skip(f"torch {torch.__version__} has no oneDNN packing ops")
    assert cpu_prepack.reorders_float32()
    weight = torch.randn(24, 32)
    packed = torch.ops.mkldnn._reorder_linear_weight(weight, cpu_prepack.PACK_ROWS_HINT)
    x = torch.randn(3, 32)
    got = torch.ops.mkldnn._linear_pointwise(x, packed, None, "none", [], "")
    torch.testing.assert_close(got, F.linear(x, weight), rtol=1e-5, atol=1e-5)


def test_without_bf16_arithmetic_the_copy_takes_only_prompt_sized_rows(monkeypatch):
    """The widening kernel up to WIDENED_ROWS_MAX rows (a pass over the weights), the float32 copy above
    (a prompt chunk, where the CPU's float32 GEMM is faster); with no copy the native kernel takes all."""
    monkeypatch.setattr(cpu_gemm, "has_bf16_arithmetic", lambda: False)
    monkeypatch.setattr(cpu_prepack, "has_bf16_arithmetic", lambda: False)
    monkeypatch.setattr(cpu_gemm, "cpu_flags", lambda: frozenset({"avx2", "fma"}))
    taken = _record_packed_rows(monkeypatch)
    weight = torch.randn(64, 64).to(torch.bfloat16)
    packed = cpu_prepack.pack(weight)
    most, more = cpu_gemm.WIDENED_ROWS_MAX, cpu_gemm.WIDENED_ROWS_MAX + 1
    native_here = layer_ops.native_linear(torch.zeros(most, 64, dtype=torch.bfloat16), weight, None, packed)
    for rows in (1, most, more):
        x = torch.randn(rows, 64).to(torch.bfloat16)
        out = layer_ops.linear(x, weight, None, packed)
        torch.testing.assert_close(out.float(), F.linear(x, weight).float(), rtol=2e-2, atol=2e-2)
    assert taken == ([more] if native_here else [1, most, more])
    assert not layer_ops.native_linear(torch.zeros(more, 64, dtype=torch.bfloat16), weight, None, packed)
    assert layer_ops.native_linear(torch.zeros(more, 64, dtype=torch.bfloat16), weight) == native_here
