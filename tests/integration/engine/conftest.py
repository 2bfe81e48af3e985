"""Fixtures for engine tests: tiny random HF models built once per session, HF references.

Engines run with one intra-op thread: the CI box has two cores shared with other test
processes, and OpenMP spinning across oversubscribed cores makes small GEMMs ~10× slower.
"""

from __future__ import annotations

import functools

import pytest
import torch

from engine.core.config import EngineConfig
from engine.core.llm_engine import LLMEngine
from tests.helpers.tiny_model import build_tiny_model

TINY_VARIANTS = {
    "llama": dict(arch="llama"),
    "qwen2": dict(arch="qwen2"),
    "mistral": dict(arch="mistral", num_kv_heads=1),
    "llama3_rope_tied": dict(
        arch="llama",
        tie_word_embeddings=True,
        max_position_embeddings=1024,
        rope_scaling={
            "rope_type": "llama3",
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 128,
        },
    ),
    "yarn": dict(
        arch="qwen2", rope_scaling={"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 128}
    ),
}


@pytest.fixture(autouse=True)
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory):
    """tiny_model_dir(variant) → path of a tiny random model, built once per session."""
    root = tmp_path_factory.mktemp("tiny_models")

    @functools.cache
    def build(variant: str = "llama") -> str:
        return str(build_tiny_model(root / variant, **TINY_VARIANTS[variant]))

    return build


def make_engine(model_dir: str, **overrides) -> LLMEngine:
    """A float32 engine on a small, explicit memory budget (so tests do not depend on defaults)."""
    args = dict(model=model_dir, dtype="float32", device_memory_gib=0.25, max_model_len=256, seed=0)
    args.update(overrides)
    return LLMEngine(EngineConfig(**args))


def run_to_completion(engine: LLMEngine, max_steps: int = 5000) -> dict:
    """Step until idle; returns request_id → final RequestOutput."""
    finished = {}
    for _ in range(max_steps):
        if not engine.has_unfinished_requests():
            break
        for output in engine.step():
            if output.finished:
                finished[output.request_id] = output
    else:
        raise AssertionError(f"engine still busy after {max_steps} steps")
    return finished


@functools.cache
def _hf_model(model_dir: str):
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()


def hf_greedy(model_dir: str, prompt: list[int], max_new_tokens: int) -> list[int]:
    """Hugging Face `generate()` greedy continuation (stops at the model's EOS, like the engine)."""
    from transformers import GenerationConfig

    model = _hf_model(model_dir)
    config = GenerationConfig(
        max_new_tokens=max_new_tokens,
        do_sample=False,
        eos_token_id=model.generation_config.eos_token_id,
        pad_token_id=model.generation_config.pad_token_id,
    )
    ids = torch.tensor([prompt])
    with torch.inference_mode():  # explicit mask: HF would otherwise mask prompt tokens equal to pad
        out = model.generate(ids, attention_mask=torch.ones_like(ids), generation_config=config)
    return out[0, len(prompt) :].tolist()
