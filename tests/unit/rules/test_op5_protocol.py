"""OP-5.39: HTTP spoken to something that does not speak it: uvicorn's warning in vLLM's log, a client's words for
an answer that is not HTTP."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog.op5_protocol import RULE
from rules.evaluate import evaluate
from rules.facts import Facts


def _findings(*lines: str):
    return RULE.evaluate(Facts(events=parse_lines(list(lines)).events))


def test_uvicorns_invalid_request_warning_is_https_to_a_plain_http_port_and_low():
    warning = "WARNING:  Invalid HTTP request received."
    [finding] = _findings(warning, warning, 'INFO:     10.0.0.1:5000 - "GET /health HTTP/1.1" 200 OK', warning)
    assert finding.title.startswith(
        "vLLM's HTTP server received something that is not an HTTP request and answered 400 (3 times in the text)"
    )
    assert finding.severity.value == "low"
    assert "--ssl-keyfile and --ssl-certfile" in finding.actions[0]


def test_a_clients_non_http_answer_is_a_port_that_is_not_the_api_servers():
    for line, client in (
        ("curl: (1) Received HTTP/0.9 when not allowed", "curl"),
        ("httpx.RemoteProtocolError: illegal status line: bytearray(b'\\x00\\x01')", "httpx (h11)"),
    ):
        top = evaluate(Facts(events=parse_lines([line]).events)).findings[0]
        assert top.rule == "OP-5.39" and top.title == (
            f"{client} got an answer that is not HTTP: the port it called is not vLLM's API server"
        ), line
        assert "--data-parallel-rpc-port must differ from --port" in top.actions[1]
