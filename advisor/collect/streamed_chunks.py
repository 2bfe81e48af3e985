"""A streamed OpenAI response a person pasted: the `data: {…}` chunks of a chat or text completion, read as one answer.

Why a reader of its own: when a streamed answer looks wrong (empty, cut, rejected by a strict client) people paste the
raw server-sent events, and no line of them is an error. What is wrong is in the stream as a whole: whether each chunk
carries `finish_reason` (OpenAI's chunks do, null until the last), where the text went (`delta.content`, or
`delta.reasoning` / `delta.reasoning_content` when a reasoning parser is on), and how the stream ended. This reads
those facts off the chunks and hands the rules one event per pasted stream.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from rules.events import LogEvent, LogEventKind

# `data: {"id": …, "object": "chat.completion.chunk", …}`, as curl -N or a browser's network tab shows an SSE event
_DATA = re.compile(r'^\s*data:\s*(?P<json>\{.*"object"\s*:\s*"(?:chat\.completion\.chunk|text_completion)".*\})\s*$')
_REASONING_KEYS = ("reasoning", "reasoning_content")


@dataclass
class StreamedChunks:
    """The chunks of one pasted stream, as far as read: counts, not the text itself."""

    chunks: int = 0
    first_line: int | None = None
    without_finish_reason: int = 0  # choices that leave the key out (not null: absent)
    content_chars: int = 0
    reasoning_chars: int = 0
    finish_reason: str | None = None  # the last non-null one
    raw: str = ""

    def read(self, text: str, line_no: int) -> bool:
        """Whether `text` is a streamed chunk (then counted); a chunk that is not JSON is left to the log reader."""
        found = _DATA.match(text)
        if found is None:
            return False
        try:
            chunk = json.loads(found["json"])
        except ValueError:
            return False
        if not isinstance(chunk, dict) or not isinstance(chunk.get("choices"), list):
            return False
        self.chunks += 1
        if self.first_line is None:
            self.first_line, self.raw = line_no, text.strip()
        for choice in chunk["choices"]:
            if isinstance(choice, dict):
                self._read_choice(choice)
        return True

    def _read_choice(self, choice: dict) -> None:
        if "finish_reason" not in choice:
            self.without_finish_reason += 1
        elif choice["finish_reason"] is not None:
            self.finish_reason = str(choice["finish_reason"])
        delta = choice.get("delta") if isinstance(choice.get("delta"), dict) else {}
        self.content_chars += len(_text(delta.get("content", choice.get("text"))))
        self.reasoning_chars += sum(len(_text(delta.get(key))) for key in _REASONING_KEYS)

    def event(self, source: str) -> LogEvent | None:
        """The stream as one event, or None when no chunk was read."""
        if not self.chunks:
            return None
        return LogEvent(
            kind=LogEventKind.STREAMED_ANSWER,
            message=f"{self.chunks} streamed chunk(s)",
            chunks=self.chunks,
            chunks_without_finish_reason=self.without_finish_reason,
            content_chars=self.content_chars,
            reasoning_chars=self.reasoning_chars,
            finish_reason=self.finish_reason,
            raw=self.raw,
            line_no=self.first_line,
            source_file=source,
        )


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""
