"""OP-7.98: a table of vLLM's keyed by platform has no entry for the one it runs on."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_platform_table
from rules.evaluate import evaluate
from rules.facts import Facts


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_a_bare_keyerror_on_gaudi_is_the_scaled_matmul_table():
    # vllm-gaudi#567: a w8a8 checkpoint on Gaudi 3, the kernel chooser has no HPU entry
    top = evaluate(_facts(["KeyError: <PlatformEnum.HPU: 4>"])).findings[0]
    assert top.rule == "OP-7.98"
    assert top.title.startswith("vLLM has no FP8 or INT8 scaled-matmul kernel for Intel Gaudi (HPU)")
    assert "unquantized (BF16)" in top.actions[0] and "vllm-gaudi#917" in top.actions[1]


def test_the_failing_line_decides_which_table():
    chooser = [
        "Traceback (most recent call last):",
        '  File "/opt/vllm/vllm/model_executor/layers/quantization/kernels/scaled_mm/__init__.py", line 355, in '
        "choose_scaled_mm_linear_kernel",
        "    platform_kernels = possible_kernels[current_platform._enum]",
        "KeyError: <PlatformEnum.OOT: 6>",
    ]
    [kernels] = op7_platform_table.RULE_PLATFORM_TABLE.evaluate(_facts(chooser))
    assert "out-of-tree platform plugin" in kernels.title and "scaled-matmul" in kernels.title
    other = [
        "Traceback (most recent call last):",
        '  File "/x/vllm/attention/selector.py", line 40, in pick',
        "    backend = _BACKENDS[current_platform._enum]",
        "KeyError: <PlatformEnum.TPU: 3>",
    ]
    [table] = op7_platform_table.RULE_PLATFORM_TABLE.evaluate(_facts(other))
    assert table.title.startswith("vLLM has no entry for TPU in a table of its own")


def test_other_keyerrors_are_not_read():
    assert op7_platform_table.RULE_PLATFORM_TABLE.evaluate(_facts(["KeyError: 'chatcmpl-8a6f39cb01952274'"])) == []
