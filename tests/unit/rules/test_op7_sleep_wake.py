"""OP-7.100: sleep mode's wake_up could not map vLLM's memory back."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_sleep_wake
from rules.evaluate import evaluate
from rules.facts import Facts


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_out_of_memory_at_wake_up_names_who_took_the_memory_in_an_http_body():
    # llm-d-incubation/llm-d-fast-model-actuation#746: a second vLLM instance on the GPU, the body of an HTTP 500
    body = (
        '{"error":{"message":"Call to wake_up method failed: CUDA Error: out of memory at <path>:163",'
        '"type":"InternalServerError","param":null,"code":500}}'
    )
    top = evaluate(_facts([body])).findings[0]
    assert top.rule == "OP-7.100" and "another process" in top.title
    assert "empty_cache" in top.actions[0] and "tags=weights" in top.actions[1]


def test_the_allocators_own_words_other_than_memory_are_a_failed_cycle():
    line = (
        "Exception: Call to wake_up method failed: Worker failed with error 'CUDA Error: invalid argument at "
        "/workspace/csrc/cumem_allocator.cpp:66'"
    )
    [finding] = op7_sleep_wake.RULE_SLEEP_WAKE.evaluate(_facts([line]))
    assert "(invalid argument)" in finding.title and "restart the server" in finding.actions[0]
