"""OP-7.159: the model's configuration lacks a field vLLM's implementation of the architecture reads."""

from __future__ import annotations

import pytest

from advisor.collect.logs import parse_lines
from rules.catalog import op7_model_config_field
from rules.evaluate import evaluate
from rules.facts import Facts


@pytest.mark.parametrize(
    ("line", "field"),
    [
        # hiyouga/LlamaFactory#8086, verbatim: an InternVL3-8B-hf derivative (-hf nests the text fields)
        ("AttributeError: 'InternVLConfig' object has no attribute 'vocab_size'", "InternVLConfig.vocab_size"),
        # vllm PR #16513, verbatim: a Pixtral config from before spatial_merge_size (fixed in vLLM)
        (
            "AttributeError: 'PixtralVisionConfig' object has no attribute 'spatial_merge_size'",
            "PixtralVisionConfig.spatial_merge_size",
        ),
        # apple/ml-fastvlm#28, verbatim: a project's own model under LLaVA's name
        (
            "(EngineCore_DP0 pid=27368) AttributeError: 'LlavaConfig' object has no attribute 'vision_config'",
            "LlavaConfig.vision_config",
        ),
    ],
)
def test_a_model_config_without_the_field_is_the_checkpoints_format(line: str, field: str):
    top = evaluate(Facts(events=parse_lines([line]).events)).top
    assert top.rule == "OP-7.159" and top.evidence[0].value == field
    assert "architectures" in top.actions[0] and "pip check" in top.actions[2]


def test_vllms_own_config_classes_are_not_the_models():
    line = "AttributeError: 'ModelConfig' object has no attribute 'task'"
    assert op7_model_config_field.RULE.evaluate(Facts(events=parse_lines([line]).events)) == []
