"""OP-3.9: the tensor-parallel size does not divide the model's key-value heads (a bare assertion's source line)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op3_kv_heads
from rules.evaluate import evaluate
from rules.facts import Facts, ModelFacts
from tests.unit.rules.factories import config

# vllm#1581, verbatim with its indentation: ChatGLM3 (two KV groups) on four GPUs; a maintainer explained that the
# tensor-parallel size must divide the KV heads, and two GPUs worked
ASSERTION = "    assert self.total_num_kv_heads % tp_size == 0"


def test_the_assertion_alone_is_the_tensor_parallel_size_against_the_kv_heads():
    top = evaluate(Facts(events=parse_lines([ASSERTION]).events)).top
    assert top.rule == "OP-3.9" and "key-value heads" in top.title
    assert top.changes[0].flag == "--tensor-parallel-size" and top.changes[0].proposed.startswith("<")
    assert "num_key_value_heads" in top.actions[0] and "multi_query_group_num" in top.actions[0]


def test_with_the_launch_and_the_model_known_the_largest_size_that_divides_the_heads_is_proposed():
    events = parse_lines([ASSERTION]).events
    facts = Facts(events=events, config=config(tensor_parallel_size=4), model=ModelFacts(num_kv_heads=2))
    [finding] = op3_kv_heads.RULE.evaluate(facts)
    assert (finding.changes[0].current, finding.changes[0].proposed) == ("4", "2")
    six = Facts(events=events, config=config(tensor_parallel_size=6), model=ModelFacts(num_kv_heads=8))
    assert op3_kv_heads.RULE.evaluate(six)[0].changes[0].proposed == "4"


def test_the_replicating_branchs_assertion_reads_the_same_and_other_assertions_do_not():
    replicate = "    assert tp_size % self.total_num_kv_heads == 0"
    assert op3_kv_heads.RULE.evaluate(Facts(events=parse_lines([replicate]).events))
    other = "    assert self.total_num_heads % tp_size == 0"
    assert op3_kv_heads.RULE.evaluate(Facts(events=parse_lines([other]).events)) == []
