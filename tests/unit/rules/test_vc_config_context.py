"""VC-1's remedy for vLLM's `Current vLLM config is not set`: model code run outside vLLM's configuration context."""

from __future__ import annotations

from rules.model import Severity
from tests.unit.rules.factories import top_finding


def test_the_message_alone_names_the_context_and_the_fix_nemo_rl_made():
    # NVIDIA-NeMo/RL PR #3168, verbatim: every vLLM worker failed the weight refit; the merged fix runs
    # process_weights_after_loading() under set_current_vllm_config()
    top = top_finding("Current vLLM config is not set.")
    assert top.rule == "VC-1" and any("with set_current_vllm_config(vllm_config)" in a for a in top.actions)


def test_vllms_own_warning_during_warm_up_stays_a_low_note():
    # vllm#30240, verbatim: the warning filling the log during FlashInfer's warm-up
    top = top_finding("(EngineCore_DP0 pid=3978) WARNING 12-07 21:28:41 [vllm.py:1375] Current vLLM config is not set.")
    assert top.rule == "VC-1" and top.severity == Severity.LOW
    assert any("vllm#30240" in action for action in top.actions)


def test_the_assertion_vllm_raises_from_0_14_is_critical_with_the_same_fix():
    # vLLM 0.32's words (vllm/config/vllm.py, read in .venv-vllm), as an engine core prints the AssertionError
    top = top_finding(
        "AssertionError: Current vLLM config is not set. This typically means get_current_vllm_config() was called "
        "outside of a set_current_vllm_config() context, or a CustomOp was instantiated at module import time or "
        "model forward time when config is not set."
    )
    assert top.rule == "VC-1" and top.severity == Severity.CRITICAL
    assert any("set_current_vllm_config(vllm_config)" in action for action in top.actions)
