"""OP-7.91: TRL's command line without `vllm-serve` (wdrink/SimpleAR#24's line, verbatim; huggingface/trl#3139 has the
same words after the usage line)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_trl_server
from rules.evaluate import evaluate
from rules.facts import Facts

_REFUSAL = (
    "TRL CLI: error: argument command: invalid choice: 'vllm-serve' (choose from 'chat', 'dpo', 'env', 'grpo', 'kto', "
    "'sft')"
)


def _facts(*lines: str) -> Facts:
    return Facts(events=parse_lines(list(lines)).events)


def test_the_refusal_is_a_trl_older_than_the_server_command():
    top = evaluate(_facts(_REFUSAL)).top
    assert top.rule == "OP-7.91"
    assert "has no `vllm-serve` command (it has 'chat', 'dpo', 'env', 'grpo', 'kto', 'sft')" in top.title
    assert "older than TRL 0.16.0" in top.title
    assert top.actions[0].startswith(
        "Upgrade TRL in the environment that runs the command: `pip install --upgrade trl`"
    )


def test_the_usage_line_above_it_changes_nothing():
    [finding] = op7_trl_server.RULE_TRL_NO_SERVE.evaluate(_facts("usage: trl", _REFUSAL))
    assert finding.evidence[0].value == "'chat', 'dpo', 'env', 'grpo', 'kto', 'sft'"


def test_another_invalid_choice_is_not_trls_server():
    facts = _facts(
        "vllm: error: argument subparser: invalid choice: 'server' (choose from 'chat', 'complete', 'serve')"
    )
    assert op7_trl_server.RULE_TRL_NO_SERVE.evaluate(facts) == []
