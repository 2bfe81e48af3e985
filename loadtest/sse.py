"""Incremental HTTP body decoding and Server-Sent-Events splitting, as bytes arrive.

Why our own: a streaming latency measurement is only as good as the moment each event is
seen. Locust's FastHttpUser.iter_lines reads 1024-byte blocks and can merge several events
into one read, and `requests` under gevent has been seen to buffer whole responses. Here
every `feed()` returns the events completed by exactly those bytes, so the caller can stamp
them with the time of the read that completed them.

Both decoders are bounded: a body or a single event larger than its limit raises
`SSEProtocolError` instead of growing memory without end.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_EVENT_BYTES = 4 * 1024 * 1024


class SSEProtocolError(Exception):
    """The byte stream is not valid chunked HTTP or SSE."""


@dataclass(slots=True)
class SSEEvent:
    """One SSE event: its `data:` lines joined by newlines (the only field OpenAI streams use)."""

    data: str
    event: str = ""


class SSEParser:
    """Splits a byte stream into SSE events on blank-line boundaries (LF or CRLF)."""

    def __init__(self, max_event_bytes: int = MAX_EVENT_BYTES) -> None:
        self._buffer = bytearray()
        self._max_event_bytes = max_event_bytes

    def feed(self, data: bytes) -> list[SSEEvent]:
        """Add bytes; return the events they complete, in order."""
        self._buffer += data
        if b"\r" in self._buffer:  # CRLF may straddle two reads, so normalise the whole buffer
            self._buffer = bytearray(self._buffer.replace(b"\r\n", b"\n"))
        events: list[SSEEvent] = []
        while True:
            end = self._buffer.find(b"\n\n")
            if end < 0:
                break
            block = bytes(self._buffer[:end])
            del self._buffer[: end + 2]
            event = _parse_block(block)
            if event is not None:
                events.append(event)
        if len(self._buffer) > self._max_event_bytes:
            raise SSEProtocolError(f"SSE event larger than {self._max_event_bytes} bytes without a blank line")
        return events

    @property
    def pending_bytes(self) -> int:
        """Bytes received that do not yet form a complete event (non-zero at EOF = truncated)."""
        return len(self._buffer.strip())


def _parse_block(block: bytes) -> SSEEvent | None:
    data_lines: list[str] = []
    event_name = ""
    for raw in block.split(b"\n"):
        if not raw or raw.startswith(b":"):
            continue  # comment or keep-alive
        name, _, value = raw.partition(b":")
        if value.startswith(b" "):
            value = value[1:]
        if name == b"data":
            data_lines.append(value.decode("utf-8", errors="replace"))
        elif name == b"event":
            event_name = value.decode("utf-8", errors="replace")
    if not data_lines and not event_name:
        return None
    return SSEEvent(data="\n".join(data_lines), event=event_name)


class ChunkedDecoder:
    """Decodes `Transfer-Encoding: chunked` incrementally; `feed` returns payload bytes."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._remaining = 0  # payload bytes left in the current chunk
        self._state = "size"  # size | data | data_crlf | trailer | done
        self.done = False

    def feed(self, data: bytes) -> bytes:
        self._buffer += data
        out = bytearray()
        for _ in range(1_000_000):  # bounded: each pass consumes bytes or returns
            if self._state == "size":
                end = self._buffer.find(b"\r\n")
                if end < 0:
                    if len(self._buffer) > 1024:
                        raise SSEProtocolError("chunk-size line too long")
                    break
                size_text = bytes(self._buffer[:end]).split(b";")[0].strip()
                del self._buffer[: end + 2]
                try:
                    self._remaining = int(size_text, 16)
                except ValueError as exc:
                    raise SSEProtocolError(f"bad chunk size {size_text!r}") from exc
                self._state = "data" if self._remaining else "trailer"
            elif self._state == "data":
                if not self._buffer:
                    break
                take = min(self._remaining, len(self._buffer))
                out += self._buffer[:take]
                del self._buffer[:take]
                self._remaining -= take
                if self._remaining == 0:
                    self._state = "data_crlf"
            elif self._state == "data_crlf":
                if len(self._buffer) < 2:
                    break
                del self._buffer[:2]
                self._state = "size"
            elif self._state == "trailer":
                end = self._buffer.find(b"\r\n")
                if end < 0:
                    break
                line = bytes(self._buffer[:end])
                del self._buffer[: end + 2]
                if not line:
                    self._state = "done"
                    self.done = True
            else:
                break
        return bytes(out)
