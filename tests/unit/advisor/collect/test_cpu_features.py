"""The advisor's copy of the engine's CPU dtype rule stays the engine's rule."""

from __future__ import annotations

import pytest
import torch

from advisor.catalog.models import resolve_model
from advisor.collect import cpu_features
from advisor.memory import budget as memory
from engine.core import config as engine_config
from servops_kernels import cpu_gemm


def test_the_advisor_and_the_kernels_read_the_same_bf16_flags():
    assert cpu_features.BF16_ARITHMETIC_FLAGS == cpu_gemm.NATIVE_BF16_FLAGS
    assert cpu_features.has_bf16_arithmetic() == cpu_gemm.has_bf16_arithmetic()


@pytest.mark.parametrize("bf16", [True, False])
@pytest.mark.parametrize("checkpoint", ["bfloat16", "float32"])
def test_auto_dtype_on_the_bundled_engines_cpu_is_the_engines_rule(monkeypatch, bf16, checkpoint):
    monkeypatch.setattr(memory, "has_bf16_arithmetic", lambda: bf16)
    monkeypatch.setattr(engine_config.cpu_gemm, "has_bf16_arithmetic", lambda: bf16)
    monkeypatch.setattr(engine_config, "native_bf16_kernels", lambda: True)
    model = resolve_model("Qwen3-8B").model_copy(update={"torch_dtype": checkpoint})
    engine_dtype = engine_config.EngineConfig(device="cpu").torch_dtype(getattr(torch, checkpoint))
    # bf16 with bf16 arithmetic whatever the checkpoint; without it, the checkpoint's (the native kernels take bf16)
    assert (
        memory.model_dtype_bytes(model, "auto", cpu=True)
        == engine_dtype.itemsize
        == (2 if bf16 or checkpoint == "bfloat16" else 4)
    )
    assert memory.model_dtype_bytes(model, "float32", cpu=True) == 4.0


def test_vllm_on_a_gpu_runs_the_checkpoints_half_dtype():
    model = resolve_model("Qwen3-8B")  # a bfloat16 checkpoint
    assert memory.model_dtype_bytes(model, "auto", cpu=False) == 2.0
