"""The full-precision record kept for every request, and how one streamed request fills it.

Why: Locust's own statistics round response times to two significant digits and keep only
cumulative totals, which cannot give a per-step p99 of TTFT or inter-token latency. Each
request instead leaves one `RequestRecord` with its intended and actual send times, TTFT,
every inter-chunk gap, its token count and how it ended; per-step statistics are computed
from these records only (stats.py).

Times: `intended_send_ts` / `actual_send_ts` are wall-clock (`time.time()`) so records from
several load-generator processes share one timeline; all durations come from
`time.perf_counter()` differences, so a clock adjustment mid-run cannot corrupt them.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from loadtest.http_stream import Endpoint, stream_post
from loadtest.sse import SSEEvent

TOKEN_SOURCES = ("usage", "tokenizer", "chunks")


class RequestRecord(BaseModel):
    """One request as the load generator saw it."""

    step: int = Field(description="ramp step whose schedule issued this request")
    index: int = Field(description="arrival number within the step (global across workers)")
    worker: int = 0
    intended_send_ts: float = Field(description="wall-clock time the schedule asked for")
    actual_send_ts: float = Field(description="wall-clock time the request was written to the socket")
    ttft_s: float | None = Field(default=None, description="send → first chunk with content")
    gaps_s: list[float] = Field(default_factory=list, description="every gap between content chunks")
    e2e_s: float | None = Field(default=None, description="send → end of stream ([DONE])")
    output_tokens: int | None = Field(default=None, description="from the server's usage, when given")
    prompt_tokens: int | None = Field(
        default=None,
        description="usage.prompt_tokens (the prompt after the chat template, as the engine counted it), when given",
    )
    content_chunks: int = 0
    output_text: str | None = Field(default=None, description="kept only when usage is missing")
    token_source: str = "chunks"
    status: int = 0
    error_type: str = ""
    error_message: str = ""

    @property
    def ok(self) -> bool:
        return not self.error_type

    @property
    def send_lateness_s(self) -> float:
        return self.actual_send_ts - self.intended_send_ts

    @property
    def tokens(self) -> int:
        """Output tokens by the best source available (usage, else tokenizer-filled, else chunks)."""
        return self.output_tokens if self.output_tokens is not None else self.content_chunks


def measure_request(
    endpoint: Endpoint,
    path: str,
    payload: dict,
    *,
    step: int,
    index: int,
    intended_send_ts: float,
    timeout_s: float,
    worker: int = 0,
    keep_text_without_usage: bool = True,
    headers: dict[str, str] | None = None,
) -> RequestRecord:
    """Send one streaming request and return its record; never raises for server trouble."""
    stream = _StreamRead()
    actual_send_ts = time.time()
    outcome = stream_post(endpoint, path, payload, stream.on_event, timeout_s, headers=headers)
    error_type = outcome.error_type or stream.error
    message = outcome.error_message or stream.message
    if not error_type and not outcome.saw_done_marker:
        error_type, message = "incomplete_stream", "stream ended without data: [DONE]"
    if not error_type and not stream.chunk_times:
        error_type, message = "empty_response", "stream carried no content"
    record = RequestRecord(
        step=step,
        index=index,
        worker=worker,
        intended_send_ts=intended_send_ts,
        actual_send_ts=actual_send_ts,
        status=outcome.status,
        error_type=error_type,
        error_message=message[:300],
        content_chunks=len(stream.chunk_times),
        output_tokens=stream.tokens,
        token_source="usage" if stream.tokens is not None else "chunks",
        prompt_tokens=stream.prompt_tokens,
    )
    times = stream.chunk_times
    if times:
        record.ttft_s = times[0] - outcome.sent_perf
        record.gaps_s = [b - a for a, b in zip(times, times[1:], strict=False)]
    if not error_type:
        record.e2e_s = outcome.done_perf - outcome.sent_perf
    if stream.tokens is None and keep_text_without_usage:
        record.output_text = "".join(stream.text_parts)
    return record


@dataclass
class _StreamRead:
    """What one request's server-sent events said, event by event: when each content chunk arrived and
    its text, the usage counts, and the first error. After an error the rest of the stream is ignored:
    the record keeps the first thing that went wrong, which is the one to report."""

    chunk_times: list[float] = field(default_factory=list)
    text_parts: list[str] = field(default_factory=list)
    tokens: int | None = None
    prompt_tokens: int | None = None
    error: str = ""
    message: str = ""

    def on_event(self, recv_perf: float, event: SSEEvent) -> None:
        if self.error:
            return
        try:
            obj = json.loads(event.data)
        except json.JSONDecodeError:
            self.error, self.message = "malformed_sse", f"event data is not JSON: {event.data[:80]!r}"
            return
        if not isinstance(obj, dict):
            self.error, self.message = "malformed_sse", "event data is not a JSON object"
            return
        if "error" in obj:
            err = obj["error"]
            self.error = "stream_error"
            self.message = str(err.get("message", err) if isinstance(err, dict) else err)[:300]
            return
        self._count_usage(obj.get("usage"))
        content = _content_of(obj)
        if content:
            self.chunk_times.append(recv_perf)
            self.text_parts.append(content)

    def _count_usage(self, usage: object) -> None:
        """vLLM sends usage on the last chunk (with stream_options.include_usage), or on every chunk
        (continuous_usage_stats): the largest completion count seen is the request's."""
        if not isinstance(usage, dict):
            return
        if isinstance(usage.get("completion_tokens"), int):
            self.tokens = max(self.tokens or 0, usage["completion_tokens"])
        if isinstance(usage.get("prompt_tokens"), int):
            self.prompt_tokens = usage["prompt_tokens"]


def _content_of(obj: dict) -> str:
    choices = obj.get("choices")
    if not isinstance(choices, list) or not choices:
        return ""
    choice = choices[0] if isinstance(choices[0], dict) else {}
    delta = choice.get("delta")
    if isinstance(delta, dict):
        for key in ("content", "reasoning_content", "reasoning"):
            value = delta.get(key)
            if isinstance(value, str) and value:
                return value
        return ""
    text = choice.get("text")
    return text if isinstance(text, str) else ""


def cancelled_record(
    step: int, index: int, intended_send_ts: float, actual_send_ts: float, worker: int = 0
) -> RequestRecord:
    """Record for a request still in flight when the cool-down ended."""
    return RequestRecord(
        step=step,
        index=index,
        worker=worker,
        intended_send_ts=intended_send_ts,
        actual_send_ts=actual_send_ts,
        error_type="cancelled",
        error_message="still in flight when the cool-down ended",
    )
