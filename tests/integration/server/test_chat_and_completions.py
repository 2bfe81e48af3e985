"""Chat and completions through the official openai client and raw SSE, as vLLM answers them."""

from __future__ import annotations

import asyncio
import json

import openai
import pytest

from tests.integration.server.sse import open_stream

pytestmark = pytest.mark.integration

MESSAGES = [{"role": "user", "content": "Name three colours."}]
GREEDY_FIXED = {"temperature": 0.0, "ignore_eos": True}  # vLLM extensions go in extra_body


def _client(server) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.openai_base_url, api_key="EMPTY", max_retries=0, timeout=120)


def _chat_prompt_tokens(tokenizer, messages) -> int:
    text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return len(tokenizer.encode(text, add_special_tokens=False))


def test_models_lists_the_served_model_with_its_max_model_len(server):
    models = _client(server).models.list()
    (card,) = models.data
    assert card.id == server.model and card.owned_by == "vllm"
    assert card.model_extra["max_model_len"] == 256


def test_chat_non_streaming_usage_matches_token_counts(server, tokenizer):
    result = _client(server).chat.completions.create(
        model=server.model, messages=MESSAGES, max_tokens=7, extra_body=GREEDY_FIXED
    )
    choice = result.choices[0]
    assert result.object == "chat.completion" and result.id.startswith("chatcmpl-")
    assert choice.message.role == "assistant" and choice.finish_reason == "length"
    assert result.usage.completion_tokens == 7
    assert result.usage.prompt_tokens == _chat_prompt_tokens(tokenizer, MESSAGES)
    assert result.usage.total_tokens == result.usage.prompt_tokens + 7


def test_completion_non_streaming_counts_prompt_tokens_with_the_tokenizer(server, tokenizer):
    prompt = "The quick brown fox"
    result = _client(server).completions.create(
        model=server.model, prompt=prompt, max_tokens=5, extra_body=GREEDY_FIXED
    )
    assert result.object == "text_completion" and result.id.startswith("cmpl-")
    assert result.usage.prompt_tokens == len(tokenizer(prompt).input_ids)
    assert result.usage.completion_tokens == 5 and result.choices[0].finish_reason == "length"


