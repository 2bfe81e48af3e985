"""OP-5.30: the client calls a path vLLM's OpenAI server has no route for; the path says what it was written for."""

from __future__ import annotations

import pytest

from advisor.collect.logs import parse_lines
from rules.catalog import op5_routes
from rules.evaluate import evaluate
from rules.facts import Facts


def _facts(*lines: str) -> Facts:
    return Facts(events=parse_lines(list(lines)).events)


def test_generate_on_the_openai_server_is_the_demo_servers_route_and_v1_completions_does_the_same():
    # vllm#6194: a browser's GET / and the client's /generate, beside V0 stats lines
    facts = _facts(
        'INFO:     127.0.0.1:55504 - "GET / HTTP/1.1" 404 Not Found',
        'INFO:     127.0.0.1:53798 - "POST /generate HTTP/1.1" 404 Not Found',
    )
    top = evaluate(facts).findings[0]
    assert top.rule == "OP-5.30"
    assert top.title == (
        "the client calls POST /generate, a path the server has no route for (HTTP 404): it is the route of vLLM's "
        "early demo server (vllm.entrypoints.api_server) and TGI"
    )
    assert top.actions[0] == (
        "Point the client's request URL at the OpenAI endpoints under /v1: use /v1/completions instead of /generate."
    )


@pytest.mark.parametrize(
    ("path", "use"),
    [
        ("/chat/completions", "/v1/chat/completions"),
        ("/v1/v1/chat/completions", "/v1/chat/completions"),
        ("/api/chat", "/v1/chat/completions"),
    ],
)
def test_a_base_url_without_or_with_a_doubled_v1_and_ollamas_routes_get_the_route_that_serves_them(path, use):
    [finding] = op5_routes.RULE_ROUTE.evaluate(_facts(f'INFO:     10.0.0.1:1 - "POST {path} HTTP/1.1" 404 Not Found'))
    assert f"use {use} instead of {path}" in finding.actions[0]


def test_an_unknown_path_lists_the_openai_routes_and_a_browsers_root_alone_says_nothing():
    [finding] = op5_routes.RULE_ROUTE.evaluate(_facts('INFO: 1.2.3.4:5 - "POST /infer HTTP/1.1" 404 Not Found'))
    assert "/v1/chat/completions, /v1/completions" in finding.actions[0] and finding.title.endswith("(HTTP 404)")
    browser = _facts(
        'INFO: 1.2.3.4:5 - "GET / HTTP/1.1" 404 Not Found',
        'INFO: 1.2.3.4:5 - "GET /favicon.ico HTTP/1.1" 404 Not Found',
    )
    assert op5_routes.RULE_ROUTE.evaluate(browser) == []


def test_a_request_that_succeeded_is_not_a_missing_route():
    facts = _facts('INFO:     1.2.3.4:5 - "POST /v1/chat/completions HTTP/1.1" 200 OK')
    assert op5_routes.RULE_ROUTE.evaluate(facts) == []
