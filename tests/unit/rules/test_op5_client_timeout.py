"""OP-5.35: a client that reached vLLM and gave up waiting, in its library's words, against vLLM's stats lines."""

from __future__ import annotations

import pytest

from advisor.collect.logs import parse_lines
from rules.catalog.op5_client_timeout import OPENAI_RETRIES, OPENAI_TIMEOUT_S, RULE_CLIENT_TIMEOUT
from rules.events import LogEventKind as K
from rules.facts import Facts

STATS = (
    "(APIServer pid=1) INFO 12-01 10:00:00 [loggers.py:123] Engine 000: Avg prompt throughput: 3210.5 tokens/s, "
    "Avg generation throughput: 812.0 tokens/s, Running: 64 reqs, Waiting: {} reqs, GPU KV cache usage: 97.1%, "
    "Prefix cache hit rate: 12.0%"
)
SDK = "openai.APITimeoutError: Request timed out."


def _events(*lines: str):
    return parse_lines(list(lines)).events


def _finding(*lines: str):
    [finding] = RULE_CLIENT_TIMEOUT.evaluate(Facts(events=_events(*lines)))
    return finding


@pytest.mark.parametrize(
    ("line", "component", "address", "timeout_ms"),
    [
        (SDK, "OpenAI SDK", None, None),
        ("httpx.ReadTimeout: timed out", "httpx", None, None),
        ("requests.exceptions.ReadTimeout: HTTPConnectionPool(host='localhost', port=8000): Read timed out. (read "
         "timeout=60)", "urllib3", "localhost:8000", 60_000),
        ("curl: (28) Operation timed out after 30001 milliseconds with 0 bytes received", "curl", None, 30_001),
        ("curl: (28) Operation timed out after 60000 milliseconds with 1024 out of -1 bytes received", "curl", None,
         60_000),
        ("litellm.APIConnectionError: OllamaException - litellm.Timeout: Connection timed out after 600.0 seconds.",
         "LiteLLM", None, 600_000),
        ("litellm.exceptions.APIConnectionError: litellm.APIConnectionError: OllamaException - litellm.Timeout: "
         "Connection timed out. Timeout passed=600.0, time taken=579.681 seconds", "LiteLLM", None, 600_000),
        ('192.168.1.1 - - [01/Dec/2026:10:00:00 +0000] "POST /v1/chat/completions HTTP/1.1" 499 0 "-" "OpenAI/Python '
         '1.51.0"', "nginx (499)", None, None),
        ('10.0.0.1 - - [01/Dec/2026:10:00:00 +0000] "POST /v1/chat/completions HTTP/1.1" 499 0 "-" "curl/8.5" 1236 '
         "120.001 [default-vllm-8000] [] 10.0.0.5:8000 0 120.000 - abc", "nginx (499)", None, 120_001),
        ('[2026-12-01T10:00:00.000Z] "POST /v1/chat/completions HTTP/1.1" 0 DC downstream_remote_disconnect - "-" 512 '
         '0 30000 - "-" "OpenAI/Python 1.51.0" "abc" "llm.example.com" "10.0.0.5:8000"', "the client (Envoy's DC)",
         None, 30_000),
    ],
)  # fmt: skip
def test_each_clients_words_for_a_read_that_timed_out(line, component, address, timeout_ms):
    [event] = _events(line)
    assert event.kind == K.CLIENT_TIMEOUT
    assert (event.component, event.address, event.timeout_ms) == (component, address, timeout_ms)


def test_a_download_from_a_model_hub_timing_out_is_no_clients_wait_for_vllm():
    hub = (
        "requests.exceptions.ReadTimeout: HTTPSConnectionPool(host='huggingface.co', port=443): Read timed out. "
        "(read timeout=10)"
    )
    assert K.CLIENT_TIMEOUT not in [e.kind for e in _events(hub)]


def test_requests_waiting_beside_the_timeout_make_it_a_queue_not_a_dead_server():
    finding = _finding(STATS.format(180), SDK)
    assert finding.title == (
        "the client gave up waiting while 180 request(s) queued in vLLM: the server was saturated, not down"
    )
    assert finding.actions[0].startswith("Lower the load per replica")
    assert [e.location for e in finding.evidence] == ["log:2", "log:1"]


def test_nothing_waiting_is_a_request_that_outlasted_the_timeout_and_the_sdk_retries_it_from_the_start():
    finding = _finding(STATS.format(0), SDK)
    assert finding.title.endswith("it reached vLLM, and its request outlasted its timeout")
    assert f"{OPENAI_TIMEOUT_S} s" in finding.summary
    assert "stream=True" in finding.actions[0]
    assert any(f"{OPENAI_RETRIES} retries by default" in action for action in finding.actions)


def test_the_timeout_the_clients_words_state_is_named():
    finding = _finding(
        "HTTPConnectionPool(host='127.0.0.1', port=8000): Read timed out. (read timeout=30.0)",
    )
    assert finding.title.startswith("the client gave up waiting after 30 s")
    assert "from 127.0.0.1:8000 after 30 s" in finding.summary


def test_nothing_without_a_timeout():
    assert RULE_CLIENT_TIMEOUT.evaluate(Facts(events=_events(STATS.format(5)))) == []


def test_a_proxys_client_closed_line_for_another_route_is_no_wait_for_vllm():
    for line in (
        '10.0.0.1 - - [01/Dec/2026:10:00:00 +0000] "GET /static/app.js HTTP/1.1" 499 0 "-" "Mozilla/5.0"',
        '[2026-12-01T10:00:00.000Z] "GET /dashboard HTTP/1.1" 0 DC downstream_remote_disconnect - "-" 0 0 5 - "-"',
    ):
        assert not [e for e in _events(line) if e.kind == K.CLIENT_TIMEOUT], line
