"""OP-7.181: vLLM's layers ran outside vLLM's configuration context."""

from __future__ import annotations

from rules.model import Severity
from tests.unit.rules.factories import top_finding


def test_the_message_alone_points_at_the_callers_context_and_the_fix_nemo_rl_made():
    # NVIDIA-NeMo/RL PR #3168, verbatim: every vLLM worker failed the weight refit; the merged fix runs
    # process_weights_after_loading() under set_current_vllm_config()
    top = top_finding("Current vLLM config is not set.")
    assert top.rule == "OP-7.181" and top.severity == Severity.HIGH
    assert any("with set_current_vllm_config(vllm_config)" in action for action in top.actions)


def test_vllms_own_warning_during_warm_up_is_low():
    # vllm#30240, verbatim: the warning filling the log during FlashInfer's warm-up on 0.12-era vLLM
    top = top_finding("(EngineCore_DP0 pid=3978) WARNING 12-07 21:28:41 [vllm.py:1375] Current vLLM config is not set.")
    assert top.rule == "OP-7.181" and top.severity == Severity.LOW
