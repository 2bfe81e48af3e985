"""OP-7.70: a token id past the tokenizer's vocabulary failing vLLM's detokenizer (vllm#2067's line, verbatim)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_tokenizer_vocab
from rules.evaluate import evaluate
from rules.events import LogEventKind
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


def test_the_message_without_its_class_is_read_the_same():
    # vllm#2104, verbatim: the reporter pasted the message alone
    top = evaluate(Facts(events=parse_lines([LINE.removeprefix("TypeError: ")]).events)).findings[0]
    assert top.rule == "OP-7.70" and "(tokenizers' None for an unknown id)" in top.title


def test_tekkens_empty_bytes_are_the_mistral_tokenizers_unknown_id_fixed_in_0_6_4():
    # vllm#9557, verbatim with the paste's indent: MistralTokenizer's convert_tokens_to_string on an id past tekken's
    # vocabulary (a contributor traced it; vLLM PR #9625 fixed it)
    top = evaluate(Facts(events=parse_lines(["  KeyError: b''"]).events)).findings[0]
    assert top.rule == "OP-7.70" and "the Mistral tokenizer (tekken)" in top.title
    assert top.actions[0].startswith("Upgrade vLLM to 0.6.4 or later: PR #9625")
    newer = Facts(events=parse_lines(["KeyError: b''"]).events, config=config(vllm_version="0.6.4"))
    [finding] = op7_tokenizer_vocab.RULE_TOKENIZER_VOCAB.evaluate(newer)
    assert not finding.actions[0].startswith("Upgrade vLLM") and "mistral_common" in finding.actions[0]
    assert finding.confidence < top.confidence  # the guard is in this release: the words came another way
    assert not parse_lines(["KeyError: b'abc'"]).of_kind(LogEventKind.DETOKENIZER_UNKNOWN_ID)
    assert not parse_lines(["SomeKeyError: b''"]).of_kind(LogEventKind.DETOKENIZER_UNKNOWN_ID)
