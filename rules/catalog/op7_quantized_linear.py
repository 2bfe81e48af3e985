"""OP-7.203: code reads a plain `weight` from one of vLLM's linear layers that was built quantized.

Why a rule of its own: a linear layer vLLM builds for a GPTQ or AWQ checkpoint holds that format's tensors
(`qweight`, `qzeros`, `scales`) and no `weight`, so code written for unquantized layers stops in torch's bare
`AttributeError: 'MergedColumnParallelLinear' object has no attribute 'weight'. Did you mean: 'qweight'?`, which says
nothing about the checkpoint. The mid-2024 MoE model files did exactly that: DeepSeek-V2's and Qwen-MoE's
`pack_params` gathered every expert's `gate_up_proj.weight` into one tensor, so a 4-bit checkpoint of them could not
load; vLLM then ran quantized MoE for Mixtral only (and FP8), as its maintainers said (vllm#4331: Qwen-MoE's
quantized checkpoints were not supported yet; vllm#6465 on 0.5.2: fp16 and fp8 for Qwen MoE, GPTQ in the works;
ModelCloud/GPTQModel#124 retitled to the same for DeepSeek-V2). Later releases load GPTQ and AWQ experts through
fused MoE kernels of their own.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

# torch's words for vLLM's parallel linear layers (quoted or, retyped, bare), and Python 3.10's hint after them
PLAIN_WEIGHT_READ = re.compile(
    r"'?\b(?P<layer>(?:MergedColumn|QKV|Column|Row)ParallelLinear|ReplicatedLinear)'? (?:object )?has no attribute "
    r"'?weight\b'?(?:\.? ?Did you mean: '(?P<hint>\w+)'\??)?"
)
# The tensors each quantization format holds instead of a weight, as the hint names them
FORMAT_OF_HINT: dict[str, str] = {
    "qweight": "GPTQ or AWQ",
    "weight_packed": "compressed-tensors",
}


def _plain_weight_finding(_facts: Facts, event: LogEvent, found: re.Match[str]) -> Finding:
    hint = found["hint"]
    fmt = FORMAT_OF_HINT.get(hint or "", "quantized")
    holds = f" and holds `{hint}` instead" if hint else ""
    return RULE.finding(
        Severity.CRITICAL,
        f"vLLM's code for this model reads a plain weight from a {found['layer']} built for {fmt} weights: this "
        "release cannot load the model's quantized checkpoint",
        summary=f"A linear layer vLLM builds for a quantized checkpoint has no `weight`{holds}; the code asking for "
        "it was written for unquantized layers. In 2024's MoE model files (DeepSeek-V2, Qwen-MoE) `pack_params` "
        "gathered the experts' weights that way, and vLLM then ran quantized MoE for Mixtral only, and FP8 "
        "(vllm#4331, vllm#6465, ModelCloud/GPTQModel#124). No flag changes which code loads the model.",
        evidence=[c.log_evidence(event, name="layer without a plain weight", value=found["layer"])],
        actions=[
            "Upgrade vLLM: later releases load GPTQ and AWQ experts through fused MoE kernels of their own instead "
            "of packing plain weights.",
            "Or serve a checkpoint this release loads: the unquantized model, or an FP8 one (vllm#6465: fp16 and fp8 "
            "for Qwen MoE on 0.5.2).",
            "If the model is not an MoE, the traceback's frame that reads `.weight` names the code (a LoRA layer, a "
            "plugin, a tied embedding) that assumes an unquantized layer.",
        ],
        confidence=0.8 if hint else 0.7,  # without Python's hint the quantized format is inferred
    )


RULE = Rule(
    code="OP-7.203",
    title="a plain weight read from a linear layer built quantized",
    category=Category.QUANTIZATION,
    check=c.on_phrase(PLAIN_WEIGHT_READ, _plain_weight_finding, kinds=c.RELAYED_TOO),
    needs=("events",),
    page=RulePage(
        checks="torch's `'MergedColumnParallelLinear' object has no attribute 'weight'` (or another of vLLM's "
        "parallel linear layers), with or without Python's `Did you mean: 'qweight'?`.",
        why="A layer built for GPTQ or AWQ holds qweight, qzeros and scales, not a weight; code that reads one was "
        "written for unquantized layers, as 2024's MoE model files were when they packed the experts' weights.",
        example="`AttributeError: 'MergedColumnParallelLinear' object has no attribute 'weight'. Did you mean: "
        "'qweight'?` (ModelCloud/GPTQModel#124: a 4-bit DeepSeek-V2 on vLLM 0.5).",
        fix="A vLLM release that loads the format for the model (quantized MoE beyond Mixtral came after mid-2024), "
        "or an unquantized or FP8 checkpoint.",
        limits="The release that first loads a given model's GPTQ or AWQ experts is not named: the threads say when "
        "it was missing, not when it arrived.",
        references=[
            "https://github.com/vllm-project/vllm/issues/4331",
            "https://github.com/vllm-project/vllm/issues/6465",
            "https://github.com/ModelCloud/GPTQModel/issues/124",
        ],
    ),
)

RULES: list[Rule] = [RULE]
