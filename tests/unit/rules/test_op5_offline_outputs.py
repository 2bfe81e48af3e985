"""OP-5.69 and OP-5.70: printed SamplingParams and outputs, read together as the answer an offline user got."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.events import LogEventKind
from tests.unit.rules.factories import top_finding

# vllm#21987 (vLLM 0.9.0.1), verbatim: the SamplingParams printed and the adapter's answer, 2 tokens for min_tokens 200
MIN_TOKENS_PARAMS = (
    "sampling_params = SamplingParams(n=1, presence_penalty=0.0, frequency_penalty=0.0, repetition_penalty=1.0, "
    "temperature=0.0, top_p=1.0, top_k=0, min_p=0.0, seed=None, stop=['\\n'], stop_token_ids=[], bad_words=[], "
    "include_stop_str_in_output=True, ignore_eos=False, max_tokens=200, min_tokens=200, logprobs=None, "
    "prompt_logprobs=None, skip_special_tokens=True, spaces_between_special_tokens=True, truncate_prompt_tokens=None, "
    "guided_decoding=None, extra_args=None)"
)
MIN_TOKENS_OUTPUT = (
    '"generated_text": "test\\n"',
    '"generated_token_count": 2,',
    '"input_token_count": 3,',
    ' "stop_reason": "stop"',
)

# vllm#39827 (google/gemma-4-26B-A4B, a base model), verbatim: the RequestOutput printed
GEMMA4_OUTPUT = (
    "Gemma4 ouput: `[RequestOutput(request_id=0, prompt='Paris is', prompt_token_ids=[50429, 563], "
    "encoder_prompt=None, encoder_prompt_token_ids=None, prompt_logprobs=None, outputs=[CompletionOutput(index=0, "
    "text=' is is is is is is is is is is', token_ids=[563, 563, 563, 563, 563, 563, 563, 563, 563, 563], "
    "routed_experts=None, cumulative_logprob=None, logprobs=None, finish_reason=length, stop_reason=None)], "
    "finished=True, metrics=None, lora_request=None, num_cached_tokens=0)]`"
)


def _output(text: str, ids: list[int], prompt_ids: list[int], finish: str = "length") -> str:
    """A RequestOutput in vLLM's repr (vllm#39827's shape), constructed."""
    return (
        f"RequestOutput(request_id=0, prompt='x', prompt_token_ids={prompt_ids}, outputs=[CompletionOutput(index=0, "
        f"text={text!r}, token_ids={ids}, cumulative_logprob=None, logprobs=None, finish_reason={finish}, "
        "stop_reason=None)], finished=True)"
    )


def test_the_reader_takes_the_settings_and_the_output_off_printed_objects():
    read = parse_lines([MIN_TOKENS_PARAMS, *MIN_TOKENS_OUTPUT])
    [params] = [e for e in read.events if e.kind == LogEventKind.OFFLINE_SAMPLING_PARAMS]
    [output] = [e for e in read.events if e.kind == LogEventKind.OFFLINE_OUTPUT]
    assert (params.min_tokens, params.requested_tokens, params.stop_strings) == (200, 200, ["\n"])
    assert (output.generated_tokens, output.finish_reason, output.message) == (2, "stop", "test\n")
    assert "2 printed vLLM object(s)" in read.describe()


def test_the_reader_takes_a_request_outputs_ids():
    [output] = [e for e in parse_lines([GEMMA4_OUTPUT]).events if e.kind == LogEventKind.OFFLINE_OUTPUT]
    assert output.prompt_token_ids == [50429, 563] and output.token_ids == [563] * 10
    assert (output.generated_tokens, output.finish_reason) == (10, "length")


def test_a_stop_string_before_min_tokens_is_v1s_detokenizer_before_0_10_1():
    top = top_finding(MIN_TOKENS_PARAMS, *MIN_TOKENS_OUTPUT)
    assert top.rule == "OP-5.69" and "after 2 token(s) although min_tokens is 200" in top.title
    assert "vllm>=0.10.1" in top.actions[0]


def test_an_output_that_reached_min_tokens_or_ran_to_its_length_is_no_min_tokens_finding():
    # constructed: the same settings, 200 tokens out; then 2 tokens ended by the length limit, not a stop
    assert top_finding(MIN_TOKENS_PARAMS, '"generated_token_count": 200,', '"stop_reason": "stop"') is None
    assert top_finding(MIN_TOKENS_PARAMS, '"generated_token_count": 2,', '"stop_reason": "length"') is None


def test_a_repeated_token_after_a_prompt_without_gemmas_bos_is_the_missing_bos():
    top = top_finding(GEMMA4_OUTPUT)
    assert top.rule == "OP-5.70" and top.severity.name == "HIGH"
    assert "no BOS token at position 0 (it starts with id 50429, not Gemma's 2)" in top.title
    assert "vllm>=0.19.1" in top.actions[0]


def test_a_repeated_token_with_the_bos_present_is_the_general_reading():
    # constructed: Gemma's prompt starting with <bos> (2), the output still one token repeated
    top = top_finding("gemma-3 output:", _output(" a a a a a a a a", [235250] * 8, [2, 50429, 563]))
    assert top.rule == "OP-5.70" and top.severity.name == "MEDIUM" and "generation degenerated" in top.title


def test_a_varied_or_short_output_is_no_finding():
    # constructed: a normal answer; a short run of one token
    assert top_finding(_output(" Paris is the capital", [1, 2, 3, 4, 5, 6, 7, 8, 9], [2, 50429])) is None
    assert top_finding(_output(" is is is", [563, 563, 563], [50429, 563])) is None
