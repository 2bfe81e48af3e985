"""OP-5.59: vLLM of mid-2024 capped Gemma 2's context at its sliding window."""

from __future__ import annotations

import pytest

from advisor.collect.logs import parse_lines
from rules.evaluate import evaluate
from rules.facts import Facts


@pytest.mark.parametrize(
    "line",
    [
        # vllm#6220, verbatim as a commenter quoted it (in backticks); vllm#7084, verbatim (vLLM 0.5.3.post1)
        "`WARNING 07-08 19:39:49 utils.py:562] Gemma 2 uses sliding window attention for every odd layer, which is "
        "currently not supported by vLLM. Disabling sliding window and capping the max length to the sliding window "
        "size (4096).`",
        "WARNING 08-06 12:10:50 utils.py:569] Gemma 2 uses sliding window attention for every odd layer, which is "
        "currently not supported by vLLM. Disabling sliding window and capping the max length to the sliding window "
        "size (4096).",
    ],
)
def test_the_cap_is_named_with_the_window_and_the_length_to_serve(line: str):
    top = evaluate(Facts(events=parse_lines([line]).events)).top
    assert top.rule == "OP-5.59" and "(4,096 tokens)" in top.title
    assert (top.changes[0].flag, top.changes[0].proposed) == ("--max-model-len", "4096")
    assert "vllm#7442" in top.actions[0] and "FLASHINFER" in top.actions[1]
