"""OP-7.218: vLLM-Ascend's quantization table has no entry for a tensor of the checkpoint.

Why a rule of its own: vLLM-Ascend serves a quantized checkpoint with its own method (`ascend`), which looks every
tensor up in the per-tensor description that Huawei's ModelSlim writes beside the weights
(quant_model_description.json): `is_skipped = self.quant_description[prefix + '.weight'] == "FLOAT"` in
vllm_ascend/quantization/quant_config.py's is_layer_skipped_ascend. A `KeyError` naming a tensor there means the
checkpoint is not one ModelSlim quantized for the NPU: in vllm-ascend#3534 it was DeepSeek-V3's own FP8 (E4M3) weights,
which "is not supported on the NPU" (the answer the reporter thanked for). The fix is weights the NPU runs: the
model's BF16 weights, or a ModelSlim quantization (W8A8) of them.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

_TABLE_LOOKUP = "is_layer_skipped_ascend"


def _table_miss(facts: Facts) -> LogEvent | None:
    return next(
        (
            e
            for e in facts.events_of(LogEventKind.UNPLACED_ERROR)
            if e.exception == "KeyError" and (e.function == _TABLE_LOOKUP or "quant_description[" in (e.code or ""))
        ),
        None,
    )


def _check(facts: Facts) -> list[Finding]:
    event = _table_miss(facts)
    if event is None:
        return []
    tensor = (event.message or "").removeprefix("KeyError: ").strip("'\" ") or "a tensor"
    return [
        RULE.finding(
            Severity.CRITICAL,
            f"vLLM-Ascend's quantization table has no entry for {tensor}: the checkpoint is not one ModelSlim "
            "quantized for the NPU (FP8 weights, for one, do not run there)",
            summary="vLLM-Ascend serves a quantized checkpoint with its own method, which looks each tensor up in "
            "the description ModelSlim writes beside the weights (quant_model_description.json). A tensor missing "
            "from it means the checkpoint was quantized for something else: in vllm-ascend#3534 DeepSeek-V3's own "
            "FP8 (E4M3) weights, which the Ascend NPU does not support.",
            evidence=[c.log_evidence(event, name="tensor missing from the quantization table", value=tensor)],
            actions=[
                "Serve weights the NPU runs: the model's BF16 weights (FP8 checkpoints such as DeepSeek-V3's and R1's "
                "convert to BF16 with the model's own conversion script), or a ModelSlim quantization of them (W8A8) "
                "with its quant_model_description.json.",
                "If the checkpoint is ModelSlim's, its description and weights come from different conversions: "
                "download or convert them again together.",
            ],
            confidence=0.8,
        )
    ]


RULE = Rule(
    code="OP-7.218",
    title="vLLM-Ascend's quantization table lacks a tensor of the checkpoint",
    category=Category.STARTUP,
    check=_check,
    needs=("events",),
    page=RulePage(
        checks="A `KeyError` naming a tensor raised in vLLM-Ascend's is_layer_skipped_ascend (its lookup of "
        "ModelSlim's quant_model_description.json).",
        why="The checkpoint is not one ModelSlim quantized for the NPU; FP8 weights made for GPUs are the common case.",
        example="`KeyError: 'model.embed_tokens.weight'` in vllm_ascend/quantization/quant_config.py, serving "
        "DeepSeek-V3-0324's FP8 weights on 910B2 (vllm-project/vllm-ascend#3534).",
        fix="The model's BF16 weights, or a ModelSlim (W8A8) quantization of them.",
        limits="Needs the traceback's frame (or its source line) in vLLM-Ascend's lookup; a bare KeyError is not read.",
        references=["https://github.com/vllm-project/vllm-ascend/issues/3534"],
    ),
)

RULES: list[Rule] = [RULE]
