"""OP-5.71: prompt_logprobs with LoRA adapters, read from LoRA's logits path refusing the copy."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding

# vllm#29955, verbatim: the engine core's traceback ending in LoRA's logits processor
ENGINE_CORE = (
    '(EngineCore_DP0 pid=168) ERROR 12-03 00:14:53 [core.py:844]   File "/usr/local/lib/python3.12/dist-packages/vllm/'
    'lora/layers/logits_processor.py", line 223, in _get_logits',
    "(EngineCore_DP0 pid=168) ERROR 12-03 00:14:53 [core.py:844]     logits[",
    "(EngineCore_DP0 pid=168) ERROR 12-03 00:14:53 [core.py:844] RuntimeError: The expanded size of the tensor (63) "
    "must match the existing size (3) at non-singleton dimension 0.  Target sizes: [63, 256].  Tensor sizes: [3, 256]",
)


def test_more_rows_than_lora_mapped_is_prompt_logprobs_with_lora():
    top = top_finding(*ENGINE_CORE)
    assert top.rule == "OP-5.71" and "63 rows of logits where it mapped 3" in top.title
    assert top.actions[0].startswith("Drop prompt_logprobs from the SamplingParams")


def test_the_same_words_outside_lora_are_not_this():
    # constructed: the copy refused in a model's own file, no LoRA in sight
    lines = (
        'File "/usr/local/lib/python3.12/dist-packages/vllm/model_executor/models/llama.py", line 1, in forward',
        "RuntimeError: The expanded size of the tensor (63) must match the existing size (3) at non-singleton "
        "dimension 0",
    )
    top = top_finding(*lines)
    assert top is None or top.rule != "OP-5.71"