def test_chat_stream_is_role_chunk_then_content_then_finish_then_usage_then_done(server):
    stream = open_stream(
        server.port,
        "/v1/chat/completions",
        {
            "model": server.model,
            "messages": MESSAGES,
            "max_tokens": 6,
            "stream": True,
            "stream_options": {"include_usage": True},
            **GREEDY_FIXED,
        },
    )
    assert stream.response.status == 200
    assert stream.response.getheader("Content-Type").startswith("text/event-stream")
    chunks = stream.chunks()
    assert stream.events[-1] == "[DONE]"
    first, *content, last_choice_chunk, usage_chunk = chunks
    assert first["object"] == "chat.completion.chunk"
    assert first["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert first["choices"][0]["finish_reason"] is None and "usage" not in first
    assert all("role" not in chunk["choices"][0]["delta"] for chunk in content + [last_choice_chunk])
    assert last_choice_chunk["choices"][0]["finish_reason"] == "length"
    assert usage_chunk["choices"] == [] and usage_chunk["usage"]["completion_tokens"] == 6
    assert len({chunk["id"] for chunk in chunks}) == 1


def test_streamed_text_equals_the_non_streamed_text_under_greedy_sampling(server):
    client = _client(server)
    full = (
        client.chat.completions.create(model=server.model, messages=MESSAGES, max_tokens=12, extra_body=GREEDY_FIXED)
        .choices[0]
        .message.content
    )
    pieces = [
        chunk.choices[0].delta.content or ""
        for chunk in client.chat.completions.create(
            model=server.model, messages=MESSAGES, max_tokens=12, stream=True, extra_body=GREEDY_FIXED
        )
        if chunk.choices
    ]
    assert "".join(pieces) == full


def test_completion_stream_without_usage_option_sends_no_usage_chunk(server):
    stream = open_stream(
        server.port,
        "/v1/completions",
        {"model": server.model, "prompt": "abc", "max_tokens": 4, "stream": True, **GREEDY_FIXED},
    )
    chunks = stream.chunks()
    assert stream.events[-1] == "[DONE]"
    assert all(chunk["object"] == "text_completion" and "usage" not in chunk for chunk in chunks)
    assert chunks[-1]["choices"][0]["finish_reason"] == "length"
    assert all(
        set(chunk["choices"][0]) == {"index", "text", "logprobs", "finish_reason", "stop_reason"} for chunk in chunks
    )


def test_continuous_usage_stats_put_running_usage_on_every_chunk(server):
    stream = open_stream(
        server.port,
        "/v1/completions",
        {
            "model": server.model,
            "prompt": "abc",
            "max_tokens": 5,
            "stream": True,
            "stream_options": {"include_usage": True, "continuous_usage_stats": True},
            **GREEDY_FIXED,
        },
    )
    chunks = stream.chunks()
    completion_counts = [chunk["usage"]["completion_tokens"] for chunk in chunks]
    assert completion_counts == sorted(completion_counts) and completion_counts[-1] == 5
    assert all(chunk["usage"]["prompt_tokens"] == 3 for chunk in chunks)


def test_several_concurrent_streams_each_get_their_own_complete_answer(server):
    async def one(client: openai.AsyncOpenAI, max_tokens: int) -> tuple[int, int, str]:
        stream = await client.completions.create(
            model=server.model,
            prompt=f"stream {max_tokens}",
            max_tokens=max_tokens,
            stream=True,
            stream_options={"include_usage": True},
            extra_body=GREEDY_FIXED,
        )
        usage, finish = None, None
        async for chunk in stream:
            if chunk.usage:
                usage = chunk.usage
            if chunk.choices and chunk.choices[0].finish_reason:
                finish = chunk.choices[0].finish_reason
        return max_tokens, usage.completion_tokens, finish

    async def many() -> list[tuple[int, int, str]]:
        async with openai.AsyncOpenAI(
            base_url=server.openai_base_url, api_key="EMPTY", max_retries=0, timeout=120
        ) as client:
            return await asyncio.gather(*(one(client, n) for n in (8, 13, 21, 34)))

    for asked, got, finish in asyncio.run(many()):
        assert got == asked and finish == "length"


def test_prompt_longer_than_max_model_len_is_400_with_vllm_text(server):
    with pytest.raises(openai.BadRequestError) as caught:
        _client(server).completions.create(model=server.model, prompt="x" * 300, max_tokens=4)
    error = caught.value.body
    assert caught.value.status_code == 400
    assert error["message"] == (
        "This model's maximum context length is 256 tokens. However, your prompt contains "
        "at least 257 input tokens, which exceeds this limit even without any output tokens. "
        "Please reduce the length of the input prompt. (parameter=input_tokens, value=257)"
    )
    assert error["type"] == "BadRequestError" and error["param"] == "input_tokens" and error["code"] == 400


def test_error_body_is_vllm_nested_json(server):
    status, body = server.post_json("/v1/completions", {"model": server.model, "prompt": "hi", "max_tokens": 999})
    assert status == 400
    assert set(body) == {"error"} and set(body["error"]) == {"message", "type", "param", "code"}
    assert body["error"]["message"] == (
        "max_tokens=999 cannot be greater than max_model_len=256. "
        "Please request fewer output tokens. (parameter=max_tokens, value=999)"
    )


def test_max_tokens_beyond_the_remaining_context_is_clamped_not_rejected(server):
    result = _client(server).completions.create(
        model=server.model, prompt="y" * 250, max_tokens=100, extra_body=GREEDY_FIXED
    )
    assert result.usage.prompt_tokens == 250
    assert result.usage.completion_tokens == 6 and result.choices[0].finish_reason == "length"


def test_unknown_model_is_404_not_found(server):
    with pytest.raises(openai.NotFoundError) as caught:
        _client(server).completions.create(model="no-such-model", prompt="hi", max_tokens=2)
    assert caught.value.body["message"] == "The model `no-such-model` does not exist."


def test_malformed_body_is_400_naming_the_field(server):
    status, body = server.post_json("/v1/chat/completions", {"model": server.model, "messages": "not a list"})
    assert status == 400 and body["error"]["param"].startswith("messages")


def test_health_version_and_load_answer_like_vllm(server):
    status, body, _ = server.get("/health")
    assert (status, body) == (200, b"")
    status, body, _ = server.get("/version")
    assert status == 200 and json.loads(body)["version"].startswith("0.33.0+servops")
    status, body, _ = server.get("/load")
    assert status == 200 and json.loads(body) == {"server_load": 0}


def test_stop_token_id_ends_generation_with_stop_and_the_token_as_stop_reason(server, tokenizer):
    every_token = list(range(len(tokenizer)))  # whatever comes first is a stop token
    result = _client(server).completions.create(
        model=server.model,
        prompt="stop at once",
        max_tokens=10,
        extra_body={**GREEDY_FIXED, "stop_token_ids": every_token},
    )
    choice = result.choices[0]
    assert choice.finish_reason == "stop" and result.usage.completion_tokens == 1
    assert isinstance(choice.model_extra["stop_reason"], int) and choice.model_extra["stop_reason"] in every_token


def test_chat_content_parts_are_joined_and_non_text_parts_rejected(server):
    client = _client(server)
    parts = [{"type": "text", "text": "Name three"}, {"type": "text", "text": "colours."}]
    result = client.chat.completions.create(
        model=server.model, max_tokens=3, extra_body=GREEDY_FIXED, messages=[{"role": "user", "content": parts}]
    )
    assert result.usage.completion_tokens == 3
    image = [{"type": "image_url", "image_url": {"url": "http://127.0.0.1/x.png"}}]
    with pytest.raises(openai.BadRequestError, match="image_url"):
        client.chat.completions.create(model=server.model, max_tokens=3, messages=[{"role": "user", "content": image}])


def test_n_above_one_is_400_naming_n(server):
    with pytest.raises(openai.BadRequestError, match="n must be 1"):
        _client(server).completions.create(model=server.model, prompt="two please", max_tokens=2, n=2)
