"""A minimal HTTP/1.1 POST that hands each SSE event to the caller the moment its bytes arrive.

Why not an HTTP library: we need the time at which each event's last byte was read, and
library response objects buffer (see sse.py). This client does one `recv` at a time, feeds
what it got through the chunked decoder and the SSE splitter, and stamps the resulting
events with `time.perf_counter()` taken right after that `recv` returned. Under Locust the
`socket` module is gevent's, so this cooperates with other users without any change.

One connection per request (`Connection: close`): simple, no pool state shared between
users, and the TCP handshake on a LAN or loopback costs well under a millisecond of TTFT.

Every loop is bounded: by the request deadline, by a per-read idle timeout and by a cap on
response bytes.
"""

from __future__ import annotations

import json
import socket
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from loadtest.sse import ChunkedDecoder, SSEEvent, SSEParser, SSEProtocolError

RECV_BYTES = 65536
MAX_RESPONSE_BYTES = 64 * 1024 * 1024
MAX_HEADER_BYTES = 64 * 1024


@dataclass(slots=True)
class Endpoint:
    """Where requests go: scheme, host, port and the path prefix before `/v1/...`."""

    scheme: str
    host: str
    port: int
    base_path: str

    @classmethod
    def parse(cls, url: str) -> Endpoint:
        parts = urlsplit(url if "://" in url else f"http://{url}")
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"endpoint {url!r} is not an http(s) URL")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        base = parts.path.rstrip("/")
        if base.endswith("/v1"):
            base = base[: -len("/v1")]
        return cls(parts.scheme, parts.hostname, port, base)

    def url(self, path: str) -> str:
        return f"{self.scheme}://{self.host}:{self.port}{self.base_path}{path}"


@dataclass(slots=True)
class StreamOutcome:
    """How a streamed request ended; `error_type` is empty on success."""

    status: int = 0
    content_type: str = ""
    error_type: str = ""
    error_message: str = ""
    sent_perf: float = 0.0
    done_perf: float = 0.0
    saw_done_marker: bool = False
    body_excerpt: bytes = field(default=b"", repr=False)


EventHandler = Callable[[float, SSEEvent], None]


def stream_post(
    endpoint: Endpoint,
    path: str,
    payload: dict,
    on_event: EventHandler,
    timeout_s: float,
    headers: dict[str, str] | None = None,
) -> StreamOutcome:
    """POST `payload` as JSON and call `on_event(recv_perf_time, event)` for each SSE event.

    Never raises for network or protocol trouble: the outcome's `error_type` names it
    (`connect_refused`, `connect_error`, `timeout`, `http_<status>`, `not_streaming`,
    `malformed_sse`, `incomplete_stream`, `too_large`).
    """
    outcome = StreamOutcome()
    deadline = time.perf_counter() + timeout_s
    body = json.dumps(payload).encode()
    head = [
        f"POST {endpoint.base_path}{path} HTTP/1.1",
        f"Host: {endpoint.host}:{endpoint.port}",
        "Content-Type: application/json",
        "Accept: text/event-stream",
        f"Content-Length: {len(body)}",
        "Connection: close",
    ]
    head += [f"{k}: {v}" for k, v in (headers or {}).items()]
    request_bytes = ("\r\n".join(head) + "\r\n\r\n").encode() + body
    sock: socket.socket | None = None
    try:
        outcome.sent_perf = time.perf_counter()
        sock = _connect(endpoint, timeout_s)
        sock.sendall(request_bytes)
        _read_response(sock, outcome, on_event, deadline)
    except ConnectionRefusedError as exc:
        outcome.error_type, outcome.error_message = "connect_refused", str(exc)
    except TimeoutError:
        outcome.error_type, outcome.error_message = "timeout", f"no complete response within {timeout_s:g} s"
    except SSEProtocolError as exc:
        outcome.error_type, outcome.error_message = "malformed_sse", str(exc)
    except (OSError, ssl.SSLError) as exc:
        outcome.error_type = outcome.error_type or "connect_error"
        outcome.error_message = outcome.error_message or f"{type(exc).__name__}: {exc}"
    finally:
        outcome.done_perf = time.perf_counter()
        if sock is not None:
            sock.close()
    return outcome


