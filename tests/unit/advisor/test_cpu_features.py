"""The advisor's copy of the engine's CPU dtype rule stays the engine's rule."""

from __future__ import annotations

import pytest

from advisor import cpu_features, memory
from advisor.modelspec import resolve_model
from kernels import cpu_gemm


def test_the_advisor_and_the_kernels_read_the_same_bf16_flags():
    assert cpu_features.BF16_ARITHMETIC_FLAGS == cpu_gemm.NATIVE_BF16_FLAGS
    assert cpu_features.has_bf16_arithmetic() == cpu_gemm.has_bf16_arithmetic()


@pytest.mark.parametrize(("bf16", "expected"), [(True, 2.0), (False, 4.0)])
def test_auto_dtype_on_the_bundled_engines_cpu_follows_the_cpu_not_the_checkpoint(monkeypatch, bf16, expected):
    monkeypatch.setattr(memory, "has_bf16_arithmetic", lambda: bf16)
    model = resolve_model("Qwen3-8B")  # a bfloat16 checkpoint
    assert memory.model_dtype_bytes(model, "auto", cpu=True) == expected
    assert memory.model_dtype_bytes(model, "auto", cpu=False) == 2.0  # vLLM on a GPU: the checkpoint's
    assert memory.model_dtype_bytes(model, "float32", cpu=True) == 4.0
