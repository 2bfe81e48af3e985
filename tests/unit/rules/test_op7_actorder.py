"""OP-7.184: a compressed-tensors checkpoint asks for activation ordering its strategy cannot take."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding


def test_the_actorder_value_refused_asks_to_null_it_in_config_json():
    # vllm-project/llm-compressor#2843, verbatim: the reporter set actorder to null (or upgraded compressed-tensors)
    top = top_finding("ValueError: {'actorder': static}")
    assert top.rule == "OP-7.184" and '"actorder": null' in top.actions[0]


def test_compressed_tensors_own_words_cut_before_pydantics_type_read_the_same():
    # vllm-project/llm-compressor#2805, verbatim: GPTQ in W8A8 and FP8 schemes on vLLM 0.22.1
    top = top_finding("Value error, Must use group or tensor_group quantization strategy in order to apply")
    assert top.rule == "OP-7.184"
