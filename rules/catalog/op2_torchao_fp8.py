"""OP-2.5: torchao's float8 quantization on a GPU without FP8 units.

Why a rule of its own: a checkpoint quantized with torchao (vLLM's `--quantization torchao`, its quantization_config
naming `Float8DynamicActivationFloat8WeightConfig`) multiplies in FP8 on both sides, and torchao asserts before it
quantizes that the GPU is of compute capability 8.9 or later (Ada, Hopper, Blackwell) or an MI300: `Float8 dynamic
activation quantization is only supported on CUDA>=8.9 and MI300+`. The "CUDA>=8.9" is the GPU's compute capability,
not the CUDA toolkit's version, which is how the words are misread (vllm#36805; vLLM PR #37033 proposed a check of its
own, in these terms, before torchao's). vLLM's own FP8 runs weight-only (W8A16, the FP8 Marlin kernel) on Ampere, so
FP8 itself is not out of reach there: this configuration is.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

FP8_DOCS = "https://docs.vllm.ai/en/latest/features/quantization/fp8.html"


def _torchao_fp8_finding(facts: Facts, event: LogEvent, found: re.Match[str]) -> Finding:
    return RULE.finding(
        Severity.CRITICAL,
        "torchao's float8 quantization (FP8 activations and weights) needs a GPU of compute capability 8.9 or later, "
        "or an MI300: this one is older",
        summary="The checkpoint (or its quantization config) asks torchao for dynamic FP8 activations with FP8 "
        "weights, which only GPUs with FP8 units run: Ada (L4, L40S, RTX 40xx), Hopper (H100, H200), Blackwell, "
        "AMD MI300. "
        "torchao's 'CUDA>=8.9' means that compute capability, not a CUDA toolkit version: upgrading CUDA does not "
        "help.",
        evidence=[c.log_evidence(event, name="torchao's refusal", value=found.group(0))],
        actions=[
            "On this GPU, serve the unquantized model with vLLM's own FP8 (`--quantization fp8`), which runs "
            "weight-only (W8A16, the FP8 Marlin kernel) on Ampere, or a checkpoint quantized for it (AWQ, GPTQ, or "
            "torchao's weight-only int8/int4 configs).",
            "Or serve this checkpoint on a GPU of compute capability 8.9 or later (`nvidia-smi --query-gpu="
            "compute_cap --format=csv` says which this one is).",
        ],
        confidence=0.85,
    )


RULE = Rule(
    code="OP-2.5",
    title="torchao's float8 quantization on a GPU without FP8 units",
    category=Category.QUANTIZATION,
    check=c.on_kind(LogEventKind.TORCHAO_FP8_UNSUPPORTED, _torchao_fp8_finding),
    needs=("events",),
    page=RulePage(
        checks="torchao's assertion `Float8 dynamic activation quantization is only supported on CUDA>=8.9 and "
        "MI300+`.",
        why="FP8 activations need FP8 units: compute capability 8.9 or later, or an MI300.",
        example="A torchao Float8 checkpoint on an Ampere GPU (vllm#36805; vLLM PR #37033 quotes the assertion).",
        fix="vLLM's own FP8 (weight-only on Ampere) or another quantization on this GPU; or a GPU of 8.9 or later.",
        limits="The words do not name the GPU; its compute capability is `nvidia-smi --query-gpu=compute_cap`.",
        references=[FP8_DOCS, "https://github.com/vllm-project/vllm/pull/37033"],
    ),
)

RULES: list[Rule] = [RULE]