def _connect(endpoint: Endpoint, timeout_s: float) -> socket.socket:
    sock = socket.create_connection((endpoint.host, endpoint.port), timeout=timeout_s)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if endpoint.scheme == "https":
        context = ssl.create_default_context()
        sock = context.wrap_socket(sock, server_hostname=endpoint.host)
    return sock


def _recv(sock: socket.socket, deadline: float) -> bytes:
    remaining = deadline - time.perf_counter()
    if remaining <= 0:
        raise TimeoutError
    sock.settimeout(remaining)
    return sock.recv(RECV_BYTES)


def _read_response(sock: socket.socket, outcome: StreamOutcome, on_event: EventHandler, deadline: float) -> None:
    """Status and headers, then the body (SSE events to `on_event`, or an excerpt), then what went wrong."""
    head = _read_head(sock, outcome, deadline)
    if head is None:
        return
    headers, rest = head
    outcome.content_type = headers.get("content-type", "")
    streaming = outcome.status == 200 and outcome.content_type.startswith("text/event-stream")
    parser = SSEParser()
    if not _read_body(sock, outcome, on_event, deadline, _Body(headers, rest, streaming, parser)):
        return
    if outcome.status != 200:
        outcome.error_type = f"http_{outcome.status}"
        outcome.error_message = outcome.body_excerpt[:300].decode("utf-8", errors="replace")
    elif not streaming:
        outcome.error_type = "not_streaming"
        outcome.error_message = f"server answered {outcome.content_type or 'no content type'}, not text/event-stream"
    elif parser.pending_bytes:
        outcome.error_type, outcome.error_message = "incomplete_stream", "stream ended inside an SSE event"


def _read_head(sock: socket.socket, outcome: StreamOutcome, deadline: float) -> tuple[dict[str, str], bytes] | None:
    """The status into `outcome`, the headers (lower-case names) and the body bytes read with them; None
    when the connection closed first."""
    buffer = b""
    while b"\r\n\r\n" not in buffer:
        data = _recv(sock, deadline)
        if not data:
            outcome.error_type, outcome.error_message = "incomplete_stream", "connection closed before headers"
            return None
        buffer += data
        if len(buffer) > MAX_HEADER_BYTES:
            raise SSEProtocolError("response headers larger than 64 KiB")
    head, _, rest = buffer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    try:
        outcome.status = int(lines[0].split()[1])
    except (IndexError, ValueError) as exc:
        raise SSEProtocolError(f"bad status line {lines[0]!r}") from exc
    return {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}, rest


class _Body:
    """How the body is framed (chunked, a length, or until close) and read (SSE events or an excerpt)."""

    def __init__(self, headers: dict[str, str], rest: bytes, streaming: bool, parser: SSEParser) -> None:
        self.decoder = ChunkedDecoder() if "chunked" in headers.get("transfer-encoding", "").lower() else None
        self.length = int(headers["content-length"]) if headers.get("content-length", "").isdigit() else None
        self.first, self.streaming, self.parser = rest, streaming, parser


def _read_body(
    sock: socket.socket, outcome: StreamOutcome, on_event: EventHandler, deadline: float, body: _Body
) -> bool:
    """Read the body to its end; False when it ended the exchange itself ([DONE], too large, cut short)."""
    received = 0
    data = body.first
    for _ in range(MAX_RESPONSE_BYTES):  # bounded; each pass reads at least one byte or ends
        now = time.perf_counter()
        payload = body.decoder.feed(data) if body.decoder else data
        received += len(payload)
        if received > MAX_RESPONSE_BYTES:
            outcome.error_type, outcome.error_message = "too_large", "response larger than 64 MiB"
            return False
        if body.streaming:
            for event in body.parser.feed(payload):
                if event.data.strip() == "[DONE]":
                    outcome.saw_done_marker = True
                    return False
                on_event(now, event)
        elif len(outcome.body_excerpt) < 2048:
            outcome.body_excerpt += payload[: 2048 - len(outcome.body_excerpt)]
        if (body.decoder and body.decoder.done) or (body.length is not None and received >= body.length):
            break
        data = _recv(sock, deadline)
        if not data:
            if body.decoder is not None or body.length is not None:
                outcome.error_type = "incomplete_stream"
                outcome.error_message = "connection closed in the middle of the response body"
                return False
            break
    return True
