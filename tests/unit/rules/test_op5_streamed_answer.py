"""OP-5.67 and OP-5.68: a pasted stream of chunks, read as the answer a client got."""

from __future__ import annotations

import json

from advisor.collect.logs import parse_lines
from tests.unit.rules.factories import top_finding

# vllm#19650 (vLLM 0.9.0), verbatim: the chunks after the first lack finish_reason
NO_FINISH_REASON = (
    'data: {"id":"chatcmpl-c4eefdc442064e16be757120a2ec7703","object":"chat.completion.chunk","created":1749904375,'
    '"model":"meta-llama/llama-4-scout-17b-16e-instruct","choices":[{"index":0,"delta":{"role":"assistant",'
    '"content":""},"logprobs":null,"finish_reason":null}]}',
    "",
    'data: {"id":"chatcmpl-c4eefdc442064e16be757120a2ec7703","object":"chat.completion.chunk","created":1749904375,'
    '"model":"meta-llama/llama-4-scout-17b-16e-instruct","choices":[{"index":0,"delta":{"content":"안",'
    '"tool_calls":[]}}]}',
)


def _chunk(delta: str, finish: str = "null") -> str:
    """A chunk in vLLM's shape (vllm#40816's stream, its id and times kept): `delta` as JSON, `finish` as JSON."""
    return (
        'data: {"id":"chatcmpl-890423d350192a92","object":"chat.completion.chunk","created":1777044630,'
        f'"model":"qwen3.6-35b-nvfp4","choices":[{{"index":0,"delta":{delta},"finish_reason":{finish}}}]}}'
    )


# vllm#40816, verbatim chunks: Qwen3 with enable_thinking=false, the answer "12" routed into reasoning
REASONING_ONLY = (
    _chunk('{"role":"assistant","content":""}'),
    _chunk('{"reasoning":"1"}'),
    _chunk('{"reasoning":"2"}'),
    _chunk("{}", '"stop"'),
    "data: [DONE]",
)


def test_the_chunks_are_one_answer_and_the_summary_counts_them():
    read = parse_lines(list(NO_FINISH_REASON))
    [stream] = read.events
    assert (stream.chunks, stream.chunks_without_finish_reason, stream.answer_chars) == (2, 1, 1)
    assert "2 streamed chunk(s)" in read.describe()
    assert stream.line_no == 3  # the evidence quotes the first chunk without the key, not the first chunk


def test_chunks_without_finish_reason_are_vllm_090s_regression():
    top = top_finding(*NO_FINISH_REASON)
    assert top.rule == "OP-5.67" and top.title.startswith("1 of 2 streamed chunk(s) leave out finish_reason")
    assert "PR #19662" in top.actions[0]


def test_an_answer_streamed_entirely_as_reasoning_names_the_thinking_off_misrouting():
    top = top_finding(*REASONING_ONLY)
    assert top.rule == "OP-5.68" and top.severity.name == "HIGH"
    assert "enable_thinking=false" in top.actions[0] and "#40820" in top.actions[0]


def test_reasoning_cut_by_the_length_limit_raises_max_tokens():
    # constructed: the same stream ended by the output limit
    top = top_finding(*REASONING_ONLY[:3], _chunk('{"reasoning":"3"}', '"length"'))
    assert top.rule == "OP-5.68" and "ran out of max_tokens" in top.title
    assert top.actions[0].startswith("Raise the request's max_tokens")


def test_a_healthy_stream_is_no_finding():
    # constructed: content streamed, finish_reason in every chunk
    assert top_finding(_chunk('{"content":"12"}'), _chunk("{}", '"stop"')) is None


def test_reasoning_in_a_stream_that_has_not_ended_is_no_finding():
    # the 74th probe's vllm-ascend line, verbatim: one chunk of thinking, the stream still going
    line = (
        'data: {"id":"chatcmpl-740c22ad-c984-49a4-9a78-b7bbdc69b3d2","object":"chat.completion.chunk",'
        '"created":1773161262,"model":"local-qwen3.5-27b","choices":[{"index":0,"delta":{"reasoning":"Thinking"},'
        '"logprobs":null,"finish_reason":null,"token_ids":null}]}'
    )
    assert top_finding(line) is None


def test_a_stream_that_ends_in_a_tool_call_or_an_abort_is_no_reasoning_finding():
    # constructed in vLLM's shape: reasoning, then a tool call (its answer), or reasoning cut by an abort
    tool = '{"tool_calls":[{"id":"chatcmpl-tool-1","type":"function","index":0,"function":{"name":"get_weather"}}]}'
    assert top_finding(*REASONING_ONLY[:3], _chunk(tool), _chunk("{}", '"tool_calls"')) is None
    assert top_finding(*REASONING_ONLY[:3], _chunk("{}", '"abort"')) is None


def test_chunks_are_counted_once_whatever_their_choices():
    # constructed: n=2, two choices per chunk, none with finish_reason
    two = (
        'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":'
        '{"content":"a"}},{"index":1,"delta":{"content":"b"}}]}'
    )
    assert top_finding(two, two).title.startswith("2 of 2 streamed chunk(s)")


def test_a_paste_that_leaves_lines_out_between_chunks_is_a_weaker_reading():
    top = top_finding(REASONING_ONLY[0], REASONING_ONLY[1], "...", REASONING_ONLY[3])
    assert top.rule == "OP-5.68" and top.severity.name == "MEDIUM" and "leaves 1 line(s) out" in top.summary


def test_a_chunk_too_deeply_nested_to_decode_is_left_to_the_log_reader():
    # constructed: JSON nested past Python's recursion limit must not stop triage
    deep = 'data: {"object":"chat.completion.chunk","choices":[],"x":' + "[" * 5000 + "]" * 5000 + "}"
    assert parse_lines([deep]).events == []


def _body(content: str, reasoning: str, finish: str, tokens: int) -> list[str]:
    """A non-streamed chat completion in vLLM's shape, pretty-printed as `response.json()` shows it (constructed)."""
    body = {
        "id": "chatcmpl-890423d350192a92",
        "object": "chat.completion",
        "model": "qwen3-8b",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "reasoning": reasoning, "tool_calls": []},
                "finish_reason": finish,
            }
        ],
        "usage": {"prompt_tokens": 12, "completion_tokens": tokens, "total_tokens": 12 + tokens},
    }
    return json.dumps(body, indent=2).splitlines()


def test_a_response_body_all_reasoning_cut_by_max_tokens_says_so():
    top = top_finding(
        "$ curl http://localhost:8000/v1/chat/completions -d @req.json", *_body("", "Okay, the user", "length", 256)
    )
    assert top.rule == "OP-5.68" and top.title.startswith("the answer ran out of max_tokens (256 tokens)")
    assert top.actions[0].startswith("Raise the request's max_tokens")


def test_a_response_body_all_reasoning_that_stopped_is_the_parser_not_the_streaming_bug():
    top = top_finding(" ".join(line.strip() for line in _body(None, "The answer is 12.", "stop", 9)))  # on one line
    assert top.rule == "OP-5.68" and "never saw reasoning end" in top.title
    assert "--reasoning-parser" in top.actions[0] and "40820" not in top.actions[0]


def test_a_response_body_with_content_is_no_finding():
    assert top_finding(*_body("12", "The sum is 12.", "stop", 20)) is None
