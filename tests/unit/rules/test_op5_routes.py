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


def test_fastapis_not_found_body_in_a_clients_words_is_a_base_url_with_v1_doubled_or_missing():
    # 1Panel-dev/MaxKB#3993: a reranker registered with a base URL ending in /v1
    line = (
        "认证失败，请检查参数是否正确：headers: {'server': 'uvicorn', 'content-type': 'application/json'}, "
        "status_code: 404, body: {'detail': 'Not Found'}"
    )
    [finding] = op5_routes.RULE_ROUTE.evaluate(_facts(line))
    assert finding.title.startswith("the client calls a path the server has no route for (HTTP 404")
    assert "without /v1, or it calls /v1/v1/" in finding.actions[0] and "/v1/rerank" in finding.actions[1]


def test_a_request_that_succeeded_is_not_a_missing_route():
    facts = _facts('INFO:     1.2.3.4:5 - "POST /v1/chat/completions HTTP/1.1" 200 OK')
    assert op5_routes.RULE_ROUTE.evaluate(facts) == []


def test_a_500_with_no_exception_in_the_text_says_where_the_cause_is():
    # vllm#40856: two stats lines and the 500, the exception cut from the paste
    facts = _facts(
        "(APIServer pid=6051) DEBUG 04-25 02:26:25 [v1/metrics/loggers.py:259] Engine 000: Avg prompt throughput: "
        "0.0 tokens/s, Avg generation throughput: 0.0 tokens/s, Running: 0 reqs, Waiting: 0 reqs, GPU KV cache "
        "usage: 0.0%, Prefix cache hit rate: 0.0%, MM cache hit rate: 98.6%",
        '(APIServer pid=6051) INFO:     10.10.7.200:43364 - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server '
        "Error",
    )
    [finding] = op5_routes.RULE_SERVER_ERROR.evaluate(facts)
    assert finding.title == (
        "the server failed 1 request(s) to /v1/chat/completions with HTTP 500; the exception is not in the text"
    )
    assert finding.actions[0].startswith("Read the API server's log around the 500 line")


def test_a_500_beside_the_exception_that_caused_it_is_left_to_the_rule_that_reads_the_exception():
    facts = _facts(
        "ValueError: Attempted to assign 462 = 462 multimodal tokens to 463 placeholders",
        'INFO:     10.0.0.1:1 - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error',
    )
    assert op5_routes.RULE_SERVER_ERROR.evaluate(facts) == []


def test_400s_with_no_reason_in_the_text_say_where_the_reason_is_and_how_to_have_it_logged():
    # vLLM 0.32 writes a refusal's reason into the response body and logs it only at DEBUG or with --log-error-stack
    facts = _facts(
        '(APIServer pid=1) INFO:     10.0.0.5:51234 - "POST /v1/chat/completions HTTP/1.1" 400 Bad Request',
        'INFO:     10.0.0.5:51236 - "POST /v1/completions HTTP/1.1" 400 Bad Request',
        'INFO:     10.0.0.5:51238 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
    )
    [top] = evaluate(facts).findings
    assert top.rule == "OP-5.42"
    assert top.title == (
        "the server refused 2 request(s) to /v1/chat/completions, /v1/completions as invalid (HTTP 400); the reason "
        "is not in the text"
    )
    assert "response's body" in top.actions[0] and "--log-error-stack" in top.actions[1]
    assert "VLLM_LOGGING_LEVEL=DEBUG" in top.actions[1]


def test_a_400_beside_its_reason_is_left_to_the_rule_that_reads_the_reason():
    access = 'INFO:     10.0.0.1:1 - "POST /v1/chat/completions HTTP/1.1" 400 Bad Request'
    too_long = (
        "ERROR 12-01 03:00:00 [serving_chat.py:200] ValueError: This model's maximum context length is 4096 tokens. "
        "However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the "
        "length of the messages or completion."
    )
    facts = _facts(too_long, access)
    assert op5_routes.RULE_REFUSED.evaluate(facts) == []
    assert evaluate(facts).findings[0].rule != "OP-5.42"


def test_a_405_in_a_clients_words_is_a_proxy_or_redirect_in_between():
    # vllm#7463: chat completions through Cloudflare answered 405; "It was cloudflare's fault"
    facts = _facts("openai.APIStatusError: Error code: 405 - {'detail': 'Method Not Allowed'}")
    [finding] = op5_routes.RULE_METHOD_NOT_ALLOWED.evaluate(facts)
    assert finding.title == (
        "HTTP 405 Method Not Allowed for the client's POST: a proxy or redirect in between changed it"
    )
    assert finding.actions[0].startswith("Call the server directly, past the proxy: `curl -X POST")
    assert not [f for f in evaluate(facts).findings if f.rule == "VC-2"]  # the client's exception is this, not unplaced


