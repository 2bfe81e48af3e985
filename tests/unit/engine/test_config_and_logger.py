"""Config validation messages and the vLLM log-line format."""

from __future__ import annotations

import re

import pytest
import torch

from engine.core.config import EngineConfig
from engine.core.errors import EngineStartupError, RequestValidationError
from engine.core.sampling_params import SamplingParams
from engine.observability.logger import format_gib, init_logger, set_process_name


@pytest.mark.parametrize(
    "field,value,needle",
    [
        ("gpu_memory_utilization", 1.5, "--gpu-memory-utilization must be in (0, 1]"),
        ("block_size", 12, "--block-size must be a power of two"),
        ("max_num_seqs", 0, "--max-num-seqs must be at least 1"),
        ("dtype", "int4", "--dtype 'int4' is not supported"),
        ("kv_cache_dtype", "fp8", "--kv-cache-dtype 'fp8' is not supported"),
    ],
)
def test_bad_flags_name_the_flag_and_the_fix(field, value, needle):
    with pytest.raises(EngineStartupError) as err:
        EngineConfig(**{field: value}).validate()
    assert needle in str(err.value) and err.value.user_facing


def test_max_model_len_beyond_the_model_is_refused():
    with pytest.raises(EngineStartupError, match=r"max_model_len \(4096\) is greater than the derived"):
        EngineConfig(max_model_len=4096).resolve_max_model_len(2048)


def test_chunked_prefill_off_needs_a_budget_of_at_least_max_model_len():
    with pytest.raises(EngineStartupError, match="max_num_batched_tokens \\(512\\) is smaller than max_model_len"):
        EngineConfig(enable_chunked_prefill=False, max_num_batched_tokens=512).resolve_max_model_len(1024)


def test_defaults_follow_vllm_api_server():
    config = EngineConfig()
    config.resolve_max_model_len(8192)
    assert (config.max_num_batched_tokens, config.block_size, config.gpu_memory_utilization) == (2048, 16, 0.92)
    assert config.enable_prefix_caching and config.enable_chunked_prefill


@pytest.mark.parametrize(
    "kwargs,needle",
    [
        (dict(temperature=-1.0), "temperature must be non-negative, got -1.0."),
        (dict(top_p=0.0), "top_p must be in (0, 1], got 0.0."),
        (dict(top_k=-3), "top_k must be 0 (disable), or at least 1, got -3."),
        (dict(max_tokens=0), "max_tokens must be at least 1, got 0."),
        (dict(min_tokens=5, max_tokens=2), "min_tokens must be less than or equal to max_tokens=2, got 5."),
    ],
)
def test_sampling_params_validation_uses_vllms_wording(kwargs, needle):
    with pytest.raises(RequestValidationError) as err:
        SamplingParams(**kwargs)
    assert str(err.value) == needle


def test_log_lines_have_vllms_prefix(capsys):
    logger = init_logger("engine.test_probe")
    set_process_name("EngineCore")
    logger.info("GPU KV cache size: %s tokens", f"{162704:,}")
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert re.fullmatch(
        r"\(EngineCore pid=\d+\) INFO \d\d-\d\d \d\d:\d\d:\d\d \[test_config_and_logger\.py:\d+\] "
        r"GPU KV cache size: 162,704 tokens",
        line,
    )
    set_process_name("APIServer")
    logger.info("x")
    assert capsys.readouterr().out.startswith("(APIServer pid=")
    set_process_name("EngineCore")


def test_gib_are_rounded_like_vllm():
    assert format_gib(24 * (1 << 30)) == 24.0 and format_gib(3.1847 * (1 << 30)) == 3.18


def test_auto_dtype_on_cpu_follows_the_cpus_bf16_arithmetic(monkeypatch):
    from engine.core import config as config_module

    config = EngineConfig(device="cpu")
    monkeypatch.setattr(config_module.cpu_gemm, "has_bf16_arithmetic", lambda: True)  # AVX512-BF16 or AMX
    assert config.torch_dtype(torch.bfloat16) == torch.bfloat16
    assert config.torch_dtype(torch.float32) == torch.bfloat16
    monkeypatch.setattr(config_module.cpu_gemm, "has_bf16_arithmetic", lambda: False)  # AVX2 only
    monkeypatch.setattr(config_module, "native_bf16_kernels", lambda: True)
    assert config.torch_dtype(torch.bfloat16) == torch.bfloat16  # the native kernels take every bf16 op
    assert config.torch_dtype(torch.float16) == torch.bfloat16
    assert config.torch_dtype(torch.float32) == torch.float32  # a float32 checkpoint stays float32
    assert config.torch_dtype(None) == torch.float32
    monkeypatch.setattr(config_module, "native_bf16_kernels", lambda: False)  # no compiler: PyTorch's slow bf16
    assert config.torch_dtype(torch.bfloat16) == torch.float32
    assert EngineConfig(device="cpu", dtype="bfloat16").torch_dtype(None) == torch.bfloat16
    assert EngineConfig(device="cpu", dtype="float16").torch_dtype(None) == torch.bfloat16
