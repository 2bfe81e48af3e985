"""OP-7.123: lm-format-enforcer's 'transformers is not installed' hiding a failed import of transformers' names."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_lmfe
from rules.evaluate import evaluate
from rules.facts import Facts


def test_lm_format_enforcers_import_message_asks_for_its_newer_release():
    # vllm#14401, verbatim
    line = 'ImportError: transformers is not installed. Please install it with "pip install transformers[torch]"'
    top = evaluate(Facts(events=parse_lines([line]).events)).findings[0]
    assert top.rule == "OP-7.123" and "lm-format-enforcer" in top.title
    assert "0.10.11" in top.actions[0]


def test_another_missing_package_is_not_read_as_lm_format_enforcers():
    line = "ModuleNotFoundError: No module named 'transformers'"
    assert op7_lmfe.RULE.evaluate(Facts(events=parse_lines([line]).events)) == []
