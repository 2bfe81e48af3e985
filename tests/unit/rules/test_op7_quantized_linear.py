"""OP-7.203: a plain weight read from one of vLLM's linear layers built for a quantized checkpoint, from the lines
people pasted."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding

# ModelCloud/GPTQModel#124, verbatim: a 4-bit GPTQ DeepSeek-V2 on vLLM 0.5 (pack_params reads the experts' weights);
# the maintainers retitled it "vLLM does not support quantized MoE except for Mixtral"
DEEPSEEK_GPTQ = (
    "[rank0]: AttributeError: 'MergedColumnParallelLinear' object has no attribute 'weight'. Did you mean: 'qweight'?"
)
# xorbitsai/inference#1687, verbatim: Qwen2-MoE-14B GPTQ Int4 on Xinference's vLLM backend, without Python's hint
QWEN_MOE_XINFERENCE = (
    "AttributeError: [address=0.0.0.0:46537, pid=1141896] 'MergedColumnParallelLinear' object has no attribute 'weight'"
)


def test_a_gptq_layer_without_a_plain_weight_is_a_release_that_cannot_load_the_quantized_moe():
    top = top_finding(DEEPSEEK_GPTQ)
    assert top.rule == "OP-7.203" and "GPTQ or AWQ" in top.title
    assert "holds `qweight` instead" in top.summary and "Mixtral only" in top.summary
    assert top.actions[0].startswith("Upgrade vLLM") and top.changes == []


def test_without_the_hint_the_format_is_not_guessed():
    top = top_finding(QWEN_MOE_XINFERENCE)
    assert top.rule == "OP-7.203" and "built for quantized weights" in top.title
    assert "`qweight`" not in top.summary


def test_other_attributes_of_a_linear_layer_are_not_this_rule():
    for line in (
        "AttributeError: 'ColumnParallelLinear' object has no attribute 'input_scale'",
        "AttributeError: 'RowParallelLinear' object has no attribute 'weights'",
        "AttributeError: 'Linear' object has no attribute 'weight'",
    ):
        top = top_finding(line)
        assert top is None or top.rule != "OP-7.203", line


def test_a_layer_class_that_only_ends_in_vllms_name_is_not_read_as_it():
    top = top_finding("AttributeError: 'MergedQKVParallelLinear' object has no attribute 'weight'")
    assert top is None or top.rule != "OP-7.203"
    assert top_finding(QWEN_MOE_XINFERENCE).confidence < top_finding(DEEPSEEK_GPTQ).confidence
