"""A non-streamed OpenAI response a person pasted: a chat or text completion's JSON body, read as the answer.

Why a reader of its own: "the answer is empty" reports paste the body the client got (`curl` output, a pretty-printed
`response.json()`), and no line of it is an error. What is wrong is in its fields read together: whether the text went
to `message.content` or to `message.reasoning` / `reasoning_content` (a reasoning parser's field), how it finished, and
how many tokens it spent. One body is read whole, on one line or pretty-printed over many (from a line that opens an
object to the line that closes it), and handed to the rules as one ANSWER_BODY event; a streamed answer's chunks are
advisor/collect/streamed_chunks.py's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from advisor.collect.streamed_chunks import REASONING_KEYS, text_of
from rules.events import LogEvent, LogEventKind

_BODY_OBJECTS = ('"chat.completion"', '"text_completion"')  # not `chat.completion.chunk`: a stream's
MAX_BODY_LINES = 400  # a pretty-printed body longer than this is not read (a paste of something else)


@dataclass
class AnswerBody:
    """The first response body in the text, as far as read."""

    event: LogEvent | None = None
    _lines: list[str] = field(default_factory=list)
    _start: int = 0
    _depth: int = 0  # braces open in the object being gathered, outside its strings

    def read(self, text: str, line_no: int, source: str) -> None:
        if self.event is not None:
            return
        stripped = text.strip()
        if not self._lines and stripped.startswith("{") and stripped.endswith("}"):
            self._take(stripped, line_no, source)  # a body on one line
            return
        if not self._lines and stripped == "{":
            self._lines, self._start, self._depth = [stripped], line_no, 1
            return
        if self._lines:
            self._lines.append(stripped)
            self._depth += _depth_change(stripped)
            if self._depth <= 0 or len(self._lines) > MAX_BODY_LINES:
                body, self._lines = "\n".join(self._lines).rstrip(","), []
                self._take(body, self._start, source)

    def _take(self, body: str, line_no: int, source: str) -> None:
        if not any(marker in body for marker in _BODY_OBJECTS):
            return
        try:
            value = json.loads(body)
        except (ValueError, RecursionError):
            return
        if isinstance(value, dict) and isinstance(value.get("choices"), list) and value["choices"]:
            self.event = _body_event(value, body, line_no, source)


def _body_event(value: dict, body: str, line_no: int, source: str) -> LogEvent | None:
    choice = value["choices"][0]
    if not isinstance(choice, dict):
        return None
    message = choice.get("message") if isinstance(choice.get("message"), dict) else {}
    answer = text_of(message.get("content", choice.get("text"))).strip()  # a body's "\n\n" is no answer
    calls = json.dumps(message["tool_calls"]) if message.get("tool_calls") else ""
    usage = value.get("usage") if isinstance(value.get("usage"), dict) else {}
    tokens = usage.get("completion_tokens")
    return LogEvent(
        kind=LogEventKind.ANSWER_BODY,
        message=f"{value.get('object')} body",
        answer_chars=len(answer) + len(calls),
        reasoning_chars=max(len(text_of(message.get(key)).strip()) for key in REASONING_KEYS),
        finish_reason=str(choice["finish_reason"]) if choice.get("finish_reason") is not None else None,
        generated_tokens=tokens if isinstance(tokens, int) else None,
        raw=body.splitlines()[0][:500],
        line_no=line_no,
        source_file=source,
    )


def _depth_change(line: str) -> int:
    """Braces opened minus closed on a line of JSON, those inside its strings aside."""
    change, quoted, escaped = 0, False, False
    for char in line:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = quoted
        elif char == '"':
            quoted = not quoted
        elif not quoted and char in "{}":
            change += 1 if char == "{" else -1
    return change
