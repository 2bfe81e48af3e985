"""OP-5.48: a client failing to read the server's answer (an error body read as a completion)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op5_client_parse
from rules.evaluate import evaluate
from rules.facts import Facts

# openai 0.28.1's api_requestor.py, the frame that reads an error body's `error` key
OLD_OPENAI_FRAME = [
    "Traceback (most recent call last):",
    '  File "/opt/conda/lib/python3.10/site-packages/openai/api_requestor.py", line 413, in handle_error_response',
    '    error_data = resp["error"]',
]


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_a_bare_keyerror_for_choices_is_an_error_body_read_as_a_completion():
    # stanfordnlp/dspy#1242, verbatim
    top = evaluate(_facts(["KeyError: 'choices'"])).findings[0]
    assert top.rule == "OP-5.48"
    assert "without `choices`" in top.title
    assert "raw body" in top.actions[0]


def test_the_clients_package_is_named_from_its_frame():
    lines = [
        "Traceback (most recent call last):",
        '  File "/usr/lib/python3.11/site-packages/dsp/modules/hf_client.py", line 180, in _generate',
        '    completions = json_response["choices"]',
        "KeyError: 'choices'",
    ]
    top = evaluate(_facts(lines)).findings[0]
    assert top.rule == "OP-5.48" and top.title.startswith("The client (dsp)")


def test_langchains_null_choices_is_the_same_failure():
    top = evaluate(_facts(["TypeError: Received response with null value for `choices`."])).findings[0]
    assert top.rule == "OP-5.48"


def test_old_openai_failing_on_vllms_top_level_error_body_says_to_read_the_body_and_upgrade():
    for said in ("KeyError: 'error'", "TypeError: string indices must be integers"):
        top = evaluate(_facts([*OLD_OPENAI_FRAME, said])).findings[0]
        assert top.rule == "OP-5.48"
        assert "openai client before 1.0" in top.title and "0.10.1" in top.summary
        assert "Invalid response object from API" in top.actions[0] and "openai 1.x" in top.actions[1]


def test_the_body_openai_quotes_next_outranks_the_clients_failure():
    lines = [
        *OLD_OPENAI_FRAME,
        "KeyError: 'error'",
        "",
        "During handling of the above exception, another exception occurred:",
        "",
        'openai.error.APIError: Invalid response object from API: \'{"object":"error","message":"As of '
        "transformers v4.44, default chat template is no longer allowed, so you must provide a chat template if the "
        'tokenizer does not define one.","type":"BadRequestError","param":null,"code":400}\' (HTTP response code was '
        "400)",
    ]
    rules = [finding.rule for finding in evaluate(_facts(lines)).findings]
    assert rules[0] == "VC-1" and "OP-5.48" in rules


def test_a_keyerror_for_error_outside_openais_reader_is_not_read_as_one():
    assert op5_client_parse.RULE.evaluate(_facts(["KeyError: 'error'"])) == []
    assert op5_client_parse.RULE.evaluate(_facts(["TypeError: string indices must be integers"])) == []
    assert op5_client_parse.RULE.evaluate(_facts(["KeyError: 'choice'"])) == []