def test_a_get_on_a_post_route_in_the_access_log_names_the_method():
    facts = _facts('INFO:     10.0.0.1:5 - "GET /v1/chat/completions HTTP/1.1" 405 Method Not Allowed')
    [finding] = op5_routes.RULE_METHOD_NOT_ALLOWED.evaluate(facts)
    assert finding.title == "the server got GET /v1/chat/completions, a route that takes POST only (HTTP 405)"


def test_uvicorns_exception_line_alone_is_a_500_whose_traceback_follows_it():
    # vllm#5302 and vllm#10215, verbatim: the line uvicorn prints before the traceback of a request that raised
    [finding] = op5_routes.RULE_SERVER_ERROR.evaluate(
        Facts(events=parse_lines(["ERROR:    Exception in ASGI application"]).events)
    )
    assert finding.title.startswith("the server failed 1 request(s) to a route the text does not name with HTTP 500")
    assert "`Exception in ASGI application` is followed by it" in finding.actions[0]


def test_a_clients_words_for_a_500_are_a_request_the_server_failed():
    """rllm-org/rllm#217's line, verbatim: the client's exception, not the server's access line."""
    line = "Exception: API request failed with status 500: Internal Server Error"
    top = evaluate(Facts(events=parse_lines([line]).events)).top
    assert top.rule == "OP-5.31" and "HTTP 500" in top.title


@pytest.mark.parametrize(
    ("line", "path"),
    [
        ("Internal Server Error", None),  # vllm#3145: Starlette's plain-text body, all the client showed
        ("openai.InternalServerError: Internal Server Error", None),
        ("HTTP/1.1 500 Internal Server Error", None),
        # FoundationAgents/OpenManus#827: an agent's words for the SDK's error
        ("2025-03-19 09:23:02.576 | ERROR    | app.llm:ask_tool:725 - OpenAI API error: Internal Server Error", None),
        ("Error: 500 status code (no body)", None),  # the OpenAI Node SDK's words without the body
        (
            "requests.exceptions.HTTPError: 500 Server Error: Internal Server Error for url: "
            "http://localhost:8000/v1/chat/completions",
            "/v1/chat/completions",
        ),
    ],
)
def test_a_500s_body_status_line_or_requests_words_alone_are_a_request_the_server_failed(line, path):
    top = evaluate(Facts(events=parse_lines([line]).events)).top
    assert top.rule == "OP-5.31" and "HTTP 500" in top.title
    assert (path in top.title) if path else "does not name" in top.title


def test_a_404_on_a_route_vllm_serves_is_an_unserved_model_name_or_another_server():
    """aibrix#1357's client line (httpx) and the access log's form of the same: /v1/chat/completions exists."""
    for line in (
        "httpx.HTTPStatusError: Client error '404 Not Found' for url 'http://192.168.0.130:8000/v1/chat/completions'",
        'INFO:     10.0.0.1:1 - "POST /v1/chat/completions HTTP/1.1" 404 Not Found',
    ):
        [finding] = op5_routes.RULE_ROUTE.evaluate(_facts(line))
        assert finding.title.startswith("/v1/chat/completions answered 404: it is one of vLLM's routes"), line
        assert finding.changes[0].flag == "--served-model-name" and "/v1/models" in finding.actions[0]


def test_the_node_sdks_400_without_its_body_says_where_the_reason_is():
    # cline/cline#396: Cline's OpenAI-compatible provider against vLLM
    top = evaluate(Facts(events=parse_lines(["400 status code (no body)"]).events)).top
    assert top.rule == "OP-5.42" and "HTTP 400" in top.title and "--log-error-stack" in top.actions[1]


def test_an_error_body_with_an_empty_message_is_read_by_its_type_as_the_status_it_names():
    # vllm#57725 (a 500 for a malformed structured-output spec) and microsoft/autogen#5965 (a 400), verbatim
    failed = '{"error": {"message": "", "type": "InternalServerError", "param": null, "code": 500}}'
    top = evaluate(Facts(events=parse_lines([failed]).events)).findings[0]
    assert top.rule == "OP-5.31" and "HTTP 500" in top.title
    refused = (
        "`openai.BadRequestError: Error code: 400 - {'object': 'error', 'message': '', 'type': 'BadRequestError', "
        "'param': None, 'code': 400}`"
    )
    top = evaluate(Facts(events=parse_lines([refused]).events)).findings[0]
    assert top.rule == "OP-5.42" and "HTTP 400" in top.title
