"""POST /v1/chat/completions, non-streaming and SSE, as vLLM 0.33 answers it.

The prompt is the tokenizer's own chat template (`apply_chat_template`, generation prompt
added), tokenized without extra special tokens, as vLLM does. Stream shape (vLLM's
`chat_completion_stream_generator`): a first chunk `delta: {"role": "assistant",
"content": ""}`, then content chunks (empty deltas are skipped), the last with
`finish_reason` and `stop_reason`; optional usage chunk with `"choices": []`; `data: [DONE]`.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from engine.api import errors as api_errors
from engine.api.protocol import (
    ChatCompletionRequest,
    ChatCompletionResponse,
    ChatCompletionResponseChoice,
    ChatCompletionResponseStreamChoice,
    ChatCompletionStreamResponse,
    ChatMessageOut,
    DeltaMessage,
    UsageInfo,
    random_id,
)
from engine.api.serving import OpenAIServing, PreparedRequest, final_output
from engine.api.sse import send_stream
from engine.api.stream_chunks import StreamChunks, usage_wanted
from engine.core.async_engine import RequestStream

NO_TEMPLATE_MESSAGE = (
    "As of transformers v4.44, default chat template is no longer allowed, so you must "
    "provide a chat template if the tokenizer does not define one."
)


async def create_chat_completion(serving: OpenAIServing, http_request: web.Request) -> web.StreamResponse:
    request: ChatCompletionRequest = await serving.parse(http_request, ChatCompletionRequest)
    serving.check_model(request.model)
    if request.logprobs or request.top_logprobs:
        raise api_errors.bad_request("logprobs are not supported by this engine; drop the field.", param="logprobs")
    prompt_text = await serving.off_loop(render_chat_prompt, serving.tokenizer, request)
    prompt_ids = await serving.encode(prompt_text, request.add_special_tokens)
    serving.check_admission()
    prepared = serving.prepare(
        random_id("chatcmpl"), prompt_ids, request.sampling_kwargs(), request.requested_max_tokens()
    )
    serving.log_received(prepared, prompt_text)
    model = serving.options.served_model_name
    async with serving.run(prepared, http_request) as stream:
        if request.stream:
            include_usage, continuous = usage_wanted(request.stream_options, serving.options.force_include_usage)
            return await _stream(http_request, stream, prepared, model, include_usage, continuous)
        return await _full(stream, prepared, model)


def render_chat_prompt(tokenizer: Any, request: ChatCompletionRequest) -> str:
    """The chat template applied to the messages, as text (400 if there is no template)."""
    if not getattr(tokenizer, "chat_template", None):
        raise api_errors.bad_request(NO_TEMPLATE_MESSAGE)
    messages = [_plain_message(message.model_dump(exclude_none=True)) for message in request.messages]
    try:
        return tokenizer.apply_chat_template(
            messages,
            tokenize=False,
            add_generation_prompt=request.add_generation_prompt and not request.continue_final_message,
            continue_final_message=request.continue_final_message,
            **(request.chat_template_kwargs or {}),
        )
    except Exception as exc:  # noqa: BLE001 - template errors are the request's fault (vLLM: 400)
        raise api_errors.bad_request(f"Error applying the chat template: {exc}") from None


def _plain_message(message: dict[str, Any]) -> dict[str, Any]:
    """OpenAI content parts ([{"type": "text", "text": …}]) joined into one string."""
    content = message.get("content")
    if isinstance(content, list):
        texts = []
        for part in content:
            if part.get("type") != "text":
                raise api_errors.bad_request(
                    f"Content part type {part.get('type')!r} is not supported; send text parts only.", param="messages"
                )
            texts.append(str(part.get("text", "")))
        message["content"] = "\n".join(texts)
    return message


async def _full(stream: RequestStream, prepared: PreparedRequest, model: str) -> web.Response:
    final = await final_output(stream)
    response = ChatCompletionResponse(
        id=prepared.request_id,
        model=model,
        choices=[
            ChatCompletionResponseChoice(
                index=0,
                message=ChatMessageOut(content=final.text),
                finish_reason=final.finish_reason,
                stop_reason=final.stop_reason,
            )
        ],
        usage=UsageInfo.of(len(prepared.prompt_token_ids), len(final.output_token_ids)),
    )
    return web.Response(text=response.model_dump_json(), content_type="application/json")


def _delta_choice(
    delta: DeltaMessage, finish_reason: str | None = None, stop_reason: Any = None, final: bool = False
) -> ChatCompletionResponseStreamChoice:
    if final:
        return ChatCompletionResponseStreamChoice(
            index=0, delta=delta, logprobs=None, finish_reason=finish_reason, stop_reason=stop_reason
        )
    return ChatCompletionResponseStreamChoice(index=0, delta=delta, logprobs=None, finish_reason=None)


async def _stream(
    http_request: web.Request,
    stream: RequestStream,
    prepared: PreparedRequest,
    model: str,
    include_usage: bool,
    continuous: bool,
) -> web.StreamResponse:
    chunks = StreamChunks(ChatCompletionStreamResponse, prepared, model, continuous)

    async def events():
        yield chunks.event([_delta_choice(DeltaMessage(role="assistant", content=""))])
        async for output in stream:
            chunks.completion_tokens = len(output.output_token_ids)
            if output.finished:
                text = DeltaMessage(content=output.new_text or "")
                yield chunks.event([_delta_choice(text, output.finish_reason, output.stop_reason, final=True)])
            elif output.new_text:
                yield chunks.event([_delta_choice(DeltaMessage(content=output.new_text))])
        if include_usage:
            yield chunks.usage_event()

    return await send_stream(http_request, events())
