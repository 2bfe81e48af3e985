"""OP-5.39: HTTP spoken to something that does not speak it, either way: vLLM's server got bytes that are not an
HTTP request, or a client got an answer that is not HTTP.

Why a rule of its own: both look like a broken server and are settled by an address. vLLM's API server is uvicorn,
which answers 400 and logs `Invalid HTTP request received.` when what arrives does not parse as HTTP/1.1
(uvicorn/protocols/http/httptools_impl.py and h11_impl.py): a client speaking TLS to its plain-HTTP port (an https://
URL; vLLM serves HTTPS only when given --ssl-keyfile and --ssl-certfile, vllm/entrypoints/launchers/launcher.py,
0.32), or something that is no HTTP client at all (a TCP health check, a port scanner). The other way, a client that
gets non-HTTP bytes back called a port that is not the API server's: curl says `Received HTTP/0.9 when not allowed`,
h11 (httpx, the OpenAI SDK) `illegal status line`. In vllm#20119 it was a data-parallel deployment whose
--data-parallel-rpc-port was the API server's port.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import NOT_HTTP_AT_SERVER, LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity


def _check(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.PROTOCOL_MISMATCH)
    if not events:
        return []
    client = next((e for e in events if e.component != NOT_HTTP_AT_SERVER), None)
    if client is not None:
        return [_client_finding(client)]
    return [_server_finding(events[0], len(events))]


def _server_finding(event: LogEvent, count: int) -> Finding:
    times = f" ({count} times in the text)" if count > 1 else ""
    return RULE.finding(
        Severity.LOW,
        f"vLLM's HTTP server received something that is not an HTTP request and answered 400{times}: most often a "
        "client speaking HTTPS to its plain-HTTP port",
        summary="uvicorn, vLLM's HTTP server, could not parse what arrived as HTTP/1.1. A TLS handshake is the usual "
        "sender: a client given an https:// URL for a server that serves plain HTTP (vLLM serves HTTPS only with "
        "--ssl-keyfile and --ssl-certfile). Otherwise something that is no HTTP client touched the port: a TCP "
        "health check, a port scanner. The server itself is unaffected; the client gets no answer it can read.",
        evidence=[c.log_evidence(event, name="not HTTP", value=event.message)],
        actions=[
            "Find the client that failed at that time: give it http:// (or serve HTTPS: --ssl-keyfile and "
            "--ssl-certfile, or a TLS-terminating proxy in front of vLLM).",
            "A load balancer's TCP health check or a scanner sends such bytes too: harmless; an HTTP check on "
            "/health is the better probe.",
        ],
        confidence=0.5,
    )


def _client_finding(event: LogEvent) -> Finding:
    return RULE.finding(
        Severity.HIGH,
        f"{event.component} got an answer that is not HTTP: the port it called is not vLLM's API server",
        summary="The client connected and the other end answered in another protocol (curl: `Received HTTP/0.9 when "
        "not allowed`; h11: `illegal status line`). vLLM's engine and workers listen on other ports than its API "
        "server (ZeroMQ, the data-parallel RPC port, NCCL, Ray); calling one of them, or a port another service "
        "holds, gets such bytes back.",
        evidence=[c.log_evidence(event, name="not HTTP", value=event.message)],
        actions=[
            "Call the port vLLM's API server listens on: its log says where (`Starting vLLM API server on "
            "http://0.0.0.0:8000`); `curl http://<host>:<port>/health` answers 200 there.",
            "With data parallelism, --data-parallel-rpc-port must differ from --port (vllm#20119: the same port, and "
            "every request met the RPC socket); check that no other service was given the API server's port.",
        ],
        confidence=0.75,
    )


RULE = Rule(
    code="OP-5.39",
    title="HTTP spoken to something that does not speak it",
    category=Category.RELIABILITY,
    check=_check,
    needs=("events",),
    page=RulePage(
        checks="uvicorn's `Invalid HTTP request received.` in vLLM's log; a client's words for an answer that is not "
        "HTTP: curl's `Received HTTP/0.9 when not allowed`, h11's `illegal status line`.",
        why="Both look like a broken server and are an address: HTTPS sent to a plain-HTTP port, or a client calling "
        "a port that is not the API server's.",
        example="`curl: (1) Received HTTP/0.9 when not allowed` from every request to a data-parallel deployment "
        "whose --data-parallel-rpc-port was its --port (vllm#20119).",
        fix="http:// for a plain-HTTP vLLM (or --ssl-keyfile and --ssl-certfile); the API server's port, and a "
        "data-parallel RPC port of its own.",
        limits="The server's warning does not say who sent the bytes; a client's words do not say which service "
        "answered.",
        references=["https://github.com/vllm-project/vllm/issues/20119"],
    ),
)

RULES: list[Rule] = [RULE]
