"""What both generation endpoints share: checks, tokenization, limits, admission, request logs.

Why one place: the model-name check, vLLM 0.32+'s length rules (a prompt that leaves no room
for output is a 400; an oversized max_tokens is clamped to what remains), the `--max-num-queued-reqs` 503,
and the request log lines must behave identically for /v1/completions and
/v1/chat/completions, as they do in vLLM.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
from aiohttp import web
from pydantic import ValidationError

from engine.api import errors as api_errors
from engine.core.async_engine import AsyncEngine, EngineDeadError, RequestStream
from engine.core.errors import RequestValidationError
from engine.core.sampling_params import SamplingParams, check_logit_bias_vocab
from engine.observability.logger import init_logger
from engine.observability.metrics import EngineMetrics

logger = init_logger(__name__)

DISCONNECT_POLL_S = 0.25  # how often a waiting handler checks whether its client is gone


@dataclass(slots=True)
class ServingOptions:
    served_model_name: str
    model_path: str
    max_model_len: int
    log_requests: bool = True
    max_num_queued_reqs: int | None = None
    force_include_usage: bool = False
    vocab_size: int | None = None  # for vLLM's logit_bias range check


@dataclass(slots=True)
class PreparedRequest:
    request_id: str
    prompt_token_ids: list[int]
    params: SamplingParams
    max_tokens: int


class OpenAIServing:
    """Turns validated requests into engine requests; one instance per server."""

    def __init__(
        self, async_engine: AsyncEngine, tokenizer: Any, options: ServingOptions, metrics: EngineMetrics | None = None
    ) -> None:
        self.async_engine = async_engine
        self.tokenizer = tokenizer
        self.options = options
        self.metrics = metrics
        self.in_flight = 0  # generation requests being served (what /load reports)
        self._tokenizer_thread = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="tokenizer")

    # --- parsing and checks --------------------------------------------------------------

    @staticmethod
    async def parse(request: web.Request, model_class: type) -> Any:
        """The JSON body as `model_class`, or a 400 in vLLM's shape.

        A client that hangs up before its body arrived raises ClientDisconnected (nobody is
        left to answer, so nothing is logged). A body nested too deeply for the parser is
        FastAPI's 400 `{"detail": "There was an error parsing the body"}`, as vLLM answers.
        """
        try:
            raw = await request.read()
        except (ConnectionError, aiohttp.ClientPayloadError, asyncio.CancelledError) as exc:
            if isinstance(exc, asyncio.CancelledError) and not _transport_closed(request):
                raise
            raise api_errors.ClientDisconnected() from None
        try:
            body = json.loads(raw)
        except RecursionError:
            raise api_errors.BodyParseError() from None
        except ValueError as exc:  # UnicodeDecodeError included
            raise api_errors.bad_request(f"Invalid JSON in request body: {exc}") from None
        try:
            return model_class.model_validate(body)
        except RecursionError:
            raise api_errors.BodyParseError() from None
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first.get("loc", ())) or "body"
            raise api_errors.bad_request(f"{where}: {first.get('msg', 'invalid value')}", param=where) from None

    def check_model(self, requested: str | None) -> None:
        if requested and requested not in (self.options.served_model_name,):
            raise api_errors.model_not_found(requested)

    def check_admission(self) -> None:
        """vLLM 0.32+ `--max-num-queued-reqs`: 503 once that many requests are already waiting."""
        if not self.async_engine.is_alive:
            raise api_errors.engine_dead()
        limit = self.options.max_num_queued_reqs
        if limit is not None and self.async_engine.num_waiting >= limit:
            if self.metrics:
                self.metrics.record_admission_rejection("max_num_queued_reqs")
            raise api_errors.engine_busy()

    def prepare(
        self,
        request_id: str,
        prompt_token_ids: list[int],
        sampling_kwargs: dict[str, Any],
        requested_max_tokens: int | None,
    ) -> PreparedRequest:
        """Apply vLLM 0.32+'s length rules and build SamplingParams."""
        max_model_len = self.options.max_model_len
        prompt_len = len(prompt_token_ids)
        if prompt_len == 0:
            raise api_errors.bad_request("The prompt is empty; send at least one token.", param="prompt")
        if prompt_len >= max_model_len:
            raise api_errors.prompt_too_long(max_model_len, prompt_len)
        if requested_max_tokens is not None and requested_max_tokens > max_model_len:
            raise api_errors.max_tokens_too_large(requested_max_tokens, max_model_len)
        room = max_model_len - prompt_len
        max_tokens = room if requested_max_tokens is None else min(requested_max_tokens, room)
        try:
            params = SamplingParams(**sampling_kwargs, max_tokens=max_tokens)
            if self.options.vocab_size is not None:
                check_logit_bias_vocab(params, self.options.vocab_size)
        except RequestValidationError as exc:
            raise api_errors.validation_error(str(exc), exc.parameter, exc.value) from None
        except TypeError as exc:
            raise api_errors.bad_request(f"Unsupported sampling parameter: {exc}") from None
        return PreparedRequest(request_id, prompt_token_ids, params, max_tokens)

    async def encode(self, text: str, add_special_tokens: bool) -> list[int]:
        """Token ids of `text`, computed off the event loop (a 10 MB prompt must not stall /health)."""
        return await self.off_loop(self._encode, text, add_special_tokens)

    async def off_loop(self, function: Callable[..., Any], *args: Any) -> Any:
        """Run `function` in the one tokenizer thread: off the event loop, and never two at once
        (a Hugging Face fast tokenizer is not safe to share between threads; vLLM uses one too)."""
        return await asyncio.get_running_loop().run_in_executor(self._tokenizer_thread, function, *args)

    def _encode(self, text: str, add_special_tokens: bool) -> list[int]:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate ("\\ud800" in the JSON): vLLM's tokenizer error
            raise api_errors.unencodable_text() from None
        return list(self.tokenizer.encode(text, add_special_tokens=add_special_tokens))

    def log_received(self, prepared: PreparedRequest, prompt: str | None) -> None:
        if self.options.log_requests:
            logger.info(
                "Received request %s: prompt: %r, params: %s, prompt_token_ids: %s, "
                "prompt_embeds shape: None, lora_request: None.",
                prepared.request_id,
                prompt,
                prepared.params,
                prepared.prompt_token_ids,
            )

    # --- running -------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def run(self, prepared: PreparedRequest, http_request: web.Request) -> AsyncIterator[RequestStream]:
        """The engine's output stream for one request, aborted if the client disconnects.

        The add happens before this yields, so a validation error becomes a plain 400 before
        any stream starts. Leaving the block early (an error, a disconnect, a cancelled
        handler) aborts the request, so its KV blocks return at once.
        """
        try:
            stream = await self.async_engine.add_request(
                prepared.request_id, prepared.prompt_token_ids, prepared.params, max_tokens=prepared.max_tokens
            )
        except RequestValidationError as exc:
            raise api_errors.bad_request(str(exc)) from None
        except EngineDeadError:
            raise api_errors.engine_dead() from None
        if self.options.log_requests:
            logger.info("Added request %s.", prepared.request_id)
        watcher = asyncio.create_task(self._watch_disconnect(http_request, stream))
        self.in_flight += 1
        try:
            yield stream
        finally:
            self.in_flight -= 1
            watcher.cancel()
            stream.close()

    @staticmethod
    async def _watch_disconnect(http_request: web.Request, stream: RequestStream) -> None:
        """Abort the request when its client goes away, even while no token is flowing."""
        while not stream.finished:
            await asyncio.sleep(DISCONNECT_POLL_S)
            transport = http_request.transport
            if transport is None or transport.is_closing():
                stream.close()
                return


async def final_output(stream: RequestStream) -> Any:
    """Wait for a non-streamed request's last output. A dead engine is vLLM's own HTTP 500 answer; a request
    aborted before any output (its client went away) is 499, which nobody reads but the access log."""
    final = None
    try:
        async for output in stream:
            final = output
    except EngineDeadError:
        raise api_errors.engine_dead() from None
    if final is None:
        raise api_errors.ApiError("Request aborted.", status=499, err_type="ClientClosedRequest")
    return final


def _transport_closed(request: web.Request) -> bool:
    transport = request.transport
    return transport is None or transport.is_closing()
