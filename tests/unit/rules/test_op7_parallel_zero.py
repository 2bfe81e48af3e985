"""OP-7.95: a parallel size of 0 reaching vLLM's division (xorbitsai/inference#2552's and #2303's frame, verbatim)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_parallel_zero
from rules.evaluate import evaluate
from rules.facts import Facts

_FRAME = [
    '  File "/usr/local/lib/python3.10/dist-packages/vllm/config.py", line 402, in verify_with_parallel_config',
    "    if total_num_attention_heads % tensor_parallel_size != 0:",
]


def _facts(*lines: str) -> Facts:
    return Facts(events=parse_lines(list(lines)).events)


def test_the_heads_check_dividing_by_zero_is_no_visible_gpu():
    for words in ("integer division or modulo by zero", "integer modulo by zero"):
        top = evaluate(_facts(*_FRAME, f"ZeroDivisionError: {words}")).top
        assert top.rule == "OP-7.95", words
        assert top.title.startswith("vLLM divided by tensor_parallel_size and it was 0")
        assert "torch.cuda.device_count()" in top.actions[0] and "--tensor-parallel-size" in top.actions[1]


def test_a_division_by_something_else_is_not_a_parallel_size():
    frame = [_FRAME[0], "    scale = 1.0 / logit_scale"]
    facts = _facts(*frame, "ZeroDivisionError: float division by zero")
    assert op7_parallel_zero.RULE_PARALLEL_ZERO.evaluate(facts) == []


def test_the_exception_alone_names_no_size():
    facts = _facts("ZeroDivisionError: integer division or modulo by zero")
    assert op7_parallel_zero.RULE_PARALLEL_ZERO.evaluate(facts) == []
