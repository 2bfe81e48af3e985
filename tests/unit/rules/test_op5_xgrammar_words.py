"""OP-5.66: xgrammar refused a request's grammar or the inputs vLLM gave it, from the lines people pasted."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.evaluate import evaluate
from rules.facts import Facts
from tests.unit.rules.factories import top_finding

# mlc-ai/xgrammar#175, verbatim: vLLM's IPv4 test regex with an empty alternative, xgrammar 0.1.11
EBNF = (
    "RuntimeError: [11:16:07] /workspace/cpp/grammar_parser.cc:78: EBNF parse error at line 1, column 64: Expect "
    "element"
)
# vllm PR #13338, verbatim: xgrammar 0.1.13's changed bitmask op under V0's guided decoding (vLLM pinned 0.1.11)
BITMASK = "[2025-02-15T00:55:01Z] RuntimeError: bitmask must have the hidden size equal to ceilDiv(vocabSize, 32)."
# vllm PR #14826, verbatim: the vocabulary size handed to xgrammar was one short
VOCAB = (
    "ERROR 03-14 15:44:42 [core.py:337] ValueError: Input vocab_size less than minimum viable vocab size for "
    "tokenizer <class 'vllm.transformers_utils.tokenizer.get_cached_tokenizer.<locals>.CachedTokenizer'>."
)


def test_a_grammar_xgrammar_cannot_parse_names_the_regex_converter_and_another_backend():
    top = top_finding(EBNF)
    assert top.rule == "OP-5.66" and "could not parse" in top.title
    assert "`(a)?`" in top.actions[1] and "guidance" in top.actions[2]
    assert "xgrammar PR #183" in top.summary


def test_a_bitmask_of_another_size_is_xgrammar_at_another_release():
    top = top_finding(BITMASK)
    assert top.rule == "OP-5.66" and "releases not made for each other" in top.title
    assert "xgrammar==" in top.actions[0] and "0.1.11" in top.summary


def test_a_vocabulary_size_below_the_tokenizers_is_fixed_by_upgrading():
    top = top_finding(VOCAB)
    assert top.rule == "OP-5.66" and "vocabulary size below the tokenizer's" in top.title
    assert "PR #14826" in top.actions[0] and "len(tokenizer)" in top.actions[1]


def test_vllms_refusal_chained_after_it_points_at_the_parse_error():
    # vLLM's xgrammar backend re-raising the parse error as its own refusal (backend_xgrammar.py, 0.8-0.27)
    lines = [
        "Traceback (most recent call last):",
        '  File "/venv/vllm/v1/structured_output/backend_xgrammar.py", line 90, in compile_grammar',
        "    ctx = self.compiler.compile_grammar(grammar_spec)",
        EBNF,
        "",
        "The above exception was the direct cause of the following exception:",
        "",
        "Traceback (most recent call last):",
        '  File "/venv/vllm/v1/engine/processor.py", line 200, in _validate_structured_output',
        '    raise ValueError("Invalid grammar specification.") from e',
        "ValueError: Invalid grammar specification.",
    ]
    findings = evaluate(Facts(events=parse_lines(lines).events)).findings
    assert "EBNF parse error" in findings[0].actions[0]
    assert any(f.rule == "OP-5.66" for f in findings)
