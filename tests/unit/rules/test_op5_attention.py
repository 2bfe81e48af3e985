"""OP-5.29: V0's attention selector gave up FlashAttention-2 for XFormers; the reason decides the advice."""

from __future__ import annotations

import pytest

from advisor.collect.logs import parse_lines
from rules.catalog import op5_attention
from rules.evaluate import evaluate
from rules.facts import Facts
from rules.model import Severity

PREFIX = "INFO 08-07 16:06:47 selector.py:189] "


def _facts(*lines: str) -> Facts:
    return Facts(events=parse_lines(list(lines)).events)


def test_the_separate_package_missing_names_vllm_flash_attn_and_its_cuda_12_builds():
    # vllm#7254: vLLM 0.5.4 on torch 2.4.0+cu118
    facts = _facts(
        PREFIX + "Cannot use FlashAttention-2 backend because the vllm_flash_attn package is not found. "
        "`pip install vllm-flash-attn` for better performance.",
        "INFO 08-07 16:06:47 selector.py:54] Using XFormers backend.",
    )
    top = evaluate(facts).findings[0]
    assert top.rule == "OP-5.29" and top.severity == Severity.MEDIUM
    assert top.title.endswith("the vllm-flash-attn package is not installed")
    assert "CUDA 12 only" in top.actions[0] and "not flash_attn" in top.actions[0]
    assert top.evidence[0].raw.endswith("for better performance.")


def test_a_cuda_11_torch_beside_it_is_named_in_the_title():
    facts = _facts(
        "PyTorch version: 2.4.0+cu118",
        PREFIX + "Cannot use FlashAttention-2 backend because the vllm_flash_attn package is not found. "
        "`pip install vllm-flash-attn` for better performance.",
    )
    top = op5_attention.RULE_ATTENTION_FALLBACK.evaluate(facts)[0]
    assert top.title.endswith("has no build for the CUDA 11.8 PyTorch here")


def test_the_bundled_kernels_missing_from_0_6_point_at_the_build():
    facts = _facts(
        "INFO 02-01 10:00:00 cuda.py:219] Cannot use FlashAttention-2 backend because the vllm.vllm_flash_attn "
        "package is not found. Make sure that vllm_flash_attn was built and installed (on by default)."
    )
    top = op5_attention.RULE_ATTENTION_FALLBACK.evaluate(facts)[0]
    assert "built without its FlashAttention kernels" in top.title and "rebuild from source" in top.actions[0]


@pytest.mark.parametrize(
    ("reason", "severity", "flag", "proposed"),
    [
        ("for FP8 KV cache.", Severity.LOW, "VLLM_ATTENTION_BACKEND", "FLASHINFER"),
        ("for dtype other than torch.float16 or torch.bfloat16.", Severity.LOW, "--dtype", "bfloat16"),
        ("for block size not divisible by 16.", Severity.LOW, "--block-size", "16"),
    ],
)
def test_a_flag_that_chose_the_fallback_is_changed_back(reason, severity, flag, proposed):
    finding = op5_attention.RULE_ATTENTION_FALLBACK.evaluate(
        _facts(PREFIX + "Cannot use FlashAttention-2 backend " + reason)
    )[0]
    assert finding.severity == severity
    assert (finding.changes[0].flag, finding.changes[0].proposed) == (flag, proposed)


def test_an_fp8_kv_cache_offers_giving_it_up_as_the_alternative_with_its_cost():
    finding = op5_attention.RULE_ATTENTION_FALLBACK.evaluate(
        _facts(PREFIX + "Cannot use FlashAttention-2 backend for FP8 KV cache.")
    )[0]
    alternative = finding.alternatives[0]
    assert (alternative.flag, alternative.proposed) == ("--kv-cache-dtype", "auto") and "half" in alternative.cost


def test_a_sliding_window_is_fixed_by_the_release_whose_selector_keeps_flashattention():
    finding = op5_attention.RULE_ATTENTION_FALLBACK.evaluate(
        _facts(PREFIX + "Cannot use FlashAttention-2 backend due to sliding window.")
    )[0]
    assert finding.actions == [
        "Upgrade vLLM to 0.6.4 or later: its selector keeps FlashAttention-2 for a sliding window."
    ]


@pytest.mark.parametrize("reason", ["for Volta and Turing GPUs.", "for head size 72."])
def test_the_gpu_or_the_models_head_size_is_a_note_with_nothing_to_change(reason):
    finding = op5_attention.RULE_ATTENTION_FALLBACK.evaluate(
        _facts(PREFIX + "Cannot use FlashAttention-2 backend " + reason)
    )[0]
    assert finding.severity == Severity.INFO and not finding.changes and not finding.actions
    if "head size" in reason:
        assert "no kernel for head size 72" in finding.title


def test_a_start_on_flashattention_gives_no_finding():
    facts = _facts("INFO 08-07 16:06:47 selector.py:51] Using FlashAttention-2 backend.")
    assert op5_attention.RULE_ATTENTION_FALLBACK.evaluate(facts) == []
