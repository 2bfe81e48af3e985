"""POST /v1/completions, non-streaming and SSE, as vLLM 0.33 answers it.

Stream shape (vLLM's `completion_stream_generator`): one `text_completion` chunk per engine
step that produced text, each choice carrying `text`, `logprobs: null`, `finish_reason` and
`stop_reason` (null until the last); with `stream_options.include_usage` a final chunk with
`"choices": []` and `usage`; `continuous_usage_stats` adds usage to every chunk; then
`data: [DONE]`.
"""

from __future__ import annotations

from aiohttp import web

from engine.api import errors as api_errors
from engine.api.protocol import (
    CompletionRequest,
    CompletionResponse,
    CompletionResponseChoice,
    CompletionResponseStreamChoice,
    CompletionStreamResponse,
    UsageInfo,
    random_id,
)
from engine.api.serving import OpenAIServing, PreparedRequest, final_output
from engine.api.sse import send_stream
from engine.api.stream_chunks import StreamChunks, usage_wanted
from engine.core.async_engine import RequestStream


async def create_completion(serving: OpenAIServing, http_request: web.Request) -> web.StreamResponse:
    request: CompletionRequest = await serving.parse(http_request, CompletionRequest)
    serving.check_model(request.model)
    if request.echo:
        raise api_errors.bad_request("echo is not supported by this engine; drop it.", param="echo")
    if request.logprobs:
        raise api_errors.bad_request("logprobs are not supported by this engine; drop the field.", param="logprobs")
    prompt_text, prompt_ids = await _prompt(serving, request)
    serving.check_admission()
    prepared = serving.prepare(random_id("cmpl"), prompt_ids, request.sampling_kwargs(), request.max_tokens)
    serving.log_received(prepared, prompt_text)
    model = serving.options.served_model_name
    async with serving.run(prepared, http_request) as stream:
        if request.stream:
            include_usage, continuous = usage_wanted(request.stream_options, serving.options.force_include_usage)
            return await _stream(http_request, stream, prepared, model, include_usage, continuous)
        return await _full(stream, prepared, model)


async def _prompt(serving: OpenAIServing, request: CompletionRequest) -> tuple[str | None, list[int]]:
    prompt = request.prompt
    if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], (str, list)):
        prompt = prompt[0]  # a batch of one
    if isinstance(prompt, str):
        return prompt, await serving.encode(prompt, request.add_special_tokens)
    if isinstance(prompt, list) and all(isinstance(token, int) for token in prompt):
        return None, list(prompt)
    raise api_errors.bad_request(
        "Batched prompts are not supported by this engine; send one prompt per request.", param="prompt"
    )


async def _full(stream: RequestStream, prepared: PreparedRequest, model: str) -> web.Response:
    final = await final_output(stream)
    completion_tokens = len(final.output_token_ids)
    response = CompletionResponse(
        id=prepared.request_id,
        model=model,
        choices=[
            CompletionResponseChoice(
                index=0, text=final.text, finish_reason=final.finish_reason, stop_reason=final.stop_reason
            )
        ],
        usage=UsageInfo.of(len(prepared.prompt_token_ids), completion_tokens),
    )
    return web.Response(text=response.model_dump_json(), content_type="application/json")


async def _stream(
    http_request: web.Request,
    stream: RequestStream,
    prepared: PreparedRequest,
    model: str,
    include_usage: bool,
    continuous: bool,
) -> web.StreamResponse:
    chunks = StreamChunks(CompletionStreamResponse, prepared, model, continuous)

    async def events():
        async for output in stream:
            chunks.completion_tokens = len(output.output_token_ids)
            if not output.new_text and not output.finished:
                continue
            choice = CompletionResponseStreamChoice(
                index=0,
                text=output.new_text or "",
                logprobs=None,
                finish_reason=output.finish_reason if output.finished else None,
                stop_reason=output.stop_reason if output.finished else None,
            )
            yield chunks.event([choice])
        if include_usage:
            yield chunks.usage_event()

    return await send_stream(http_request, events())
