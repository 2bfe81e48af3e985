"""HL-9: torch.multinomial refusing NaN or inf probabilities, from the lines people pasted (vllm#641, vllm#1623's
RayTaskError repr, verbatim)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import health_corrupted
from rules.evaluate import evaluate
from rules.facts import Facts
from tests.unit.rules.factories import config

ALONE = "RuntimeError: probability tensor contains either `inf`, `nan` or element < 0"
IN_RAY = (
    "future: <Future finished exception=RayTaskError(RuntimeError)(RuntimeError('probability tensor contains either "
    "`inf`, `nan` or element < 0'))>"
)


def test_the_line_alone_or_inside_rays_repr_is_the_models_arithmetic_with_the_dtype_to_check():
    for line in (ALONE, IN_RAY):
        top = evaluate(Facts(events=parse_lines([line]).events)).findings[0]
        assert top.rule == "HL-9" and "logits overflowed or were corrupted" in top.title
        assert top.changes == [] and top.actions[0].startswith("Check the dtype the engine line prints")


def test_with_float16_in_the_launch_the_change_is_bfloat16():
    facts = Facts(events=parse_lines([ALONE]).events, config=config(dtype="float16"))
    [finding] = health_corrupted.RULE_NAN_PROBABILITIES.evaluate(facts)
    assert [(c.flag, c.current, c.proposed) for c in finding.changes] == [("--dtype", "float16", "bfloat16")]
