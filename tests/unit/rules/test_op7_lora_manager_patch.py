"""OP-7.205: vLLM's LoRA worker manager replaced by a class written for another vLLM (Unsloth's fast_inference), from
the lines people pasted."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding

# unslothai/unsloth-zoo PR #788, verbatim: vLLM 0.23 calls get_dummy_lora_warmup_rank during warm-up, and unsloth_zoo's
# replacement manager lacked it until that PR
WARMUP = "RuntimeError: 'LRUCacheWorkerLoRAManager' object has no attribute 'get_dummy_lora_warmup_rank'"
# unslothai/unsloth#3962, verbatim (the title): unsloth 2026.1.4 with vLLM 0.15.0
SIGNATURE = (
    "[Bug] RuntimeError: LRUCacheWorkerLoRAManager.create_lora_manager() takes 2 positional arguments but 3 were given"
)


def test_a_missing_method_of_vllms_lora_manager_is_unsloths_replacement_with_the_release_that_added_it():
    top = top_finding(WARMUP)
    assert top.rule == "OP-7.205" and "has no get_dummy_lora_warmup_rank" in top.title
    assert "Unsloth" in top.title and top.changes == []
    assert "pip install -U unsloth unsloth_zoo" in top.actions[0] and "PR #788" in top.actions[0]


def test_a_signature_drift_reads_the_same_with_less_confidence():
    top = top_finding(SIGNATURE)
    assert top.rule == "OP-7.205" and "create_lora_manager() with another signature" in top.title
    assert top.confidence < top_finding(WARMUP).confidence


def test_other_classes_lora_errors_are_not_this_rule():
    top = top_finding("AttributeError: 'LoRAModelManager' object has no attribute 'punica_wrapper'")
    assert top is None or top.rule != "OP-7.205"


def test_a_private_attribute_vllms_own_manager_sets_late_is_not_read_as_a_replaced_class():
    top = top_finding("AttributeError: 'LRUCacheWorkerLoRAManager' object has no attribute '_adapter_manager'")
    assert top is None or top.rule != "OP-7.205"
