"""OP-7.113: a caller reading a field of vLLM's outputs that a release removed."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_output_fields
from rules.evaluate import evaluate
from rules.facts import Facts


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_pooling_outputs_embedding_is_a_caller_older_than_vllm_0_9_1():
    # ray-project/ray#54466, verbatim: Ray Serve LLM's /v1/embeddings answering 500
    top = evaluate(_facts(["AttributeError: 'PoolingOutput' object has no attribute 'embedding'"])).findings[0]
    assert top.rule == "OP-7.113"
    assert "PoolingOutput.embedding" in top.title and "0.9.1" in top.title
    assert "ray-project/ray PR #54467" in top.actions[0]
    assert "outputs.data" in top.actions[1]


def test_an_attribute_outside_the_table_is_not_read_as_a_removal():
    line = "AttributeError: 'PoolingOutput' object has no attribute 'prompt_token_ids'"
    assert op7_output_fields.RULE.evaluate(_facts([line])) == []
