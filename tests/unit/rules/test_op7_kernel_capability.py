"""OP-7.105: no variant of a quantized kernel for this GPU's architecture in this vLLM build."""

from __future__ import annotations

import pytest

from advisor.collect.logs import parse_lines
from rules.evaluate import evaluate
from rules.facts import Facts


@pytest.mark.parametrize(
    ("line", "kernel"),
    [
        # vllm#32109: GLM-4.7-FP8 on RTX PRO 6000 Blackwell with vLLM 0.13
        (
            "No compiled cutlass_scaled_mm for CUDA device capability: 120. Required capability: 90 or 100",
            "cutlass_scaled_mm",
        ),
        # vllm#24921, verbatim (cut by its excerpt): the MoE data entry names the scaled-mm kernel it lacks
        (
            "(EngineCore_DP0 pid=79) ERROR 09-15 21:45:00 [core.py:719] NotImplementedError: No compiled "
            "get_cutlass_moe_mm_data: no cutlass_scaled_mm kernel for CUDA device capability: 120. Re",
            "get_cutlass_moe_mm_data",
        ),
        # vllm PR #33417: NVFP4 MoE models on v0.15.0, which checked the SM100 family only
        (
            "RuntimeError: FlashInfer-CUTLASS MoE kernel does not support current device sm_120",
            "FlashInfer-CUTLASS MoE",
        ),
    ],
)
def test_the_kernel_and_the_architecture_are_named_with_a_release_or_another_checkpoint(line: str, kernel: str):
    top = evaluate(Facts(events=parse_lines([line]).events)).findings[0]
    assert top.rule == "OP-7.105" and top.title.startswith(f"this vLLM build has no {kernel} for sm_120")
    assert "RTX PRO 6000" in top.title
    assert top.actions[0].startswith("Upgrade vLLM") and "unquantized" in top.actions[1]
