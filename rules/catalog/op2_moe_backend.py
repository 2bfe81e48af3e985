"""OP-2.4: the MoE backend chosen for a quantized model cannot run its configuration.

Why a rule of its own: vLLM's quantized MoE layers pick one of several kernel backends (CUTLASS, FlashInfer's CUTLASS
or TRT-LLM kernels, Marlin, Triton), and each checks the deployment against what it implements before it runs:
`NvFp4 MoE backend 'FLASHINFER_CUTLASS' does not support the deployment configuration since kernel does not support
MoEActivation.SWIGLUSTEP activation.` When the backend was forced (--moe-backend), vLLM does not fall back to
another; left to choose, it picks one that supports the model. In flashinfer-ai/flashinfer#3486 (Step-3.7-Flash-NVFP4
on DGX Spark, --moe-backend FLASHINFER_CUTLASS) the kernel lacked the model's activation until FlashInfer PR #3492
added it.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

BACKEND_REFUSED = re.compile(
    r"(?P<quant>\w+) MoE backend '(?P<backend>\w+)' does not support the deployment configuration since "
    r"(?P<why>.+?)\.?\s*$"
)


def _moe_backend_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    backend = match["backend"]
    forced = facts.config.flags.get("--moe-backend") if facts.config else None
    chosen_by_vllm = facts.config is not None and forced is None  # the launch is known and forced none
    changes = (
        []
        if chosen_by_vllm
        else [
            ConfigChange(
                flag="--moe-backend",
                current=forced or backend,
                proposed="",
                reason=f"left to choose, vLLM picks a {match['quant']} MoE backend that supports the model",
                cost="possibly a slower kernel than the one forced",
            )
        ]
    )
    chosen = (
        [
            f"vLLM chose {backend} itself: force another {match['quant']} MoE backend with --moe-backend (the "
            "choices are in the engine arguments' documentation of your release)."
        ]
        if chosen_by_vllm
        else []
    )
    return RULE.finding(
        Severity.CRITICAL,
        f"the {match['quant']} MoE backend {backend} cannot run this model's configuration: {match['why']}",
        summary="Each quantized MoE backend checks the deployment against what its kernels implement; a backend "
        "forced with --moe-backend is not replaced by another that could run it.",
        evidence=[c.log_evidence(event, name="the MoE backend's refusal", value=match.group(0))],
        changes=changes,
        actions=[
            *chosen,
            f"Or keep {backend} and upgrade the library that provides its kernel to a release that adds what it "
            "lacks (FlashInfer PR #3492 added SWIGLUSTEP for flashinfer-ai/flashinfer#3486).",
        ],
        confidence=0.8,
    )


RULE = Rule(
    code="OP-2.4",
    title="a quantized MoE backend that cannot run the model's configuration",
    category=Category.QUANTIZATION,
    check=c.on_phrase(BACKEND_REFUSED, _moe_backend_finding),
    needs=("events",),
    page=RulePage(
        checks="`<Quant> MoE backend '<backend>' does not support the deployment configuration since …`.",
        why="The backend's kernels lack something the model uses (an activation, a group size, the GPU); a forced "
        "backend is not replaced.",
        example="NVFP4 Step-3.7-Flash with --moe-backend FLASHINFER_CUTLASS: no SWIGLUSTEP activation "
        "(flashinfer-ai/flashinfer#3486).",
        fix="--moe-backend removed (vLLM chooses), or the kernel library's release that adds the missing piece.",
        limits="Which other backends support the model is vLLM's choice at start-up, not in the message.",
        references=["https://github.com/flashinfer-ai/flashinfer/issues/3486"],
    ),
)

RULES: list[Rule] = [RULE]
