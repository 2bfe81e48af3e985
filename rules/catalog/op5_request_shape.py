"""OP-5.55: a request whose body, or a field vLLM expects to be an object, is another JSON type: vLLM answers 500.

Why a rule of its own: vLLM's request models check a request with pydantic validators that run before the fields
are typed (`mode="before"`), and several of them read the raw body with `.get()`: a body that is a JSON string,
array, number or null, or a field such as `response_format`, `stream_options` or `structured_outputs` sent as a
string or a bool, raises `AttributeError: 'str' object has no attribute 'get'` in the API server instead of a
validation error, and the client gets HTTP 500 for its own mistake. Fixed for chat completions by vLLM PR #51654
(August 2026: found by contract testing, the log's only line was this one) and for the other endpoints by PR #52528;
PR #44537 shows the field form (`'bool' object has no attribute 'get'` for `structured_outputs: true`).
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

# What json.loads makes of a JSON value that is not an object, as Python names its type.
NOT_AN_OBJECT = re.compile(
    r"AttributeError: '(?P<type>str|list|bool|int|float|NoneType)' object has no attribute 'get'"
)
_JSON_NAME = {"str": "a string", "list": "an array", "bool": "true or false", "int": "a number", "float": "a number"}


def _in_api_server(event: LogEvent) -> bool:
    """The error was the API server's: its process prefix, or a frame in vLLM's entrypoints (a request model)."""
    return (
        (event.process or "").startswith("APIServer")
        or (event.raw or "").lstrip().startswith("(APIServer")
        or "/entrypoints/" in (event.code_file or "")
    )


def _check_request_shape(facts: Facts) -> list[Finding]:
    for event in facts.events_of(LogEventKind.UNPLACED_ERROR):
        found = NOT_AN_OBJECT.search(event.message or "")
        if found is not None and _in_api_server(event):
            return [_finding(event, found["type"])]
    return []


def _finding(event: LogEvent, kind: str) -> Finding:
    what = _JSON_NAME.get(kind, "null")
    return RULE.finding(
        Severity.MEDIUM,
        f"a request sent {what} where vLLM expects a JSON object (the body, or a field such as response_format): "
        "its validators called .get() on it and the API server answered HTTP 500",
        summary="vLLM's request models run validators on the raw body before its fields are typed; some read it with "
        ".get(), so a body that is not a JSON object, or an object-valued field sent as another type, fails as an "
        "AttributeError (HTTP 500) instead of a validation error (HTTP 400). The client's request is the cause; the "
        "server is fine.",
        evidence=[c.log_evidence(event, name="API server error", value=event.message)],
        actions=[
            'Fix the client\'s request: the body must be a JSON object, and response_format (`{"type": '
            '"json_object"}`, not `"json"`), stream_options and structured_outputs must be objects too; the '
            "access log's 500s show which endpoint and client sent it.",
            "Upgrade vLLM to a release with PR #51654 (chat completions) and PR #52528 (the other endpoints), which "
            "answer such a request with a validation error instead of 500.",
        ],
        confidence=0.75,
    )


RULE = Rule(
    code="OP-5.55",
    title="a request that is not a JSON object where vLLM expects one (HTTP 500)",
    category=Category.RELIABILITY,
    check=_check_request_shape,
    needs=("events",),
    page=RulePage(
        checks="`AttributeError: '<str|list|bool|int|float|NoneType>' object has no attribute 'get'` in the API "
        "server (its process prefix, or a frame in vLLM's entrypoints).",
        why="A malformed request reads as a server failure (HTTP 500) on releases before the fix; the client is to "
        "change, not the server.",
        example="`(APIServer pid=1) AttributeError: 'str' object has no attribute 'get'` from negative contract "
        "tests sending a string body to /v1/chat/completions (vLLM PR #51654).",
        fix="A JSON object body with object-valued fields as objects; a vLLM with PRs #51654 and #52528 answers 4xx.",
        limits="The same AttributeError raised by a tool parser or a plugin inside the API server reads the same; "
        "its traceback, when pasted, names the validator.",
        references=[
            "https://github.com/vllm-project/vllm/pull/51654",
            "https://github.com/vllm-project/vllm/pull/52528",
            "https://github.com/vllm-project/vllm/pull/44537",
        ],
    ),
)

RULES: list[Rule] = [RULE]
