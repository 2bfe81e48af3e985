"""OP-7.70: a token id past the tokenizer's vocabulary failing vLLM's detokenizer (vllm#2067's line, verbatim)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_tokenizer_vocab
from rules.evaluate import evaluate
from rules.facts import Facts
from tests.unit.rules.factories import config

LINE = "TypeError: argument 'tokens': 'NoneType' object cannot be converted to 'PyString'"


def test_the_line_alone_names_the_unknown_id_and_the_release_that_decodes_it():
    top = evaluate(Facts(events=parse_lines([LINE]).events)).findings[0]
    assert top.rule == "OP-7.70" and "token id its tokenizer does not have" in top.title
    assert top.actions[0].startswith("Upgrade vLLM to 0.4.1 or later")
    assert any("vocab_size in config.json" in action for action in top.actions)


def test_a_release_that_already_decodes_it_is_not_told_to_upgrade_for_it():
    facts = Facts(events=parse_lines([LINE]).events, config=config(vllm_version="0.6.3"))
    [finding] = op7_tokenizer_vocab.RULE_TOKENIZER_VOCAB.evaluate(facts)
    assert not finding.actions[0].startswith("Upgrade vLLM to 0.4.1")
