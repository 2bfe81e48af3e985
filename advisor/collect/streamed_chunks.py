"""A streamed OpenAI response a person pasted: the `data: {…}` chunks of a chat or text completion, read as one answer.

Why a reader of its own: when a streamed answer looks wrong (empty, cut, rejected by a strict client) people paste the
raw server-sent events, and no line of them is an error. What is wrong is in the stream as a whole: whether each chunk
carries `finish_reason` (OpenAI's chunks do, null until the last), where the output went (`delta.content` or tool
calls, or `delta.reasoning` / `delta.reasoning_content` when a reasoning parser is on), how the stream ended, and
whether the paste left lines out between its chunks. This reads those facts off the chunks and hands the rules one
event per pasted stream.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from rules.events import LogEvent, LogEventKind

# `data: {"id": …, "object": "chat.completion.chunk", …}`, as curl -N or a browser's network tab shows an SSE event
_DATA = re.compile(r'^\s*data:\s*(?P<json>\{.*"object"\s*:\s*"(?:chat\.completion\.chunk|text_completion)".*\})\s*$')
# The lines a stream holds besides its chunks: blank separators, the end marker, an SSE comment or field
_STREAM_FRAMING = re.compile(r"^\s*(?:data:\s*\[DONE\]|:.*|event:.*|id:.*|retry:.*)?\s*$")
REASONING_KEYS = ("reasoning", "reasoning_content")  # vLLM's newer and older names for the same text


@dataclass
class StreamedChunks:
    """The chunks of one pasted stream, as far as read: counts, not the text itself."""

    chunks: int = 0
    without_finish_reason: int = 0  # chunks with a choice that leaves the key out (not null: absent)
    answer_chars: int = 0  # delta.content, a completion's text, tool calls' names and arguments
    reasoning_chars: int = 0
    finish_reason: str | None = None  # the last non-null one
    gaps: int = 0  # lines between two chunks that are no part of a stream (a paste's `...`, a remark)
    line_no: int | None = None  # the chunk the rules quote: the first without finish_reason, else the first
    raw: str = ""
    _other_since_chunk: int = field(default=0, init=False, repr=False)  # since the last chunk, not yet a gap

    def read(self, text: str, line_no: int) -> bool:
        """Whether `text` is a streamed chunk (then counted); a line that only looks like one is left to the log
        reader, and any other line after the first chunk is counted as a gap if another chunk follows it."""
        chunk = _chunk(text)
        if chunk is None:
            if self.chunks and not _STREAM_FRAMING.match(text):
                self._other_since_chunk += 1
            return False
        self.chunks += 1
        self.gaps += self._other_since_chunk
        self._other_since_chunk = 0
        choices = [choice for choice in chunk["choices"] if isinstance(choice, dict)]
        lacking = any("finish_reason" not in choice for choice in choices)
        self.without_finish_reason += lacking
        if self.line_no is None or (lacking and self.without_finish_reason == 1):
            self.line_no, self.raw = line_no, text.strip()
        for choice in choices:
            self._read_choice(choice)
        return True

    def _read_choice(self, choice: dict) -> None:
        if choice.get("finish_reason") is not None:
            self.finish_reason = str(choice["finish_reason"])
        delta = choice.get("delta") if isinstance(choice.get("delta"), dict) else {}
        self.answer_chars += len(text_of(delta.get("content", choice.get("text"))))
        self.answer_chars += len(json.dumps(delta["tool_calls"])) if delta.get("tool_calls") else 0
        self.reasoning_chars += max(len(text_of(delta.get(key))) for key in REASONING_KEYS)

    def event(self, source: str) -> LogEvent | None:
        """The stream as one event, or None when no chunk was read."""
        if not self.chunks:
            return None
        return LogEvent(
            kind=LogEventKind.STREAMED_ANSWER,
            message=f"{self.chunks} streamed chunk(s)",
            chunks=self.chunks,
            chunks_without_finish_reason=self.without_finish_reason,
            answer_chars=self.answer_chars,
            reasoning_chars=self.reasoning_chars,
            finish_reason=self.finish_reason,
            stream_gaps=self.gaps,
            raw=self.raw,
            line_no=self.line_no,
            source_file=source,
        )


def _chunk(text: str) -> dict | None:
    """The chunk a `data:` line holds, or None: not one, not JSON, too deeply nested to decode, or without choices."""
    found = _DATA.match(text)
    if found is None:
        return None
    try:
        chunk = json.loads(found["json"])
    except (ValueError, RecursionError):
        return None
    return chunk if isinstance(chunk, dict) and isinstance(chunk.get("choices"), list) else None


def text_of(value: object) -> str:
    """A JSON field's text, or "" for null, a number or a missing field."""
    return value if isinstance(value, str) else ""
