"""OP-5.47: a 400 carrying Python's json error: JSON inside the request (a replayed tool call's arguments)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op5_request_json, op5_request_shape
from rules.evaluate import evaluate
from rules.facts import Facts


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_a_json_error_in_a_bad_request_body_points_at_the_replayed_tool_call_arguments():
    # vllm#43995, verbatim: the body inside a sentence and Markdown's triple backticks
    line = (
        'Yields: ```{"error":{"message":"Expecting \',\' delimiter: line 1 column 54 (char 53)","type":'
        '"BadRequestError","param":null,"code":400}}```'
    )
    top = evaluate(_facts([line])).findings[0]
    assert top.rule == "OP-5.47"
    assert "line 1, column 54" in top.title
    assert "function.arguments" in top.actions[0]


def test_the_same_words_from_a_tool_parsers_log_line_are_not_a_refused_request():
    line = (
        "(APIServer pid=1) ERROR 08-28 20:53:08 [hermes_tool_parser.py:148] json.decoder.JSONDecodeError: Extra data: "
        "line 3 column 1 (char 56)"
    )
    assert op5_request_json.RULE.evaluate(_facts([line])) == []


def test_the_api_servers_own_log_of_a_json_error_in_a_chat_request_is_the_same_refusal():
    # 567-labs/instructor#1336, verbatim: V0's header, serving_chat.py
    line = (
        "ERROR 02-08 11:19:09 serving_chat.py:193] json.decoder.JSONDecodeError: Expecting value: line 1 column 1 "
        "(char 0)"
    )
    top = evaluate(_facts([line])).findings[0]
    assert top.rule == "OP-5.47" and "line 1, column 1" in top.title


def test_a_request_that_is_not_a_json_object_is_the_clients_in_the_api_server_only():
    # vllm PR #51654, verbatim (a CI log that showed the escape as U+FFFD): a string body sent to /v1/chat/completions
    line = (
        "2026-08-07T10:43:01.3393747Z \ufffd[0;36m(APIServer pid=1)\ufffd[0;0m AttributeError: 'str' object has no "
        "attribute 'get'"
    )
    [finding] = op5_request_shape.RULE.evaluate(Facts(events=parse_lines([line]).events))
    assert finding.title.startswith("a request sent a string where vLLM expects a JSON object")
    assert "PR #51654" in finding.actions[1]
    # the same words with nothing to say they were the API server's are left to VC-2
    bare = "AttributeError: 'str' object has no attribute 'get'"
    assert op5_request_shape.RULE.evaluate(Facts(events=parse_lines([bare]).events)) == []
