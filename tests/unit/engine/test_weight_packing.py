"""The engine packs its bf16 linear weights for oneDNN where the host has room, and the packed
weights change no token."""

import logging

import pytest
import torch

import engine.core.llm_engine as llm_engine
from engine.core.llm import LLM
from engine.core.sampling_params import SamplingParams
from engine.model.llama import Linear
from servops_kernels import cpu_prepack
from tests.helpers.tiny_model import build_tiny_model

needs_packing = pytest.mark.skipif(
    cpu_prepack.unpackable_reason() is not None, reason=f"no packing here: {cpu_prepack.unpackable_reason()}"
)
PROMPTS = [[5 + i, 17, 33 + i, 9] for i in range(8)]  # 8 rows a decode step: above the native kernel's 4


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return str(build_tiny_model(tmp_path_factory.mktemp("tiny-llama")))


def _generate(model_dir: str, prompts: list[list[int]] = PROMPTS) -> tuple[list[list[int]], LLM]:
    llm = LLM(model_dir, dtype="bfloat16", device_memory_gib=0.25, max_model_len=64)
    outputs = llm.generate(
        [{"prompt_token_ids": ids} for ids in prompts],
        SamplingParams(temperature=0, max_tokens=6, ignore_eos=True),
        use_tqdm=False,
    )
    return [list(out.outputs[0].token_ids) for out in outputs], llm


def _packed(llm: LLM) -> list[bool]:
    model = llm.llm_engine.runner.model
    return [m.packed is not None for m in model.modules() if isinstance(m, Linear)] + [model.head_packed is not None]


@needs_packing
def test_packed_weights_give_the_same_greedy_tokens_and_stay_outside_the_device_budget(model_dir, monkeypatch):
    monkeypatch.setattr(cpu_prepack, "has_bf16_arithmetic", lambda: True)  # pack on any CPU, for the test
    monkeypatch.setenv(cpu_prepack.PREPACK_ENV, "0")
    plain_tokens, plain = _generate(model_dir)
    monkeypatch.delenv(cpu_prepack.PREPACK_ENV)
    packed_tokens, packed = _generate(model_dir)
    assert not any(_packed(plain)) and all(_packed(packed))
    assert packed_tokens == plain_tokens
    # the copy is host memory beside the budget: the KV pool `servops advise --device cpu` predicts stays
    assert packed.llm_engine.num_total_blocks() == plain.llm_engine.num_total_blocks()


def test_without_bf16_arithmetic_the_copy_is_float32_and_takes_the_prompt(model_dir, monkeypatch):
    """An AVX2-only CPU: float32 copies (reordered for oneDNN), which the prefill's 160 rows (over
    WIDENED_ROWS_MAX) go through; greedy tokens as without them."""
    monkeypatch.setattr(cpu_prepack, "has_bf16_arithmetic", lambda: False)
    long_prompts = [[5 + i + j for j in range(20)] for i in range(8)]
    monkeypatch.setenv(cpu_prepack.PREPACK_ENV, "0")
    plain_tokens, plain = _generate(model_dir, long_prompts)
    monkeypatch.delenv(cpu_prepack.PREPACK_ENV)
    copy_tokens, copied = _generate(model_dir, long_prompts)
    model = copied.llm_engine.runner.model
    assert not any(_packed(plain)) and all(_packed(copied))
    assert {m.packed.dtype for m in model.modules() if isinstance(m, Linear)} == {torch.float32}
    # a reordered copy is a oneDNN GEMM built per row count, so the steps are padded to its buckets
    assert copied.llm_engine.runner.pad_to_buckets == cpu_prepack.reorders_float32()
    assert copy_tokens == plain_tokens


def test_a_host_short_of_memory_keeps_one_copy_and_says_so(model_dir, monkeypatch, caplog):
    monkeypatch.setattr(cpu_prepack, "has_bf16_arithmetic", lambda: True)
    monkeypatch.setattr(cpu_prepack, "unpackable_reason", lambda: None)  # wanted on any CPU: the memory decides
    monkeypatch.delenv(cpu_prepack.PREPACK_ENV, raising=False)
    monkeypatch.setattr(llm_engine, "host_available_bytes", lambda: 1024)
    with caplog.at_level(logging.INFO):
        _, llm = _generate(model_dir)
    assert not any(_packed(llm))
    assert "Linear weights not packed for " in caplog.text and "available memory" in caplog.text
