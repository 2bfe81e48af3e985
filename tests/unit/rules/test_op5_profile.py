"""OP-5.24: a pasted py-spy profile whose hottest row is vLLM's sampler."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op5_profile
from rules.evaluate import evaluate
from rules.facts import Facts

HEADER = [
    "Total Samples 3939",
    "GIL: 8.00%, Active: 100.00%, Threads: 4, Processes 1",
    "  %Own   %Total  OwnTime  TotalTime  Function (filename)",
]


def _profile(*rows: str) -> Facts:
    return Facts(events=parse_lines([*HEADER, *rows]).events)


def test_the_penalties_holding_most_samples_point_at_torchs_cpu_threads():
    # vllm#9113: py-spy top in a KServe pod
    facts = _profile(
        " 88.00%  88.00%   61.00s    61.44s   apply_penalties (vllm/model_executor/layers/utils.py)",
        "  2.00%   2.00%   0.980s    0.980s   async_tensor_h2d (vllm/utils.py)",
    )
    top = evaluate(facts).findings[0]
    assert top.rule == "OP-5.24" and top.title.startswith("the engine spends 88% of its time in apply_penalties")
    assert top.actions[0].startswith("Set OMP_NUM_THREADS in the server's environment")
    assert "without presence/frequency/repetition penalties" in top.actions[1]
    assert top.evidence[0].value == 0.88


def test_a_spread_profile_or_a_hot_model_forward_is_left_to_the_person_who_profiled():
    spread = _profile(" 30.00%  30.00%   6.00s    6.00s   apply_penalties (vllm/model_executor/layers/utils.py)")
    forward = _profile(" 90.00%  90.00%   9.00s    9.00s   forward (vllm/model_executor/models/llama.py)")
    for facts in (spread, forward):
        assert op5_profile.RULE_SAMPLER_HOTSPOT.evaluate(facts) == []
