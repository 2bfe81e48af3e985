"""OP-7.73 and VC-1 on vLLM's swap-space check: the --swap-space that fits the host the message describes
(vllm#19936's warning, verbatim)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.evaluate import evaluate
from rules.facts import Facts
from tests.unit.rules.factories import config

WARNED = (
    "WARNING 06-21 08:32:55 config.py:1148] Possibly too large swap space. 4.00 GiB out of the 7.74 GiB total CPU "
    "memory is allocated for the swap space."
)
REFUSED = (
    "ValueError: Too large swap space. 32.00 GiB out of the 30.00 GiB total CPU memory is allocated for the swap space."
)


def _swap(finding):
    return next((c.current, c.proposed) for c in finding.changes if c.flag == "--swap-space")


def test_the_warning_is_a_low_note_with_the_value_under_40_percent_and_the_cpu_backends_caveat():
    top = evaluate(Facts(events=parse_lines([WARNED]).events)).findings[0]
    assert top.rule == "OP-7.73" and top.severity.value == "low" and "(52%)" in top.title
    assert _swap(top) == ("4", "3")  # 3 GiB is 39 % of 7.74 GiB
    assert any("CPU backend the swap space is never allocated" in action for action in top.actions)


def test_the_refusal_stays_vllms_own_words_with_the_value_per_gpu_over_the_tensor_parallel_ranks():
    facts = Facts(events=parse_lines([REFUSED]).events, config=config(tensor_parallel_size=4))
    top = evaluate(facts).findings[0]
    assert top.rule == "VC-1" and top.severity.value == "critical"
    assert _swap(top) == ("8", "3")  # 32 GiB over 4 ranks; 4 x 3 GiB = 40 % of 30 GiB, at the warning, not above
    assert not [f for f in evaluate(facts).findings if f.rule == "OP-7.73"]
