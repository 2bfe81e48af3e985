"""OP-7.87: the V1 engine's batch queue got no model output (vllm#31588's line, verbatim)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_batch_queue
from rules.evaluate import evaluate
from rules.facts import Facts


def test_no_model_output_in_the_batch_queue_turns_async_scheduling_off():
    line = "AttributeError: 'NoneType' object has no attribute 'sampled_token_ids'"
    top = evaluate(Facts(events=parse_lines([line]).events)).top
    assert top.rule == "OP-7.87"
    assert [(c.flag, c.proposed) for c in top.changes] == [("--async-scheduling", "false")]
    assert "--no-async-scheduling" in top.actions[0]


def test_another_attribute_of_none_is_not_the_batch_queues():
    line = "AttributeError: 'NoneType' object has no attribute 'copy'"
    assert op7_batch_queue.RULE_BATCH_QUEUE.evaluate(Facts(events=parse_lines([line]).events)) == []
