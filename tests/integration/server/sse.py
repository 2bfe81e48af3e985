"""A raw SSE reader over http.client, for checking the exact bytes vLLM clients parse.

The openai client hides framing (the role chunk, `data: [DONE]`), and cannot be told to
drop the connection mid-stream; this reader can do both.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass
class RawStream:
    connection: http.client.HTTPConnection
    response: http.client.HTTPResponse
    events: list[str] = field(default_factory=list)

    def __iter__(self) -> Iterator[str]:
        """Each event's data field (`[DONE]` included), as it arrives."""
        buffer = b""
        while True:
            line = self.response.readline()
            if not line:
                return
            buffer += line
            if line in (b"\n", b"\r\n"):
                text = buffer.decode().strip()
                buffer = b""
                if text.startswith("data: "):
                    data = text[len("data: ") :]
                    self.events.append(data)
                    yield data

    def chunks(self) -> list[dict]:
        """Every JSON event (all but `[DONE]`), reading the stream to its end."""
        for _ in self:
            pass
        return [json.loads(event) for event in self.events if event != "[DONE]"]

    def close(self) -> None:
        """Drop the TCP connection, as a client that goes away mid-stream does."""
        self.connection.sock.close() if self.connection.sock else None
        self.connection.close()


def open_stream(port: int, path: str, payload: dict, timeout_s: float = 120.0) -> RawStream:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout_s)
    connection.request("POST", path, body=json.dumps(payload), headers={"Content-Type": "application/json"})
    response = connection.getresponse()
    return RawStream(connection, response)
