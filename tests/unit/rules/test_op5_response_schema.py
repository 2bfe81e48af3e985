"""OP-5.46: pydantic refusing a response vLLM built, read as the server's bug and not the client's request."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op5_response_schema
from rules.evaluate import evaluate
from rules.facts import Facts


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_a_response_model_refused_is_the_servers_bug_with_the_field_it_filled():
    # vllm-project/vllm#33873, verbatim: /pooling token_classify on bge-m3 with an input under four tokens
    line = (
        '"message": "3 validation errors for PoolingResponseData\\ndata.list[list[float]]\\n  Input should be a valid '
        'list [type=list_type, input_value=0.28458935022354126, input_type=float]"'
    )
    top = evaluate(_facts([line])).findings[0]
    assert top.rule == "OP-5.46"
    assert top.title == (
        "vLLM built a response its own schema refuses: PoolingResponseData (data.list[list[float]]); the server's "
        "bug, not the request"
    )


def test_a_request_model_refused_stays_the_clients_request():
    line = (
        '{"error":{"message":"1 validation error for ChatCompletionRequest\\nfunctions\\n  Extra inputs are not '
        'permitted"}}'
    )
    assert op5_response_schema.RULE.evaluate(_facts([line])) == []
    assert evaluate(_facts([line])).findings[0].rule == "OP-5.28"
