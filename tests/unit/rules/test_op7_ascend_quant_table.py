"""OP-7.218: vLLM-Ascend's quantization table has no entry for a tensor of the checkpoint."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding

_PREFIX = "(Worker_DP0_TP0_EP0 pid=10242) ERROR 10-18 13:09:55 [multiproc_executor.py:597] "
# vllm-project/vllm-ascend#3534, verbatim (the traceback's last frames): DeepSeek-V3-0324's FP8 weights on 910B2
TABLE_MISS = (
    _PREFIX + "Traceback (most recent call last):",
    _PREFIX + '  File "/vllm-workspace/vllm-ascend/vllm_ascend/quantization/quant_config.py", line 152, in '
    "is_layer_skipped_ascend",
    _PREFIX + "    is_skipped = self.quant_description[prefix + '.weight'] == \"FLOAT\"",
    _PREFIX + "KeyError: 'model.embed_tokens.weight'",
)


def test_a_tensor_missing_from_modelslims_table_is_a_checkpoint_the_npu_was_not_given():
    top = top_finding(*TABLE_MISS)
    assert top.rule == "OP-7.218" and "model.embed_tokens.weight" in top.title and "FP8" in top.title
    assert "BF16" in top.actions[0] and "W8A8" in top.actions[0]


def test_a_bare_keyerror_is_not_read_as_the_table():
    # constructed: the same key without vLLM-Ascend's frame says nothing about its table
    top = top_finding("KeyError: 'model.embed_tokens.weight'")
    assert top is None or top.rule != "OP-7.218"
