"""The native bfloat16 linear layer computes F.linear to within its one bf16 rounding, on every
shape its tiling splits (row and column remainders, K tails, panels, strided rows), and runs
only where it applies."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from servops_kernels import attention, cpu_gemm, layer_ops

pytestmark = pytest.mark.skipif(
    not cpu_gemm.available(), reason=f"native bf16 GEMM not built here: {cpu_gemm.unavailable_reason()}"
)


def _bf16(*shape: int, seed: int, scale: float = 1.0) -> torch.Tensor:
    return (torch.randn(*shape, generator=torch.Generator().manual_seed(seed)) * scale).bfloat16()


def _assert_rounded_product(actual: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None):
    """actual is the exact product rounded once to bf16 (half an ulp), give or take float32
    sums taken in another order (a few float32 ulps of the sum of |terms|)."""
    exact = F.linear(x.double(), weight.double(), None if bias is None else bias.double())
    magnitude = F.linear(x.double().abs(), weight.double().abs(), None if bias is None else bias.double().abs())
    tolerance = 2.0**-8 * exact.abs() + 1e-6 * magnitude + 1e-30
    assert actual.dtype == torch.bfloat16 and actual.shape == exact.shape
    assert bool(((actual.double() - exact).abs() <= tolerance).all())


@pytest.mark.parametrize("rows", [1, 2, 3, 4, 5, 8, 9, 13, 130, 300])
@pytest.mark.parametrize("cols, k", [(1, 16), (2, 32), (3, 17), (33, 48), (130, 576), (257, 40)])
def test_linear_is_the_product_rounded_once(rows, cols, k, threads):
    x, weight = _bf16(rows, k, seed=rows), _bf16(cols, k, seed=cols, scale=0.1)
    _assert_rounded_product(cpu_gemm.linear(x, weight), x, weight, None)


@pytest.mark.parametrize("rows, cols, k", [(1, 960, 576), (7, 576, 1536), (150, 64, 24)])
def test_bias_and_strided_rows(rows, cols, k, threads):
    wide = _bf16(rows, k + 40, seed=3)
    x = wide[:, 8 : 8 + k]  # rows of a wider tensor, as a view into a fused projection
    weight, bias = _bf16(cols, k, seed=4, scale=0.05), _bf16(cols, seed=5)
    _assert_rounded_product(cpu_gemm.linear(x, weight, bias), x, weight, bias)


def test_agrees_with_pytorchs_bf16_gemm_almost_everywhere():
    x, weight, bias = _bf16(64, 576, seed=6), _bf16(960, 576, seed=7, scale=0.05), _bf16(960, seed=8)
    ours, theirs = cpu_gemm.linear(x, weight, bias), F.linear(x, weight, bias)
    ulp = 2.0**-7 * theirs.float().abs().clamp_min(1e-3)
    assert bool(((ours.float() - theirs.float()).abs() <= ulp * 1.01).all())  # at most one bf16 ulp apart
    assert (ours == theirs).float().mean() > 0.95


def test_empty_inputs_give_empty_outputs():
    assert cpu_gemm.linear(_bf16(0, 32, seed=1), _bf16(5, 32, seed=2)).shape == (0, 5)


def test_mismatched_shapes_are_refused_before_the_kernel_runs():
    with pytest.raises(ValueError, match="do not match"):
        cpu_gemm.linear(_bf16(4, 32, seed=1), _bf16(5, 31, seed=2))
    with pytest.raises(ValueError, match="bias"):
        cpu_gemm.linear(_bf16(4, 32, seed=1), _bf16(5, 32, seed=2), _bf16(4, seed=3))


def test_supports_only_bf16_cpu_rows_and_contiguous_weights():
    x, weight = _bf16(4, 32, seed=1), _bf16(6, 32, seed=2)
    assert cpu_gemm.supports(x, weight, _bf16(6, seed=3))
    assert not cpu_gemm.supports(x.float(), weight.float())
    assert not cpu_gemm.supports(x, _bf16(32, 6, seed=2).t())  # a transposed view
    assert not cpu_gemm.supports(x.t(), _bf16(6, 4, seed=2))  # columns not contiguous
    assert not cpu_gemm.supports(x, weight, torch.zeros(6))  # float32 bias


def test_layer_ops_linear_dispatches_by_dtype_backend_and_cpu(monkeypatch):
    x, weight = _bf16(5, 64, seed=1), _bf16(7, 64, seed=2)
    monkeypatch.setattr(cpu_gemm, "needed", lambda: True)
    assert layer_ops.native_linear(x, weight)
    assert not layer_ops.native_linear(x.float(), weight.float())
    assert torch.equal(layer_ops.linear(x, weight), cpu_gemm.linear(x, weight))
    monkeypatch.setattr(cpu_gemm, "needed", lambda: False)  # a CPU with AVX512-BF16 or AMX
    assert not layer_ops.native_linear(x, weight)
    assert torch.equal(layer_ops.linear(x, weight), F.linear(x, weight))
    assert layer_ops.native_linear(x[:1], weight)  # one row: reading the weights in place wins there too
    monkeypatch.setattr(cpu_gemm, "needed", lambda: True)
    monkeypatch.setenv(attention.BACKEND_ENV, "torch")
    assert not layer_ops.native_linear(x, weight)


def test_needed_reads_the_cpu_flags(monkeypatch, tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    real_path = cpu_gemm.Path

    def fake_path(name):
        return cpuinfo if name == "/proc/cpuinfo" else real_path(name)

    monkeypatch.setattr(cpu_gemm, "Path", fake_path)
    for flags, expected in (
        ("fpu avx2 fma f16c", True),
        ("fpu avx2 avx512f avx512_bf16", False),
        ("fpu avx2 amx_bf16 amx_tile", False),
    ):
        cpuinfo.write_text(f"processor\t: 0\nflags\t\t: {flags}\n")
        cpu_gemm.cpu_flags.cache_clear()
        assert cpu_gemm.needed() is expected
        assert cpu_gemm.has_bf16_arithmetic() is not expected
        # without bf16 arithmetic every row count runs natively; with it only the memory-bound ones
        assert cpu_gemm.preferred(1) and cpu_gemm.preferred(cpu_gemm.MEMORY_BOUND_ROWS)
        assert cpu_gemm.preferred(cpu_gemm.MEMORY_BOUND_ROWS + 1) is expected
    cpu_gemm.cpu_flags.cache_clear()


def test_bf16_model_layers_and_lm_head_match_f_linear(monkeypatch):
    from engine.model import llama

    monkeypatch.setattr(cpu_gemm, "needed", lambda: True)
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
    model = llama.LlamaForCausalLM(config).to(torch.bfloat16)
    hidden = _bf16(13, 64, seed=9)
    with torch.inference_mode():
        _assert_rounded_product(model.compute_logits(hidden).bfloat16(), hidden, model.embed_tokens.weight, None)
        gate_up = model.layers[0].mlp.gate_up_proj
        _assert_rounded_product(gate_up(hidden), hidden, gate_up.weight, gate_up.bias)


def test_concurrent_callers_each_get_their_own_result():
    from concurrent.futures import ThreadPoolExecutor

    weight = _bf16(130, 576, seed=11, scale=0.05)
    inputs = [_bf16(rows, 576, seed=rows) for rows in (3, 64, 200, 17)]
    expected = [cpu_gemm.linear(x, weight) for x in inputs]
    with ThreadPoolExecutor(4) as pool:
        for _ in range(3):
            results = list(pool.map(lambda x: cpu_gemm.linear(x, weight), inputs))
            assert all(torch.equal(a, b) for a, b in zip(results, expected, strict=False))


def test_a_gemm_that_cannot_build_warns_once_and_falls_back_to_f_linear(monkeypatch, caplog):
    x, weight = _bf16(5, 64, seed=1), _bf16(7, 64, seed=2)
    monkeypatch.setattr(cpu_gemm, "needed", lambda: True)
    # the library as a failed build leaves it (cached_property: the instance attribute wins)
    monkeypatch.setattr(cpu_gemm._NATIVE, "_loaded", (None, "no C++ compiler 'c++' on PATH (set CXX)"))
    monkeypatch.setattr(cpu_gemm._NATIVE, "_warned", False)
    with caplog.at_level("WARNING", logger="servops_kernels.cpu_build"):
        results = [layer_ops.linear(x, weight) for _ in range(2)]
    assert all(torch.equal(r, F.linear(x, weight)) for r in results)
    warnings = [r.getMessage() for r in caplog.records if "bfloat16 GEMM" in r.getMessage()]
    assert len(warnings) == 1 and "set CXX" in warnings[0]
