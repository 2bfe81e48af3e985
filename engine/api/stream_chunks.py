"""The chunks of one streamed OpenAI response, chat or completion.

Why one writer for both endpoints: a stream's chunks share their id, model and creation time, report the usage so
far in every chunk when the client asked for continuous usage, and end with a choiceless usage chunk when it asked
for usage at all; only the chunk model and its choices differ (`ChatCompletionStreamResponse` with deltas,
`CompletionStreamResponse` with text)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.api.protocol import StreamOptions, UsageInfo, dump_chunk, now_s
from engine.api.serving import PreparedRequest
from engine.api.sse import sse_event


def usage_wanted(options: StreamOptions | None, forced: bool) -> tuple[bool, bool]:
    """(a final usage chunk, usage in every chunk) for one stream, from the client's stream_options or the server's
    --enable-force-include-usage; usage in every chunk only where usage was asked for at all. Why here: both
    endpoints decide it the same way, for the same writer."""
    include_usage = forced or bool(options and options.include_usage)
    return include_usage, bool(options and options.continuous_usage_stats) and include_usage


@dataclass
class StreamChunks:
    """One stream's chunks: `response` is its chunk model, `completion_tokens` grows as the engine's outputs come."""

    response: type[Any]
    prepared: PreparedRequest
    model: str
    continuous: bool
    created: int = field(default_factory=now_s)
    completion_tokens: int = 0

    def usage(self) -> UsageInfo:
        return UsageInfo.of(len(self.prepared.prompt_token_ids), self.completion_tokens)

    def event(self, choices: list[Any]) -> bytes:
        """A chunk holding `choices`, with the usage so far in a continuous-usage stream."""
        body = self._body(choices)
        if self.continuous:
            body.usage = self.usage()
        return sse_event(dump_chunk(body))

    def usage_event(self) -> bytes:
        """The stream's last chunk when the client asked for usage: no choices, the final counts."""
        body = self._body([])
        body.usage = self.usage()
        return sse_event(dump_chunk(body))

    def _body(self, choices: list[Any]) -> Any:
        # every field named, `object` too: dump_chunk writes only the fields that were set
        kind = self.response.model_fields["object"].default
        return self.response(
            id=self.prepared.request_id, object=kind, created=self.created, model=self.model, choices=choices
        )
