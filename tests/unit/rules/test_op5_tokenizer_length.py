"""OP-5.44: transformers' tokenizer-length warning read as the tokenizer's figure, not vLLM's limit (vllm#14652's line,
verbatim)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op5_tokenizer_length
from rules.evaluate import evaluate
from rules.facts import Facts
from tests.unit.rules.factories import config

LINE = (
    "Token indices sequence length is longer than the specified maximum sequence length for this model (39682 > 16384)."
    " Running this sequence through the model will result in indexing errors"
)


def test_the_warning_alone_is_a_low_note_that_names_vllms_own_limit():
    top = evaluate(Facts(events=parse_lines([LINE]).events)).findings[0]
    assert top.rule == "OP-5.44" and top.severity.value == "low" and "39,682" in top.title and "16,384" in top.title
    assert "--max-model-len" in top.summary and not top.changes


def test_the_launchs_max_model_len_says_whether_vllm_serves_the_sequence():
    def summary(max_model_len: int) -> str:
        facts = Facts(events=parse_lines([LINE]).events, config=config(max_model_len=max_model_len))
        [finding] = op5_tokenizer_length.RULE_TOKENIZER_LENGTH.evaluate(facts)
        return finding.summary

    assert "the sequence fits, and vLLM serves it" in summary(163840)
    assert "vLLM refuses it with its own error" in summary(32768)
