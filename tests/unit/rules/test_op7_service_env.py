"""OP-7.68: VLLM_PORT filled by a Kubernetes Service named vllm, read from vLLM's own refusal (0.9 and later) and
from Python's older int() error (vllm#15613's line, verbatim)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_service_env
from rules.evaluate import evaluate
from rules.facts import Facts
from tests.unit.rules.factories import top_finding

OLDER = "ERROR 03-27 03:12:01 engine.py:400] invalid literal for int() with base 10: 'tcp://10.43.1.39:8000'"
VLLMS = (
    "ValueError: VLLM_PORT 'tcp://10.43.1.39:8000' appears to be a URI. This may be caused by a Kubernetes service "
    "discovery issue,check the warning in: https://docs.vllm.ai/en/latest/configuration/env_vars.html"
)


def test_pythons_int_error_on_a_link_address_names_the_service_and_its_two_fixes():
    top = top_finding(*OLDER.splitlines())
    assert top.rule == "OP-7.68" and "Service named vllm" in top.title
    assert top.evidence[0].value == "tcp://10.43.1.39:8000"
    assert [(c.flag, c.kind) for c in [*top.changes, *top.alternatives]] == [
        ("Service name", "setting"),
        ("pod spec enableServiceLinks", "setting"),
    ]
    assert "Python's int() refused it" in top.summary


def test_vllms_own_refusal_is_answered_above_the_catalogs_words():
    findings = evaluate(Facts(events=parse_lines([VLLMS]).events)).findings
    assert [f.rule for f in findings[:2]] == ["OP-7.68", "VC-1"]
    assert "vLLM refused it" in findings[0].summary


def test_an_int_error_on_anything_but_an_address_is_not_this():
    for words in ("invalid literal for int() with base 10: '4.0'", "invalid literal for int() with base 10: 'auto'"):
        assert (
            op7_service_env.RULE_SERVICE_ENV.evaluate(Facts(events=parse_lines([f"ValueError: {words}"]).events)) == []
        )
