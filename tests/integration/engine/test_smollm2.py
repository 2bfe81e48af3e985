"""The embedded default model: converted from the GGUF once, and greedy-identical to HF."""

from __future__ import annotations

import json

import pytest

from engine.core.llm import LLM
from engine.core.sampling_params import SamplingParams
from engine.model.default_model import default_model_dir, ensure_default_model

from .conftest import hf_greedy

# Converting the GGUF takes 1–2 minutes on first use, and the 135M model is slow on 2 cores.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def smol():
    ensure_default_model()
    return LLM("", dtype="float32", max_model_len=512, max_num_batched_tokens=512, max_num_seqs=8)


def test_default_model_answers_a_chat_question(smol):
    out = smol.chat(
        [{"role": "user", "content": "What is the capital of France?"}], SamplingParams(temperature=0, max_tokens=20)
    )
    assert "Paris" in out.text and out.finish_reason == "stop"


def test_default_model_matches_hf_generate_greedy(smol):
    tokenizer = smol.get_tokenizer()
    prompts = ["The quick brown fox", "def fibonacci(n):", "Once upon a time"]
    outputs = smol.generate(prompts, SamplingParams(temperature=0, max_tokens=12), use_tqdm=False)
    model_dir = str(default_model_dir())
    for prompt, out in zip(prompts, outputs, strict=False):
        assert out.prompt_token_ids == tokenizer(prompt)["input_ids"]
        assert out.output_token_ids == hf_greedy(model_dir, out.prompt_token_ids, 12)


@pytest.mark.slow
def test_smollm2_conversion_writes_a_plain_hf_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("SERVOPS_CACHE_DIR", str(tmp_path))
    model_dir = ensure_default_model()
    config = json.loads((model_dir / "config.json").read_text())
    assert config["num_hidden_layers"] == 30 and config["num_key_value_heads"] == 3 and config["tie_word_embeddings"]
    assert (model_dir / "tokenizer.json").is_file() and "im_start" in (model_dir / "chat_template.jinja").read_text()
    assert ensure_default_model() == model_dir  # second call: no reconversion
