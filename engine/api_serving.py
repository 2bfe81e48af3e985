"""What both generation endpoints share: checks, tokenization, limits, admission, request logs.

Why one place: the model-name check, vLLM 0.32+'s length rules (a prompt that leaves no room
for output is a 400; an oversized max_tokens is clamped to what remains), the `--max-num-queued-reqs` 503,
and the request log lines must behave identically for /v1/completions and
/v1/chat/completions, as they do in vLLM.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from pydantic import ValidationError

from engine import api_errors
from engine.async_engine import AsyncEngine, EngineDeadError, RequestStream
from engine.errors import RequestValidationError
from engine.logger import init_logger
from engine.metrics import EngineMetrics
from engine.sampling_params import SamplingParams

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


@dataclass(slots=True)
class PreparedRequest:
    request_id: str
    prompt_token_ids: list[int]
    params: SamplingParams
    max_tokens: int


class OpenAIServing:
    """Turns validated requests into engine requests; one instance per server."""

    def __init__(self, async_engine: AsyncEngine, tokenizer: Any, options: ServingOptions,
                 metrics: EngineMetrics | None = None) -> None:
        self.async_engine = async_engine
        self.tokenizer = tokenizer
        self.options = options
        self.metrics = metrics
        self.in_flight = 0  # generation requests being served (what /load reports)

    # --- parsing and checks --------------------------------------------------------------

    @staticmethod
    async def parse(request: web.Request, model_class: type) -> Any:
        """The JSON body as `model_class`, or a 400 in vLLM's shape."""
        try:
            body = await request.json()
        except ValueError as exc:
            raise api_errors.bad_request(f"Invalid JSON in request body: {exc}") from None
        try:
            return model_class.model_validate(body)
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

    def prepare(self, request_id: str, prompt_token_ids: list[int], sampling_kwargs: dict[str, Any],
                requested_max_tokens: int | None) -> PreparedRequest:
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
        except RequestValidationError as exc:
            raise api_errors.bad_request(str(exc)) from None
        except TypeError as exc:
            raise api_errors.bad_request(f"Unsupported sampling parameter: {exc}") from None
        return PreparedRequest(request_id, prompt_token_ids, params, max_tokens)

    def encode(self, text: str, add_special_tokens: bool) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=add_special_tokens))

    def log_received(self, prepared: PreparedRequest, prompt: str | None) -> None:
        if self.options.log_requests:
            logger.info(
                "Received request %s: prompt: %r, params: %s, prompt_token_ids: %s, "
                "prompt_embeds shape: None, lora_request: None.",
                prepared.request_id, prompt, prepared.params, prepared.prompt_token_ids,
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
            stream = await self.async_engine.add_request(prepared.request_id, prepared.prompt_token_ids,
                                                         prepared.params, max_tokens=prepared.max_tokens)
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
