"""OP-5.58: a token id the tokenizer cannot hold (PyO3's overflow on a negative id)."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding


def test_the_error_body_is_a_request_with_a_negative_token_id_not_a_server_fault():
    # vllm PR #17664, verbatim: POST /detokenize with tokens [-1], found by schema fuzzing
    body = (
        '{"object":"error","message":" [\'out of range integral type conversion attempted\']","type":"Bad '
        'Request","param":null,"code":400}'
    )
    top = top_finding(body)
    assert top.rule == "OP-5.58" and "negative" in top.title
    assert "The request is at fault" in top.summary and "-100" in top.actions[0]


def test_the_python_exception_reads_the_same():
    assert top_finding("OverflowError: out of range integral type conversion attempted").rule == "OP-5.58"
