"""OP-7.204: an RL trainer's weight sync sends vLLM's workers another dtype than the engine's, from the lines people
pasted."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding

# OpenRLHF/OpenRLHF#1349, verbatim: LoRA training with a colocated vLLM 0.27.1; peft kept the adapters in float32, and
# the reporter's OpenRLHF PR #1348 casts them to the engine's dtype
OPENRLHF_LORA = "```RuntimeError: Worker failed with error 'mismatch dtype: src torch.float32, dst torch.bfloat16'```"


def test_float32_adapters_into_a_bfloat16_engine_are_the_trainers_sync():
    top = top_finding(OPENRLHF_LORA)
    assert top.rule == "OP-7.204" and "torch.float32" in top.title and "torch.bfloat16" in top.title
    assert "peft upcasts" in top.summary and top.changes == []
    assert "param.data.to(torch.bfloat16)" in top.actions[0] and "#1348" in top.actions[0]
    assert len(top.actions) == 2  # a float32 engine is no way out: twice the memory


def test_two_half_precisions_also_offer_the_engine_the_trainers_dtype():
    top = top_finding("AssertionError: mismatch dtype: src torch.float16, dst torch.bfloat16")
    assert top.rule == "OP-7.204" and "peft" not in top.summary
    assert "`--dtype float16`" in top.actions[-1]


def test_other_dtype_words_are_not_this_rule():
    top = top_finding("RuntimeError: expected mat1 and mat2 to have the same dtype, but got: float != c10::BFloat16")
    assert top is None or top.rule != "OP-7.204"


def test_the_engine_dtype_is_offered_as_vllm_spells_it_and_only_between_the_16_bit_floats():
    half = top_finding("AssertionError: mismatch dtype: src torch.bfloat16, dst torch.float16")
    assert "`--dtype bfloat16`" in half.actions[-1]
    fp8 = top_finding("AssertionError: mismatch dtype: src torch.float8_e4m3fn, dst torch.bfloat16")
    assert len(fp8.actions) == 2 and not any("--dtype" in action for action in fp8.actions)
