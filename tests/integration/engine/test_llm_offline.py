"""Offline `LLM(...).generate(...)`: strings in, text and tokens and timing out, in prompt order."""

from __future__ import annotations

import pytest

from engine.core.llm import LLM
from engine.core.sampling_params import SamplingParams

from .conftest import hf_greedy


@pytest.fixture(scope="module")
def llm(tiny_model_dir):
    return LLM(tiny_model_dir("qwen2"), dtype="float32", device_memory_gib=0.25, max_model_len=256)


def test_generate_returns_text_tokens_and_timing_in_prompt_order(llm, tiny_model_dir):
    prompts = ["Hello, my name is", "The capital of France is", "x"]
    outputs = llm.generate(prompts, SamplingParams(temperature=0, max_tokens=10), use_tqdm=False)
    assert [o.prompt for o in outputs] == prompts
    tokenizer = llm.get_tokenizer()
    for prompt, out in zip(prompts, outputs, strict=False):
        assert out.prompt_token_ids == tokenizer(prompt)["input_ids"]
        assert out.output_token_ids == hf_greedy(tiny_model_dir("qwen2"), out.prompt_token_ids, 10)
        assert out.outputs[0].text == out.text
        assert out.metrics.ttft_s > 0 and out.metrics.e2e_s >= out.metrics.ttft_s
    assert llm.llm_engine.num_free_blocks() == llm.llm_engine.num_total_blocks()


def test_generate_accepts_token_ids_and_per_prompt_params(llm):
    outputs = llm.generate(
        [[1, 2, 3], [4, 5]],
        [SamplingParams(max_tokens=2, ignore_eos=True), SamplingParams(max_tokens=5, ignore_eos=True)],
        use_tqdm=False,
    )
    assert [len(o.output_token_ids) for o in outputs] == [2, 5]


def test_chat_applies_the_chat_template(llm):
    out = llm.chat([{"role": "user", "content": "hi"}], SamplingParams(temperature=0, max_tokens=3))
    expected = llm.get_tokenizer().apply_chat_template(
        [{"role": "user", "content": "hi"}], add_generation_prompt=True, tokenize=False
    )
    assert llm.get_tokenizer().decode(out.prompt_token_ids) == expected


def test_unknown_engine_argument_is_named():
    with pytest.raises(TypeError, match="unknown engine argument\\(s\\): max_num_sequences"):
        LLM("unused", max_num_sequences=4)
