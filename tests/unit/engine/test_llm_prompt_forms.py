"""`LLM.generate` takes every prompt form vLLM's `LLM.generate` takes for a text-only model.

Strings, token-id lists, TextPrompt / TokensPrompt dicts, singly or in (mixed) batches; bad
prompts are refused before anything is queued, naming the prompt index and what to pass.
"""

from __future__ import annotations

import io

import pytest
import torch
from tqdm import tqdm

from engine.core.errors import RequestValidationError
from engine.core.llm import LLM
from engine.core.sampling_params import SamplingParams
from tests.helpers.tiny_model import build_tiny_model

GREEDY = SamplingParams(temperature=0, max_tokens=4)


@pytest.fixture(scope="module")
def llm(tmp_path_factory) -> LLM:
    return LLM(
        str(build_tiny_model(tmp_path_factory.mktemp("tiny-llama"))),
        dtype="float32",
        device_memory_gib=0.25,
        max_model_len=64,
    )


@pytest.fixture(autouse=True)
def _one_thread():
    """One intra-op thread: the test box has two shared cores and the model is tiny."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def ids_of(llm: LLM, text: str) -> list[int]:
    return llm.get_tokenizer()(text)["input_ids"]


def generate(llm: LLM, prompts, params=GREEDY):
    return llm.generate(prompts, params, use_tqdm=False)


# ---- accepted forms ----------------------------------------------------------------------------------


def test_generate_accepts_a_single_string(llm):
    (out,) = generate(llm, "Hello")
    assert out.prompt == "Hello" and out.prompt_token_ids == ids_of(llm, "Hello")


def test_generate_accepts_a_list_of_strings_in_order(llm):
    outs = generate(llm, ["Hello", "x"])
    assert [o.prompt for o in outs] == ["Hello", "x"]


def test_generate_accepts_a_single_list_of_token_ids(llm):
    (out,) = generate(llm, [5, 6, 7])
    assert out.prompt_token_ids == [5, 6, 7] and len(out.output_token_ids) > 0


def test_generate_accepts_a_list_of_token_id_lists(llm):
    outs = generate(llm, [[5, 6, 7], [8]])
    assert [o.prompt_token_ids for o in outs] == [[5, 6, 7], [8]]


def test_generate_accepts_text_prompt_dict(llm):
    (out,) = generate(llm, {"prompt": "Hello"})
    assert out.prompt == "Hello" and out.prompt_token_ids == ids_of(llm, "Hello")


def test_generate_accepts_tokens_prompt_dict(llm):
    (out,) = generate(llm, {"prompt_token_ids": [5, 6, 7]})
    assert out.prompt_token_ids == [5, 6, 7]


def test_generate_accepts_a_batch_mixing_dicts_strings_and_token_ids(llm):
    outs = generate(llm, [{"prompt": "a"}, "b", {"prompt_token_ids": [5, 6]}, [7, 8]])
    assert [o.prompt for o in outs] == ["a", "b", None, None]
    assert [o.prompt_token_ids for o in outs] == [ids_of(llm, "a"), ids_of(llm, "b"), [5, 6], [7, 8]]


def test_an_empty_batch_gives_no_outputs(llm):
    assert generate(llm, []) == []


# ---- same prompt, same result; what RequestOutput echoes -------------------------------------------


def test_dict_and_string_prompts_give_identical_greedy_output(llm):
    text = "The capital of France is"
    outs = generate(llm, [text, {"prompt": text}, {"prompt_token_ids": ids_of(llm, text)}, ids_of(llm, text)])
    assert len({tuple(o.output_token_ids) for o in outs}) == 1
    assert len({o.text for o in outs}) == 1


def test_token_prompts_echo_no_text_as_vllm(llm):
    outs = generate(llm, [[5, 6], {"prompt_token_ids": [5, 6]}])
    assert [o.prompt for o in outs] == [None, None]


def test_tokens_prompt_with_its_text_uses_the_ids_and_echoes_the_text(llm):
    (out,) = generate(llm, {"prompt_token_ids": [5, 6], "prompt": "the text"})
    assert out.prompt_token_ids == [5, 6] and out.prompt == "the text"


# ---- sampling_params and use_tqdm ----------------------------------------------------------------------


def test_no_sampling_params_uses_the_defaults(llm):
    (out,) = llm.generate({"prompt_token_ids": [5]}, use_tqdm=False)
    assert len(out.output_token_ids) <= SamplingParams().max_tokens


def test_a_list_of_sampling_params_applies_one_per_prompt(llm):
    params = [SamplingParams(max_tokens=2, ignore_eos=True), SamplingParams(max_tokens=5, ignore_eos=True)]
    outs = generate(llm, [{"prompt": "a"}, [5, 6]], params)
    assert [len(o.output_token_ids) for o in outs] == [2, 5]


def test_a_sampling_params_count_other_than_the_prompt_count_is_rejected(llm):
    with pytest.raises(ValueError, match="got 2 SamplingParams for 3 prompts"):
        generate(llm, ["a", "b", "c"], [GREEDY, GREEDY])


def test_use_tqdm_is_keyword_only_as_vllm(llm):
    with pytest.raises(TypeError):
        llm.generate("a", GREEDY, False)


def test_use_tqdm_accepts_a_progress_bar_factory(llm):
    bars = []

    def factory(**kwargs) -> tqdm:
        bars.append(tqdm(file=io.StringIO(), **kwargs))
        return bars[-1]

    llm.generate(["a", "b"], GREEDY, use_tqdm=factory)
    assert [bar.total for bar in bars] == [2] and bars[0].n == 2


# ---- refused at the boundary ---------------------------------------------------------------------------


def test_dict_prompt_with_neither_key_is_rejected_naming_the_index(llm):
    with pytest.raises(ValueError, match=r"prompt 1: the dict has neither 'prompt' nor 'prompt_token_ids'"):
        generate(llm, ["ok", {}])


def test_dict_prompt_with_unknown_key_is_rejected_naming_it(llm):
    bad = {"prompt": "describe", "multi_modal_data": {"image": None}}
    with pytest.raises(ValueError, match=r"prompt 0: key\(s\) 'multi_modal_data' cannot be honoured.*pass only"):
        generate(llm, [bad])


def test_dict_prompt_with_non_str_text_is_rejected(llm):
    with pytest.raises(TypeError, match=r"prompt 0: 'prompt' is a list; .*'prompt_token_ids'"):
        generate(llm, {"prompt": [5, 6]})


def test_empty_list_of_token_ids_is_rejected(llm):
    with pytest.raises(ValueError, match=r"prompt 1: the list of token ids is empty"):
        generate(llm, [[5], []])


def test_tokens_prompt_with_empty_ids_is_rejected(llm):
    with pytest.raises(ValueError, match=r"prompt 0: the list of token ids is empty"):
        generate(llm, {"prompt_token_ids": []})


def test_non_int_token_is_rejected_naming_its_position(llm):
    with pytest.raises(TypeError, match=r"prompt 0: token 1 is 'x' \(str\); pass int token ids"):
        generate(llm, [5, "x"])


def test_bool_token_is_rejected(llm):
    with pytest.raises(TypeError, match=r"prompt 0: token 0 is True \(bool\)"):
        generate(llm, {"prompt_token_ids": [True]})


@pytest.mark.parametrize("prompt", [5, (5, 6), None, b"bytes"])
def test_a_prompt_of_another_type_is_rejected_listing_the_accepted_forms(llm, prompt):
    with pytest.raises(TypeError, match=r"prompt 1 is a \w+; pass a str, a list of int token ids"):
        generate(llm, ["ok", prompt])


def test_bytes_as_prompts_are_rejected(llm):
    with pytest.raises(TypeError, match="prompts is a bytes"):
        generate(llm, b"Hello")


def test_a_bad_prompt_queues_nothing(llm):
    with pytest.raises(ValueError):
        generate(llm, ["fine", {"text": "wrong key"}])
    assert not llm.llm_engine.has_unfinished_requests()


def test_an_engine_refusal_unqueues_the_prompts_before_it(llm):
    too_long = [5] * 64  # max_model_len is 64
    with pytest.raises(RequestValidationError, match="maximum context length"):
        generate(llm, [[5, 6], too_long])
    (out,) = generate(llm, [[5, 6]])
    assert out.finish_reason in ("stop", "length")
    assert not llm.llm_engine.requests
    assert llm.llm_engine.num_free_blocks() == llm.llm_engine.num_total_blocks()
